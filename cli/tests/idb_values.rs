//! Chrome's stored values decoded (issue 27, items 3-5), checked against what a real
//! Chromium wrote and read back: testdata/idb/values (tools/gen_idb_values_fixture.sh) and
//! the page's own reading, testdata/idb/values.expected.json.
//!
//! `sst db scan --format jsonl` gives, for every record of every store, exactly the `data`
//! the page computed from the value it read back (the page's `JSON.stringify` text, byte
//! for byte, where the contract fixes every field), the names, the Blobs' and Files' bytes
//! at the paths named; localStorage and sessionStorage rows hold exactly what the page
//! stored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

use common::sst;

#[path = "idb_values/helpers.rs"]
mod helpers;

use helpers::*;

#[test]
fn every_record_decodes_to_what_chromium_read_back() {
    let exp = expected();
    let key_data = exp["contents"]["key_data"].as_str().unwrap().to_string();
    let (code, out, err) = sst(&["db", "scan", &s(&idb_dir()), "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    // Our record rows, per (database, store), in scan order.
    let mut ours: BTreeMap<(String, String), Vec<(Value, String)>> = BTreeMap::new();
    for line in out.lines() {
        let row = parse_row(line);
        let idb = &row["idb"];
        if idb["kind"] != "record" {
            continue;
        }
        assert!(idb.get("data_error").is_none(), "{line}");
        let data = raw_data(line)
            .unwrap_or_else(|| panic!("no data: {line}"))
            .to_string();
        let db = idb["db_name"]
            .as_str()
            .unwrap_or_else(|| panic!("no db_name: {line}"));
        let store = idb["store_name"]
            .as_str()
            .unwrap_or_else(|| panic!("no store_name: {line}"));
        ours.entry((db.into(), store.into()))
            .or_default()
            .push((idb["key"].clone(), data));
    }
    let mut theirs: BTreeMap<(String, String), Vec<(Value, String)>> = BTreeMap::new();
    for r in exp["records"].as_array().unwrap() {
        let k = (
            r["database"].as_str().unwrap().into(),
            r["store"].as_str().unwrap().into(),
        );
        theirs
            .entry(k)
            .or_default()
            .push((r["key"].clone(), r["data"].as_str().unwrap().into()));
    }
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "the same databases and stores, by name"
    );
    let (mut exact, mut structural) = (0, 0);
    for (store, want) in &theirs {
        let got = &ours[store];
        assert_eq!(got.len(), want.len(), "{store:?}");
        for ((gk, gd), (wk, wd)) in got.iter().zip(want) {
            assert!(
                same_key(gk, wk),
                "{store:?}: key {gk} where the page read {wk}"
            );
            if wd.contains("\"$type\":\"error\"") {
                let want: Value = serde_json::from_str(wd).unwrap();
                assert_eq!(without_error_extras(gd), want, "{store:?} {wk}");
                structural += 1;
                continue;
            }
            if !wd.contains("$subset") && !gd.contains("\"path\":") {
                assert_eq!(gd, wd, "{store:?} {wk}");
                exact += 1;
                continue;
            }
            // Objects the contract leaves open, and Blobs and Files with their paths.
            let (g, w): (Value, Value) = (
                serde_json::from_str(gd).unwrap(),
                serde_json::from_str(wd).unwrap(),
            );
            let mut paths = Vec::new();
            assert!(
                matches(&g, &w, &key_data, &mut paths),
                "{store:?} {wk}:\n{gd}\n{wd}"
            );
            structural += 1;
            // The files at the paths named hold the record's Blobs' and Files' bytes (each
            // object's size and type were compared above, so each path is its object's).
            if let Some(blobs) =
                exp["contents"]["blobs"][wk["value"].as_str().unwrap_or("")].as_array()
            {
                let mut on_disk: Vec<String> = paths
                    .iter()
                    .map(|p| hex(&std::fs::read(p).unwrap()))
                    .collect();
                let mut wanted: Vec<String> = blobs
                    .iter()
                    .map(|b| b.as_str().unwrap().to_string())
                    .collect();
                on_disk.sort();
                wanted.sort();
                assert_eq!(on_disk, wanted, "{wk}");
            }
        }
    }
    assert!(
        exact >= 25 && structural >= 5,
        "{exact} exact, {structural} structural"
    );
}

#[test]
fn snappy_and_blob_wrapped_values_are_unwrapped() {
    let (code, out, err) = sst(&[
        "db",
        "scan",
        &s(&idb_dir()),
        "--format",
        "jsonl",
        "--database",
        "second",
        "--store",
        "large",
    ]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let records: Vec<&Value> = rows
        .iter()
        .filter(|r| r["idb"]["kind"] == "record")
        .collect();
    let envelope = |key: &str| {
        let r = records.iter().find(|r| r["idb"]["key"] == key).unwrap();
        r["idb"]["value"]["envelope"].as_str().unwrap().to_string()
    };
    assert_eq!(envelope("compressed"), "snappy");
    assert_eq!(envelope("in a blob"), "blob");
    assert_eq!(envelope("compressed in a blob"), "blob");
    assert_eq!(envelope("small"), "plain");
    // The filters kept that store only (and its exists and blob entries).
    assert!(rows
        .iter()
        .all(|r| r["idb"]["db_name"] == "second" && r["idb"]["store_name"] == "large"));
    // One of the blob files is itself snappy-compressed (FF 11 02), as Blink wrote it.
    let blob_dir = PathBuf::from(s(&idb_dir()).replace(".leveldb", ".blob"));
    let wrapped: Vec<Vec<u8>> = ["2/00/2", "2/00/3"]
        .iter()
        .map(|p| std::fs::read(blob_dir.join(p)).unwrap())
        .collect();
    assert!(wrapped.iter().any(|b| b.starts_with(b"\xff\x11\x02")));
    // A missing blob file is named, not guessed around.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join(idb_dir().file_name().unwrap());
    std::fs::create_dir(&copy).unwrap();
    for e in std::fs::read_dir(idb_dir()).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, copy.join(p.file_name().unwrap())).unwrap();
    }
    let (_, out, _) = sst(&[
        "db",
        "get",
        &s(&copy),
        "--hex",
        "--format",
        "jsonl",
        records[1]["key"].as_str().unwrap(),
    ]);
    let row: Value = serde_json::from_str(out.trim()).unwrap();
    let e = row["idb"]["data_error"].as_str().unwrap_or_default();
    assert!(
        e.contains("blob file") && e.contains("cannot be read"),
        "{row}"
    );
}

#[test]
fn text_rows_show_names_and_values() {
    let (code, out, err) = sst(&[
        "db",
        "scan",
        &s(&idb_dir()),
        "--database",
        "corpusdb",
        "--store",
        "people",
    ]);
    assert_eq!(code, 0, "{err}");
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("corpusdb / people / 1 @ "), "{first}");
    assert!(
        first.contains(r#"=> v2 | {"id":1,"name":"alice","tags":["a","b"]}"#),
        "{first}"
    );
    assert!(
        out.contains("corpusdb / people / index by_name / \"bob\""),
        "{out}"
    );
    // An unknown name is refused with the names there are.
    let (code, _, err) = sst(&["db", "scan", &s(&idb_dir()), "--store", "nope"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("corpusdb (records, blobs, people, bulk)"),
        "{err}"
    );
    // --decode none: the bytes as before.
    let (_, out, _) = sst(&[
        "db",
        "scan",
        &s(&idb_dir()),
        "--decode",
        "none",
        "--limit",
        "1",
    ]);
    assert!(out.starts_with("'\\x00\\x00"), "{out}");
}

#[test]
fn local_and_session_storage_hold_what_the_page_stored() {
    let exp = expected();
    let origin = exp["origin"].as_str().unwrap();
    for (dir, field, items) in [
        ("local_storage", "local_storage", &exp["local_storage"]),
        (
            "session_storage",
            "session_storage",
            &exp["session_storage"],
        ),
    ] {
        let path = root().join("values").join(dir);
        let (code, out, err) = sst(&["db", "scan", &s(&path), "--format", "jsonl"]);
        assert_eq!(code, 0, "{err}");
        let mut got: Vec<String> = Vec::new();
        for line in out.lines() {
            let at = line
                .find(&format!("\"{field}\":"))
                .unwrap_or_else(|| panic!("{line}"));
            let obj = &line[at + field.len() + 3..line.len() - 1];
            if obj.starts_with("{\"kind\":\"item\"") {
                // The key and value, byte for byte as JSON.stringify wrote them.
                got.push(obj[obj.find(",\"key\":").unwrap() + 1..].to_string());
                assert!(obj.contains(&format!("\"origin\":\"{origin}")), "{obj}");
            }
        }
        let mut want: Vec<String> = items
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                format!(
                    "\"key\":{},\"value\":{}}}",
                    i["key"].as_str().unwrap(),
                    i["value"].as_str().unwrap()
                )
            })
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "{dir}");
    }
    // The removed localStorage item is among the records (deleted), not among the items.
    let path = root().join("values/local_storage");
    let (_, out, _) = sst(&["db", "records", &s(&path), "--format", "jsonl"]);
    assert!(
        out.lines()
            .any(|l| l.contains("\"kind\":\"deletion\"") && l.contains("\"key\":\"removed\"")),
        "{out}"
    );
    // Text rows: origin / "key" => "value".
    let (_, out, _) = sst(&["db", "scan", &s(&path)]);
    assert!(
        out.contains(&format!("{origin} / \"ascii\" @ ")) && out.contains("=> \"value\""),
        "{out}"
    );
}

#[test]
fn a_damaged_value_says_what_and_where_in_the_row() {
    // db 1, store 1, record key 1.0; the value: version 2, Chrome 156's envelope, then a
    // byte no V8 tag is ('!'), at offset 1 + 15 + 2 = 18 of the row's value.
    let key = "0001010103000000000000f03f";
    let value = format!("02{}{}21", hex(b"\xff\x15\xfe"), "00".repeat(12) + "ff10");
    let tmp = tempfile::tempdir().unwrap();
    let rows = tmp.path().join("rows.jsonl");
    std::fs::write(
        &rows,
        format!("{{\"key\":\"{key}\",\"value\":\"{value}\"}}\n"),
    )
    .unwrap();
    let db = tmp.path().join("db");
    let (code, _, err) = sst(&["db", "build", "--from", &s(&rows), &s(&db)]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = sst(&[
        "db",
        "scan",
        &s(&db),
        "--decode",
        "indexeddb",
        "--format",
        "jsonl",
    ]);
    assert_eq!(code, 0, "{err}");
    let row: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        row["idb"]["data_error"], "unknown V8 tag '!' (0x21) at offset 18",
        "{row}"
    );
    assert_eq!(row["value"], value);
    // The text row keeps the bytes after the error.
    let (_, out, _) = sst(&["db", "scan", &s(&db), "--decode", "indexeddb"]);
    assert!(
        out.contains("=> v2 | data error: unknown V8 tag '!' (0x21) at offset 18 | '\\xff\\x15"),
        "{out}"
    );
}

#[test]
fn storage_is_detected_only_with_its_version_key() {
    // Keys shaped like sessionStorage's, without its "version" key: bytes, not decoded.
    let tmp = tempfile::tempdir().unwrap();
    let rows = tmp.path().join("rows.jsonl");
    let hexs = |s: &str| hex(s.as_bytes());
    let row = |k: &str, v: &str| format!("{{\"key\":\"{}\",\"value\":\"{}\"}}\n", hexs(k), hexs(v));
    std::fs::write(
        &rows,
        [row("map-1-a", "x\0"), row("map-1-b", "y\0")].concat(),
    )
    .unwrap();
    let db = tmp.path().join("db");
    let (code, _, err) = sst(&["db", "build", "--from", &s(&rows), &s(&db)]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = sst(&["db", "scan", &s(&db), "--format", "jsonl"]);
    assert!(!out.contains("session_storage"), "{out}");
    // Told what it is, it is decoded.
    let (_, out, _) = sst(&[
        "db",
        "scan",
        &s(&db),
        "--format",
        "jsonl",
        "--decode",
        "sessionstorage",
    ]);
    assert!(
        out.contains("\"session_storage\":{\"kind\":\"item\",\"map\":1"),
        "{out}"
    );
    // With the version key, detected.
    std::fs::write(&rows, [row("map-1-a", "x\0"), row("version", "1")].concat()).unwrap();
    let db2 = tmp.path().join("db2");
    let (code, _, err) = sst(&["db", "build", "--from", &s(&rows), &s(&db2)]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = sst(&["db", "scan", &s(&db2)]);
    assert!(out.starts_with("map 1 / \"a\" @ "), "{out}");
}

#[test]
fn sqlite_is_named_in_one_line() {
    // A SQLite file as Chromium's SQLite IndexedDB starts: the magic, a 4096-byte page, the
    // schema's CREATE statements on page 1.
    let mut page = vec![0u8; 4096];
    page[..16].copy_from_slice(b"SQLite format 3\0");
    page[16..18].copy_from_slice(&4096u16.to_be_bytes());
    page[28..32].copy_from_slice(&16u32.to_be_bytes());
    let schema =
        b"CREATE TABLE object_stores (id INTEGER PRIMARY KEY)CREATE TABLE records (row_id \
                   INTEGER PRIMARY KEY)CREATE TABLE blob_references (row_id INTEGER PRIMARY KEY)";
    page[3000..3000 + schema.len()].copy_from_slice(schema);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("https_example.com_0.indexeddb.sqlite");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("sample"), &page).unwrap();
    // `sst db` reads Chromium's SQLite IndexedDB; this imitation has no tables, and one
    // line says so, naming the file.
    let (code, _, err) = sst(&["db", "info", &s(&dir)]);
    assert_eq!(code, 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("sample: not Chromium's SQLite IndexedDB, or damaged"),
        "{err}"
    );
    let (code, _, err) = sst(&["scan", &s(&dir.join("sample"))]);
    assert_ne!(code, 0);
    assert!(err.contains("a SQLite 3 database, not LevelDB"), "{err}");
}

#[test]
fn log_rows_decode_keys_and_values_in_an_idb_directory() {
    let log: PathBuf = std::fs::read_dir(idb_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .unwrap();
    let (code, out, err) = sst(&["log", &s(&log), "--format", "jsonl"]);
    assert!(code == 0, "{err}");
    let data_rows = out.lines().filter(|l| l.contains("\"data\":")).count();
    assert!(data_rows > 0, "{out}");
    assert!(out.lines().any(|l| l.contains("\"db_name\":\"second\"")));
    // A copy outside its directory decodes keys only when told the order.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("000001.log");
    std::fs::copy(&log, &copy).unwrap();
    let (_, plain, _) = sst(&["log", &s(&copy), "--format", "jsonl"]);
    assert!(!plain.contains("\"idb\""));
    let (_, told, _) = sst(&[
        "--comparator",
        "idb_cmp1",
        "log",
        &s(&copy),
        "--format",
        "jsonl",
    ]);
    assert!(told.contains("\"idb\"") && told.contains("\"data\":"));
}
