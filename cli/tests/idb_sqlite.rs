//! Chromium's SQLite IndexedDB backend, checked against what a real Chromium 156 wrote
//! and read back (testdata/idb_sqlite, tools/gen_idb_sqlite_fixture.sh):
//!
//! - `profile/.../IndexedDB/http_127.0.0.1_42009/`: three databases after the browser's
//!   exit (one still in its `-wal`), every key kind, every value kind, indexes, Blobs and
//!   Files (one past 5 MiB, in an overflow chunk), deletions;
//! - `killed/http_127.0.0.1_42049/`: a database whose every transaction is only in the
//!   `-wal` file of a browser killed with SIGKILL.
//!
//! `sst db scan` gives every record Chromium read back (key, data), every index entry, and
//! the Blobs' bytes; `sst db records` finds the older versions the log still holds; `sst db
//! get` looks keys up; and no command changes a byte, an mtime or the folder's listing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

mod common;

use common::sst;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/idb_sqlite")
}

fn clean_dir() -> PathBuf {
    root().join("profile/Default/IndexedDB/http_127.0.0.1_42009")
}

fn killed_dir() -> PathBuf {
    root().join("killed/http_127.0.0.1_42049")
}

fn expected(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(root().join(format!("{name}.expected.json"))).unwrap())
        .unwrap()
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The raw JSON text of a row's `data` (the last field of `"idb"`, the row's last field).
fn raw_data(line: &str) -> Option<&str> {
    let idb = line.find("\"idb\":")?;
    let at = idb + line[idb..].find(",\"data\":")? + ",\"data\":".len();
    line.get(at..line.len() - 2)
}

/// A row parsed: lone surrogates (`\ud800`) become U+FFFD, which serde_json can hold.
fn parse_row(line: &str) -> Value {
    let fixed = line
        .replace("\\ud800", "\\ufffd")
        .replace("\\udc00", "\\ufffd");
    serde_json::from_str(&fixed).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// Typed keys compare as numbers where they are numbers.
/// A key as the page types it (`{"type": "number" | "string" | "array", "value"}`,
/// `{"type": "date", "ms"}`, `{"type": "binary", "hex"}`) in the contract's key form
/// (docs/indexeddb.md, Keys).
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
        Some("number") if !k["value"].is_number() => {
            json!({"$type": "number", "value": k["value"]})
        }
        Some("number" | "string") => k["value"].clone(),
        Some("date") => json!({"$type": "date", "value": k["ms"]}),
        Some("binary") => json!({"$type": "ArrayBuffer", "hex": k["hex"]}),
        t => panic!("a key type the page does not write: {t:?}"),
    }
}

fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b,
    }
}

/// `got` matches `want`: objects marked `"$subset"` on their listed fields, `"blob_row_id"`
/// (where the bytes are, which only the tool knows) allowed beside a blob's fields,
/// `"$key_data"` standing for the CryptoKey's bytes; an Error's `stack` and `cause`, which
/// the page's mapping predates (testdata/idb/contract checks them against Chromium), allowed
/// beside its fields.
fn matches(got: &Value, want: &Value, key_data: &str) -> bool {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            let subset = w.get("$subset") == Some(&Value::Bool(true));
            let extra = g
                .keys()
                .filter(|k| {
                    let error_extra = g.get("$type") == Some(&json!("error"))
                        && matches!(k.as_str(), "stack" | "cause");
                    k.as_str() != "blob_row_id" && !error_extra && !w.contains_key(*k)
                })
                .count();
            (subset || extra == 0)
                && w.iter()
                    .filter(|(k, _)| k.as_str() != "$subset")
                    .all(|(k, v)| match (g.get(k), v) {
                        (Some(Value::String(gs)), Value::String(ws)) if ws == "$key_data" => {
                            gs == key_data
                        }
                        (Some(gv), wv) => matches(gv, wv, key_data),
                        (None, _) => false,
                    })
        }
        (Value::Array(g), Value::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(a, b)| matches(a, b, key_data))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => got == want,
    }
}

type Rows = BTreeMap<(String, String), Vec<(Value, String)>>;
type Entries = BTreeMap<(String, String, String), Vec<(Value, Value)>>;

/// `sst db scan DIR --format jsonl`: records by (database, store) with their data text,
/// index entries by (database, store, index).
fn scan(dir: &Path) -> (Rows, Entries) {
    let (code, out, err) = sst(&["db", "scan", &s(dir), "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    let (mut rows, mut entries) = (Rows::new(), Entries::new());
    for line in out.lines() {
        let row = parse_row(line);
        let idb = &row["idb"];
        assert_eq!(idb["backend"], "sqlite", "{line}");
        let db = idb["db_name"].as_str().unwrap().to_string();
        let store = idb["store_name"].as_str().unwrap().to_string();
        match idb["kind"].as_str().unwrap() {
            "record" => {
                assert!(idb.get("data_error").is_none(), "{line}");
                let data = raw_data(line).unwrap().to_string();
                rows.entry((db, store))
                    .or_default()
                    .push((idb["key"].clone(), data));
            }
            "index" => {
                let index = idb["index_name"].as_str().unwrap().to_string();
                entries
                    .entry((db, store, index))
                    .or_default()
                    .push((idb["key"].clone(), idb["primary_key"].clone()));
            }
            k => panic!("kind {k}: {line}"),
        }
    }
    (rows, entries)
}

/// Every record and index entry the page read back, and nothing else, in its order.
fn check_against_readback(dir: &Path, exp: &Value) -> usize {
    let key_data = exp["key_data"].as_str().unwrap_or("");
    let (rows, entries) = scan(dir);
    let mut want = Rows::new();
    for r in exp["records"].as_array().unwrap() {
        let k = (
            r["database"].as_str().unwrap().into(),
            r["store"].as_str().unwrap().into(),
        );
        want.entry(k)
            .or_default()
            .push((page_key(&r["key"]), r["data"].as_str().unwrap().into()));
    }
    assert_eq!(
        rows.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    let mut n = 0;
    for (store, w) in &want {
        let g = &rows[store];
        assert_eq!(g.len(), w.len(), "{store:?}");
        for ((gk, gd), (wk, wd)) in g.iter().zip(w) {
            assert!(same(gk, wk), "{store:?}: key {gk} where Chromium read {wk}");
            if gd != wd {
                let (gv, wv): (Value, Value) = (
                    serde_json::from_str(gd).unwrap(),
                    serde_json::from_str(wd).unwrap(),
                );
                assert!(matches(&gv, &wv, key_data), "{store:?} {wk}:\n{gd}\n{wd}");
            }
            n += 1;
        }
    }
    let mut want_entries = Entries::new();
    for e in exp["indexes"].as_array().unwrap() {
        let k = (
            e["database"].as_str().unwrap().into(),
            e["store"].as_str().unwrap().into(),
            e["index"].as_str().unwrap().into(),
        );
        want_entries
            .entry(k)
            .or_default()
            .push((page_key(&e["key"]), page_key(&e["primary_key"])));
    }
    assert_eq!(entries.len(), want_entries.len());
    for (index, w) in &want_entries {
        let g = &entries[index];
        assert_eq!(g.len(), w.len(), "{index:?}");
        for ((gk, gp), (wk, wp)) in g.iter().zip(w) {
            assert!(
                same(gk, wk) && same(gp, wp),
                "{index:?}: {gk} {gp} / {wk} {wp}"
            );
        }
    }
    n
}

#[test]
fn clean_exit_every_record_index_entry_and_blob_as_chromium_read_them() {
    let exp = expected("clean");
    assert_eq!(check_against_readback(&clean_dir(), &exp), 76);
    // The Blobs' and Files' bytes (the 5 MiB one from its overflow chunk too), in each
    // record's blob-list order, as the page read them.
    let dbs = sst_chrome::idb::sqlite::open_folder(&clean_dir()).unwrap();
    let mut got = Vec::new();
    for db in &dbs {
        for (&store, info) in &db.info.stores {
            db.for_each_record(store, |r| {
                for b in db.blobs(r.row_id)? {
                    let bytes = db.blob_bytes(b.object.blob_number)?;
                    assert_eq!(bytes.len() as i64, b.object.size);
                    got.push((
                        info.name.clone().unwrap(),
                        bytes.len(),
                        hex::encode(Sha256::digest(&bytes)),
                    ));
                }
                Ok(true)
            })
            .unwrap();
        }
    }
    let want: Vec<(String, usize, String)> = exp["blobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let size = b["size"].as_u64().unwrap() as usize;
            (
                b["store"].as_str().unwrap().into(),
                size,
                b["sha256"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert!(
        want.iter().any(|b| b.1 > 5 << 20),
        "a blob past one 5 MiB row"
    );
}

#[test]
fn killed_browser_every_committed_transaction_from_the_wal() {
    let dir = killed_dir();
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().any(|n| n.ends_with("-wal")), "{names:?}");
    assert_eq!(
        std::fs::metadata(dir.join(names.iter().find(|n| !n.ends_with("-wal")).unwrap()))
            .unwrap()
            .len(),
        4096,
        "the main file holds the header only: everything is in the log"
    );
    assert_eq!(check_against_readback(&dir, &expected("killed")), 17);
    let (code, out, err) = sst(&["db", "info", &s(&dir), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let info: Value = serde_json::from_str(&out).unwrap();
    let wal = &info["databases"][0]["wal"];
    assert_eq!(
        (wal["commits"].as_u64(), wal["uncommitted_frames"].as_u64()),
        (Some(39), Some(0)),
        "{wal}"
    );
}

#[test]
fn older_versions_from_the_wal_frames() {
    let (code, out, err) = sst(&["db", "records", &s(&killed_dir()), "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    let mut live = 0;
    let mut older: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for line in out.lines() {
        let row = parse_row(line);
        let status = row["status"].as_str().unwrap().to_string();
        if status == "live" {
            live += 1;
            continue;
        }
        assert_eq!(row["place"], "wal_frame", "{line}");
        assert!(row["file"].as_str().unwrap().ends_with("-wal"));
        older
            .entry(status)
            .or_default()
            .push(row["idb"]["data"].clone());
    }
    assert_eq!(live, 17);
    // Notes 1-5 were rewritten five times (versions 2-6), notes 10-14 deleted, the counter
    // rewritten nine times: every earlier version is still in the log's earlier frames.
    let mut versions: Vec<(u64, String)> = older["shadowed"]
        .iter()
        .filter_map(|d| Some((d["id"].as_u64()?, d["title"].as_str()?.to_string())))
        .collect();
    versions.sort();
    let want: Vec<(u64, String)> = (1..=5)
        .flat_map(|i| {
            (1..=5).map(move |v| {
                (
                    i,
                    if v == 1 {
                        format!("note {i}")
                    } else {
                        format!("note {i} v{v}")
                    },
                )
            })
        })
        .collect();
    let mut want = want;
    want.sort();
    assert_eq!(versions, want);
    let counts: Vec<u64> = older["shadowed"]
        .iter()
        .filter_map(|d| d["n"].as_u64())
        .collect();
    assert_eq!(counts, (1..=9).collect::<Vec<_>>());
    let deleted: Vec<u64> = older["deleted"]
        .iter()
        .map(|d| d["id"].as_u64().unwrap())
        .collect();
    assert_eq!(deleted, [10, 11, 12, 13, 14]);
    assert_eq!(older.len(), 2, "{:?}", older.keys());
}

#[test]
fn get_by_indexeddb_key() {
    let dir = s(&clean_dir());
    let (code, out, err) = sst(&[
        "db",
        "get",
        &dir,
        "--database",
        "corpusdb",
        "--store",
        "keys",
        "--format",
        "jsonl",
        "1",
        "\"\\u00e9t\\u00e9\"",
        "[1,[2,[3]]]",
        "{\"$type\":\"date\",\"value\":0}",
        "{\"$type\":\"ArrayBuffer\",\"hex\":\"fffe\"}",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = out.lines().map(parse_row).collect();
    assert_eq!(rows.len(), 5);
    assert!(rows
        .iter()
        .all(|r| r["found"] == true && r["idb"]["kind"] == "record"));
    // Keys deleted by the page are not found (exit 1), and say so.
    let (code, out, _) = sst(&[
        "db",
        "get",
        &dir,
        "--database",
        "corpusdb",
        "--store",
        "keys",
        "\"b\"",
        "2",
    ]);
    assert_eq!(code, 1);
    assert_eq!(out.matches("not found").count(), 2, "{out}");
    let (code, _, err) = sst(&["db", "get", &dir, "1"]);
    assert_eq!(code, 2);
    assert!(err.contains("--store"), "{err}");
}

/// Every file under `dir`: (relative path, size, mtime, sha256).
fn snapshot(dir: &Path) -> Vec<(String, u64, std::time::SystemTime, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::metadata(&p).unwrap();
            if m.is_dir() {
                todo.push(p.clone());
            }
            let hash = if m.is_file() {
                hex::encode(Sha256::digest(std::fs::read(&p).unwrap()))
            } else {
                String::new()
            };
            out.push((
                s(p.strip_prefix(dir).unwrap()),
                m.len(),
                m.modified().unwrap(),
                hash,
            ));
        }
    }
    out.sort();
    out
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

#[test]
fn reading_never_writes_a_byte_an_mtime_or_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&root().join("profile"), &tmp.path().join("profile"));
    copy_tree(&root().join("killed"), &tmp.path().join("killed"));
    let clean = tmp
        .path()
        .join("profile/Default/IndexedDB/http_127.0.0.1_42009");
    let killed = tmp.path().join("killed/http_127.0.0.1_42049");
    let one_file = std::fs::read_dir(&killed)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| !s(p).ends_with("-wal"))
        .unwrap();
    let before = snapshot(tmp.path());
    assert!(before.iter().any(|f| f.0.ends_with("-wal")));
    let mut runs = 0;
    for target in [&clean, &killed, &one_file] {
        for args in [
            vec!["db", "scan"],
            vec!["db", "scan", "--format", "jsonl"],
            vec!["db", "records", "--format", "jsonl"],
            vec!["db", "info"],
        ] {
            let mut a = args.clone();
            let t = s(target);
            a.insert(2, &t);
            let (code, _, err) = sst(&a);
            assert_eq!(code, 0, "{a:?}: {err}");
            assert_eq!(snapshot(tmp.path()), before, "{a:?} changed the folder");
            runs += 1;
        }
    }
    let t = s(&killed);
    for a in [
        vec!["db", "get", &t, "--store", "notes", "1"],
        vec!["profile", &s(&tmp.path().join("profile"))],
    ] {
        sst(&a);
        assert_eq!(snapshot(tmp.path()), before, "{a:?} changed the folder");
        runs += 1;
    }
    assert_eq!(runs, 14);
    assert!(!snapshot(tmp.path())
        .iter()
        .any(|f| f.0.ends_with("-shm") || f.0.ends_with("-journal")));
}
