//! Chrome IndexedDB (issue 16) on a directory written by a real Chromium
//! (testdata/idb/chromium, made by tools/gen_idb_fixture.sh; the page read every store and
//! index back with cursors, in Chromium's order: testdata/idb/chromium.expected.json).
//!
//! `sst db scan` lists the records in that order with the keys the page wrote, `sst db get`
//! finds every record and answers absent keys (the filter first), `--from/--to` ranges are
//! right, and the table Chromium wrote is in `idb_cmp1` order by our comparator.

use std::collections::BTreeMap;
use std::path::PathBuf;

use leveldb_table::Comparator;
use serde_json::Value;
use sst_chrome::idb::{IdbComparator, IdbKey};

mod common;

use common::{json_lines as rows, sst};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn dir() -> String {
    root()
        .join("testdata/idb/chromium")
        .to_string_lossy()
        .into_owned()
}

fn table() -> String {
    let mut t: Vec<PathBuf> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
        .collect();
    t.sort();
    assert_eq!(t.len(), 1, "the fixture holds one table: {t:?}");
    t[0].to_string_lossy().into_owned()
}

fn expected() -> Value {
    serde_json::from_slice(
        &std::fs::read(root().join("testdata/idb/chromium.expected.json")).unwrap(),
    )
    .unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A key as the page typed it (`{"type": ..., "value"|"ms"|"hex": ...}`) in the form rows
/// print keys in (docs/indexeddb.md: numbers and strings as themselves, dates and binary
/// keys as `$type` objects, arrays as arrays).
fn contract_key(k: &Value) -> Value {
    match k["type"].as_str().unwrap() {
        "number" if k["value"].is_string() => {
            serde_json::json!({"$type": "number", "value": k["value"]})
        }
        "number" | "string" => k["value"].clone(),
        "date" => serde_json::json!({"$type": "date", "value": k["ms"]}),
        "binary" => serde_json::json!({"$type": "ArrayBuffer", "hex": k["hex"]}),
        "array" => Value::Array(
            k["value"]
                .as_array()
                .unwrap()
                .iter()
                .map(contract_key)
                .collect(),
        ),
        t => panic!("key type {t}"),
    }
}

/// A row's key is the key the page typed: numbers compared as numbers, the rest exactly.
fn same_key(ours: &Value, typed: &Value) -> bool {
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            _ => a == b,
        }
    }
    same(ours, &contract_key(typed))
}

/// The live view as jsonl rows.
fn scan(extra: &[&str]) -> Vec<Value> {
    let d = dir();
    let mut args = vec!["db", "scan", d.as_str(), "--format", "jsonl"];
    args.extend_from_slice(extra);
    let (code, out, err) = sst(&args);
    assert_eq!(code, 0, "{err}");
    rows(&out)
}

/// Object store ids by name, and index ids by "store/index" name, from the metadata rows.
fn ids(all: &[Value]) -> (BTreeMap<String, i64>, BTreeMap<String, i64>) {
    let utf16 = |hex: &str| {
        let b = unhex(hex);
        String::from_utf16(
            &b.chunks(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect::<Vec<_>>(),
        )
        .unwrap()
    };
    let mut stores = BTreeMap::new();
    let mut indexes = BTreeMap::new();
    for r in all {
        let idb = &r["idb"];
        if idb["name"] == "object store names" {
            let name = idb["fields"][0].as_str().unwrap().to_string();
            stores.insert(name, unhex(r["value"].as_str().unwrap())[0] as i64);
        }
        if idb["name"] == "index metadata" && idb["fields"][2] == 0 {
            // Metadata type 0: the index's name.
            let (store, index) = (
                idb["fields"][0].as_i64().unwrap(),
                idb["fields"][1].as_i64().unwrap(),
            );
            indexes.insert((store, utf16(r["value"].as_str().unwrap())), index);
        }
    }
    let by_name = indexes
        .into_iter()
        .map(|((store, name), id)| {
            let sname = stores.iter().find(|(_, &v)| v == store).unwrap().0.clone();
            (format!("{sname}/{name}"), id)
        })
        .collect();
    (stores, by_name)
}

#[test]
fn the_directory_is_ordered_by_idb_cmp1() {
    let (code, out, err) = sst(&["db", "info", &dir(), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["comparator"], "idb_cmp1");
    // The table Chromium wrote is in our idb_cmp1 order, key by key (verify checks every
    // key against the previous one and the index separators; in the directory, the table
    // takes the MANIFEST's order).
    let (code, out, _) = sst(&["verify", &table()]);
    assert_eq!(code, 0, "{out}");
    // And the merged view we print is strictly increasing in it.
    let all = scan(&[]);
    assert!(all.len() > 500, "{}", all.len());
    for w in all.windows(2) {
        let (a, b) = (
            unhex(w[0]["key"].as_str().unwrap()),
            unhex(w[1]["key"].as_str().unwrap()),
        );
        assert_eq!(
            IdbComparator.compare(&a, &b),
            std::cmp::Ordering::Less,
            "{} then {}",
            w[0]["idb"]["text"],
            w[1]["idb"]["text"]
        );
    }
}

#[test]
fn scan_lists_every_record_and_index_entry_as_the_page_wrote_them() {
    let exp = expected();
    let all = scan(&[]);
    let (stores, indexes) = ids(&all);
    let created: Vec<&str> = exp["created"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for (i, name) in created.iter().enumerate() {
        assert_eq!(
            stores[*name],
            i as i64 + 1,
            "store ids are given in creation order"
        );
    }
    // Records of each store, in Chromium's cursor order, with the keys the page wrote.
    for (name, want) in exp["stores"].as_object().unwrap() {
        let id = stores[name];
        let got: Vec<&Value> = all
            .iter()
            .filter(|r| r["idb"]["kind"] == "record" && r["idb"]["store"] == id)
            .collect();
        let want = want["records"].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "store {name}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                same_key(&g["idb"]["key"], &w["key"]),
                "store {name}: {} vs {}",
                g["idb"]["key"],
                w["key"]
            );
            assert_eq!(g["idb"]["value"]["envelope"], "plain", "{g}");
        }
    }
    // Index entries: Chromium keeps stale ones (an overwritten or deleted record's) and skips
    // them when their version is not the record's current one (its exists entry).
    let exists: BTreeMap<String, i64> = all
        .iter()
        .filter(|r| r["idb"]["kind"] == "exists")
        .map(|r| {
            (
                format!("{}/{}", r["idb"]["store"], r["idb"]["key"]),
                r["idb"]["value"]["version"].as_i64().unwrap(),
            )
        })
        .collect();
    let mut stale = 0;
    for (name, want) in exp["indexes"].as_object().unwrap() {
        let (store, index) = (stores[name.split('/').next().unwrap()], indexes[name]);
        let entries: Vec<&Value> = all
            .iter()
            .filter(|r| {
                r["idb"]["kind"] == "index"
                    && r["idb"]["store"] == store
                    && r["idb"]["index"] == index
            })
            .collect();
        let live: Vec<&&Value> = entries
            .iter()
            .filter(|r| {
                exists.get(&format!("{store}/{}", r["idb"]["primary_key"]))
                    == r["idb"]["value"]["version"].as_i64().as_ref()
            })
            .collect();
        stale += entries.len() - live.len();
        let want = want.as_array().unwrap();
        assert_eq!(live.len(), want.len(), "index {name}");
        for (g, w) in live.iter().zip(want) {
            assert!(
                same_key(&g["idb"]["key"], &w["key"]),
                "index {name}: {} vs {}",
                g["idb"]["key"],
                w["key"]
            );
            assert!(
                same_key(&g["idb"]["primary_key"], &w["primary_key"]),
                "index {name}"
            );
        }
    }
    // bob's old e-mail and dave's entries are still there, stale.
    assert!(stale >= 2, "{stale}");
}

#[test]
fn get_finds_every_record_and_answers_absent_keys() {
    let all = scan(&[]);
    let d = dir();
    let mut args = vec![
        "db".to_string(),
        "get".into(),
        d.clone(),
        "--hex".into(),
        "--format".into(),
        "jsonl".into(),
    ];
    args.extend(all.iter().map(|r| r["key"].as_str().unwrap().to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = sst(&a);
    assert_eq!(code, 0, "{err}");
    let got = rows(&out);
    assert_eq!(got.len(), all.len());
    for (g, r) in got.iter().zip(&all) {
        assert_eq!(g["found"], true);
        assert_eq!(g["value"], r["value"]);
    }
    // Deleted records (in the log, over the table's versions) and keys never written.
    let hex = |k: Vec<u8>| k.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let s = |t: &str| IdbKey::String(t.encode_utf16().collect());
    let absent = [
        hex(s("b").record_key(1, 1)),
        hex(IdbKey::Number(2.0).record_key(1, 1)),
        hex(IdbKey::Number(10.0).record_key(1, 1)),
        hex(s("dave").record_key(1, 2)),
        hex(IdbKey::Number(0.25).record_key(1, 1)),
        hex(s("nobody").record_key(1, 2)),
    ];
    for k in &absent {
        let (code, out, _) = sst(&["db", "get", &d, "--hex", k, "--format", "jsonl"]);
        assert_eq!(code, 1, "{k}: {out}");
        assert_eq!(rows(&out)[0]["found"], false);
    }
    // Filter first: for keys the table never held, its bloom filter already says absent.
    let t = table();
    for k in &absent[4..] {
        let (code, out, err) = sst(&["filter", &t, "--hex", k, "--format", "json"]);
        assert!(code == 0 || code == 1, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["verdict"], "definitely absent", "{k}");
    }
}

#[test]
fn ranges_follow_chromium_order() {
    let exp = expected();
    let hex = |k: Vec<u8>| k.iter().map(|b| format!("{b:02x}")).collect::<String>();
    // [-7, "") in store "keys": the numbers from -7 up and every date (dates sort after
    // numbers, strings after dates).
    let from = hex(IdbKey::Number(-7.0).record_key(1, 1));
    let to = hex(IdbKey::String(vec![]).record_key(1, 1));
    let got = scan(&["--hex", "--from", &from, "--to", &to]);
    let want: Vec<&Value> = exp["stores"]["keys"]["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            let t = r["key"]["type"].as_str().unwrap();
            t == "date"
                || t == "number"
                    && r["key"]["value"]
                        .as_f64()
                        .map_or(r["key"]["value"] == "Infinity", |x| x >= -7.0)
        })
        .collect();
    assert!(want.len() > 8);
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(&want) {
        assert!(
            same_key(&g["idb"]["key"], &w["key"]),
            "{} vs {}",
            g["idb"]["key"],
            w["key"]
        );
    }
    // The same range on the table alone (it takes the MANIFEST's order in the directory).
    let (code, out, err) = sst(&[
        "scan",
        &table(),
        "--hex",
        "--from",
        &from,
        "--to",
        &to,
        "--format",
        "jsonl",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(rows(&out).iter().all(|r| r["idb"]["store"] == 1));
}

#[test]
fn the_table_copied_out_is_refused_bytewise_and_read_with_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("000005.ldb");
    std::fs::copy(table(), &copy).unwrap();
    let c = copy.to_str().unwrap();
    let key = "0001010103000000000000f03f"; // number 1 in store 1
    let (code, out, err) = sst(&["get", c, "--hex", key]);
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("--comparator idb_cmp1"), "{err}");
    let (code, out, err) = sst(&["--comparator", "idb_cmp1", "get", c, "--hex", key]);
    assert_eq!(code, 0, "{out}{err}");
    // In the directory, a flag that contradicts the MANIFEST is refused.
    let (code, _, err) = sst(&["--comparator", "bytewise", "get", &table(), "--hex", key]);
    assert_eq!(code, 2);
    assert!(err.contains("contradicts"), "{err}");
    let (code, _, err) = sst(&["--comparator", "bytewise", "db", "scan", &dir()]);
    assert_eq!(code, 2);
    assert!(err.contains("contradicts the MANIFEST"), "{err}");
}
