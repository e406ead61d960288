//! `sst conform`: this project's adapter passes every case (its writes byte for byte C++
//! LevelDB's and read back by it); C++ LevelDB's adapter (built here with g++ against
//! Debian's libleveldb-dev) passes every case outside "damaged" and fails exactly the damaged
//! ones docs/conformance.md explains; plyvel's passes its directories; the deliberately
//! broken adapters of `tests/conform_adapters/` are each caught; an adapter that hangs,
//! leaves a process holding its output, crashes or prints garbage fails its case and the run
//! goes on; the JSONL rows keep their contract.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn repo(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// `sst conform ARGS --format jsonl`: the exit code, the rows and stderr.
fn conform(args: &[&str]) -> (i32, Vec<Value>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sst"))
        .arg("conform")
        .args(args)
        .args(["--format", "jsonl"])
        .env("SST", env!("CARGO_BIN_EXE_sst"))
        .output()
        .expect("sst runs");
    let stdout = String::from_utf8(out.stdout).expect("utf-8 rows");
    let rows = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), rows, err)
}

fn field<'a>(row: &'a Value, name: &str) -> &'a str {
    row[name]
        .as_str()
        .unwrap_or_else(|| panic!("{name} in {row}"))
}

/// The names of the rows with `result`, in `group` (any group when `None`).
fn named(rows: &[Value], result: &str, group: Option<&str>) -> BTreeSet<String> {
    rows.iter()
        .filter(|r| field(r, "result") == result)
        .filter(|r| group.is_none_or(|g| field(r, "group") == g))
        .map(|r| field(r, "case").to_string())
        .collect()
}

fn row<'a>(rows: &'a [Value], case: &str) -> &'a Value {
    rows.iter()
        .find(|r| field(r, "case") == case)
        .unwrap_or_else(|| panic!("no row for {case}"))
}

#[test]
fn our_adapter_passes_every_case_and_writes_what_cpp_leveldb_writes() {
    let (code, rows, err) = conform(&[
        "--impl",
        &repo("tools/conform/sst/adapter.sh"),
        "--reference",
        &repo("tools/conform/leveldb_cpp/adapter.sh"),
    ]);
    let failed = named(&rows, "fail", None);
    let skipped = named(&rows, "skip", None);
    assert!(
        failed.is_empty() && skipped.is_empty(),
        "{failed:?} {skipped:?} {err}"
    );
    assert_eq!(code, 0, "{err}");
    assert!(rows.len() > 140, "{} rows", rows.len());
    // The row contract: exactly these fields, these groups and verbs.
    let groups: BTreeSet<&str> = rows.iter().map(|r| field(r, "group")).collect();
    assert_eq!(
        groups,
        BTreeSet::from(["damaged", "directories", "tables", "writes"])
    );
    for r in &rows {
        let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            BTreeSet::from(["case", "detail", "group", "result", "verb"])
        );
        assert!(["read-table", "read-db", "write-table"].contains(&field(r, "verb")));
    }
    // Byte for byte the table C++ LevelDB's builder writes, and read back by LevelDB.
    let bytes = row(&rows, "write-none-bloom10-bytes");
    assert!(
        field(bytes, "detail").starts_with("identical to LevelDB 1.23"),
        "{bytes}"
    );
    let read = row(&rows, "write-defaults");
    assert!(
        field(read, "detail").ends_with("LevelDB 1.23 (C++, libleveldb) reads it back"),
        "{read}"
    );
    // Damage is refused (or, where no entry is touched, read whole).
    let d = row(&rows, "damaged-data-flip-snappy");
    assert!(
        field(d, "detail").contains("block checksum mismatch"),
        "{d}"
    );
    assert_eq!(
        field(row(&rows, "damaged-filter-flip"), "detail"),
        "read all 600 entries intact"
    );
}

#[test]
fn cpp_leveldb_passes_every_case_outside_damaged_and_fails_the_documented_ones() {
    let (code, rows, err) = conform(&["--impl", &repo("tools/conform/leveldb_cpp/adapter.sh")]);
    for g in ["tables", "directories", "writes"] {
        assert!(named(&rows, "fail", Some(g)).is_empty(), "{g}: {err}");
        assert!(!named(&rows, "pass", Some(g)).is_empty(), "{g}");
    }
    // What it cannot read: zstd, zlib and raw deflate blocks; idb_cmp1 directories.
    let skipped = named(&rows, "skip", None);
    assert!(skipped.contains("table-zstd") && skipped.contains("fixture-idb-chromium"));
    assert!(skipped
        .iter()
        .all(|s| !s.starts_with("write-") && !s.starts_with("damaged-")));
    // LevelDB's own behaviour on hostile blocks (docs/conformance.md): a block whose restart
    // array is impossible reads as empty (entries dropped, exit 0); a 1 TiB handle is
    // allocated before it is checked: std::bad_alloc and abort where the kernel refuses the
    // allocation (vm.overcommit_memory 0 or 2), a short read otherwise.
    let failed = named(&rows, "fail", Some("damaged"));
    let dropped = ["hostile-restart-past-block", "hostile-restarts-zero"];
    let allocated = ["hostile-footer-index-1tib", "hostile-index-size-1tib"];
    for case in dropped {
        assert!(failed.contains(case), "{case}: {err}");
        assert!(field(row(&rows, case), "detail").starts_with("exit 0 with wrong data"));
    }
    for case in &failed {
        assert!(
            dropped.contains(&case.as_str()) || allocated.contains(&case.as_str()),
            "{case}"
        );
    }
    for case in allocated.iter().filter(|c| failed.contains(**c)) {
        assert!(
            field(row(&rows, case), "detail").contains("SIGABRT"),
            "{case}"
        );
        assert!(
            field(row(&rows, case), "detail").contains("bad_alloc"),
            "{case}"
        );
    }
    assert_eq!(code, 1);
}

#[test]
fn plyvel_reads_every_directory_and_refuses_every_damaged_one() {
    let (code, rows, err) = conform(&[
        "--impl",
        &format!("python3 {}", repo("tools/conform/plyvel/adapter.py")),
        "--group",
        "directories",
        "--group",
        "damaged",
    ]);
    assert!(named(&rows, "fail", None).is_empty(), "{err}");
    // Skipped: the damaged tables (plyvel opens no single table) and the directories in
    // Chrome's idb_cmp1 order (its LevelDB has no such comparator); every damaged directory
    // is refused.
    for r in rows.iter().filter(|r| field(r, "result") == "skip") {
        let why = field(r, "detail");
        assert!(
            why == "comparator idb_cmp1 not listed" || why == "read-table not listed",
            "{r}"
        );
    }
    assert!(
        named(&rows, "pass", Some("directories")).len() >= 15,
        "{err}"
    );
    let damaged = named(&rows, "pass", Some("damaged"));
    assert!(damaged.len() >= 7 && damaged.iter().all(|c| c.starts_with("damaged-db-")));
    assert_eq!(code, 0);
}

#[test]
fn an_adapter_that_drops_an_entry_is_caught() {
    let adapter = repo("cli/tests/conform_adapters/drops_entry.sh");
    let (code, rows, _) = conform(&[
        "--impl",
        &adapter,
        "--case",
        "table-none",
        "--case",
        "db-levels",
    ]);
    assert_eq!(code, 1);
    for case in ["table-none", "db-levels"] {
        let r = row(&rows, case);
        assert_eq!(field(r, "result"), "fail");
        assert!(field(r, "detail").contains(") missing;"), "{r}");
    }
}

#[test]
fn an_adapter_that_returns_a_damaged_block_as_data_is_caught() {
    let adapter = repo("cli/tests/conform_adapters/damaged_as_data.sh");
    let (code, rows, _) = conform(&["--impl", &adapter, "--case", "damaged-data-flip-*"]);
    assert_eq!(code, 1);
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!(field(r, "result"), "fail", "{r}");
        assert!(
            field(r, "detail").starts_with("exit 0 with wrong data"),
            "{r}"
        );
    }
}

#[test]
fn a_writer_that_changes_a_value_is_caught() {
    let adapter = repo("cli/tests/conform_adapters/writer_changes_value.sh");
    let (code, rows, _) = conform(&["--impl", &adapter, "--case", "write-none*"]);
    assert_eq!(code, 1);
    let r = row(&rows, "write-none");
    assert!(field(r, "detail").starts_with("read back: entry 0 "), "{r}");
    assert!(field(r, "detail").contains("value altered"), "{r}");
    let b = row(&rows, "write-none-bytes");
    assert!(
        field(b, "detail").starts_with("differs from this project's builder's table"),
        "{b}"
    );
}

#[test]
fn hangs_leftover_processes_crashes_and_garbage_fail_their_case_and_the_run_goes_on() {
    let adapter = repo("cli/tests/conform_adapters/misbehaves.sh");
    let (code, rows, err) = conform(&["--impl", &adapter, "--timeout", "2", "--group", "tables"]);
    assert_eq!(code, 1, "{err}");
    let detail = |c| field(row(&rows, c), "detail").to_string();
    assert!(detail("table-none").starts_with("no answer within 2 s (killed)"));
    // Its background `sleep 600` kept stdout open: killed with the process group, so the
    // case ends with what was printed.
    assert!(detail("table-snappy").starts_with("entry 0: key '00' given"));
    assert!(detail("table-one-entry").starts_with("crashed: signal 11 (SIGSEGV)"));
    assert!(detail("table-no-filter").starts_with("output line 1: not a {\"key\", \"value\"} row"));
    // Every other table case was still run: exit 3 is a skip.
    assert_eq!(named(&rows, "fail", None).len(), 4);
    assert!(named(&rows, "skip", None).len() > 40);
    assert_eq!(
        field(row(&rows, "table-zstd"), "detail"),
        "zstd compression not listed"
    );
    assert_eq!(
        field(row(&rows, "table-block-1"), "detail"),
        "not supported (exit 3)"
    );
}

#[test]
fn an_adapter_without_capabilities_stops_the_kit_with_exit_2() {
    let (code, rows, err) = conform(&["--impl", "false"]);
    assert_eq!((code, rows.len()), (2, 0));
    assert!(
        err.contains("adapter `false`: capabilities: exit 1"),
        "{err}"
    );
    let (code, _, err) = conform(&["--impl", "echo '{}'"]);
    assert_eq!(code, 2);
    assert!(err.contains("not the capabilities object"), "{err}");
    let ours = repo("tools/conform/sst/adapter.sh");
    let (code, _, err) = conform(&["--impl", &ours, "--case", "no-such-case"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no case matches"), "{err}");
}

#[test]
fn list_names_every_case_with_what_it_needs_and_keep_keeps_the_inputs() {
    let out = Command::new(env!("CARGO_BIN_EXE_sst"))
        .args(["conform", "--list", "--format", "jsonl"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let cases: Vec<Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let zstd = cases.iter().find(|c| c["case"] == "table-zstd").unwrap();
    assert_eq!(zstd["compressions"], serde_json::json!(["zstd"]));
    let idb = cases
        .iter()
        .find(|c| c["case"] == "fixture-idb-chromium")
        .unwrap();
    assert_eq!(idb["comparator"], "idb_cmp1");
    let keep = tempfile::tempdir().unwrap();
    let dir = keep.path().join("kept");
    let (code, rows, _) = conform(&[
        "--impl",
        &repo("tools/conform/sst/adapter.sh"),
        "--case",
        "damaged-footer-lost",
        "--keep",
        dir.to_str().unwrap(),
    ]);
    assert_eq!((code, rows.len()), (0, 1));
    // The case's input as the adapter got it, to rerun by hand.
    let given = dir.join("run/damaged-footer-lost/damaged-footer-lost.ldb");
    let base = std::fs::metadata(dir.join("damaged/base-none.ldb"))
        .unwrap()
        .len();
    assert_eq!(std::fs::metadata(given).unwrap().len(), base - 48);
}
