//! Salvage that agrees with itself: copies of real directories (testdata/db/*, written by C++
//! LevelDB and goleveldb; testdata/idb/chromium, written by Chromium) with files removed,
//! truncated or with bytes flipped. Under `salvage`, the keys the view shows are exactly the
//! keys `records` marks live, and a lookup of every key agrees with both.
//!
//! The first three tests are the bug reports (a directory without CURRENT and
//! MANIFEST; an IndexedDB directory without its MANIFEST; a damaged table block).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use leveldb_table::db::{builtin_comparator, Db, DbOptions, OrderSource};
use leveldb_table::db::{records, RecordStatus};
use leveldb_table::raw::internal_key::ValueType;
use leveldb_table::{Error, Lookup};
use proptest::prelude::*;

fn source(name: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata");
    match name {
        "chromium" => root.join("idb/chromium"),
        n => root.join("db").join(n),
    }
}

/// A copy of a directory's LevelDB files (not `expected.json`, not `LOCK`).
fn copy_of(name: &str) -> tempfile::TempDir {
    let dst = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(source(name)).unwrap() {
        let e = e.unwrap();
        let n = e.file_name().to_string_lossy().into_owned();
        if n != "expected.json" && n != "LOCK" {
            std::fs::copy(e.path(), dst.path().join(&n)).unwrap();
        }
    }
    dst
}

fn opts(salvage: bool, order: Option<&str>) -> DbOptions {
    DbOptions {
        salvage,
        order: order.map(|n| builtin_comparator(n).unwrap()),
        ..DbOptions::default()
    }
}

fn remove(dir: &Path, pred: impl Fn(&str) -> bool) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if pred(&e.file_name().to_string_lossy()) {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
}

/// (user key -> (value, sequence)) of the view at the newest sequence.
type Live = BTreeMap<Vec<u8>, (Vec<u8>, u64)>;

fn view(db: &Db) -> Vec<(Vec<u8>, Vec<u8>, u64)> {
    let mut v = db.view(&leveldb_table::ReadOptions::default()).unwrap();
    v.seek_to_first();
    let mut out = Vec::new();
    while v.valid() {
        out.push((v.key().to_vec(), v.value().to_vec(), v.sequence()));
        v.next();
    }
    assert!(v.error().is_none(), "{:?}", v.error());
    out
}

/// The agreement: the view's keys (in order, with values and sequences) are the live
/// records; a lookup of every key records lists (and of keys never written) says what the
/// view and the records say. Returns the live map.
fn check_agreement(db: &Db) -> Live {
    let shown = view(db);
    let all = records(db).unwrap();
    let live: Vec<(Vec<u8>, Vec<u8>, u64)> = all
        .iter()
        .filter(|r| r.status == RecordStatus::Live)
        .map(|r| (r.key.clone(), r.value.clone(), r.sequence))
        .collect();
    assert_eq!(
        shown.iter().map(|r| &r.0).collect::<Vec<_>>(),
        live.iter().map(|r| &r.0).collect::<Vec<_>>(),
        "the keys the view shows are the keys records marks live"
    );
    assert_eq!(shown, live, "with the same values and sequences");
    // What a lookup must say of each key: the newest version a read sees (the first of the
    // key's records in the live files, which records lists newest first).
    let last = db.last_sequence();
    let mut newest: BTreeMap<Vec<u8>, (ValueType, Vec<u8>, u64)> = BTreeMap::new();
    for r in all
        .iter()
        .filter(|r| r.status != RecordStatus::ObsoleteFile)
    {
        if r.sequence <= last {
            newest
                .entry(r.key.clone())
                .or_insert((r.kind, r.value.clone(), r.sequence));
        }
    }
    let mut value = Vec::new();
    for r in &all {
        let got = db
            .get_into(
                &r.key,
                &leveldb_table::ReadOptions::default().snapshot(Some(last)),
                &mut value,
            )
            .unwrap();
        match newest.get(&r.key) {
            Some((ValueType::Value, v, s)) => {
                assert_eq!(
                    got,
                    Lookup::Found {
                        value: (),
                        sequence: Some(*s)
                    },
                    "{:?}",
                    r.key
                );
                assert_eq!(&value, v);
            }
            Some((ValueType::Deletion, _, s)) => {
                assert_eq!(got, Lookup::Deleted { sequence: *s }, "{:?}", r.key)
            }
            None => assert_eq!(got, Lookup::NotFound, "{:?}", r.key),
        }
    }
    for k in [&b""[..], b"\xff\xff\xff\xff", b"never/written"] {
        if !newest.contains_key(k) {
            assert_eq!(
                db.get_into(
                    k,
                    &leveldb_table::ReadOptions::default().snapshot(Some(last)),
                    &mut value
                )
                .unwrap(),
                Lookup::NotFound
            );
        }
    }
    shown.into_iter().map(|(k, v, s)| (k, (v, s))).collect()
}

#[test]
fn without_current_and_manifest_the_last_sequence_comes_from_the_tables() {
    // Tables only: before, the last sequence was 0 and the view empty while records listed
    // every record as live.
    let d = copy_of("basic");
    remove(d.path(), |n| {
        n == "CURRENT" || n.starts_with("MANIFEST") || n.ends_with(".log")
    });
    let db = Db::open(d.path(), opts(true, None)).unwrap();
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
    let intact = view(&Db::open(d.path(), opts(false, None)).unwrap());
    remove(d.path(), |n| n == "CURRENT" || n.starts_with("MANIFEST"));
    let db = Db::open(d.path(), opts(true, None)).unwrap();
    check_agreement(&db);
    assert_eq!(view(&db), intact);
    // Strict, the same directory is an error naming CURRENT.
    let e = Db::open(d.path(), opts(false, None)).err().unwrap();
    assert!(e.to_string().starts_with("CURRENT: "), "{e}");
}

#[test]
fn an_indexeddb_directory_without_its_manifest_is_read_in_idb_cmp1_order() {
    let d = copy_of("chromium");
    let intact = view(&Db::open(d.path(), opts(false, None)).unwrap());
    remove(d.path(), |n| n.starts_with("MANIFEST"));
    let db = Db::open(d.path(), opts(true, None)).unwrap();
    assert_eq!(db.comparator_name(), "idb_cmp1");
    assert_eq!(db.order_source(), OrderSource::Keys);
    let live = check_agreement(&db);
    assert_eq!(view(&db), intact, "every key, as with the MANIFEST");
    assert_eq!(live.len(), intact.len());

    // The order given is accepted when no MANIFEST names one...
    let db = Db::open(d.path(), opts(true, Some("idb_cmp1"))).unwrap();
    assert_eq!(db.order_source(), OrderSource::Given);
    assert_eq!(view(&db), intact);
    // ...checked against the keys: bytewise is refused, with where it breaks.
    let e = Db::open(d.path(), opts(true, Some("leveldb.BytewiseComparator")))
        .err()
        .unwrap();
    assert!(
        matches!(&e, Error::UnsettledOrder { reason } if reason.contains("000005.ldb")),
        "{e}"
    );
    // A directory of plain keys is not read as IndexedDB.
    let b = copy_of("basic");
    remove(b.path(), |n| n.starts_with("MANIFEST"));
    let e = Db::open(b.path(), opts(true, Some("idb_cmp1"))).err();
    assert!(
        matches!(&e, Some(Error::UnsettledOrder { reason }) if reason.contains("idb_cmp1")),
        "{e:?}"
    );

    // With the MANIFEST there, the order given must be its.
    let d = copy_of("chromium");
    let e = Db::open(d.path(), opts(false, Some("leveldb.BytewiseComparator")))
        .err()
        .unwrap();
    assert!(e.to_string().contains("contradicts the MANIFEST"), "{e}");
    assert!(Db::open(d.path(), opts(false, Some("idb_cmp1"))).is_ok());
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
    let mut o = leveldb_table::Options::default().internal_keys(true);
    o.comparator = Arc::new(Reverse);
    let f = std::fs::File::create(d.path().join("000099.ldb")).unwrap();
    let mut b = leveldb_table::TableBuilder::new(f, &o).unwrap();
    for (i, k) in [&b"zz"[..], b"mm", b"aa"].iter().enumerate() {
        let ik =
            leveldb_table::raw::internal_key::internal_key(k, 2000 + i as u64, ValueType::Value);
        b.add(&ik, b"v").unwrap();
    }
    b.finish().unwrap();
    let e = Db::open(d.path(), opts(true, None)).err().unwrap();
    let msg = e.to_string();
    assert!(matches!(e, Error::UnsettledOrder { .. }), "{msg}");
    assert!(
        msg.contains("000099.ldb") && msg.contains("leveldb.BytewiseComparator"),
        "{msg}"
    );
    // Given the order it is in, it opens (a comparator the caller supplies).
    let given = DbOptions {
        salvage: true,
        order: Some(Arc::new(Reverse)),
        ..DbOptions::default()
    };
    let e = Db::open(d.path(), given).err().unwrap();
    assert!(
        e.to_string().contains("not in the test.Reverse order"),
        "the other tables are not in that order: {e}"
    );
    remove(d.path(), |n| n != "000099.ldb");
    let given = DbOptions {
        salvage: true,
        order: Some(Arc::new(Reverse)),
        ..DbOptions::default()
    };
    let db = Db::open(d.path(), given).unwrap();
    assert_eq!(db.comparator_name(), "test.Reverse");
    assert_eq!(check_agreement(&db).len(), 3);
}

#[test]
fn a_damaged_table_block_is_skipped_by_scans_lookups_and_records_alike() {
    let d = copy_of("basic");
    let intact_db = Db::open(d.path(), opts(false, None)).unwrap();
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
    let db = Db::open(d.path(), opts(true, None)).unwrap();
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
    let strict = Db::open(d.path(), opts(false, None)).unwrap();
    let mut v = strict.view(&leveldb_table::ReadOptions::default()).unwrap();
    v.seek_to_first();
    while v.valid() {
        v.next();
    }
    let e = v.error().expect("the scan stops at the table");
    assert!(e.to_string().starts_with("000005.ldb: "), "{e}");
    let db = Db::open(d.path(), opts(true, None)).unwrap();
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

/// One way to damage a copy.
#[derive(Debug, Clone)]
enum Harm {
    /// Remove the file.
    Remove(usize),
    /// Keep this fraction (per mille) of it.
    Truncate(usize, u32),
    /// Flip bit `bit` of the byte at this fraction (per mille) of it.
    Flip(usize, u32, u8),
}

fn harm() -> impl Strategy<Value = Harm> {
    prop_oneof![
        (0..16usize).prop_map(Harm::Remove),
        (0..16usize, 0..1000u32).prop_map(|(f, p)| Harm::Truncate(f, p)),
        (0..16usize, 0..1000u32, 0..8u8).prop_map(|(f, p, b)| Harm::Flip(f, p, b)),
        (0..16usize, 0..1000u32, 0..8u8).prop_map(|(f, p, b)| Harm::Flip(f, p, b)),
    ]
}

fn apply(dir: &Path, h: &Harm) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    if files.is_empty() {
        return;
    }
    let pick = |i: usize| files[i % files.len()].clone();
    match *h {
        Harm::Remove(f) => std::fs::remove_file(pick(f)).unwrap(),
        Harm::Truncate(f, p) => {
            let path = pick(f);
            let bytes = std::fs::read(&path).unwrap();
            let keep = bytes.len() * p as usize / 1000;
            std::fs::write(&path, &bytes[..keep]).unwrap();
        }
        Harm::Flip(f, p, bit) => {
            let path = pick(f);
            let mut bytes = std::fs::read(&path).unwrap();
            if !bytes.is_empty() {
                let at = (bytes.len() * p as usize / 1000).min(bytes.len() - 1);
                bytes[at] ^= 1 << bit;
                std::fs::write(&path, &bytes).unwrap();
            }
        }
    }
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
        which in 0..5usize,
        harms in proptest::collection::vec(harm(), 1..4),
    ) {
        let name = ["basic", "snapshot", "biglog", "goleveldb", "chromium"][which];
        let d = copy_of(name);
        for h in &harms {
            apply(d.path(), h);
        }
        let db = Db::open(d.path(), opts(true, None)).unwrap();
        check_agreement(&db);
    }
}
