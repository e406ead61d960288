//! Reading a directory while C++ LevelDB writes and compacts it: a real writer (plyvel,
//! LevelDB 1.22, the smallest write buffer, `tests/live/leveldb_writer.py`) commits numbered
//! batches as fast as it can while `sst db scan` and the library's `Db` read the directory
//! over and over. Every read exits 0 and equals the writer's state after one of its batches
//! (batch i sets `counter` to i, so the read names the state it must equal, computed in
//! closed form); reads opened later never see an older state; and a `Db` opened before
//! LevelDB deleted some of its tables reads, after the deletion, the very state it opened.
//! The writer runs until the reads are done: the assertions are on states, never on times.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::ReadOptions;

mod common;

use common::{json_lines, sst};
use leveldb_table::Cursor;

/// The writer's key space and operations per batch (as in `leveldb_writer.py`).
const KEYS: u64 = 12000;
const OPS: u64 = 25;

type Rows = Vec<(Vec<u8>, Vec<u8>)>;

fn key(k: u64) -> Vec<u8> {
    format!("k{k:05}").into_bytes()
}

/// The value operation `t` puts: 100-399 bytes that do not compress (splitmix64 from `t`).
fn value(t: u64) -> Vec<u8> {
    let n = (100 + (t * 7919) % 300) as usize;
    let mut out = Vec::with_capacity(n + 8);
    let mut x = t;
    while out.len() < n {
        x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        out.extend_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(n);
    out
}

/// The directory's user keys and values after batch `i`, sorted.
fn state(i: u64) -> Rows {
    let mut out = vec![(b"counter".to_vec(), i.to_string().into_bytes())];
    let last = i * OPS + OPS - 1;
    for k in 0..KEYS {
        // The newest operation at or before `last` on key k (none: never written).
        let Some(t) = last.checked_sub((last + KEYS - k) % KEYS) else {
            continue;
        };
        if t < OPS {
            continue;
        }
        let (b, j) = (t / OPS, t % OPS);
        if (b + j) % 4 != 0 {
            out.push((key(k), value(t)));
        }
    }
    out.sort();
    out
}

/// Checks that `rows` is the state after one batch, and returns that batch.
fn batch_of(rows: &Rows, what: &str) -> u64 {
    let counter = rows
        .iter()
        .find(|(k, _)| k == b"counter")
        .unwrap_or_else(|| panic!("{what}: no counter among {} rows", rows.len()));
    let i: u64 = std::str::from_utf8(&counter.1).unwrap().parse().unwrap();
    let want = state(i);
    if *rows != want {
        let first = rows.iter().zip(&want).position(|(a, b)| a != b);
        panic!(
            "{what}: {} rows, not the {} of the state after batch {i}; first difference at row \
             {first:?}",
            rows.len(),
            want.len()
        );
    }
    i
}

/// `sst db scan DIR --format jsonl`: exit 0, the rows.
fn scan_cli(dir: &Path) -> Rows {
    let (code, out, err) = sst(&["db", "scan", dir.to_str().unwrap(), "--format", "jsonl"]);
    assert_eq!(code, 0, "sst db scan: {err}");
    json_lines(&out)
        .iter()
        .map(|r| {
            (
                hex::decode(r["key"].as_str().unwrap()).unwrap(),
                hex::decode(r["value"].as_str().unwrap()).unwrap(),
            )
        })
        .collect()
}

/// The live view of `db`, whole; after `half` rows, `pause` runs (the scan then goes on).
fn scan_db(db: &Db, half: usize, mut pause: impl FnMut()) -> Rows {
    let mut v = db.iter(&ReadOptions::default());
    v.seek_to_first();
    let mut rows = Vec::new();
    while v.valid() {
        if rows.len() == half {
            pause();
        }
        rows.push((v.key().to_vec(), v.value().to_vec()));
        v.next();
    }
    v.status().unwrap_or_else(|e| panic!("{e}"));
    rows
}

/// The names of `db`'s tables at levels 1-6 a scan reaches only after its first row (all but
/// the first of each level).
fn later_tables(db: &Db) -> Vec<String> {
    (1..7)
        .flat_map(|l| db.level_files(l).iter().skip(1).map(|f| f.number))
        .filter_map(|n| db.table_name(n).map(str::to_string))
        .collect()
}

/// Opens `dir`, tallying how many attempts each open took (printed at the end).
fn open(dir: &Path) -> Db {
    let db = Db::open(dir, DbOptions::default()).unwrap();
    ATTEMPTS.lock().unwrap().push(db.open_attempts());
    db
}

static ATTEMPTS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// A read through the library: a `Db` opened now, scanned whole; checked.
fn lib_read(dir: &Path, seen: &mut u64) -> Db {
    let db = open(dir);
    let i = batch_of(&scan_db(&db, usize::MAX, || {}), "Db::view");
    // Batch i holds 26 records: sequences 26(i-1)+1 ..= 26i.
    assert_eq!(
        db.last_sequence(),
        (OPS + 1) * i,
        "the Db's sequence is its batch's"
    );
    assert!(
        i >= *seen,
        "a later read saw batch {i}, an earlier one {seen}"
    );
    *seen = i;
    db
}

/// A read through `sst db scan`; checked.
fn cli_read(dir: &Path, seen: &mut u64) {
    let i = batch_of(&scan_cli(dir), "sst db scan");
    assert!(
        i >= *seen,
        "a later read saw batch {i}, an earlier one {seen}"
    );
    *seen = i;
}

struct Writer {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Writer {
    fn start(dir: &Path) -> Writer {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/live/leveldb_writer.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 (with plyvel: scripts/setup.sh)");
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "ready", "the writer did not start");
        Writer { child, out }
    }

    /// Closes its stdin: it stops after its current batch and says which was the last.
    fn stop(mut self) -> u64 {
        drop(self.child.stdin.take());
        let mut line = String::new();
        self.out.read_line(&mut line).unwrap();
        assert!(self.child.wait().unwrap().success());
        line.trim().parse().unwrap()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.child.stdin.take() {
            let _ = stdin.flush();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn every_read_of_a_directory_leveldb_writes_and_compacts_is_one_batch_state() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let writer = Writer::start(&dir);
    let mut seen = 0u64;
    // Reads (each checked) until every key is written and level 1 holds several tables.
    let mut n = 0;
    while seen < 500 || lib_read(&dir, &mut seen).level_files(1).len() < 2 {
        cli_read(&dir, &mut seen);
        n += 1;
        assert!(
            n < 100_000,
            "LevelDB made no second level-1 table by batch {seen}"
        );
    }
    // Then 25 times: a Db opened now is read to its first row, then (reads of both kinds
    // meanwhile, each checked) LevelDB deletes a table of it the scan has not reached yet,
    // then the scan goes on to its end.
    for _ in 0..25 {
        let before = seen;
        let db = open(&dir);
        let later = later_tables(&db);
        assert!(!later.is_empty(), "one table per level at batch {seen}");
        let mut waits = 0;
        let rows = scan_db(&db, 1, || {
            while later.iter().all(|t| dir.join(t).exists()) {
                lib_read(&dir, &mut seen);
                waits += 1;
                assert!(waits < 100_000, "LevelDB deleted none of {later:?}");
            }
            cli_read(&dir, &mut seen);
        });
        let i = batch_of(&rows, "Db::view, read on after the deletion");
        assert_eq!(db.last_sequence(), (OPS + 1) * i);
        assert!(
            before <= i && i <= seen,
            "reads saw batches {before}, {i}, {seen}"
        );
    }
    let last = writer.stop();
    let a = ATTEMPTS.lock().unwrap();
    eprintln!(
        "{} opens by the library up to batch {last}: {} read again, at most {} attempts",
        a.len(),
        a.iter().filter(|&&n| n > 1).count(),
        a.iter().max().unwrap()
    );
    assert!(last >= seen);
    assert_eq!(batch_of(&scan_cli(&dir), "after the writer"), last);
}
