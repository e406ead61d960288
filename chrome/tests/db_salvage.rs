//! Salvage of Chrome's IndexedDB directories (testdata/idb/chromium, written by Chromium),
//! agreeing with itself as `tests/db_salvage.rs` asks of LevelDB's (the same checks,
//! `tests/common/salvage_agree.rs`), with Chrome's order supplied by `sst_chrome`.

use std::path::PathBuf;
use std::sync::Arc;

use leveldb_table::db::reader::{Db, DbOptions, OrderSource};
use leveldb_table::{BytewiseComparator, Comparator, Error};
use proptest::prelude::*;
use sst_chrome::idb::IdbComparator;

#[path = "../../tests/common/salvage_agree.rs"]
mod salvage_agree;
use salvage_agree::{apply, check_agreement, harm, remove, view};

fn source(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(match name {
            "chromium" => "idb/chromium".to_string(),
            n => format!("db/{n}"),
        })
}

fn copy_of(name: &str) -> tempfile::TempDir {
    salvage_agree::copy_of(&source(name))
}

/// Chrome's options, salvage or not, with the order given by name (bytewise or idb_cmp1).
fn opts(salvage: bool, order: Option<&str>) -> DbOptions {
    let order: Option<Arc<dyn Comparator>> = match order {
        Some("idb_cmp1") => Some(Arc::new(IdbComparator)),
        Some(_) => Some(Arc::new(BytewiseComparator)),
        None => None,
    };
    sst_chrome::db_options().salvage(salvage).order(order)
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

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// The invariant, over damaged copies of real directories: under salvage, the directory
    /// opens, and view, records and lookups agree.
    #[test]
    fn salvage_agrees_with_itself_on_damaged_directories(
        harms in proptest::collection::vec(harm(), 1..4),
    ) {
        let d = copy_of("chromium");
        for h in &harms {
            apply(d.path(), h);
        }
        let db = Db::open(d.path(), opts(true, None)).unwrap();
        check_agreement(&db);
    }
}

/// The same lookup answer on every path (the rule in docs/compat.md): a key equals a stored
/// key when idb_cmp1 calls them equal (LevelDB's `Compare == 0`, in the memtable and the
/// tables alike). A key with bytes after its IDB key is outside the order (no key Chromium
/// writes has them), so it equals none: "not found" with or without the MANIFEST, though the
/// merged view lands on the key it starts with. A number 0 and -0 are one key: found from
/// either bytes, although the tables' bloom filter is keyed by bytes.
#[test]
fn lookups_answer_alike_with_and_without_the_manifest() {
    let d = copy_of("chromium");
    let intact = Db::open(d.path(), opts(false, None)).unwrap();
    let intact_salvage = Db::open(d.path(), opts(true, None)).unwrap();
    let keys: Vec<Vec<u8>> = view(&intact).into_iter().map(|(k, _, _)| k).collect();
    let n = copy_of("chromium");
    remove(n.path(), |f| f.starts_with("MANIFEST"));
    let repaired = Db::open(n.path(), opts(true, None)).unwrap();
    let read = leveldb_table::ReadOptions::default();
    let answer = |db: &Db, k: &[u8]| db.get(k, &read).unwrap().value().map(<[u8]>::to_vec);
    let (mut junk, mut zeros) = (0, 0);
    for k in &keys {
        let want = answer(&intact, k);
        assert!(want.is_some());
        for db in [&intact_salvage, &repaired] {
            assert_eq!(answer(db, k), want, "{k:02x?}");
        }
        // The key plus a byte: outside the order, found nowhere.
        let mut longer = k.clone();
        longer.push(0);
        for db in [&intact, &intact_salvage, &repaired] {
            assert_eq!(answer(db, &longer), None, "{longer:02x?}");
        }
        junk += 1;
        // A record keyed by the number 0 (or -0): the other sign's bytes find it.
        let zero = |sign: u8| [&k[..k.len() - 8], &[0, 0, 0, 0, 0, 0, 0, sign]].concat();
        let is_record = sst_chrome::idb::decode_key(k)
            .is_some_and(|d| matches!(d.body, sst_chrome::idb::KeyBody::Record(_)));
        if is_record && k.len() > 9 && k[k.len() - 9] == 3 && (*k == zero(0) || *k == zero(0x80)) {
            let other = if *k == zero(0) { zero(0x80) } else { zero(0) };
            for db in [&intact, &intact_salvage, &repaired] {
                assert_eq!(answer(db, &other), want, "{other:02x?}");
            }
            zeros += 1;
        }
    }
    assert!(junk > 100 && zeros >= 2, "{junk} {zeros}");
}
