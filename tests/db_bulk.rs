//! Bulk-built database directories, checked by C++ LevelDB itself (plyvel, LevelDB 1.22,
//! paranoid checks): it opens them, iterates exactly the input, finds every key, and has
//! compacted nothing afterwards (`leveldb.stats`). Our reader reads them too.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use leveldb_table::db::bulk::{BulkBuilder, BulkOptions};
use leveldb_table::db::{Db, DbOptions};
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
        let opts = BulkOptions {
            table,
            target_file_size: size,
            ..BulkOptions::default()
        };
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
            assert_eq!(db.get(&k).unwrap(), Some((v, i + 1)));
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
    assert!(matches!(b.add(b"c", b"3"), Err(Error::InvalidArgument(_))));
    assert!(b.finish().is_err());
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
