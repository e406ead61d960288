//! Tables in an order other than bytewise (issue 16): with the right `--comparator` they are
//! searched in their order; in a wrong or unknown order `get`, `filter` and `--from/--to`
//! refuse with the reason instead of answering wrongly, and `verify` names the order.

use std::cmp::Ordering;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use leveldb_table::{Comparator, Options, TableBuilder};
use sst_chrome::idb::{IdbComparator, IdbKey};

mod common;

use common::BIN;

/// Runs `sst --keys plain ARGS` (the tables here hold plain keys; IndexedDB keys ending in a
/// number or a string often pass for internal keys, whose tag is their last 8 bytes).
fn sst(args: &[&str]) -> (i32, String, String) {
    common::output(Command::new(BIN).args(["--keys", "plain"]).args(args))
}

/// Keys compared from their last byte backwards: an order no tool knows.
struct ReversedBytes;

impl Comparator for ReversedBytes {
    fn name(&self) -> &str {
        "test.ReversedBytes"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.iter().rev().cmp(b.iter().rev())
    }
    fn find_shortest_separator(&self, _: &mut Vec<u8>, _: &[u8]) {}
    fn find_short_successor(&self, _: &mut Vec<u8>) {}
}

/// Writes `keys` (sorted by `cmp`) as a table with small blocks and a bloom filter.
fn write_table(path: &Path, cmp: Arc<dyn Comparator>, mut keys: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    keys.sort_by(|a, b| cmp.compare(a, b));
    keys.dedup_by(|a, b| cmp.compare(a, b).is_eq());
    let mut opts = Options::default().bloom(10);
    opts.comparator = cmp;
    opts.block_size = 256;
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (i, k) in keys.iter().enumerate() {
        b.add(k, format!("value {i}").as_bytes()).unwrap();
    }
    let (bytes, _) = b.finish().unwrap();
    std::fs::write(path, bytes).unwrap();
    keys
}

fn idb_keys() -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    for i in 0..300 {
        // Numbers: little-endian doubles, so bytewise order is not numeric order.
        keys.push(IdbKey::Number(i as f64 - 150.0).record_key(1, 1));
        keys.push(IdbKey::String(format!("name{i}").encode_utf16().collect()).record_key(1, 2));
    }
    keys
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn idb_table_is_searched_in_its_order_and_refused_in_another() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("idb.ldb");
    let keys = write_table(&path, Arc::new(IdbComparator), idb_keys());
    let p = path.to_str().unwrap();
    let probe = hex(&keys[123]);

    // Bytewise (the default): refused, and the hint names idb_cmp1.
    let (code, out, err) = sst(&["get", p, "--hex", &probe]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "nothing answered: {out}");
    assert!(
        err.contains("out of leveldb.BytewiseComparator order"),
        "{err}"
    );
    assert!(err.contains("--comparator idb_cmp1"), "{err}");
    let (code, _, err) = sst(&["scan", p, "--hex", "--from", &probe]);
    assert_eq!(code, 2);
    assert!(
        err.contains("refusing a --from/--to range") && err.contains("idb_cmp1"),
        "{err}"
    );
    let (code, _, err) = sst(&["filter", p, "--hex", &probe]);
    assert_eq!(code, 2);
    assert!(err.contains("--comparator idb_cmp1"), "{err}");
    // verify reports the disorder and names the order the keys are in.
    let (code, out, _) = sst(&["verify", p]);
    assert_eq!(code, 1);
    assert!(out.contains("keys are in idb_cmp1 order"), "{out}");

    // In idb_cmp1: every key found, absent keys absent, the range right.
    let (code, out, err) = sst(&["--comparator", "idb_cmp1", "verify", p]);
    assert_eq!(code, 0, "{out}{err}");
    let all: Vec<String> = keys.iter().map(|k| hex(k)).collect();
    let mut args = vec![
        "--comparator",
        "idb_cmp1",
        "get",
        p,
        "--hex",
        "--format",
        "jsonl",
    ];
    args.extend(all.iter().map(String::as_str));
    let (code, out, err) = sst(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), keys.len());
    assert!(out.lines().all(|l| l.contains("\"found\":true")));
    let absent = hex(&IdbKey::Number(0.5).record_key(1, 1));
    let (code, out, _) = sst(&["--comparator", "idb_cmp1", "get", p, "--hex", &absent]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("not found"));
    let (code, out, _) = sst(&["--comparator", "idb_cmp1", "filter", p, "--hex", &absent]);
    assert!(code == 0 || code == 1, "{out}");
    // --from/--to in idb order: numbers -10 .. 10 (exclusive) are 20 records of store 1.
    let from = hex(&IdbKey::Number(-10.0).record_key(1, 1));
    let to = hex(&IdbKey::Number(10.0).record_key(1, 1));
    let (code, out, err) = sst(&[
        "--comparator",
        "idb_cmp1",
        "scan",
        p,
        "--hex",
        "--from",
        &from,
        "--to",
        &to,
        "--format",
        "jsonl",
    ]);
    assert_eq!(code, 0, "{err}");
    let got: Vec<f64> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["idb"]["key"].as_f64().unwrap()
        })
        .collect();
    assert_eq!(got, (-10..10).map(f64::from).collect::<Vec<_>>());
    // Text output shows the decoded key.
    let (_, out, _) = sst(&["--comparator", "idb_cmp1", "scan", p, "--limit", "1"]);
    assert!(out.starts_with("db 1 / store 1 / data / -150 => "), "{out}");
}

#[test]
fn unknown_order_is_refused_not_guessed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rev.ldb");
    let keys: Vec<Vec<u8>> = (0..2000u32)
        .map(|i| format!("k{i:05}").into_bytes())
        .collect();
    let keys = write_table(&path, Arc::new(ReversedBytes), keys);
    let p = path.to_str().unwrap();
    let probe = String::from_utf8(keys[500].clone()).unwrap();
    for cmp in [None, Some("bytewise"), Some("idb_cmp1")] {
        let mut pre: Vec<&str> = Vec::new();
        if let Some(c) = cmp {
            pre.extend(["--comparator", c]);
        }
        let run = |rest: &[&str]| sst(&[pre.as_slice(), rest].concat());
        let (code, out, err) = run(&["get", p, &probe]);
        assert_eq!(code, 2, "{cmp:?}: {out}{err}");
        assert!(err.contains("refusing to look keys up"), "{err}");
        assert!(err.contains("in no order this tool knows"), "{err}");
        let (code, out, err) = run(&["scan", p, "--from", "k00100"]);
        assert_eq!(code, 2, "{cmp:?}: {out}");
        assert!(out.is_empty());
        assert!(err.contains("refusing a --from/--to range"), "{err}");
    }
    // A scan without a range is file order, which needs no order: it still works.
    let (code, out, _) = sst(&["scan", p]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), keys.len());
}

#[test]
fn single_block_table_in_another_order_is_refused_too() {
    // One data block: the index says nothing, the keys inside the block do.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("one.ldb");
    let keys: Vec<Vec<u8>> = (0..5u32)
        .map(|i| format!("k{i}x{}", 9 - i).into_bytes())
        .collect();
    let mut opts = Options::default().bloom(10);
    opts.comparator = Arc::new(ReversedBytes);
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| ReversedBytes.compare(a, b));
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for k in &sorted {
        b.add(k, b"v").unwrap();
    }
    std::fs::write(&path, b.finish().unwrap().0).unwrap();
    let (code, _, err) = sst(&["get", path.to_str().unwrap(), "k2x7"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("out of leveldb.BytewiseComparator order"),
        "{err}"
    );
}

#[test]
fn writers_refuse_an_order_they_do_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(&input, "{\"key\":\"6b31\",\"value\":\"76\"}\n").unwrap();
    let out = dir.path().join("db");
    let (code, _, err) = sst(&[
        "--comparator",
        "idb_cmp1",
        "db",
        "build",
        out.to_str().unwrap(),
        "--from",
        input.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--comparator idb_cmp1 does not apply to db build"),
        "{err}"
    );
    assert!(!out.exists());
    let table = dir.path().join("t.ldb");
    let (code, _, err) = sst(&[
        "--comparator",
        "idb_cmp1",
        "build",
        table.to_str().unwrap(),
        "--from",
        input.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(!table.exists());
}
