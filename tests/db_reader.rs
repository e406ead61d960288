//! The read-only database reader against directories written by C++ LevelDB (plyvel,
//! LevelDB 1.22; `tools/gen_db.py` made `testdata/db/*` and recorded what LevelDB read back).

use std::path::PathBuf;

use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::Cursor;
use leveldb_table::ReadOptions;
use serde_json::Value;

fn dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/db")
        .join(name)
}

fn expected(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(dir(name).join("expected.json")).unwrap()).unwrap()
}

fn unhex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap()).unwrap()
}

fn scan(db: &Db, seq: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v = db.iter(&leveldb_table::ReadOptions::default().snapshot(Some(seq)));
    v.seek_to_first();
    let mut out = Vec::new();
    while v.valid() {
        out.push((v.key().to_vec(), v.value().to_vec()));
        v.next();
    }
    v.status().unwrap_or_else(|e| panic!("{e}"));
    out
}

fn want_scan(e: &Value, field: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    e[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| (unhex(&kv[0]), unhex(&kv[1])))
        .collect()
}

fn check_gets(db: &Db, e: &Value, field: &str, seq: u64) {
    for row in e[field].as_array().unwrap() {
        let key = unhex(&row["key"]);
        let got = db
            .get(&key, &ReadOptions::default().snapshot(Some(seq)))
            .unwrap()
            .into_value();
        match row["found"].as_bool().unwrap() {
            true => assert_eq!(got, Some(unhex(&row["value"])), "{field} {}", row["key"]),
            false => assert_eq!(got, None, "{field} {}", row["key"]),
        }
    }
}

#[test]
fn scan_and_get_equal_what_leveldb_read() {
    for name in ["basic", "snapshot", "biglog", "goleveldb"] {
        let db = Db::open(dir(name), DbOptions::default()).unwrap();
        let e = expected(name);
        assert_eq!(
            db.last_sequence(),
            e["last_sequence"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            scan(&db, db.last_sequence()),
            want_scan(&e, "scan"),
            "{name}"
        );
        check_gets(&db, &e, "gets", db.last_sequence());
        assert!(db.notes().is_empty(), "{:?}", db.notes());
    }
}

#[test]
fn reads_at_a_snapshot_equal_a_leveldb_snapshot() {
    // C++ LevelDB's snapshot, and goleveldb's.
    for name in ["snapshot", "goleveldb"] {
        let db = Db::open(dir(name), DbOptions::default()).unwrap();
        let e = expected(name);
        let seq = e["snapshot_seq"].as_u64().unwrap();
        assert_eq!(scan(&db, seq), want_scan(&e, "snapshot_scan"), "{name}");
        check_gets(&db, &e, "snapshot_gets", seq);
        // The snapshot's versions are older than the newest ones: the two views differ.
        assert_ne!(scan(&db, seq), scan(&db, db.last_sequence()));
    }
}

#[test]
fn the_fixtures_hold_what_the_tests_need() {
    // Tables at more than one level, a live log with unflushed writes, deletions.
    let db = Db::open(dir("basic"), DbOptions::default()).unwrap();
    let levels: Vec<usize> = (0..7).filter(|&l| !db.level_files(l).is_empty()).collect();
    assert!(levels.len() >= 2, "levels {levels:?}");
    assert!(!db.memtable().is_empty());
    assert!(db.logs().iter().any(|l| l.records > 0));
    let e = expected("basic");
    assert!(e["gets"]
        .as_array()
        .unwrap()
        .iter()
        .any(|r| r["found"] == false));
}
