//! `sst db scan|get|records|info`, `sst log`, `sst manifest` on directories written by C++
//! LevelDB (testdata/db, made by tools/gen_db.py with what LevelDB read back), and what the
//! table commands say when given a database's other files.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::Value;

mod common;

use common::{json_lines as rows, sst};

fn db(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/db")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn expected(name: &str) -> Value {
    serde_json::from_slice(&std::fs::read(PathBuf::from(db(name)).join("expected.json")).unwrap())
        .unwrap()
}

fn pairs(v: &[Value]) -> Vec<(String, String)> {
    v.iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().into(),
                r["value"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn db_scan_equals_leveldb_iteration_now_and_at_a_snapshot() {
    for name in ["basic", "snapshot", "biglog", "goleveldb"] {
        let e = expected(name);
        let (code, out, err) = sst(&["db", "scan", &db(name), "--format", "jsonl"]);
        assert_eq!(code, 0, "{err}");
        let want: Vec<(String, String)> = e["scan"]
            .as_array()
            .unwrap()
            .iter()
            .map(|kv| {
                (
                    kv[0].as_str().unwrap().into(),
                    kv[1].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(pairs(&rows(&out)), want, "{name}");
    }
    let e = expected("snapshot");
    let seq = e["snapshot_seq"].to_string();
    let (_, out, _) = sst(&[
        "db",
        "scan",
        &db("snapshot"),
        "--at-seq",
        &seq,
        "--format",
        "jsonl",
    ]);
    let got = rows(&out);
    assert!(got
        .iter()
        .all(|r| r["seq"].as_u64().unwrap() <= e["snapshot_seq"].as_u64().unwrap()));
    let want: Vec<(String, String)> = e["snapshot_scan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| {
            (
                kv[0].as_str().unwrap().into(),
                kv[1].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(pairs(&got), want);
    // A range: [from, to), ascending.
    let (_, out, _) = sst(&[
        "db",
        "scan",
        &db("basic"),
        "--from",
        "key/00100",
        "--to",
        "key/00200",
        "--format",
        "jsonl",
    ]);
    let got = rows(&out);
    assert!(!got.is_empty());
    let keys: Vec<Vec<u8>> = got
        .iter()
        .map(|r| hex::decode(r["key"].as_str().unwrap()).unwrap())
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]));
    assert!(
        keys.iter()
            .all(|k| k.as_slice() >= b"key/00100".as_slice()
                && k.as_slice() < b"key/00200".as_slice())
    );
}

#[test]
fn db_get_agrees_with_leveldb_on_present_deleted_and_never_written_keys() {
    for (name, field, seq) in [
        ("basic", "gets", None),
        ("snapshot", "gets", None),
        ("snapshot", "snapshot_gets", Some("snapshot_seq")),
    ] {
        let e = expected(name);
        let keys: Vec<String> = e[field]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["key"].as_str().unwrap().into())
            .collect();
        let mut args = vec!["db", "get", &db(name) as &str, "--hex", "--format", "jsonl"]
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
        if let Some(s) = seq {
            args.push("--at-seq".into());
            args.push(e[s].to_string());
        }
        args.extend(keys.iter().cloned());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, _) = sst(&argv);
        let got = rows(&out);
        assert_eq!(got.len(), keys.len());
        let mut any_missing = false;
        for (g, w) in got.iter().zip(e[field].as_array().unwrap()) {
            assert_eq!(g["key"], w["key"]);
            assert_eq!(g["found"], w["found"], "{name} {}", w["key"]);
            if w["found"] == true {
                assert_eq!(g["value"], w["value"]);
                assert!(g["seq"].as_u64().is_some());
            } else {
                any_missing = true;
                // A deletion is said with its sequence (as the table `get` says it); a key
                // never written has neither.
                assert!(g.get("value").is_none());
                assert_eq!(g.get("seq").is_some(), g["deleted"] == true, "{g}");
            }
        }
        assert_eq!(code, if any_missing { 1 } else { 0 });
    }
}

#[test]
fn db_records_has_one_live_row_per_live_key_and_says_where_each_is() {
    for name in ["basic", "snapshot", "biglog", "goleveldb"] {
        let (code, out, _) = sst(&["db", "records", &db(name), "--format", "jsonl"]);
        assert_eq!(code, 0);
        let all = rows(&out);
        let (_, scan, _) = sst(&["db", "scan", &db(name), "--format", "jsonl"]);
        let live_keys: BTreeMap<String, String> = pairs(&rows(&scan)).into_iter().collect();
        let mut live_rows = BTreeMap::new();
        for r in &all {
            let status = r["status"].as_str().unwrap();
            assert!(["live", "shadowed", "deleted", "obsolete_file"].contains(&status));
            assert!(["value", "deletion"].contains(&r["kind"].as_str().unwrap()));
            let file = r["file"].as_str().unwrap();
            assert!(file.ends_with(".ldb") || file.ends_with(".log"), "{file}");
            assert!(r["offset"].as_u64().is_some() && r["seq"].as_u64().is_some());
            if status == "live" {
                assert_eq!(r["kind"], "value");
                let k = r["key"].as_str().unwrap().to_string();
                assert!(
                    live_rows
                        .insert(k, r["value"].as_str().unwrap().to_string())
                        .is_none(),
                    "two live rows"
                );
            }
        }
        assert_eq!(live_rows, live_keys, "{name}: the live rows are the scan");
        // Older versions exist and are marked: overwrites and deletions.
        let statuses: BTreeSet<&str> = all.iter().map(|r| r["status"].as_str().unwrap()).collect();
        assert!(statuses.contains("deleted"), "{statuses:?}");
        if name != "biglog" {
            assert!(statuses.contains("shadowed"), "{name}: {statuses:?}");
        }
    }
}

#[test]
fn db_info_log_and_manifest_describe_the_directory() {
    let (code, out, _) = sst(&["db", "info", &db("basic"), "--format", "json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let e = expected("basic");
    assert_eq!(v["comparator"], "leveldb.BytewiseComparator");
    assert_eq!(v["last_sequence"], e["last_sequence"]);
    assert!(v["next_file"].as_u64().unwrap() > v["log_number"].as_u64().unwrap());
    let levels = v["levels"].as_array().unwrap();
    assert_eq!(levels.len(), 7);
    let tables: usize = levels
        .iter()
        .map(|l| l["files"].as_array().unwrap().len())
        .sum();
    assert!(tables >= 3);
    for l in levels {
        for f in l["files"].as_array().unwrap() {
            assert!(f["size"].as_u64().unwrap() > 0);
            assert!(f["smallest"].as_str().is_some() && f["largest"].as_str().is_some());
        }
    }
    let logs = v["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 1);
    let log_name = format!("{:06}.log", logs[0]["number"].as_u64().unwrap());
    // sst log: the same records, the last one with the last sequence.
    let log_path = format!("{}/{log_name}", db("basic"));
    let (code, out, _) = sst(&["log", &log_path, "--format", "jsonl"]);
    assert_eq!(code, 0);
    let recs = rows(&out);
    assert_eq!(recs.len() as u64, logs[0]["records"].as_u64().unwrap());
    assert_eq!(recs.last().unwrap()["seq"], e["last_sequence"]);
    // sst manifest: edits whose new files include every live table.
    let (code, out, _) = sst(&[
        "manifest",
        &format!("{}/MANIFEST-000002", db("basic")),
        "--format",
        "jsonl",
    ]);
    assert_eq!(code, 0);
    let edits = rows(&out);
    assert_eq!(edits[0]["comparator"], "leveldb.BytewiseComparator");
    let added: BTreeSet<u64> = edits
        .iter()
        .flat_map(|e| {
            e["new_files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["number"].as_u64().unwrap())
        })
        .collect();
    for l in levels {
        for f in l["files"].as_array().unwrap() {
            assert!(added.contains(&f["number"].as_u64().unwrap()));
        }
    }
}

#[test]
fn table_commands_name_a_databases_other_files() {
    let d = db("basic");
    for (path, says) in [
        (d.clone(), "is a directory (a LevelDB database"),
        (format!("{d}/CURRENT"), "the CURRENT file"),
        (format!("{d}/LOCK"), "the LOCK file"),
        (format!("{d}/MANIFEST-000002"), "sst manifest"),
        (format!("{d}/000008.log"), "sst log"),
    ] {
        for cmd in ["stats", "scan", "blocks", "verify"] {
            let (code, out, err) = sst(&[cmd, &path]);
            assert_eq!(code, 2, "{cmd} {path}");
            assert!(
                err.contains(says) || out.contains(says),
                "{cmd} {path}: {out} {err}"
            );
        }
        let (code, _, err) = sst(&["get", &path, "k"]);
        assert_eq!(code, 2);
        assert!(err.contains(says), "{err}");
    }
}

#[test]
fn db_build_writes_a_directory_db_scan_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.jsonl");
    let input_rows: Vec<(String, String)> = (0..3000u32)
        .map(|i| {
            (
                hex::encode(format!("k{:05}", (i * 7919) % 3000)),
                hex::encode(format!("v{i}")),
            )
        })
        .collect();
    let text: String = input_rows
        .iter()
        .map(|(k, v)| format!("{{\"key\":\"{k}\",\"value\":\"{v}\"}}\n"))
        .collect();
    std::fs::write(&input, text).unwrap();
    let out = tmp.path().join("db");
    let (o, i) = (out.to_str().unwrap(), input.to_str().unwrap());
    // Unsorted without --sort: refused, naming the line, and no directory.
    let (code, _, err) = sst(&["db", "build", o, "--from", i]);
    assert_eq!(code, 2);
    assert!(err.contains("line 3: keys out of order"), "{err}");
    assert!(!out.exists());
    let (code, _, err) = sst(&[
        "db",
        "build",
        o,
        "--from",
        i,
        "--sort",
        "--table-size",
        "8192",
    ]);
    assert_eq!(code, 0, "{err}");
    let mut want = input_rows.clone();
    want.sort();
    let (_, scan, _) = sst(&["db", "scan", o, "--format", "jsonl"]);
    assert_eq!(pairs(&rows(&scan)), want);
    let (_, info, _) = sst(&["db", "info", o, "--format", "json"]);
    let v: Value = serde_json::from_str(&info).unwrap();
    assert!(v["levels"][6]["files"].as_array().unwrap().len() > 1);
    assert_eq!(v["last_sequence"], 3000);
    // An existing directory is not overwritten.
    let (code, _, _) = sst(&["db", "build", o, "--from", i, "--sort"]);
    assert_eq!(code, 2);
}

#[test]
fn db_build_sort_spills_sorted_runs_beyond_its_memory_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.tsv");
    let n = 40_000u64;
    let mut rows: Vec<(String, String)> = (0..n)
        .map(|i| {
            (
                format!("key{:07}", (i * 7919) % n),
                format!("value {i} {}", "x".repeat(40)),
            )
        })
        .collect();
    let text: String = rows.iter().map(|(k, v)| format!("{k}\t{v}\n")).collect();
    std::fs::write(&input, text).unwrap();
    let out = tmp.path().join("db");
    let (o, i) = (out.to_str().unwrap(), input.to_str().unwrap());
    // `sst db build DIR --from in.tsv --format tsv --sort` and `extra`.
    let build = |dir: &std::path::Path, extra: &[&str]| {
        let d = dir.to_str().unwrap();
        let mut args = vec!["db", "build", d, "--from", i, "--format", "tsv", "--sort"];
        args.extend_from_slice(extra);
        sst(&args)
    };
    // ~3.5 MB of entries with a 1 MiB budget: several runs on disk, merged.
    let (code, _, err) = build(&out, &["--memory-mb", "1"]);
    assert_eq!(code, 0, "{err}");
    rows.sort();
    let (_, scan, _) = sst(&["db", "scan", o, "--format", "jsonl"]);
    let got: Vec<(String, String)> = rows_of_scan(&scan);
    assert_eq!(got.len(), rows.len());
    assert!(got
        .iter()
        .zip(&rows)
        .all(|(g, w)| g.0 == hex::encode(&w.0) && g.1 == hex::encode(&w.1)));
    // With --parallel-compression: the same entries (a table is closed once its compressed
    // size reaches --table-size, which the helper thread may report later, so the table
    // boundaries may differ).
    let par = tmp.path().join("db_par");
    let (code, _, err) = build(&par, &["--memory-mb", "1", "--parallel-compression"]);
    assert_eq!(code, 0, "{err}");
    let (_, scan_par, _) = sst(&["db", "scan", par.to_str().unwrap(), "--format", "jsonl"]);
    assert!(rows_of_scan(&scan_par) == got, "the same entries");
    // A key given twice: refused, and no directory.
    std::fs::write(&input, "b\t1\na\t2\nb\t3\n").unwrap();
    let out2 = tmp.path().join("db2");
    let (code, _, err) = build(&out2, &[]);
    assert_eq!(code, 2);
    assert!(err.contains("given twice"), "{err}");
    assert!(!out2.exists());
}

fn rows_of_scan(s: &str) -> Vec<(String, String)> {
    pairs(&rows(s))
}
