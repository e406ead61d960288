//! Rough edges a new user hit: the verdict of `sst verify` under a closed pipe, the sequence
//! that `sst get` prints for a database's tables, and the mode of a table `sst build` writes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod common;

use common::{json_lines as lines_json, sst, BIN};

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(rel)
}

/// Runs `sst ARGS` with stdout a pipe whose read end is closed before `sst` starts (Python
/// makes the pipe, closes its read end and spawns), so every write gets EPIPE, as under
/// `sst verify ... | head -0`. Returns (exit code, stderr).
fn run_into_closed_pipe(args: &[&str]) -> (i32, String) {
    let script = "import os, subprocess, sys\n\
                  r, w = os.pipe()\n\
                  os.close(r)\n\
                  p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)\n\
                  sys.stderr.buffer.write(p.stderr)\n\
                  sys.exit(p.returncode if p.returncode >= 0 else 128 - p.returncode)\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(BIN)
        .args(args)
        .output()
        .expect("python3 runs (installed by scripts/setup.sh)");
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn verify_keeps_its_verdict_when_nobody_reads_its_output() {
    let good = testdata("cases/small_snappy/000005.ldb");
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(&good).unwrap();
    bytes[10] ^= 0x40; // inside the first data block: its checksum fails
    let bad = dir.path().join("000009.ldb");
    std::fs::write(&bad, &bytes).unwrap();
    let (good_s, bad_s) = (good.to_str().unwrap(), bad.to_str().unwrap());

    // Read normally, the verdicts are 0 (all good) and 1 (a damaged table).
    let o = Command::new(BIN).args(["verify", good_s]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let o = Command::new(BIN)
        .args(["verify", good_s, bad_s])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{o:?}");

    // Into a closed pipe: the same verdicts, quietly, no panic and no SIGPIPE death.
    let (code, err) = run_into_closed_pipe(&["verify", good_s]);
    assert_eq!((code, err.as_str()), (0, ""));
    for args in [["verify", good_s, bad_s], ["verify", bad_s, good_s]] {
        let (code, err) = run_into_closed_pipe(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn get_prints_the_sequence_of_keys_found_in_a_database_table() {
    let t = testdata("cases/small_snappy/000005.ldb");
    let t = t.to_str().unwrap();
    // What scan says about key-0001: its sequence in the table.
    let scan = Command::new(BIN)
        .args(["scan", t, "--format", "jsonl"])
        .output()
        .unwrap();
    let rows: Vec<Value> = String::from_utf8(scan.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let row = rows
        .iter()
        .find(|r| r["user_key"] == hex::encode("key-0001"))
        .unwrap();
    let seq = row["seq"].as_u64().unwrap();

    let o = Command::new(BIN)
        .args(["get", t, "key-0001", "no-such-key", "--format", "jsonl"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "one key is missing");
    let got: Vec<Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["found"], true);
    assert_eq!(got[0]["seq"].as_u64(), Some(seq));
    assert_eq!(got[0]["value"], row["value"]);
    assert_eq!(got[1]["found"], false);
    assert!(got[1].get("seq").is_none());

    let o = Command::new(BIN)
        .args(["get", t, "key-0001"])
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.trim_end().ends_with(&format!("@ {seq}")), "{text}");
}

#[test]
fn build_writes_a_new_table_with_the_umask_mode_and_keeps_a_replaced_ones_mode() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.jsonl");
    std::fs::write(
        &input,
        "{\"key\":\"6131\",\"value\":\"7631\"}\n{\"key\":\"6132\",\"value\":\"7632\"}\n",
    )
    .unwrap();
    let out = dir.path().join("out.ldb");
    let build = |umask: &str| {
        let st = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "umask {umask}; exec \"$0\" build --from \"$1\" \"$2\""
            ))
            .arg(BIN)
            .arg(&input)
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success());
        std::fs::metadata(&out).unwrap().permissions().mode() & 0o777
    };
    // A new file: 0666 less the umask, as any tool that creates a file.
    assert_eq!(build("022"), 0o644);
    std::fs::remove_file(&out).unwrap();
    assert_eq!(build("077"), 0o600);
    // Replacing a file keeps the file's mode, whatever the umask.
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    assert_eq!(build("022"), 0o640);
    // And nothing else is left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["in.jsonl", "out.ldb"]);
}

#[test]
fn every_subcommand_takes_text_json_and_jsonl() {
    let t = testdata("cases/small_snappy/000005.ldb");
    let t = t.to_str().unwrap();
    // Row commands: json is the array of the jsonl rows.
    for args in [
        vec!["scan", t],
        vec!["scan", t, "--reverse", "--limit", "3"],
        vec!["get", t, "key-0001", "key-0002", "absent"],
        vec!["blocks", t],
    ] {
        let run = |f: &str| {
            let mut a = args.clone();
            a.extend(["--format", f]);
            sst(&a)
        };
        let (c1, jsonl, _) = run("jsonl");
        let (c2, json, _) = run("json");
        let (c3, text, _) = run("text");
        assert_eq!((c1, c2), (c3, c3), "{args:?}: one verdict in every format");
        let rows = lines_json(&jsonl);
        assert!(!rows.is_empty());
        let array: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(array, Value::Array(rows), "{args:?}");
        assert!(serde_json::from_str::<Value>(text.lines().next().unwrap()).is_err());
    }
    // An empty result is an empty array.
    let (_, json, _) = sst(&["scan", t, "--from", "zzz", "--format", "json"]);
    assert_eq!(json, "[]\n");
    // Document commands: jsonl is the same object on one line.
    for args in [vec!["stats", t], vec!["filter", t, "key-0001"]] {
        let run = |f: &str| {
            let mut a = args.clone();
            a.extend(["--format", f]);
            sst(&a)
        };
        let (_, json, _) = run("json");
        let (_, jsonl, _) = run("jsonl");
        assert_eq!(jsonl.lines().count(), 1, "{args:?}");
        let a: Value = serde_json::from_str(&json).unwrap();
        let b: Value = serde_json::from_str(&jsonl).unwrap();
        assert_eq!(a, b, "{args:?}");
    }
}

#[test]
fn stats_shows_smallest_and_largest_decoded_as_blocks_does() {
    let t = testdata("cases/small_snappy/000005.ldb");
    let t = t.to_str().unwrap();
    let (_, blocks, _) = sst(&["blocks", t, "--format", "jsonl"]);
    let rows = lines_json(&blocks);
    let data: Vec<&Value> = rows.iter().filter(|r| r["type"] == "data").collect();
    let first = data[0]["first_key"].as_str().unwrap().to_string();
    let last = data.last().unwrap()["last_key"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, json, _) = sst(&["stats", t, "--format", "json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["smallest_key"], first.as_str());
    assert_eq!(v["largest_key"], last.as_str());
    let (_, text, _) = sst(&["stats", t]);
    let line = text
        .lines()
        .find(|l| l.starts_with("smallest key:"))
        .unwrap();
    assert!(line.contains("'key-0000/a' @ 1"), "{line}");
    assert!(line.contains(&first), "{line}");
    let line = text
        .lines()
        .find(|l| l.starts_with("largest key:"))
        .unwrap();
    assert!(line.contains("'key-0199' @ 200"), "{line}");
}

#[test]
fn no_verify_is_refused_where_it_would_do_nothing() {
    let t = testdata("cases/small_snappy/000005.ldb");
    let t = t.to_str().unwrap();
    let (code, out, err) = sst(&["verify", "--no-verify", t]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert!(
        err.contains("--no-verify does not apply to verify"),
        "{err}"
    );
    let (code, _, err) = sst(&["build", "--no-verify", "--from", "-", "/nonexistent/x.ldb"]);
    assert_eq!(code, 2);
    assert!(err.contains("does not apply to build"), "{err}");
    // Where it applies, it is taken.
    for args in [
        ["scan", "--no-verify", t],
        ["blocks", "--no-verify", t],
        ["stats", "--no-verify", t],
    ] {
        assert_eq!(sst(&args).0, 0, "{args:?}");
    }
}

#[test]
fn salvage_reads_past_damaged_blocks_and_lost_footers() {
    let good = testdata("cases/small_snappy/000005.ldb");
    let good_s = good.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (_, all, _) = sst(&["scan", good_s, "--format", "jsonl"]);
    let all = lines_json(&all);
    let (_, blocks, _) = sst(&["blocks", good_s, "--format", "jsonl"]);
    let data: Vec<Value> = lines_json(&blocks)
        .into_iter()
        .filter(|r| r["type"] == "data")
        .collect();
    // Damage the second data block.
    let off = data[1]["offset"].as_u64().unwrap();
    let size = data[1]["size"].as_u64().unwrap();
    let entries_1 = data[1]["entries"].as_u64().unwrap() as usize;
    let mut bytes = std::fs::read(&good).unwrap();
    bytes[(off + size / 2) as usize] ^= 0x20;
    let bad = dir.path().join("bad.ldb");
    std::fs::write(&bad, &bytes).unwrap();
    let bad_s = bad.to_str().unwrap();

    // Without --salvage the scan stops at the damaged block.
    let (code, plain, _) = sst(&["scan", bad_s, "--format", "jsonl"]);
    assert_eq!(code, 1);
    assert!(lines_json(&plain).len() < all.len() - entries_1);
    // With it: every other block's entries, the damage named on stderr, exit 1.
    let (code, out, err) = sst(&["scan", bad_s, "--salvage", "--format", "jsonl"]);
    assert_eq!(code, 1, "{err}");
    let got = lines_json(&out);
    let first_0 = data[0]["entries"].as_u64().unwrap() as usize;
    let mut want = all[..first_0].to_vec();
    want.extend_from_slice(&all[first_0 + entries_1..]);
    assert_eq!(got, want);
    assert!(
        err.contains(&format!("offset {off}: block checksum mismatch"))
            && err.contains(&format!("({} bytes skipped)", size + 5)),
        "{err}"
    );
    // --from/--to and --limit still apply.
    let (_, out, _) = sst(&[
        "scan",
        bad_s,
        "--salvage",
        "--format",
        "jsonl",
        "--from",
        "key-0150",
        "--limit",
        "3",
    ]);
    let (_, want, _) = sst(&[
        "scan", good_s, "--format", "jsonl", "--from", "key-0150", "--limit", "3",
    ]);
    assert_eq!(lines_json(&out), lines_json(&want));
    assert_eq!(lines_json(&out).len(), 3);

    // The footer lost: the table does not open, its blocks are found by their checksums.
    let mut bytes = std::fs::read(&good).unwrap();
    let n = bytes.len();
    bytes[n - 48..].fill(0);
    let lost = dir.path().join("lost.ldb");
    std::fs::write(&lost, &bytes).unwrap();
    let lost_s = lost.to_str().unwrap();
    assert_eq!(sst(&["scan", lost_s]).0, 2, "unreadable without --salvage");
    let (code, out, err) = sst(&["scan", lost_s, "--salvage", "--format", "jsonl"]);
    assert_eq!(code, 1);
    assert_eq!(lines_json(&out), all, "every entry, read as internal keys");
    assert!(
        err.contains("salvaging the blocks whose checksums check out"),
        "{err}"
    );

    // verify --salvage adds what a salvage recovers; the verdict stays "damaged".
    let (code, out, _) = sst(&["verify", "--salvage", bad_s, lost_s, good_s]);
    assert_eq!(code, 1);
    assert!(
        out.contains(&format!(
            "{bad_s}: salvage: {} entries in {} data blocks readable (through the index",
            all.len() - entries_1,
            data.len() - 1
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{lost_s}: salvage: {} entries in {} data blocks readable (found by their checksums",
            all.len(),
            data.len()
        )),
        "{out}"
    );
    assert!(!out.contains(&format!("{good_s}: salvage")));
    // Backwards is refused.
    assert_eq!(sst(&["scan", bad_s, "--salvage", "--reverse"]).0, 2);
}

#[test]
fn refilter_copies_the_data_and_rebuilds_the_filter() {
    let src = testdata("cases/small_snappy/000005.ldb");
    let s = src.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let same = dir.path().join("same.ldb");
    let local = dir.path().join("local.ldb");
    let none = dir.path().join("none.ldb");
    // LevelDB's policy at the table's own bits: the same bytes.
    assert_eq!(sst(&["refilter", s, same.to_str().unwrap()]).0, 0);
    assert_eq!(std::fs::read(&same).unwrap(), std::fs::read(&src).unwrap());
    assert_eq!(
        sst(&[
            "refilter",
            s,
            local.to_str().unwrap(),
            "--policy",
            "local",
            "--bloom-bits",
            "9.5"
        ])
        .0,
        0
    );
    assert_eq!(
        sst(&["refilter", s, none.to_str().unwrap(), "--no-filter"]).0,
        0
    );
    let (_, want, _) = sst(&["scan", s, "--format", "jsonl"]);
    for t in [&local, &none] {
        let (code, got, _) = sst(&["scan", t.to_str().unwrap(), "--format", "jsonl"]);
        assert_eq!((code, &got), (0, &want));
        assert_eq!(sst(&["verify", t.to_str().unwrap()]).0, 0);
    }
    let (_, stats, _) = sst(&["stats", local.to_str().unwrap(), "--format", "json"]);
    assert!(stats.contains("leveldb-table.CacheLocalBloom.1"), "{stats}");
    // A damaged table is refused and nothing is written.
    let mut bytes = std::fs::read(&src).unwrap();
    bytes[100] ^= 0x10;
    let bad = dir.path().join("bad.ldb");
    std::fs::write(&bad, &bytes).unwrap();
    let out = dir.path().join("out.ldb");
    let (code, _, err) = sst(&["refilter", bad.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("checksum"), "{err}");
    assert!(!out.exists());
    // Fractional bits need the cache-local policy.
    assert_eq!(
        sst(&["refilter", s, out.to_str().unwrap(), "--bloom-bits", "9.5"]).0,
        2
    );
}
