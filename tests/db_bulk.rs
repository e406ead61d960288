//! Bulk-built database directories, checked by C++ LevelDB itself (plyvel, LevelDB 1.22,
//! paranoid checks): it opens them, iterates exactly the input, finds every key, and has
//! compacted nothing afterwards (`leveldb.stats`). Our reader reads them too.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::{db::engine::BulkBuilder, db::engine::BulkOptions};
use leveldb_table::{Compression, Error, Options};

fn entry(i: u64) -> (Vec<u8>, Vec<u8>) {
    let k = format!("user/{:08}/{}", i * 7, i % 13).into_bytes();
    let v = format!("value {i} ")
        .repeat(1 + (i % 9) as usize)
        .into_bytes();
    (k, v)
}

fn build(dir: &Path, n: u64, opts: BulkOptions) -> u64 {
    let mut b = BulkBuilder::create(dir, opts).unwrap();
    for i in 0..n {
        let (k, v) = entry(i);
        b.add(&k, &v).unwrap();
    }
    let stats = b.finish().unwrap();
    assert_eq!(stats.entries, n);
    stats.files.len() as u64
}

/// LevelDB opens `dir`, checks every entry in order and every 7th key by get, and prints
/// its compaction stats; returns (entries seen, stats text).
fn leveldb_check(dir: &Path, n: u64) -> (u64, String) {
    let script = r#"
import sys, plyvel
db = plyvel.DB(sys.argv[1], paranoid_checks=True)
n = int(sys.argv[2])
def entry(i):
    k = ("user/%08d/%d" % (i * 7, i % 13)).encode()
    v = (("value %d " % i) * (1 + i % 9)).encode()
    return k, v
want = sorted(entry(i) for i in range(n))
seen = 0
for (k, v), (wk, wv) in zip(db.iterator(), want):
    assert k == wk and v == wv, (k, wk)
    seen += 1
for i in range(0, n, 7):
    k, v = entry(i)
    assert db.get(k) == v, k
assert db.get(b"user/") is None and db.get(b"zzz") is None
print(seen)
print(db.get_property(b"leveldb.stats").decode())
db.close()
"#;
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir)
        .arg(n.to_string())
        .stderr(Stdio::inherit())
        .output()
        .expect("python3 with plyvel (scripts/setup.sh installs it)");
    assert!(out.status.success(), "LevelDB rejected {}", dir.display());
    let s = String::from_utf8(out.stdout).unwrap();
    let (first, rest) = s.split_once('\n').unwrap();
    (first.trim().parse().unwrap(), rest.to_string())
}

/// The compaction stats rows: (level, files, size MB, time s, read MB, write MB).
fn compactions(stats: &str) -> Vec<Vec<f64>> {
    stats
        .lines()
        .filter_map(|l| {
            let f: Vec<f64> = l
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            (f.len() == 6).then_some(f)
        })
        .collect()
}

#[test]
fn leveldb_opens_reads_and_does_not_compact_what_the_bulk_builder_writes() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        (
            "snappy_bloom",
            Options::default().bloom(10),
            20_000u64,
            64 << 10,
        ),
        (
            "none_nofilter",
            Options::default().compression(Compression::None),
            20_000,
            128 << 10,
        ),
        ("snappy_2m", Options::default().bloom(10), 60_000, 2 << 20),
        ("empty", Options::default().bloom(10), 0, 2 << 20),
    ];
    for (name, table, n, size) in cases {
        let dir = tmp.path().join(name);
        let opts = BulkOptions::default().table(table).target_file_size(size);
        let files = build(&dir, n, opts);
        if n > 0 {
            assert!(files >= 1);
        }
        // Only the database's files: no temporary directory left beside it.
        let beside: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with('.'))
            .collect();
        assert!(beside.is_empty(), "{beside:?}");
        // Our reader first (LevelDB will rewrite the MANIFEST when it opens the directory).
        let db = Db::open(&dir, DbOptions::default()).unwrap();
        assert_eq!(db.last_sequence(), n);
        assert_eq!(db.level_files(6).len() as u64, files);
        for i in (0..n).step_by(11) {
            let (k, v) = entry(i);
            assert_eq!(
                db.get(&k, &Default::default()).unwrap(),
                leveldb_table::Lookup::Found {
                    value: v,
                    sequence: Some(i + 1)
                }
            );
        }
        drop(db);
        let tables = |d: &Path| -> Vec<(String, u64)> {
            let mut t: Vec<(String, u64)> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".ldb"))
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        e.metadata().unwrap().len(),
                    )
                })
                .collect();
            t.sort();
            t
        };
        let before = tables(&dir);
        assert_eq!(before.len() as u64, files);
        let (seen, stats) = leveldb_check(&dir, n);
        // A compaction would have written new tables and deleted ours.
        assert_eq!(tables(&dir), before, "{name}: LevelDB rewrote tables");
        assert_eq!(seen, n, "{name}");
        let rows = compactions(&stats);
        // A level's row appears once it has files or compaction work: only level 6, with
        // no compaction time, reads or writes.
        for r in &rows {
            assert_eq!(r[0], 6.0, "{name}: {stats}");
            assert_eq!((r[3], r[4], r[5]), (0.0, 0.0, 0.0), "{name}: {stats}");
        }
        assert_eq!(rows.len(), usize::from(n > 0), "{name}: {stats}");
    }
}

#[test]
fn bad_input_is_an_error_and_leaves_no_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut b = BulkBuilder::create(&dir, BulkOptions::default()).unwrap();
    b.add(b"b", b"1").unwrap();
    assert!(matches!(b.add(b"a", b"2"), Err(Error::OutOfOrder { .. })));
    // The build stays failed (a builder's sticky status), saying why.
    assert!(
        matches!(b.add(b"c", b"3"), Err(Error::BuilderFailed { first }) if first.contains("order"))
    );
    assert!(matches!(b.finish(), Err(Error::BuilderFailed { .. })));
    assert!(!dir.exists());
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "the temporary directory is gone"
    );
    // An existing target is refused.
    std::fs::create_dir(&dir).unwrap();
    assert!(BulkBuilder::create(&dir, BulkOptions::default()).is_err());
    // Dropped midway: nothing at the target.
    let other = tmp.path().join("other");
    let mut b = BulkBuilder::create(&other, BulkOptions::default()).unwrap();
    b.add(b"k", b"v").unwrap();
    drop(b);
    assert!(!other.exists());
    let _ = std::io::stdout().flush();
}

const CHILD_ENV: &str = "DB_BULK_CHILD";
const PAUSE_ENV: &str = "DB_BULK_PAUSE_TABLES";

/// As the child of the kill test: builds 200,000 entries in tables of 64 KiB into the
/// directory named by `DB_BULK_CHILD`, says "PAUSED" on stdout once `DB_BULK_PAUSE_TABLES`
/// tables are written (the kill point: a build in progress), or "DONE" after `finish`, and
/// waits for stdin to close. In a normal run: the same build, finished and checked.
#[test]
fn child_bulk_build() {
    let (target, pause) = match std::env::var(CHILD_ENV) {
        Ok(t) => (
            std::path::PathBuf::from(t),
            std::env::var(PAUSE_ENV).unwrap().parse::<u64>().unwrap(),
        ),
        Err(_) => {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("db");
            let opts = BulkOptions::default().target_file_size(64 << 10);
            let files = build(&dir, 20_000, opts);
            let db = Db::open(&dir, DbOptions::default()).unwrap();
            assert_eq!(db.level_files(6).len() as u64, files);
            assert_eq!(
                db.get(&entry(19_999).0, &Default::default())
                    .unwrap()
                    .into_value(),
                Some(entry(19_999).1)
            );
            return;
        }
    };
    let opts = BulkOptions::default().target_file_size(64 << 10);
    let mut b = BulkBuilder::create(&target, opts).unwrap();
    let mut said = false;
    for i in 0..200_000u64 {
        let (k, v) = entry(i);
        b.add(&k, &v).unwrap();
        if !said && pause > 0 && i % 64 == 0 {
            let tables = std::fs::read_dir(target.parent().unwrap())
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with(".db.bulk-"))
                .map(|e| std::fs::read_dir(e.path()).map(|d| d.count()).unwrap_or(0) as u64)
                .sum::<u64>();
            if tables > pause {
                println!("PAUSED");
                std::io::stdout().flush().unwrap();
                said = true;
                let mut rest = Vec::new();
                let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut rest);
            }
        }
    }
    b.finish().unwrap();
    println!("DONE");
    std::io::stdout().flush().unwrap();
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut rest);
}

#[test]
fn a_killed_bulk_build_leaves_no_directory_or_a_complete_one() {
    use std::io::BufRead;
    // Kill points: after 1, 7, 20 and 45 tables (while later tables are written and earlier
    // ones are fsynced on the build's second thread), and after finish.
    for pause in [1u64, 7, 20, 45, 0] {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("db");
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_bulk_build",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &target)
            .env(PAUSE_ENV, pause.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let done = loop {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "the child ended early"
            );
            if line.contains("PAUSED") {
                break false;
            }
            if line.contains("DONE") {
                break true;
            }
        };
        child.kill().unwrap(); // SIGKILL: no destructor, no cleanup
        assert!(!child.wait().unwrap().success());
        assert_eq!(done, pause == 0);
        if done {
            // Complete: every entry there.
            let db = Db::open(&target, DbOptions::default()).unwrap();
            assert_eq!(db.last_sequence(), 200_000);
            assert_eq!(
                db.get(&entry(199_999).0, &Default::default())
                    .unwrap()
                    .into_value(),
                Some(entry(199_999).1)
            );
        } else {
            assert!(
                !target.exists(),
                "a killed build left a directory at the target"
            );
            // Only the hidden temporary directory is left behind, never at the target's name.
            let names: Vec<String> = std::fs::read_dir(tmp.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(names.len(), 1, "{names:?}");
            assert!(names[0].starts_with(".db.bulk-"), "{names:?}");
        }
    }
}

const FULL_ENV: &str = "DB_BULK_DISK_FULL_CHILD";

/// As the child of the disk-full test (run under a file-size limit): a bulk build whose
/// tables outgrow the limit; reports how it ended. In a normal run: the same build with no
/// limit succeeds.
#[test]
fn child_bulk_build_disk_full() {
    let (target, limited) = match std::env::var(FULL_ENV) {
        Ok(t) => (std::path::PathBuf::from(t), true),
        Err(_) => {
            let tmp = tempfile::tempdir().unwrap();
            let dir = tmp.path().join("db");
            let opts =
                BulkOptions::default().table(Options::default().compression(Compression::None));
            build(&dir, 30_000, opts);
            assert!(Db::open(&dir, DbOptions::default()).is_ok());
            return;
        }
    };
    assert!(limited);
    let opts = BulkOptions::default().table(Options::default().compression(Compression::None));
    let r = (|| {
        let mut b = BulkBuilder::create(&target, opts)?;
        for i in 0..30_000 {
            let (k, v) = entry(i);
            b.add(&k, &v)?;
        }
        b.finish()
    })();
    match r {
        Ok(_) => println!("CHILD-RESULT ok"),
        Err(e) => println!("CHILD-RESULT err {e}"),
    }
}

#[test]
fn a_full_disk_mid_build_is_an_error_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("db");
    // Each file may hold at most 200 KB (EFBIG past that, SIGXFSZ ignored): the first table
    // of ~2 MiB cannot be written.
    let out = Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; exec prlimit --fsize=200000 \"$0\" --exact child_bulk_build_disk_full --nocapture --test-threads=1")
        .arg(std::env::current_exe().unwrap())
        .env(FULL_ENV, &target)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("CHILD-RESULT err") && stdout.contains("File too large"),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!target.exists());
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "the temporary directory is removed");
}
