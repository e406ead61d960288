//! `sst` on Chromium's IndexedDB with ids past one byte and deleted stores and databases
//! (testdata/idb/many, tools/gen_idb_many_fixture.sh; what Chromium read back through
//! IndexedDB is many.expected.json; the library's checks are chrome/tests/idb_many.rs).
//!
//! `db scan` names every record of 300 databases in one origin (database ids past 127 and
//! 255) with its database and store, with the value Chromium reads back; `--database` finds a
//! database past id 255; `db records` names the records of deleted stores and databases from
//! their deleted metadata, marked deleted; a damaged catalog is an error, or under
//! `--salvage` a warning and `"names_partial"` on the rows.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{json, Value};

mod common;

use common::{json_lines as rows, sst};

fn dir() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/idb/many")
        .to_string_lossy()
        .into_owned()
}

fn expected() -> Value {
    let p = PathBuf::from(dir()).with_file_name("many.expected.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Numbers as f64 throughout (the page's JSON writes 7, ours 7.0; its JSON.stringify
/// writes -0 as 0, ours as `{"$type":"number","value":"-0"}`).
fn norm(v: &Value) -> Value {
    if *v == json!({"$type": "number", "value": "-0"}) {
        return json!(0.0);
    }
    match v {
        Value::Number(n) => json!(n.as_f64().unwrap()),
        Value::Array(a) => Value::Array(a.iter().map(norm).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), norm(v))).collect()),
        v => v.clone(),
    }
}

type Named = BTreeMap<(String, String, String), Value>;

/// A key as the page types it (`{"type": "number" | "string" | "array", "value"}`, the only
/// types of this fixture's keys) in the contract's key form: a number, a string, an array.
fn page_key(k: &Value) -> Value {
    match k["type"].as_str() {
        Some("array") => Value::Array(
            k["value"]
                .as_array()
                .unwrap()
                .iter()
                .map(page_key)
                .collect(),
        ),
        Some("number" | "string") => k["value"].clone(),
        t => panic!("a key type this fixture does not hold: {t:?}"),
    }
}

/// (database, store, key) -> value of the page's read-back list.
fn read_back(list: &Value) -> Named {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let name = |f: &str| r[f].as_str().unwrap().to_string();
            let k = (
                name("database"),
                name("store"),
                norm(&page_key(&r["key"])).to_string(),
            );
            (k, norm(&r["value"]))
        })
        .collect()
}

/// The record rows of `out` (jsonl) with both names, as (database, store, key) -> data,
/// keeping those `keep` accepts.
fn named(out: &str, keep: impl Fn(&Value) -> bool) -> Named {
    rows(out)
        .iter()
        .filter(|r| r["idb"]["kind"] == "record" && keep(r))
        .filter_map(|r| {
            let i = &r["idb"];
            let k = (
                i["db_name"].as_str()?.to_string(),
                i["store_name"].as_str()?.to_string(),
                norm(&i["key"]).to_string(),
            );
            Some((k, norm(&i["data"])))
        })
        .collect()
}

#[test]
fn every_live_record_is_named_as_chromium_reads_it_back() {
    let (code, out, err) = sst(&["db", "scan", &dir(), "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(named(&out, |_| true), read_back(&expected()["live"]));
    // A database past id 255, by name: its two records, and nothing of another.
    let (code, out, err) = sst(&[
        "db",
        "scan",
        &dir(),
        "--database",
        "db299",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code, 0, "{err}");
    let ids: Vec<i64> = rows(&out)
        .iter()
        .map(|r| r["idb"]["db"].as_i64().unwrap())
        .collect();
    assert!(ids.iter().all(|&id| id == ids[0] && id > 255), "{ids:?}");
    let got = named(&out, |_| true);
    assert_eq!(got.len(), 2);
    assert!(got.keys().all(|(d, s, _)| d == "db299" && s == "items"));
    // A deleted database is no database of the live view.
    let (code, _, err) = sst(&["db", "scan", &dir(), "--database", "db010"]);
    assert_eq!(code, 2);
    assert!(err.contains("no database named \"db010\""), "{err}");
}

#[test]
fn records_of_deleted_stores_and_databases_are_named_and_marked_deleted() {
    let (code, out, err) = sst(&["db", "records", &dir(), "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    let deleted = |r: &Value| r["idb"]["db_deleted"] == true || r["idb"]["store_deleted"] == true;
    let want = read_back(&expected()["deleted"]);
    let got = named(&out, |r| r["kind"] == "value" && deleted(r));
    for (k, v) in &want {
        assert_eq!(got.get(k), Some(v), "{k:?}");
    }
    // Only deleted stores and databases are marked so.
    let deleted_dbs = expected()["deleted_databases"].clone();
    for r in rows(&out).iter().filter(|r| deleted(r)) {
        let i = &r["idb"];
        let db = i["db_name"].as_str().unwrap();
        let whole_db = deleted_dbs.as_array().unwrap().iter().any(|d| d == db);
        assert!(whole_db == (i["db_deleted"] == true), "{r}");
        assert!(whole_db || i["store_name"] == "doomed", "{r}");
    }
    // Text rows say so too, and --database selects a deleted database here.
    let (_, text, _) = sst(&["db", "records", &dir(), "--database", "db010"]);
    assert!(
        text.contains("db010 (deleted) / items (deleted) / \"k10\""),
        "{text}"
    );
}

#[test]
fn a_damaged_catalog_is_an_error_or_a_warning_and_a_field() {
    let d = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dir()).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.path().join(e.file_name())).unwrap();
    }
    // The block of most database names.
    let t = d.path().join("000005.ldb");
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[231_929 + 40] ^= 0x01;
    std::fs::write(&t, &bytes).unwrap();
    let p = d.path().to_str().unwrap();
    let (code, out, err) = sst(&["db", "scan", p, "--format", "jsonl"]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("000005.ldb") && out.is_empty(), "{err}");
    let (code, out, err) = sst(&["db", "scan", p, "--salvage", "--format", "jsonl"]);
    assert_eq!(code, 1);
    assert!(err.contains("IndexedDB names may be missing"), "{err}");
    let all = rows(&out);
    assert!(!all.is_empty());
    assert!(
        all.iter().all(|r| r["idb"]["names_partial"] == true),
        "{}",
        all[0]
    );
}
