//! Every record located (`sst db records` positions, `sst log --physical`) and torn tails
//! reported (`sst db info`), on directories written by C++ LevelDB (testdata/db) and damaged
//! copies of their files.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;

use common::{json_lines as rows, sst};

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(rel)
}

fn copy_of(rel: &str) -> tempfile::TempDir {
    let dst = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(testdata(rel)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.path().join(e.file_name())).unwrap();
    }
    dst
}

/// `sst log --physical FILE --format jsonl`: (exit code, rows, stderr); checks that the rows
/// cover the file, each starting where the one before ends.
fn physical(path: &Path) -> (i32, Vec<Value>, String) {
    let (code, out, err) = sst(&[
        "log",
        "--physical",
        path.to_str().unwrap(),
        "--format",
        "jsonl",
    ]);
    let rows = rows(&out);
    let mut at = 0u64;
    for r in &rows {
        assert_eq!(r["offset"].as_u64(), Some(at), "{r}");
        assert_eq!(r["block"].as_u64(), Some(at / 32768), "{r}");
        at += if r.get("gap").is_some() {
            r["len"].as_u64().unwrap()
        } else if r["checksum_ok"] == true {
            7 + r["length"].as_u64().unwrap()
        } else {
            r["dropped"].as_u64().unwrap()
        };
    }
    assert_eq!(
        at,
        std::fs::metadata(path).unwrap().len(),
        "the rows cover the file"
    );
    (code, rows, err)
}

fn kinds(rows: &[Value]) -> Vec<String> {
    rows.iter()
        .map(|r| match r.get("gap") {
            Some(g) => g.as_str().unwrap().to_string(),
            None if r["checksum_ok"] == true => r["type"].as_str().unwrap().to_string(),
            None => format!("{}!", r["type"].as_str().unwrap()),
        })
        .collect()
}

#[test]
fn log_physical_lists_every_fragment_and_every_damaged_range() {
    let d = copy_of("db/biglog");
    let log = d.path().join("000003.log");
    let (code, intact, err) = physical(&log);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        kinds(&intact),
        ["FULL", "FULL", "FULL", "FULL", "FULL", "FIRST", "MIDDLE", "LAST"]
    );
    let bytes = std::fs::read(&log).unwrap();

    // A flipped payload byte: that record's checksum fails and the rest of its block is
    // dropped (as LevelDB's reader drops it); reading goes on in the next block.
    let mut b = bytes.clone();
    b[40] ^= 0x20;
    std::fs::write(&log, &b).unwrap();
    let (code, rows, _) = physical(&log);
    assert_eq!(code, 1);
    assert_eq!(kinds(&rows), ["FULL", "FULL!", "MIDDLE", "LAST"]);
    assert_eq!(rows[1]["offset"], 36);
    assert_eq!(rows[1]["dropped"], 32768 - 36);

    // A length running past its block: damage to the block's end, named on stderr.
    let mut b = bytes.clone();
    b[36 + 4] = 0xff;
    b[36 + 5] = 0xff;
    std::fs::write(&log, &b).unwrap();
    let (code, rows, err) = physical(&log);
    assert_eq!(code, 1);
    assert_eq!(kinds(&rows), ["FULL", "damage", "MIDDLE", "LAST"]);
    assert_eq!(rows[1]["reason"], "bad record length");
    assert!(
        err.contains("000003.log: offset 36: bad record length"),
        "{err}"
    );

    // Cut inside the LAST fragment: a torn tail, reported with its offset (not damage).
    std::fs::write(&log, &bytes[..bytes.len() - 100]).unwrap();
    let (code, rows, err) = physical(&log);
    assert_eq!(code, 0);
    assert_eq!(kinds(&rows).last().unwrap(), "torn");
    assert!(err.contains("the last record at offset 65536"), "{err}");

    // Preallocated zeros after the records, and text output.
    let mut b = bytes.clone();
    b.resize(4 * 32768, 0);
    std::fs::write(&log, &b).unwrap();
    let (code, rows, _) = physical(&log);
    assert_eq!(code, 0);
    assert_eq!(kinds(&rows)[8..], ["zeros", "zeros"]);
    let (_, text, _) = sst(&["log", "--physical", log.to_str().unwrap()]);
    assert!(text.lines().nth(5).unwrap().contains("FIRST"), "{text}");
    assert!(text.contains("zeros"), "{text}");
}

#[test]
fn db_records_rows_carry_the_records_own_position() {
    let dir = testdata("db/basic");
    let (code, out, _) = sst(&["db", "records", dir.to_str().unwrap(), "--format", "jsonl"]);
    assert_eq!(code, 0);
    let all = rows(&out);
    let (mut t, mut l) = (0, 0);
    for r in &all {
        let file = r["file"].as_str().unwrap();
        if file.ends_with(".ldb") {
            t += 1;
            assert_eq!(r["block_offset"], r["offset"], "{r}");
            assert!(r["offset_in_block"].as_u64().unwrap() < r["block_size"].as_u64().unwrap() * 8);
        } else {
            l += 1;
            assert_eq!(r["batch_offset"], r["offset"], "{r}");
            assert!(r["offset_in_batch"].as_u64().unwrap() >= 12, "{r}");
        }
    }
    assert!(t > 0 && l > 0);
    // Rows of one block: distinct, increasing entry offsets.
    let first: Vec<u64> = all
        .iter()
        .filter(|r| r["file"] == "000005.ldb" && r["offset"] == 0)
        .map(|r| r["offset_in_block"].as_u64().unwrap())
        .collect();
    assert!(first.len() > 1 && first[0] == 0);
    let mut sorted = first.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), first.len());
}

#[test]
fn a_torn_manifest_or_log_is_a_warning_naming_file_and_offset_and_a_db_info_field() {
    let d = copy_of("db/basic");
    let dir = d.path().to_str().unwrap();
    let m = d.path().join("MANIFEST-000002");
    let mut bytes = std::fs::read(&m).unwrap();
    let end = bytes.len();
    // A record header announcing 100 bytes, and 3 of them: a write cut mid-record.
    bytes.extend_from_slice(&[1, 2, 3, 4, 100, 0, 1, 9, 9, 9]);
    std::fs::write(&m, &bytes).unwrap();
    let log = d.path().join("000008.log");
    let lb = std::fs::read(&log).unwrap();
    std::fs::write(&log, &lb[..lb.len() - 3]).unwrap();

    let (code, out, err) = sst(&["db", "info", dir, "--format", "json"]);
    assert_eq!(code, 0, "LevelDB ignores torn tails: {err}");
    assert!(
        err.contains(&format!(
            "MANIFEST-000002: the last record at offset {end} (10 bytes) is incomplete"
        )),
        "{err}"
    );
    assert!(
        err.contains("000008.log: the last record at offset"),
        "{err}"
    );
    let info: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(info["manifest_torn_tail"]["offset"], end);
    assert_eq!(info["manifest_torn_tail"]["len"], 10);
    let torn = &info["logs"][0]["torn_tail"];
    assert_eq!(
        torn["offset"].as_u64().unwrap() + torn["len"].as_u64().unwrap(),
        lb.len() as u64 - 3
    );
    let (_, text, _) = sst(&["db", "info", dir]);
    assert!(
        text.contains(&format!("at offset {end} (10 bytes)")),
        "{text}"
    );
    assert!(text.contains("torn tail at offset"), "{text}");
    // An intact directory: no torn tail.
    let (_, out, _) = sst(&[
        "db",
        "info",
        testdata("db/basic").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let info: Value = serde_json::from_str(&out).unwrap();
    assert!(info["manifest_torn_tail"].is_null());
}
