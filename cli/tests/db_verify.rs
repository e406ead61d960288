//! `sst db verify DIR` on a directory LevelDB wrote (`testdata/db/basic`), intact and
//! damaged each way, with LevelDB's own verdict on the same damage: C++ LevelDB (plyvel,
//! LevelDB 1.22) opens a copy with `paranoid_checks` and reads every entry with checksums
//! verified (docs/database.md lists both verdicts).

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{json_lines, sst};

/// LevelDB's verdict on `dir` (read from a copy: LevelDB writes to what it opens): `open:
/// ERROR`, `read: ERROR after N`, or `read all: N entries`; and the names left in the copy.
fn leveldb_verdict(dir: &Path) -> (String, Vec<String>) {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
    }
    let script = r#"
import sys, plyvel
try:
    db = plyvel.DB(sys.argv[1], paranoid_checks=True)
except Exception as e:
    print("open:", e); sys.exit(0)
n = 0
try:
    for k, v in db.iterator(verify_checksums=True, fill_cache=False):
        n += 1
    print("read all:", n, "entries")
except Exception as e:
    print("read:", e, "after", n)
db.close()
"#;
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&copy)
        .output()
        .expect("python3 with plyvel (scripts/setup.sh)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(&copy)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    (
        String::from_utf8(out.stdout).unwrap().trim().to_string(),
        names,
    )
}

/// A copy of `testdata/db/basic` (its LevelDB files only), then `damage` done to it.
fn case(damage: impl FnOnce(&Path)) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/db/basic");
    for name in [
        "000005.ldb",
        "000007.ldb",
        "000008.log",
        "000009.ldb",
        "CURRENT",
        "MANIFEST-000002",
    ] {
        std::fs::copy(src.join(name), dir.join(name)).unwrap();
    }
    damage(&dir);
    (tmp, dir)
}

fn edit(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut b = std::fs::read(path).unwrap();
    f(&mut b);
    std::fs::write(path, b).unwrap();
}

/// `sst db verify DIR ARGS`: (exit code, stdout lines, stderr).
fn verify(dir: &Path, args: &[&str]) -> (i32, Vec<String>, String) {
    let mut all = vec!["db", "verify", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let (code, out, err) = sst(&all);
    (code, out.lines().map(str::to_string).collect(), err)
}

#[test]
fn intact() {
    let (_t, dir) = case(|_| {});
    let (code, lines, _) = verify(&dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].ends_with(
        "3 table(s) (1356 entries, 41 data blocks, every key checked against its filter), 1 \
         log(s) (83 batches), MANIFEST-000002 at sequence 1439: intact"
    ));
    assert_eq!(leveldb_verdict(&dir).0, "read all: 744 entries");
}

#[test]
fn a_flipped_byte_in_a_data_block() {
    let (_t, dir) = case(|d| edit(&d.join("000005.ldb"), |b| b[100] ^= 0x40));
    let (code, lines, _) = verify(&dir, &[]);
    assert_eq!(code, 1, "{lines:?}");
    assert!(lines[0].contains(
        "db/000005.ldb: offset 0: block checksum mismatch: data block at offset 0 (size 499)"
    ));
    assert!(lines[1].ends_with("damaged: 1 problem(s)"), "{lines:?}");
    // What a salvage read gets past it, and the same as jsonl.
    let (code, lines, _) = verify(&dir, &["--salvage"]);
    assert_eq!(code, 1);
    assert!(
        lines[1].contains("salvage: `sst db scan --salvage` reads"),
        "{lines:?}"
    );
    assert!(lines[1].contains("1 damaged range(s) skipped"), "{lines:?}");
    let (code, out, _) = sst(&["db", "verify", dir.to_str().unwrap(), "--format", "jsonl"]);
    assert_eq!(code, 1);
    let rows = json_lines(&out);
    assert_eq!(rows[0]["file"], "000005.ldb");
    assert_eq!(rows[0]["offset"], 0);
    assert_eq!(rows[0]["severity"], "damage");
    assert_eq!(rows[1]["summary"]["damage"], 1);
    assert_eq!(rows[1]["summary"]["intact"], false);
    let (verdict, _) = leveldb_verdict(&dir);
    assert_eq!(
        verdict,
        "read: b'Corruption: block checksum mismatch' after 0"
    );
}

#[test]
fn a_missing_table() {
    let (_t, dir) = case(|d| std::fs::remove_file(d.join("000007.ldb")).unwrap());
    let (code, lines, _) = verify(&dir, &[]);
    assert_eq!(code, 1, "{lines:?}");
    assert!(lines[0]
        .ends_with("db/000007.ldb: 000007.ldb is listed as live by the MANIFEST but is missing"));
    let (verdict, _) = leveldb_verdict(&dir);
    assert!(
        verdict.starts_with("open: b'Corruption: 1 missing files"),
        "{verdict}"
    );
}

#[test]
fn an_unreferenced_table() {
    let (_t, dir) = case(|d| {
        std::fs::copy(d.join("000007.ldb"), d.join("000004.ldb"))
            .map(drop)
            .unwrap()
    });
    let (code, lines, _) = verify(&dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(lines[0].contains("db/000004.ldb: note: a table the MANIFEST does not list; left over"));
    assert!(lines[1].ends_with("intact (1 note(s))"), "{lines:?}");
    // LevelDB reads the database as if it were not there, and deletes it.
    let (verdict, names) = leveldb_verdict(&dir);
    assert_eq!(verdict, "read all: 744 entries");
    assert!(!names.contains(&"000004.ldb".to_string()), "{names:?}");
}

#[test]
fn a_torn_log_tail() {
    let (_t, dir) = case(|d| edit(&d.join("000008.log"), |b| b.truncate(b.len() - 10)));
    let (code, lines, _) = verify(&dir, &[]);
    assert_eq!(code, 0, "{lines:?}");
    assert!(lines[0].contains(
        "db/000008.log: note: the last record (20 bytes) is incomplete: a write in progress, \
         or a crash; ignored, as LevelDB does"
    ));
    assert!(lines[1].contains("1 log(s) (82 batches)"), "{lines:?}");
    assert!(
        lines[1].ends_with("at sequence 1438: intact (1 note(s))"),
        "{lines:?}"
    );
    // LevelDB drops the last batch too (it deleted a key: one more is live).
    assert_eq!(leveldb_verdict(&dir).0, "read all: 745 entries");
}

#[test]
fn a_table_of_another_size_than_the_manifest_says() {
    let (_t, dir) = case(|d| edit(&d.join("000007.ldb"), |b| b.push(b'x')));
    let (code, lines, _) = verify(&dir, &[]);
    assert_eq!(code, 1, "{lines:?}");
    assert!(lines[0].ends_with("db/000007.ldb: 4580 bytes, but the MANIFEST says 4579 (level 1)"));
    // LevelDB reads the footer where the MANIFEST's size puts it, and so the whole table.
    assert_eq!(leveldb_verdict(&dir).0, "read all: 744 entries");
}

#[test]
fn unusable_directories_exit_2() {
    let (_t, dir) = case(|d| std::fs::remove_file(d.join("CURRENT")).unwrap());
    let (code, lines, err) = verify(&dir, &[]);
    assert_eq!((code, lines.len()), (2, 0), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("CURRENT"), "{err}");
    let (verdict, _) = leveldb_verdict(&dir);
    assert!(verdict.contains("does not exist"), "{verdict}");

    let (_t, dir) = case(|d| edit(&d.join("MANIFEST-000002"), |b| b[30] ^= 1));
    let (code, lines, err) = verify(&dir, &[]);
    assert_eq!((code, lines.len()), (2, 0), "{err}");
    assert!(
        err.contains("MANIFEST-000002: log record at offset 0: checksum mismatch"),
        "{err}"
    );
    let (verdict, _) = leveldb_verdict(&dir);
    assert_eq!(verdict, "open: b'Corruption: checksum mismatch'");
}

#[test]
fn db_info_points_to_verify() {
    let (_t, dir) = case(|d| edit(&d.join("000007.ldb"), |b| b.push(b'x')));
    let (code, out, err) = sst(&["db", "info", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("000007.ldb: 4580 bytes, but the MANIFEST says 4579"),
        "{err}"
    );
    assert!(err.contains("sst db verify"), "{err}");
    // A flipped data byte: info does not read table blocks, and says so.
    let (_t, dir) = case(|d| edit(&d.join("000005.ldb"), |b| b[100] ^= 0x40));
    let (code, out, _) = sst(&["db", "info", dir.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        out.contains("not the tables' blocks: `sst db verify DIR` reads them all"),
        "{out}"
    );
}
