//! Salvage that agrees with itself: copies of real directories (testdata/db/*, written by C++
//! LevelDB and goleveldb) with files removed, truncated or with bytes flipped. Under
//! `salvage`, the keys the view shows are exactly the keys `records` marks live, and a
//! lookup of every key agrees with both (`common/salvage_agree.rs`; Chrome's IndexedDB
//! directories are `chrome/tests/db_salvage.rs`'s).
//!
//! The first tests are the bug reports (a directory without CURRENT and MANIFEST; a
//! damaged table block).

use leveldb_table::table::KeyFormat;
use std::path::PathBuf;
use std::sync::Arc;

use leveldb_table::db::reader::{records, Db, DbOptions, OrderSource};
use leveldb_table::raw::internal_key::ValueType;
use leveldb_table::{BytewiseComparator, Error};
use proptest::prelude::*;

#[path = "common/salvage_agree.rs"]
mod salvage_agree;
use leveldb_table::Cursor;
use salvage_agree::{apply, check_agreement, harm, remove, view};

fn source(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(match name {
            "chromium" => "idb/chromium".to_string(),
            n => format!("db/{n}"),
        })
}

fn copy_of(name: &str) -> tempfile::TempDir {
    salvage_agree::copy_of(&source(name))
}

/// Salvage or not; bytewise as the order given, or none.
fn opts(salvage: bool, bytewise: bool) -> DbOptions {
    DbOptions::default()
        .salvage(salvage)
        .order(bytewise.then(|| Arc::new(BytewiseComparator) as Arc<_>))
}

#[test]
fn without_current_and_manifest_the_last_sequence_comes_from_the_tables() {
    // Tables only: before, the last sequence was 0 and the view empty while records listed
    // every record as live.
    let d = copy_of("basic");
    remove(d.path(), |n| {
        n == "CURRENT" || n.starts_with("MANIFEST") || n.ends_with(".log")
    });
    let db = Db::open(d.path(), opts(true, false)).unwrap();
    assert!(db.is_repair_view());
    let all = records(&db).unwrap();
    let max = all.iter().map(|r| r.sequence).max().unwrap();
    assert_eq!(db.last_sequence(), max);
    assert_eq!(db.order_source(), OrderSource::Keys);
    assert_eq!(db.comparator_name(), "leveldb.BytewiseComparator");
    let live = check_agreement(&db);
    assert!(live.len() > 700, "{}", live.len());

    // Tables and logs: the same view as the intact directory (it has no obsolete files).
    let d = copy_of("basic");
    let intact = view(&Db::open(d.path(), opts(false, false)).unwrap());
    remove(d.path(), |n| n == "CURRENT" || n.starts_with("MANIFEST"));
    let db = Db::open(d.path(), opts(true, false)).unwrap();
    check_agreement(&db);
    assert_eq!(view(&db), intact);
    // Strict, the same directory is an error naming CURRENT.
    let e = Db::open(d.path(), opts(false, false)).err().unwrap();
    assert!(e.to_string().starts_with("CURRENT: "), "{e}");
}

#[test]
fn a_directory_in_an_order_not_supplied_is_refused_naming_it() {
    // Chrome's IndexedDB directory: its MANIFEST names idb_cmp1, which this crate does not
    // have (sst-chrome supplies it through DbOptions::comparators).
    let d = copy_of("chromium");
    for salvage in [false, true] {
        let e = Db::open(d.path(), opts(salvage, false)).err().unwrap();
        assert!(
            matches!(&e, Error::UnknownComparator { name } if name == "idb_cmp1"),
            "{e}"
        );
        assert!(e.to_string().contains("\"idb_cmp1\""), "{e}");
    }
    // Without its MANIFEST, salvage finds the keys in no order it has: refused, not read
    // bytewise.
    remove(d.path(), |n| n.starts_with("MANIFEST"));
    let e = Db::open(d.path(), opts(true, false)).err().unwrap();
    assert!(
        matches!(&e, Error::UnsettledOrder { reason } if reason.contains("000005.ldb")),
        "{e}"
    );
}

/// An order no comparator of this crate has: bytes descending.
struct Reverse;

impl leveldb_table::Comparator for Reverse {
    fn name(&self) -> &str {
        "test.Reverse"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        b.cmp(a)
    }
    fn find_shortest_separator(&self, _: &mut Vec<u8>, _: &[u8]) {}
    fn find_short_successor(&self, _: &mut Vec<u8>) {}
}

#[test]
fn keys_in_no_known_order_are_refused_with_where_each_order_breaks() {
    let d = copy_of("basic");
    remove(d.path(), |n| n == "CURRENT" || n.starts_with("MANIFEST"));
    // One more table, written by our builder in descending key order.
    let mut o = leveldb_table::Options::default().keys(KeyFormat::Internal);
    o.comparator = Arc::new(Reverse);
    let f = std::fs::File::create(d.path().join("000099.ldb")).unwrap();
    let mut b = leveldb_table::TableBuilder::new(f, &o).unwrap();
    for (i, k) in [&b"zz"[..], b"mm", b"aa"].iter().enumerate() {
        let ik =
            leveldb_table::raw::internal_key::internal_key(k, 2000 + i as u64, ValueType::Value);
        b.add(&ik, b"v").unwrap();
    }
    b.finish().unwrap();
    let e = Db::open(d.path(), opts(true, false)).err().unwrap();
    let msg = e.to_string();
    assert!(matches!(e, Error::UnsettledOrder { .. }), "{msg}");
    assert!(
        msg.contains("000099.ldb") && msg.contains("leveldb.BytewiseComparator"),
        "{msg}"
    );
    // Given the order it is in, it opens (a comparator the caller supplies).
    let given = DbOptions::default()
        .salvage(true)
        .order(Some(Arc::new(Reverse)));
    let e = Db::open(d.path(), given).err().unwrap();
    assert!(
        e.to_string().contains("not in the test.Reverse order"),
        "the other tables are not in that order: {e}"
    );
    remove(d.path(), |n| n != "000099.ldb");
    let given = DbOptions::default()
        .salvage(true)
        .order(Some(Arc::new(Reverse)));
    let db = Db::open(d.path(), given).unwrap();
    assert_eq!(db.comparator_name(), "test.Reverse");
    assert_eq!(check_agreement(&db).len(), 3);
}

#[test]
fn a_damaged_table_block_is_skipped_by_scans_lookups_and_records_alike() {
    let d = copy_of("basic");
    let intact_db = Db::open(d.path(), opts(false, false)).unwrap();
    let intact = view(&intact_db);
    // The keys of the block about to be damaged (000005.ldb's first data block).
    let in_block: Vec<Vec<u8>> = records(&intact_db)
        .unwrap()
        .into_iter()
        .filter(|r| r.file == "000005.ldb" && r.offset == 0)
        .map(|r| r.key)
        .collect();
    assert!(!in_block.is_empty());
    drop(intact_db);
    let t = d.path().join("000005.ldb");
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[100] ^= 0x08;
    std::fs::write(&t, &bytes).unwrap();

    // Strict: the scan stops with an error naming the table (db_damage.rs); salvage reads on.
    let db = Db::open(d.path(), opts(true, false)).unwrap();
    let live = check_agreement(&db);
    let damage = db.damage();
    assert_eq!(damage.len(), 1, "{damage:?}");
    assert_eq!(
        (damage[0].file.as_str(), damage[0].offset),
        ("000005.ldb", 0)
    );
    assert!(damage[0].what.contains("checksum mismatch"), "{damage:?}");
    assert!(damage[0].len.is_some_and(|n| n > 5));
    // Everything outside the damaged block is still there, with the intact value or an
    // older version of it.
    for (k, v, _) in &intact {
        if !in_block.contains(k) {
            assert_eq!(live.get(k).map(|x| &x.0), Some(v), "{k:?}");
        }
    }
    assert!(live.len() >= intact.len() - in_block.len());
}

#[test]
fn a_table_that_does_not_open_is_read_from_the_blocks_its_checksums_find() {
    let d = copy_of("basic");
    let t = d.path().join("000005.ldb");
    let bytes = std::fs::read(&t).unwrap();
    // Cut off the index, the metaindex and the footer.
    std::fs::write(&t, &bytes[..bytes.len() / 2]).unwrap();
    // Strict: a scan stops at the table, with an error naming it.
    let strict = Db::open(d.path(), opts(false, false)).unwrap();
    let mut v = strict.iter(&leveldb_table::ReadOptions::default());
    v.seek_to_first();
    while v.valid() {
        v.next();
    }
    let e = v.status().expect_err("the scan stops at the table");
    assert!(e.to_string().starts_with("000005.ldb: "), "{e}");
    let db = Db::open(d.path(), opts(true, false)).unwrap();
    let live = check_agreement(&db);
    assert!(!live.is_empty());
    let damage = db.damage();
    assert!(
        damage
            .iter()
            .any(|d| d.file == "000005.ldb" && d.what.contains("does not open")),
        "{damage:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The invariant, over damaged copies of real directories: under salvage, the directory
    /// opens, and view, records and lookups agree.
    #[test]
    fn salvage_agrees_with_itself_on_damaged_directories(
        which in 0..4usize,
        harms in proptest::collection::vec(harm(), 1..4),
    ) {
        let name = ["basic", "snapshot", "biglog", "goleveldb"][which];
        let d = copy_of(name);
        for h in &harms {
            apply(d.path(), h);
        }
        let db = Db::open(d.path(), opts(true, false)).unwrap();
        check_agreement(&db);
    }
}
