//! A file of the wrong kind gets one line: what it is and which command reads it, exit 2
//! (a log to `manifest`, a table to `log` or `db`, a directory to `scan`, a MANIFEST to
//! `log`, ...). The bytes decide what a file is, so a renamed file is still named right;
//! files of the right kind are read as before.

use std::path::PathBuf;

mod common;

use common::sst;

fn db(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/db")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// `sst ARGS` ends with exit 2, nothing on stdout and one line on stderr containing every
/// one of `says`.
fn one_line(args: &[&str], says: &[&str]) {
    let (code, out, err) = sst(args);
    assert_eq!(code, 2, "sst {args:?}: {out}{err}");
    assert_eq!(out, "", "sst {args:?}");
    assert_eq!(err.lines().count(), 1, "sst {args:?}: {err}");
    for s in says {
        assert!(err.contains(s), "sst {args:?}: {err} lacks {s:?}");
    }
}

#[test]
fn each_wrong_kind_gets_one_line_naming_the_command_that_reads_it() {
    let d = db("basic");
    let table = format!("{d}/000005.ldb");
    let log = format!("{d}/000008.log");
    let manifest = format!("{d}/MANIFEST-000002");
    let current = format!("{d}/CURRENT");
    let lock = format!("{d}/LOCK");
    let big_log = format!("{}/000003.log", db("biglog"));
    let t = table.as_str();
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        // A log to manifest (70 KiB of batches: once thousands of error lines).
        (
            vec!["manifest", &log],
            vec!["not a MANIFEST", "write-ahead log", "sst log"],
        ),
        (
            vec!["manifest", &big_log],
            vec!["not a MANIFEST", "sst log"],
        ),
        (
            vec!["manifest", t],
            vec!["not a MANIFEST", "LevelDB table", "sst scan"],
        ),
        (
            vec!["manifest", &current],
            vec!["not a MANIFEST", "CURRENT", "sst db info"],
        ),
        (
            vec!["manifest", &d],
            vec!["not a MANIFEST", "directory", "sst db"],
        ),
        // A table, a MANIFEST, CURRENT, LOCK, a directory to log.
        (
            vec!["log", t],
            vec!["not a write-ahead log", "LevelDB table", "sst scan"],
        ),
        (
            vec!["log", &manifest],
            vec!["not a write-ahead log", "sst manifest"],
        ),
        (
            vec!["log", &current],
            vec!["not a write-ahead log", "CURRENT"],
        ),
        (vec!["log", &lock], vec!["not a write-ahead log", "LOCK"]),
        (
            vec!["log", &d],
            vec!["not a write-ahead log", "directory", "sst db"],
        ),
        (
            vec!["log", "--physical", t],
            vec!["not a file in the log format", "sst scan"],
        ),
        // Files to db.
        (
            vec!["db", "scan", t],
            vec!["not a database directory", "sst scan"],
        ),
        (
            vec!["db", "info", &log],
            vec!["not a database directory", "sst log"],
        ),
        (
            vec!["db", "get", &manifest, "k"],
            vec!["not a database directory", "sst manifest"],
        ),
        (
            vec!["db", "records", &current],
            vec!["not a database directory", "CURRENT"],
        ),
        // A directory and a database's other files to the table commands.
        (vec!["scan", &d], vec!["not a table", "directory", "sst db"]),
        (vec!["scan", &log], vec!["not a table", "sst log"]),
        (
            vec!["stats", &manifest],
            vec!["not a table", "sst manifest"],
        ),
        (vec!["blocks", &current], vec!["not a table", "CURRENT"]),
        (vec!["get", &lock, "k"], vec!["not a table", "LOCK"]),
        (vec!["filter", &log, "k"], vec!["not a table", "sst log"]),
        (
            vec!["refilter", &log, "/nonexistent/out.ldb"],
            vec!["not a table", "sst log"],
        ),
    ];
    for (args, says) in cases {
        one_line(&args, &says);
    }
    // verify goes on to the next file: one line for the log, the table's verdict, exit 2.
    let (code, out, _) = sst(&["verify", &log, t]);
    assert_eq!(code, 2);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].contains("not a table") && lines[0].contains("sst log"));
    assert!(lines[1].contains(": OK ("), "{out}");
}

#[test]
fn the_bytes_decide_not_the_name() {
    let d = db("basic");
    let tmp = tempfile::tempdir().unwrap();
    let p = |n: &str| tmp.path().join(n).to_string_lossy().into_owned();
    // A log named like a table, a table named like a log, a MANIFEST named like a log.
    std::fs::copy(format!("{d}/000008.log"), p("000011.ldb")).unwrap();
    std::fs::copy(format!("{d}/000005.ldb"), p("000012.log")).unwrap();
    std::fs::copy(format!("{d}/MANIFEST-000002"), p("000013.log")).unwrap();
    one_line(
        &["scan", &p("000011.ldb")],
        &["not a table", "write-ahead log"],
    );
    one_line(
        &["log", &p("000012.log")],
        &["not a write-ahead log", "LevelDB table"],
    );
    one_line(
        &["log", &p("000013.log")],
        &["not a write-ahead log", "MANIFEST"],
    );
    // Each read by its own command, whatever its name.
    let (code, out, err) = sst(&["log", &p("000011.ldb")]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.starts_with("--- batch at offset 0"), "{out}");
    let (code, out, _) = sst(&["manifest", &p("000013.log")]);
    assert_eq!(code, 0);
    assert!(
        out.contains("comparator        leveldb.BytewiseComparator"),
        "{out}"
    );
    let (code, _, _) = sst(&["verify", &p("000012.log")]);
    assert_eq!(code, 0);
}

#[test]
fn damaged_files_of_the_right_kind_are_still_read_as_that_kind() {
    // A log whose first block is damaged: the bytes say nothing, the name says log, and
    // the damage is reported as damage (LevelDB's reader drops the block, and here the
    // records after it are fragments of a record that started in it).
    let d = db("biglog");
    let mut bytes = std::fs::read(format!("{d}/000003.log")).unwrap();
    for b in &mut bytes[7..200] {
        *b ^= 0x5a;
    }
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("000003.log");
    std::fs::write(&log, &bytes).unwrap();
    let (code, out, err) = sst(&["log", log.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(err.contains("offset 0: checksum mismatch"), "{err}");
    assert!(!err.contains("not a write-ahead log"), "{err}");
    // A file of no kind LevelDB writes, under no LevelDB name: read as asked, and its
    // reader says what is wrong.
    let junk = tmp.path().join("junk");
    std::fs::write(&junk, vec![0x41u8; 300]).unwrap();
    let (code, _, err) = sst(&["scan", junk.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("magic"), "{err}");
}

/// A pseudo-random file of `len` bytes (no record of the log format in it).
fn random_file(path: &std::path::Path, len: usize) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let bytes: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn folders_that_hold_no_database_say_what_they_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |p: &str| tmp.path().join(p);
    let s = |p: std::path::PathBuf| p.to_string_lossy().into_owned();
    // An empty folder; a cache (files of another program); the IndexedDB folder holding
    // one database per origin; IndexedDB's blob folder beside a database; LevelDB's files
    // without CURRENT.
    std::fs::create_dir(t("empty")).unwrap();
    std::fs::create_dir_all(t("Cache/Cache_Data")).unwrap();
    random_file(&t("Cache/Cache_Data/data_0"), 5000);
    random_file(&t("Cache/Cache_Data/index"), 300);
    for origin in ["https_a.com_0", "https_b.org_0"] {
        let d = t(&format!("IndexedDB/{origin}.indexeddb.leveldb"));
        std::fs::create_dir_all(&d).unwrap();
        for f in [
            "000005.ldb",
            "000007.ldb",
            "000008.log",
            "000009.ldb",
            "CURRENT",
            "MANIFEST-000002",
        ] {
            std::fs::copy(format!("{}/{f}", db("basic")), d.join(f)).unwrap();
        }
    }
    std::fs::create_dir_all(t("IndexedDB/https_a.com_0.indexeddb.blob/1/00")).unwrap();
    random_file(&t("IndexedDB/https_a.com_0.indexeddb.blob/1/00/3"), 100);
    std::fs::create_dir(t("nocurrent")).unwrap();
    std::fs::copy(
        format!("{}/000005.ldb", db("basic")),
        t("nocurrent/000005.ldb"),
    )
    .unwrap();
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            s(t("empty")),
            vec!["not a LevelDB database: the folder is empty"],
        ),
        (
            s(t("Cache")),
            vec![
                "not a LevelDB database: it holds no CURRENT, table, log or MANIFEST",
                "Cache_Data",
            ],
        ),
        (
            s(t("Cache/Cache_Data")),
            vec![
                "holds no CURRENT, table, log or MANIFEST among its 2 file(s)",
                "data_0, index",
            ],
        ),
        (
            s(t("IndexedDB")),
            vec![
                "it holds 2 LevelDB database(s), one per folder: https_a.com_0.indexeddb.leveldb, \
                 https_b.org_0.indexeddb.leveldb",
            ],
        ),
        (
            s(t("IndexedDB/https_a.com_0.indexeddb.blob")),
            vec![
                "IndexedDB's blob files",
                "https_a.com_0.indexeddb.leveldb beside it",
            ],
        ),
        (
            s(t("nocurrent")),
            vec!["CURRENT", "missing, though the folder holds LevelDB's"],
        ),
    ];
    for (dir, says) in &cases {
        for cmd in ["info", "scan", "verify", "records"] {
            one_line(&["db", cmd, dir], says);
        }
    }
}

#[test]
fn empty_and_random_files_get_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let random = tmp.path().join("random.bin");
    random_file(&random, 1 << 20);
    let (e, r) = (empty.to_str().unwrap(), random.to_str().unwrap());
    one_line(&["log", e], &["not a write-ahead log: an empty file"]);
    one_line(&["manifest", e], &["not a MANIFEST: an empty file"]);
    one_line(
        &["log", r],
        &["not a write-ahead log: no intact record of the log format"],
    );
    one_line(
        &["log", "--physical", r],
        &["no intact record of the log format"],
    );
    one_line(
        &["manifest", r],
        &["not a MANIFEST: no intact record of the log format"],
    );
    one_line(&["db", "info", r], &["not a database directory"]);
    one_line(&["db", "verify", e], &["not a database directory"]);
    one_line(&["scan", r], &["not an sstable"]);
    one_line(&["scan", e], &["too short"]);
    // An empty file LevelDB named as a log is an empty log: one line, and no damage.
    let log = tmp.path().join("000005.log");
    std::fs::write(&log, b"").unwrap();
    let (code, out, err) = sst(&["log", log.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("empty: no records"), "{err}");
}
