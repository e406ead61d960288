//! `sst db scan|get|records|info --salvage` on damaged copies of real directories
//! (testdata/db/basic, written by C++ LevelDB; testdata/idb/chromium, by Chromium): the
//! issue's three reports (no CURRENT and MANIFEST; an IndexedDB directory without its
//! MANIFEST; a damaged table block) and the agreement of scan, records and get.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

use common::{json_lines as rows, sst};

fn copy_of(rel: &str) -> tempfile::TempDir {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(rel);
    let dst = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        let n = e.file_name().to_string_lossy().into_owned();
        if n != "expected.json" && n != "LOCK" {
            std::fs::copy(e.path(), dst.path().join(&n)).unwrap();
        }
    }
    dst
}

fn remove(dir: &Path, pred: impl Fn(&str) -> bool) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if pred(&e.file_name().to_string_lossy()) {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
}

/// Runs `sst ARGS` and returns (exit code, JSON rows, stderr).
fn run(args: &[&str]) -> (i32, Vec<Value>, String) {
    let (code, out, err) = sst(args);
    (code, rows(&out), err)
}

/// Checks that `db scan`, `db records` and `db get` (all with `--salvage` and `extra`)
/// agree on `dir`; returns the live keys (hex) with (value, seq).
fn agree(dir: &str, extra: &[&str]) -> BTreeMap<String, (String, u64)> {
    let with = |cmd: &[&str]| {
        let mut v: Vec<&str> = extra.to_vec();
        v.extend_from_slice(&["db"]);
        v.extend_from_slice(cmd);
        v.extend_from_slice(&[dir, "--salvage", "--format", "jsonl"]);
        v.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let argv = with(&["scan"]);
    let (_, scan, err) = run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(!err.contains("after"), "the scan did not stop: {err}");
    let argv = with(&["records"]);
    let (_, recs, _) = run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    let shown: Vec<(String, String, u64)> = scan
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().into(),
                r["value"].as_str().unwrap().into(),
                r["seq"].as_u64().unwrap(),
            )
        })
        .collect();
    let live: Vec<(String, String, u64)> = recs
        .iter()
        .filter(|r| r["status"] == "live")
        .map(|r| {
            (
                r["key"].as_str().unwrap().into(),
                r["value"].as_str().unwrap().into(),
                r["seq"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shown, live,
        "db scan prints exactly the records db records marks live"
    );
    // db get of every key records lists: found with the live value and seq, or deleted
    // with the deletion's seq (the newest record of the key), or not found.
    let mut newest: BTreeMap<String, &Value> = BTreeMap::new();
    for r in recs.iter().filter(|r| r["status"] != "obsolete_file") {
        newest.entry(r["key"].as_str().unwrap().into()).or_insert(r);
    }
    let keys: Vec<String> = recs
        .iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let keyfile = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(keyfile.path(), keys.join("\n")).unwrap();
    let mut argv = with(&["get"]);
    argv.extend([
        "--hex".into(),
        "--keys-from".into(),
        keyfile.path().display().to_string(),
    ]);
    let (_, got, err) = run(&argv.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(got.len(), keys.len(), "{err}");
    for (k, g) in keys.iter().zip(&got) {
        assert_eq!(g["key"].as_str(), Some(k.as_str()));
        match newest.get(k) {
            Some(r) if r["kind"] == "value" => {
                assert_eq!(g["found"], true, "{k}");
                assert_eq!(g["value"], r["value"], "{k}");
                assert_eq!(g["seq"], r["seq"], "{k}");
            }
            Some(r) => {
                assert_eq!(g["found"], false, "{k}");
                assert_eq!(g["deleted"], true, "{k}");
                assert_eq!(g["seq"], r["seq"], "{k}");
            }
            None => {
                assert_eq!(g["found"], false, "{k}");
                assert!(g.get("deleted").is_none(), "{k}");
            }
        }
    }
    shown.into_iter().map(|(k, v, s)| (k, (v, s))).collect()
}

#[test]
fn no_current_no_manifest_scan_get_and_records_agree() {
    let d = copy_of("db/basic");
    remove(d.path(), |n| {
        n == "CURRENT" || n.starts_with("MANIFEST") || n.ends_with(".log")
    });
    let dir = d.path().to_str().unwrap();
    let live = agree(dir, &[]);
    assert!(live.len() > 700, "{}", live.len());
    let (code, out, err) = sst(&["db", "info", dir, "--salvage", "--format", "json"]);
    assert_eq!(code, 1, "damage skipped: exit 1 ({err})");
    let info: Value = serde_json::from_str(&out).unwrap();
    let max = live.values().map(|x| x.1).max().unwrap();
    assert!(info["last_sequence"].as_u64().unwrap() >= max, "{info}");
    assert_eq!(info["comparator"], "leveldb.BytewiseComparator");
    assert_eq!(info["comparator_from"], "keys");
    let (_, out, _) = sst(&["db", "info", dir, "--salvage"]);
    assert!(out.contains("from the keys"), "{out}");
}

#[test]
fn an_indexeddb_directory_without_its_manifest_reads_every_key_in_its_order() {
    let d = copy_of("idb/chromium");
    let dir = d.path().to_str().unwrap();
    let (code, intact, _) = run(&["db", "scan", dir, "--format", "jsonl"]);
    assert_eq!(code, 0);
    remove(d.path(), |n| n.starts_with("MANIFEST"));
    let live = agree(dir, &[]);
    assert_eq!(live.len(), intact.len());
    let (_, out, _) = sst(&["db", "info", dir, "--salvage", "--format", "json"]);
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["comparator"], "idb_cmp1");
    // --comparator: accepted when no MANIFEST names one; refused when the keys break it.
    let live2 = agree(dir, &["--comparator", "idb_cmp1"]);
    assert_eq!(live2, live);
    let (code, _, err) = sst(&["--comparator", "bytewise", "db", "scan", dir, "--salvage"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("000005.ldb") && err.contains("--comparator"),
        "{err}"
    );
}

#[test]
fn a_damaged_table_block_is_read_past_and_named() {
    let d = copy_of("db/basic");
    let t = d.path().join("000005.ldb");
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[100] ^= 0x08;
    std::fs::write(&t, &bytes).unwrap();
    let dir = d.path().to_str().unwrap();
    let (code, _, err) = sst(&["db", "scan", dir]);
    assert_eq!(code, 1);
    assert!(
        err.contains("after"),
        "without --salvage the scan stops: {err}"
    );
    let live = agree(dir, &[]);
    let (code, scan, err) = run(&["db", "scan", dir, "--salvage", "--format", "jsonl"]);
    assert_eq!(code, 1);
    assert_eq!(scan.len(), live.len());
    assert!(
        err.contains("000005.ldb: offset 0: block checksum mismatch")
            && err.contains("bytes skipped"),
        "{err}"
    );
    // Without the MANIFEST every table is walked when the directory opens: db info lists
    // the damaged block.
    remove(d.path(), |n| n.starts_with("MANIFEST"));
    let (_, out, _) = sst(&["db", "info", dir, "--salvage", "--format", "json"]);
    let info: Value = serde_json::from_str(&out).unwrap();
    let damage = info["damage"].as_array().unwrap();
    assert!(
        damage
            .iter()
            .any(|d| d["file"] == "000005.ldb" && d["offset"] == 0 && d["len"] == 504),
        "{info}"
    );
    agree(dir, &[]);
}

#[test]
fn db_get_says_a_deleted_key_is_deleted_with_its_sequence() {
    let d = copy_of("db/basic");
    let dir = d.path().to_str().unwrap();
    let (_, recs, _) = run(&["db", "records", dir, "--format", "jsonl"]);
    let del = recs
        .iter()
        .find(|r| r["status"] == "deleted" && r["kind"] == "deletion")
        .expect("a deletion");
    let key = del["key"].as_str().unwrap();
    let (code, got, _) = run(&["db", "get", dir, "--hex", key, "--format", "jsonl"]);
    assert_eq!(code, 1);
    assert_eq!(got[0]["found"], false);
    assert_eq!(got[0]["deleted"], true);
    assert_eq!(got[0]["seq"], del["seq"]);
    let (_, out, _) = sst(&["db", "get", dir, "--hex", key]);
    assert!(
        out.trim_end()
            .ends_with(&format!(": deleted @ {}", del["seq"])),
        "{out}"
    );
    let (_, got, _) = run(&["db", "get", dir, "--hex", "6e65766572", "--format", "jsonl"]);
    assert_eq!(got[0]["found"], false);
    assert!(got[0].get("deleted").is_none() && got[0].get("seq").is_none());
}
