//! Every single-byte change of a small real table is detected when checksums are verified
//! (the default): opening fails, or `verify()` reports a problem, or a scan or a get returns
//! an error. A scan or a get never returns a different answer without an error. The only
//! bytes whose change goes unnoticed are the bytes the format never reads: the footer's
//! padding between the end of the two encoded handles and byte 40 of the footer (listed in
//! docs/errors.md).
//!
//! Why everything else is detected:
//! - data, filter, metaindex and index blocks and their type bytes are covered by the
//!   trailer's CRC32C, which catches every error of up to 32 consecutive bits; a changed CRC
//!   no longer matches the bytes;
//! - the index and metaindex are read (and checked) when opening; a bad index fails the
//!   open; a bad metaindex or filter block leaves the table usable without a filter
//!   (`FilterStatus::Unreadable`), which `verify()` reports;
//! - a changed footer handle names a different byte range, whose CRC does not match (or
//!   which does not fit the file); a changed magic is "not an sstable".

mod robust_common;

use std::collections::BTreeSet;
use std::sync::Arc;

use leveldb_table::Cursor;
use leveldb_table::{raw::format::Footer, BlockCache, OpenOptions, ReadOptions, TableReader};
use robust_common::read_testdata;

const TABLE: &str = "cases/small_snappy/000005.ldb";
/// XOR masks applied to each byte, one mutant per (position, mask).
const MASKS: [u8; 3] = [0xff, 0x01, 0x80];

/// The footer padding of `cases/small_snappy/000005.ldb` (7445 bytes, footer at 7397): the
/// handles metaindex (7241, 49) and index (7295, 97) take 2+1+2+1 = 6 bytes, so bytes
/// 7403..7437 (34 bytes) are padding that no reader looks at; 7437..7445 is the magic.
const UNREAD: std::ops::Range<usize> = 7403..7437;

/// One change that is read but means the same: byte 7402 is the last byte of the index
/// handle (size 97 = 0x61). XOR 0x80 sets its continuation bit, so the varint goes on into
/// the first padding byte (0x00), which adds nothing: `e1 00` is a non-minimal encoding of
/// 97, which LevelDB's decoder (and ours) accepts. The table is the same table.
const SAME_MEANING: (usize, u8) = (7402, 0x80);

#[derive(Debug, PartialEq)]
struct Answers {
    scan: Vec<(Vec<u8>, Vec<u8>)>,
    gets: Vec<Option<Vec<u8>>>,
}

/// Scan and gets; `Err` if any of them reports an error.
fn answers(t: &TableReader<&[u8]>, keys: &[Vec<u8>]) -> Result<Answers, String> {
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    let scan = it
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("scan: {e}"))?;
    let mut gets = Vec::new();
    for k in keys {
        gets.push(
            t.get(k, &Default::default())
                .map(|l| l.into_value())
                .map_err(|e| format!("get: {e}"))?,
        );
    }
    Ok(Answers { scan, gets })
}

#[derive(Debug, Clone, Copy)]
enum Verdict {
    OpenFailed,
    /// Open succeeded; verify() reported problems.
    VerifyFailed,
    /// Open and verify succeeded; a scan or a get failed.
    ReadFailed,
    /// Nothing reported anything and every answer is the original one.
    Unnoticed,
}

#[test]
fn every_byte_flip_is_detected_except_the_unread_footer_padding() {
    let orig = read_testdata(TABLE);
    assert_eq!(orig.len(), 7445);

    // The unread range follows from the footer itself.
    let n = orig.len();
    let footer = Footer::decode(orig[n - 48..].try_into().unwrap(), n as u64).unwrap();
    let mut enc = Vec::new();
    footer.metaindex.encode_to(&mut enc);
    footer.index.encode_to(&mut enc);
    assert_eq!(
        n - 48 + enc.len()..n - 8,
        UNREAD,
        "footer layout of the test table changed"
    );

    let table = TableReader::open(&orig[..], OpenOptions::default()).unwrap();
    assert!(table.verify().is_ok());
    let keys: Vec<Vec<u8>> = {
        let mut it = table.iter(&ReadOptions::default());
        it.seek_to_first();
        let mut v = Vec::new();
        while it.valid() {
            v.push(it.key()[..it.key().len() - 8].to_vec());
            it.next();
        }
        v.push(b"key-not-there".to_vec());
        v
    };
    assert_eq!(keys.len(), 201);
    let original = answers(&table, &keys).unwrap();

    let mut unnoticed = BTreeSet::new();
    let mut silent = Vec::new();
    let mut counts = [0usize; 4];
    let mut buf = orig.clone();
    for pos in 0..n {
        for mask in MASKS {
            buf[pos] ^= mask;
            let verdict = match TableReader::open(
                &buf[..],
                OpenOptions::default().block_cache(Some(Arc::new(BlockCache::new(1 << 20)))),
            ) {
                Err(_) => Verdict::OpenFailed,
                Ok(t) => {
                    // Whatever else happens, an answer given without an error is the
                    // original answer.
                    let got = answers(&t, &keys);
                    if let Ok(a) = &got {
                        if *a != original {
                            silent.push(format!(
                                "byte {pos} ^ {mask:#04x}: answers differ without an error"
                            ));
                        }
                    }
                    if !t.verify().is_ok() {
                        Verdict::VerifyFailed
                    } else if got.is_err() {
                        Verdict::ReadFailed
                    } else {
                        Verdict::Unnoticed
                    }
                }
            };
            counts[verdict as usize] += 1;
            buf[pos] ^= mask;
            if matches!(verdict, Verdict::Unnoticed) {
                unnoticed.insert((pos, mask));
            }
        }
    }
    eprintln!(
        "open failed {}, verify failed {}, read failed {}, unnoticed {}",
        counts[0], counts[1], counts[2], counts[3]
    );
    assert!(
        silent.is_empty(),
        "silently different answers:\n{}",
        silent.join("\n")
    );
    // Exactly the unread padding (every mask) and the one same-meaning change go unnoticed.
    let mut expected: BTreeSet<(usize, u8)> = UNREAD
        .flat_map(|p| MASKS.iter().map(move |&m| (p, m)))
        .collect();
    expected.insert(SAME_MEANING);
    assert_eq!(
        unnoticed, expected,
        "undetected changes differ from the unread footer padding"
    );
    assert_eq!(counts[3], UNREAD.len() * MASKS.len() + 1);
    assert_eq!(counts.iter().sum::<usize>(), n * MASKS.len());
}
