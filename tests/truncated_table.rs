//! A table cut short inside its footer (a copy or download that stopped early) is named as
//! truncated, with how many bytes are missing, instead of "bad magic".

use leveldb_table::{Error, OpenOptions, TableReader};

fn table() -> Vec<u8> {
    std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/cases/small_snappy/000005.ldb"
    ))
    .unwrap()
}

fn open_err(bytes: Vec<u8>) -> Error {
    match TableReader::open(bytes, OpenOptions::default()) {
        Ok(_) => panic!("a damaged table opened"),
        Err(e) => e,
    }
}

#[test]
fn a_table_cut_by_one_to_five_bytes_is_reported_truncated() {
    let full = table();
    assert!(TableReader::open(full.clone(), OpenOptions::default()).is_ok());
    for cut in 1..=5u64 {
        let short = full[..full.len() - cut as usize].to_vec();
        let size = short.len() as u64;
        let err = open_err(short);
        match &err {
            Error::Truncated { file_size, missing } => {
                assert_eq!((*file_size, *missing), (size, cut), "{err}");
            }
            other => panic!("cut by {cut}: expected Truncated, got {other:?}"),
        }
        assert_eq!(err.offset(), Some(size));
        let msg = err.to_string();
        assert!(
            msg.contains("truncated") && msg.contains(&format!("{cut} byte(s) are missing")),
            "{msg}"
        );
    }
}

#[test]
fn a_shorter_remnant_of_the_magic_or_none_is_bad_magic() {
    let full = table();
    // Cut by 6 or 7 bytes: only 2 or 1 bytes of the magic remain, too few to tell.
    for cut in [6usize, 7, 8] {
        let short = full[..full.len() - cut].to_vec();
        let size = short.len() as u64;
        let err = open_err(short);
        assert!(
            matches!(err, Error::BadMagic { offset, .. } if offset == size - 8),
            "cut by {cut}: {err:?}"
        );
    }
    // A whole magic overwritten: bad magic, not truncated.
    let mut bad = full.clone();
    let n = bad.len();
    bad[n - 8..].copy_from_slice(&[0x11; 8]);
    let err = open_err(bad);
    assert!(matches!(err, Error::BadMagic { .. }), "{err:?}");
}
