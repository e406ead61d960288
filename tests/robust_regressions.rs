//! Findings of the robustness work, one test each, on the files in testdata/regressions/.
//!
//! Each file is rebuilt here from its recipe and compared with the stored copy, so the
//! stored file stays what its recipe says. To (re)write the files after changing a recipe:
//! `ROBUST_WRITE_REGRESSIONS=1 cargo test --test robust_regressions`.
//!
//! Findings:
//! 1. `metaindex_long_shared_keys.ldb`: a 13 KB table whose snappy-compressed metaindex
//!    holds 5000 entries sharing one 4000-byte key made `open` copy out 20 MB of keys (86 MB
//!    for 20000 entries: quadratic in the block). Fixed: the metaindex list is capped
//!    (`table.rs`, `read_metaindex`); the table opens without its filter.
//! 2. `index_long_shared_keys.ldb`: the same shape in the index made `verify()` (through
//!    `data_block_handles`) copy out every separator. Fixed: `verify()` walks the index with
//!    a cursor; `data_block_handles` is capped and returns an error.
//! 3. `data_long_shared_keys.ldb`: the same shape in a data block made `verify()` keep 1000
//!    problems holding two 4000-byte keys each. Fixed: kept problems hold at most 1 MiB of
//!    keys (`verify.rs`); all are still counted.

mod robust_common;

use leveldb_table::raw::coding;
use leveldb_table::Cursor;
use leveldb_table::{
    error::BlockKind, table::FilterStatus, Compression, Error, OpenOptions, ReadOptions,
    TableReader,
};
use robust_common::{read_testdata, testdata, Part, Parts, Stored};

/// `n` entries sharing one `long`-byte key, with 2-byte values (the handle (0, 0)).
fn long_shared_keys_block(n: usize, long: usize) -> Vec<u8> {
    let mut b = Vec::new();
    coding::put_varint32(&mut b, 0);
    coding::put_varint32(&mut b, long as u32);
    coding::put_varint32(&mut b, 2);
    b.extend(std::iter::repeat_n(b'k', long));
    b.extend_from_slice(&[0, 0]);
    for _ in 1..n {
        coding::put_varint32(&mut b, long as u32);
        coding::put_varint32(&mut b, 0);
        coding::put_varint32(&mut b, 2);
        b.extend_from_slice(&[0, 0]);
    }
    coding::put_fixed32(&mut b, 0);
    coding::put_fixed32(&mut b, 1);
    b
}

fn with_block(target: Part) -> Vec<u8> {
    let base = read_testdata("cases/small_snappy/000005.ldb");
    let parts = Parts::from_table(&base);
    parts.assemble(&mut |p, s, _| {
        if p == target {
            let mut c = Vec::new();
            leveldb_table::raw::compress::compress(
                Compression::Snappy,
                &long_shared_keys_block(5000, 4000),
                &mut c,
            )
            .unwrap();
            *s = Stored { bytes: c, ctype: 1 };
        }
    })
}

/// The stored regression file, checked against its recipe.
fn regression(name: &str, recipe: impl FnOnce() -> Vec<u8>) -> Vec<u8> {
    let built = recipe();
    let path = testdata(&format!("regressions/{name}"));
    if std::env::var_os("ROBUST_WRITE_REGRESSIONS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &built).unwrap();
    }
    let stored = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(stored, built, "{name} differs from its recipe");
    stored
}

fn all_keys_found(t: &TableReader<&[u8]>) -> usize {
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        let user = &it.key()[..it.key().len() - 8];
        assert!(t
            .get(user, &Default::default())
            .map(|l| l.into_value())
            .unwrap()
            .is_some());
        n += 1;
        it.next();
    }
    assert!(it.status().is_ok());
    n
}

fn kept_key_bytes(problems: &[Error]) -> usize {
    problems
        .iter()
        .map(|e| match e {
            Error::KeyOrder { previous, key, .. } => previous.len() + key.len(),
            Error::FilterMiss { key, .. } | Error::BadInternalKey { key, .. } => key.len(),
            _ => 0,
        })
        .sum()
}

#[test]
fn metaindex_with_long_shared_keys_is_refused_not_copied() {
    let bytes = regression("metaindex_long_shared_keys.ldb", || {
        with_block(Part::Metaindex)
    });
    assert!(bytes.len() < 20_000);
    let t = TableReader::open(&bytes[..], OpenOptions::default()).unwrap();
    match t.filter_status() {
        FilterStatus::Unreadable(Error::BadBlockContents {
            kind: BlockKind::Metaindex,
            reason,
            ..
        }) => {
            assert!(reason.contains("too long"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    assert!(t.metaindex().is_empty());
    // The data is intact and read without the filter.
    assert_eq!(all_keys_found(&t), 200);
    let r = t.verify();
    assert_eq!(r.problem_count, 1, "{:?}", r.problems);
    assert_eq!(
        r.problems[0].block().map(|b| b.0),
        Some(BlockKind::Metaindex)
    );
}

#[test]
fn index_with_long_shared_keys_is_walked_not_copied() {
    let bytes = regression("index_long_shared_keys.ldb", || with_block(Part::Index));
    assert!(bytes.len() < 20_000);
    let t = TableReader::open(&bytes[..], OpenOptions::default()).unwrap();
    match t.data_block_handles() {
        Err(Error::BadBlockContents {
            kind: BlockKind::Index,
            reason,
            ..
        }) => {
            assert!(reason.contains("too long"), "{reason}")
        }
        other => panic!("{:?}", other.map(|v| v.len())),
    }
    let r = t.verify();
    // 5000 index entries: each names a 0-byte "block" and repeats the previous separator.
    assert!(r.problem_count >= 5000, "{}", r.problem_count);
    assert_eq!(r.data_blocks, 5000);
    assert!(r.problems.len() <= 1000);
    assert!(kept_key_bytes(&r.problems) <= (1 << 20) + 8000);
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    assert!(!it.valid() && it.status().is_err());
}

#[test]
fn data_block_with_long_shared_keys_keeps_a_bounded_report() {
    let bytes = regression("data_long_shared_keys.ldb", || with_block(Part::Data(0)));
    assert!(bytes.len() < 20_000);
    let t = TableReader::open(
        &bytes[..],
        OpenOptions::default().keys(leveldb_table::table::KeyFormat::Plain),
    )
    .unwrap();
    let r = t.verify();
    // 4999 equal keys in a row, each also past its separator.
    assert!(r.problem_count >= 4999, "{}", r.problem_count);
    assert!(r.problems.len() < 1000);
    let kept = kept_key_bytes(&r.problems);
    assert!(
        kept <= (1 << 20) + 8000 && kept > (1 << 20) - 16_000,
        "{kept}"
    );
    assert!(r.problems.iter().all(|e| e.offset().is_some()));
}
