//! Every record of Chrome's IndexedDB directory (testdata/idb/chromium, written by Chromium)
//! located to its byte, as `tests/db_locations.rs` checks LevelDB's (the same check,
//! `tests/common/locate.rs`).

use std::path::PathBuf;

use leveldb_table::db::reader::{records, Db, Location};

#[path = "../../tests/common/locate.rs"]
mod locate;

#[test]
fn every_record_is_where_records_says_it_is() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/idb/chromium");
    let db = Db::open(&dir, sst_chrome::db_options()).unwrap();
    let all = records(&db).unwrap();
    let (mut tables, mut logs) = (0, 0);
    for r in &all {
        locate::check(&dir, r);
        match r.location {
            Location::Table { .. } => tables += 1,
            Location::Log { .. } => logs += 1,
        }
    }
    assert!(tables > 0 && logs > 0, "{tables} {logs}");
}
