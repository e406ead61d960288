//! Every record located to its byte: for each record `db::reader::records` lists (directories written
//! by C++ LevelDB and goleveldb, and damaged copies read under salvage), the bytes
//! at the reported position are read back here, decoded by this test's own code, and must
//! encode that record: a table entry (block at `block_offset`, entry at `offset_in_block` of
//! the decompressed block, its key rebuilt from the block's first entry) or a log record
//! (the batch reassembled from its physical records at `batch_offset`, the record at
//! `offset_in_batch`). Chrome's directories are `chrome/tests/db_locations.rs`'s.

use std::path::PathBuf;

use leveldb_table::db::reader::{records, Location};
use leveldb_table::db::reader::{Db, DbOptions};

#[path = "common/locate.rs"]
mod locate;
use locate::check;

fn source(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/db")
        .join(name)
}

#[test]
fn every_record_is_where_records_says_it_is() {
    let mut tables = 0;
    let mut logs = 0;
    for name in ["basic", "snapshot", "biglog", "goleveldb"] {
        let dir = source(name);
        let db = Db::open(&dir, DbOptions::default()).unwrap();
        let all = records(&db).unwrap();
        assert!(!all.is_empty());
        for r in &all {
            check(&dir, r);
            match r.location {
                Location::Table { .. } => tables += 1,
                Location::Log { .. } => logs += 1,
            }
        }
    }
    // Both kinds, and the biglog's batch spread over three blocks, were read back.
    assert!(tables > 1000 && logs > 100, "{tables} {logs}");
}

#[test]
fn records_salvaged_from_damaged_files_are_located_too() {
    let d = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(source("basic")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
    }
    // A table cut in half (its blocks found by checksum), a damaged block in another, and
    // no MANIFEST (every table and log read).
    let t = d.path().join("000005.ldb");
    let bytes = std::fs::read(&t).unwrap();
    std::fs::write(&t, &bytes[..bytes.len() / 2]).unwrap();
    let t = d.path().join("000007.ldb");
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[50] ^= 0x10;
    std::fs::write(&t, &bytes).unwrap();
    std::fs::remove_file(d.path().join("MANIFEST-000002")).unwrap();
    let opts = DbOptions::default().salvage(true);
    let db = Db::open(d.path(), opts).unwrap();
    let all = records(&db).unwrap();
    assert!(all.iter().any(|r| r.file == "000005.ldb"));
    assert!(all.iter().any(|r| r.file == "000007.ldb"));
    for r in &all {
        check(d.path(), r);
    }
}
