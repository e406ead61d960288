//! `scan --salvage` prints the rows `scan` prints: on every undamaged table of the test data
//! (plain keys, a database's internal keys, Chrome IndexedDB tables), in text and jsonl, the
//! two outputs are byte for byte the same; `--from/--to` are compared in the table's order
//! (idb_cmp1 for IndexedDB, not bytewise), and IndexedDB keys and values are decoded.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sst_chrome::idb::IdbKey;

mod common;

use common::{json_lines, sst};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The LevelDB tables under `testdata/` that `sst verify` finds clean.
fn undamaged_tables() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                if !p.ends_with("corrupt") && !p.ends_with("rocksdb") {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "ldb" || x == "sst") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("testdata"), &mut out);
    out.retain(|t| sst(&["verify", t.to_str().unwrap()]).0 == 0);
    out.sort();
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// `sst ARGS` must succeed: its stdout.
fn ok(args: &[&str]) -> String {
    let (code, out, err) = sst(args);
    assert_eq!(code, 0, "sst {args:?}: {err}");
    out
}

#[test]
fn salvage_rows_are_scan_rows_on_every_undamaged_table() {
    let tables = undamaged_tables();
    // Plain keys, internal keys and IndexedDB tables are all among them.
    assert!(tables.len() >= 20, "{tables:?}");
    let mut kinds = (0, 0, 0);
    for t in &tables {
        let t = t.to_str().unwrap();
        for format in ["text", "jsonl", "json"] {
            let scan = ok(&["scan", t, "--format", format]);
            let salvage = ok(&["scan", t, "--salvage", "--format", format]);
            assert_eq!(scan, salvage, "{t} --format {format}");
        }
        // The first row says what the table holds. (Not every row: the JSON of a decoded
        // value keeps lone surrogates as `\ud800`, as JavaScript does, which serde_json
        // refuses.)
        let first = ok(&["scan", t, "--format", "jsonl", "--limit", "1"]);
        let rows = json_lines(&first);
        match rows.first() {
            Some(r) if r.get("idb").is_some() => kinds.2 += 1,
            Some(r) if r.get("seq").is_some() => kinds.1 += 1,
            Some(_) => kinds.0 += 1,
            None => {}
        }
        // --hex and --limit too.
        let args = ["scan", t, "--hex", "--limit", "7"];
        let scan = ok(&args);
        let salvage = ok(&[&args[..], &["--salvage"]].concat());
        assert_eq!(scan, salvage, "{t} --hex --limit 7");
    }
    assert!(kinds.0 > 3 && kinds.1 > 3 && kinds.2 >= 2, "{kinds:?}");
}

fn idb_table() -> String {
    root()
        .join("testdata/idb/chromium/000005.ldb")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn salvage_decodes_indexeddb_rows_with_their_names() {
    let t = idb_table();
    let rows = json_lines(&ok(&["scan", &t, "--salvage", "--format", "jsonl"]));
    let records: Vec<&Value> = rows
        .iter()
        .filter(|r| r["idb"]["kind"] == "record")
        .collect();
    assert!(records.len() > 100, "{}", records.len());
    // Names from the directory's metadata, and the values decoded.
    assert!(records.iter().all(|r| r["idb"]["db_name"] == "fixture"));
    assert!(records
        .iter()
        .any(|r| r["idb"]["store_name"] == "keys" && r["idb"]["data"]["note"].is_string()));
    let text = ok(&["scan", &t, "--salvage"]);
    assert!(
        text.lines()
            .any(|l| l.starts_with("fixture / keys / -7 @ ")),
        "{}",
        &text[..text.len().min(2000)]
    );
}

#[test]
fn salvage_ranges_are_in_the_tables_order() {
    // [-7, "") in store 1: numbers from -7 up, then dates (idb_cmp1 puts dates after
    // numbers and strings after dates). Bytewise the range is empty: a string key's type
    // byte is below a number's.
    let from = IdbKey::Number(-7.0).record_key(1, 1);
    let to = IdbKey::String(vec![]).record_key(1, 1);
    let minus_inf = IdbKey::Number(f64::NEG_INFINITY).record_key(1, 1);
    assert!(to < from, "bytewise the range is empty");
    let t = idb_table();
    let (f, to_hex) = (hex(&from), hex(&to));
    let args = ["scan", t.as_str(), "--hex", "--from", &f, "--to", &to_hex];
    for format in ["jsonl", "text"] {
        let a = [&args[..], &["--format", format]].concat();
        let scan = ok(&a);
        let salvage = ok(&[&a[..], &["--salvage"]].concat());
        assert_eq!(scan, salvage, "--format {format}");
    }
    let rows = json_lines(&ok(
        &[&args[..], &["--salvage", "--format", "jsonl"]].concat()
    ));
    assert!(rows.len() > 8, "{rows:?}");
    let uk = |r: &Value| r["user_key"].as_str().unwrap().to_string();
    assert!(rows.iter().all(|r| r["idb"]["store"] == 1));
    assert!(!rows.iter().any(|r| uk(r) == hex(&minus_inf)), "{rows:?}");
    // Numbers (JSON numbers, or ±Infinity as `$type` forms) and dates.
    assert!(rows.iter().all(|r| {
        let k = &r["idb"]["key"];
        k.is_number() || k["$type"] == "number" || k["$type"] == "date"
    }));
    // The copied-out table (no MANIFEST beside it) is read in idb_cmp1 order when asked.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("000005.ldb");
    std::fs::copy(&t, &copy).unwrap();
    let c = copy.to_str().unwrap();
    let a = [
        "--comparator",
        "idb_cmp1",
        "scan",
        c,
        "--hex",
        "--from",
        &f,
        "--to",
        &to_hex,
        "--format",
        "jsonl",
    ];
    let scan = ok(&a);
    assert_eq!(scan, ok(&[&a[..], &["--salvage"]].concat()));
    assert_eq!(json_lines(&scan).len(), rows.len());
}
