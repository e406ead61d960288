//! Chromium's IndexedDB with ids past one byte, and deleted object stores and databases
//! (testdata/idb/many, written by a real Chromium running tools/idb_fixture/many.html; made
//! by tools/gen_idb_many_fixture.sh). The page's read-back through IndexedDB
//! (many.expected.json) is the truth every record is checked against:
//!
//! - the live state: 300 databases in one origin (database ids 1-301: past 127 and 255, the
//!   `global / database name` value written with EncodeInt), a database of 301 object stores
//!   (store ids past 255) and a store of 240 indexes (index ids 31-270): every record Chromium
//!   reads back is in the view, under its database's and store's names, with its key and
//!   value, and no other named record is;
//! - what the page deleted (six "doomed" stores, three databases; Chromium was killed right
//!   after, before it cleaned the deleted ranges up): every record the page read before
//!   deleting is among the `records` listing's deleted records, named from the deleted
//!   metadata (marked deleted), with its key and value.

use std::collections::BTreeMap;
use std::path::PathBuf;

use leveldb_table::db::reader::{records, Db, RecordStatus};
use leveldb_table::raw::internal_key::ValueType;
use leveldb_table::{Cursor, ReadOptions};
use serde_json::{json, Value as Json};
use sst_chrome::idb::{
    decode_key, idb_catalog, idb_catalog_with_deleted, idb_value, Catalog, IdbKey, KeyBody,
};
use sst_chrome::v8value::{Decoded, Object, PropertyKey, Value};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/idb/many")
}

fn expected() -> Json {
    let p = dir().with_file_name("many.expected.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// A number as the page's JSON holds it (integers without a fraction).
fn number(x: f64) -> Json {
    if x.fract() == 0.0 && x.abs() < 9e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// A key as the page types it.
fn key_json(k: &IdbKey) -> Json {
    match k {
        IdbKey::Number(x) => json!({"type": "number", "value": number(*x)}),
        IdbKey::String(u) => json!({"type": "string", "value": String::from_utf16(u).unwrap()}),
        IdbKey::Array(a) => {
            json!({"type": "array", "value": a.iter().map(key_json).collect::<Vec<_>>()})
        }
        other => panic!("the page writes no {other:?}"),
    }
}

/// A value the page wrote (numbers, strings, plain objects and arrays of them) as the JSON
/// its read-back holds.
fn value_json(d: &Decoded<'_>, v: &Value<'_>) -> Json {
    let key = |k: &PropertyKey<'_>| match k {
        PropertyKey::String(s) => s.to_string_lossy().into_owned(),
        PropertyKey::Index(i) => i.to_string(),
        PropertyKey::Number(x) => x.to_string(),
    };
    match v {
        Value::Number(x) => number(*x),
        Value::String(s) => json!(s.to_string_lossy()),
        Value::Object(id) => match d.object(*id).unwrap() {
            Object::Plain(props) => Json::Object(
                props
                    .iter()
                    .map(|(k, v)| (key(k), value_json(d, v)))
                    .collect(),
            ),
            Object::Array {
                length, elements, ..
            } => {
                assert_eq!(elements.len() as u32, *length);
                Json::Array(elements.iter().map(|(_, v)| value_json(d, v)).collect())
            }
            other => panic!("the page writes no {other:?}"),
        },
        other => panic!("the page writes no {other:?}"),
    }
}

/// (database, store, key) -> value of a read-back list.
type Records = BTreeMap<(String, String, String), Json>;

fn read_back(list: &Json) -> Records {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let k = (
                r["database"].as_str().unwrap().to_string(),
                r["store"].as_str().unwrap().to_string(),
                r["key"].to_string(),
            );
            (k, r["value"].clone())
        })
        .collect()
}

/// The record (`key`, `value`) named by `c`: ((database, store, key), value, whether a name
/// came from deleted metadata); `None` for other keys, or a record `c` does not name.
fn named(c: &Catalog, key: &[u8], value: &[u8]) -> Option<((String, String, String), Json, bool)> {
    let d = decode_key(key)?;
    let KeyBody::Record(Some(k)) = &d.body else {
        return None;
    };
    let db = c.database(d.prefix.database)?;
    let store = c.store(d.prefix.database, d.prefix.store)?;
    let v = idb_value(None, None, key, value).unwrap();
    let decoded = v.decode().unwrap();
    Some((
        (
            db.name.clone()?,
            store.name.clone()?,
            key_json(k).to_string(),
        ),
        value_json(&decoded, &decoded.root),
        db.deleted || store.deleted,
    ))
}

#[test]
fn every_live_record_is_named_and_read_as_chromium_reads_it_back() {
    let db = Db::open(dir(), sst_chrome::db_options()).unwrap();
    let c = idb_catalog(&db).unwrap();
    assert!(c.partial.is_none());
    let e = expected();
    let want = read_back(&e["live"]);
    assert!(want.len() > 800, "{}", want.len());
    // The ids past one byte are there: database ids past 255, store and index ids too.
    assert!(c.databases.keys().any(|&id| id > 255));
    let wide = c.databases_named("wide");
    assert_eq!(wide.len(), 1);
    let wide = &c.databases[&wide[0]];
    assert_eq!(wide.stores.len(), 301);
    assert_eq!(
        wide.stores.get(&300).and_then(|s| s.name.as_deref()),
        Some("s299")
    );
    let indexed = wide
        .stores
        .values()
        .find(|s| s.name.as_deref() == Some("indexed"))
        .unwrap();
    assert_eq!(indexed.indexes.len(), 240);
    assert_eq!(
        indexed.indexes.get(&270).and_then(|i| i.name.as_deref()),
        Some("i239")
    );
    // Every database the page reads back, by name, once.
    let names: Vec<&str> = e["databases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for n in &names {
        assert_eq!(c.databases_named(n).len(), 1, "{n}");
    }
    let mut got = Records::new();
    let mut orphans = 0;
    let mut view = db.iter(&ReadOptions::default());
    view.seek_to_first();
    while view.valid() {
        let (k, v) = (view.key(), view.value());
        match named(&c, k, v) {
            Some((name, value, deleted)) => {
                assert!(!deleted);
                assert!(got.insert(name.clone(), value).is_none(), "{name:?} twice");
            }
            None => {
                // A record of no named database: only the database deleted last, whose
                // name record is deleted and whose records Chromium had not cleaned up.
                if let Some(KeyBody::Record(_)) = decode_key(k).map(|d| d.body) {
                    let id = decode_key(k).unwrap().prefix.database;
                    assert!(c.database(id).is_none_or(|d| d.name.is_none()), "{k:02x?}");
                    orphans += 1;
                }
            }
        }
        view.next();
    }
    assert!(view.status().is_ok());
    assert_eq!(got, want, "the live records, named, with their values");
    assert_eq!(orphans, 2);
}

#[test]
fn deleted_stores_and_databases_are_named_from_their_deleted_metadata() {
    let db = Db::open(dir(), sst_chrome::db_options()).unwrap();
    let all = records(&db).unwrap();
    let c = idb_catalog_with_deleted(&db, &all).unwrap();
    let e = expected();
    let want = read_back(&e["deleted"]);
    assert!(want.len() >= 12, "{}", want.len());
    // Every deleted database and store is named again, and marked deleted.
    for n in e["deleted_databases"].as_array().unwrap() {
        let ids = c.databases_named(n.as_str().unwrap());
        assert_eq!(ids.len(), 1, "{n}");
        assert!(c.databases[&ids[0]].deleted, "{n}");
    }
    for pair in e["deleted_stores"].as_array().unwrap() {
        let (d, s) = (pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
        let id = c.databases_named(d)[0];
        assert!(!c.databases[&id].deleted);
        let store = c.databases[&id]
            .stores
            .values()
            .find(|st| st.name.as_deref() == Some(s))
            .unwrap_or_else(|| panic!("{d} / {s}"));
        assert!(store.deleted);
    }
    // Every record the page read before deleting is a value record the listing has, named
    // from the deleted metadata, with the value the page read: deleted, or still live for
    // the database deleted last (its name record deleted, its records not yet cleaned up).
    let mut got = Records::new();
    for r in all.iter().filter(|r| r.kind == ValueType::Value) {
        if let Some((name, value, deleted)) = named(&c, &r.key, &r.value) {
            if want.contains_key(&name) {
                assert!(deleted, "{name:?}");
                let dropped = r.status != RecordStatus::Live || name.0 == "db290";
                assert!(dropped, "{name:?} {:?}", r.status);
                got.insert(name, value);
            }
        }
    }
    assert_eq!(got, want);
    // And no live record is taken for a deleted one: the live catalog names none of them.
    let live = idb_catalog(&db).unwrap();
    for (d, s, _) in want.keys() {
        let named_live = live.databases_named(d).iter().any(|id| {
            live.databases[id]
                .stores
                .values()
                .any(|st| st.name.as_deref() == Some(s.as_str()))
        });
        assert!(!named_live, "{d} / {s} is deleted");
    }
}

/// A catalog that cannot be read whole is never empty or partial in silence: strict, the
/// damaged block is an error naming its table; under salvage the catalog says it is partial.
#[test]
fn a_damaged_catalog_is_an_error_or_says_it_is_partial() {
    let d = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dir()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
    }
    // The table's data block at 231929 holds 236 of the database names.
    let t = d.path().join("000005.ldb");
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[231_929 + 40] ^= 0x01;
    std::fs::write(&t, &bytes).unwrap();
    let db = Db::open(d.path(), sst_chrome::db_options()).unwrap();
    let e = idb_catalog(&db).unwrap_err();
    assert!(matches!(e, sst_chrome::Error::Db(_)), "{e}");
    assert!(e.to_string().contains("000005.ldb"), "{e}");
    let salvage = sst_chrome::db_options().salvage(true);
    let db = Db::open(d.path(), salvage).unwrap();
    let c = idb_catalog(&db).unwrap();
    let why = c.partial.as_deref().expect("partial");
    assert!(why.contains("000005.ldb"), "{why}");
    let whole = idb_catalog(&Db::open(dir(), sst_chrome::db_options()).unwrap()).unwrap();
    let named = |c: &Catalog| c.databases.values().filter(|d| d.name.is_some()).count();
    assert!(named(&c) < named(&whole), "{} {}", named(&c), named(&whole));
}
