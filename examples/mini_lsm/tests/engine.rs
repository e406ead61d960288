//! The example LSM engine (`mini_lsm`, built from leveldb-table's public pieces)
//! against C++ LevelDB both ways (plyvel, paranoid checks), against a model (proptest, many
//! seeds, with reopens, snapshots, ranges, flushes and compactions), and its LOCK against
//! LevelDB's.
//!
//! Small memtables and tables (a few KiB) make flushes and compactions, down to level 3 and
//! deeper, happen within a few thousand writes.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use leveldb_table::db::files::WriteBatch;
use mini_lsm::{cli, Db, Event, Options};
use proptest::prelude::*;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Options that flush every ~8 KiB and keep tables and levels tiny.
fn small() -> Options {
    Options {
        write_buffer_size: 8 << 10,
        max_file_size: 8 << 10,
        level1_max_bytes: 32 << 10,
        ..Options::default()
    }
}

fn scan(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iter(None, None, None)
        .unwrap()
        .collect::<leveldb_table::Result<_>>()
        .unwrap()
}

fn python(script: &str, args: &[&str]) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .expect("python3 with plyvel (scripts/setup.sh installs it)");
    assert!(
        out.status.success(),
        "python: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What C++ LevelDB (plyvel, paranoid checks) iterates in `dir`. LevelDB writes to the
/// directory it opens (recovery), so it reads a copy unless `in_place`.
fn leveldb_reads(dir: &Path, in_place: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let tmp = tempfile::tempdir().unwrap();
    let target = if in_place {
        dir.to_path_buf()
    } else {
        let c = tmp.path().join("copy");
        copy_dir(dir, &c);
        c
    };
    python(
        "import sys, plyvel\n\
         db = plyvel.DB(sys.argv[1], paranoid_checks=True)\n\
         for k, v in db.iterator():\n    print(k.hex(), v.hex())\n\
         db.close()\n",
        &[target.to_str().unwrap()],
    )
    .lines()
    .map(|l| {
        let (k, v) = l.split_once(' ').unwrap();
        (hex::decode(k).unwrap(), hex::decode(v).unwrap())
    })
    .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// `n` random puts, deletions and small batches over 2,000 keys.
fn workload(db: &Db, model: &mut Model, n: u64, seed: u64) {
    let mut x = seed | 1;
    for i in 0..n {
        let r = xorshift(&mut x);
        let key = format!("key{:05}", r % 2000).into_bytes();
        match r % 16 {
            0..=1 => {
                db.delete(&key).unwrap();
                model.remove(&key);
            }
            2 => {
                let mut b = WriteBatch::new();
                for j in 0..4 {
                    let k = format!("key{:05}", (r / 16 + j * 7) % 2000).into_bytes();
                    let v = format!("batch {seed}/{i}/{j}").into_bytes();
                    b.put(&k, &v);
                    model.insert(k, v);
                }
                b.delete(&key);
                model.remove(&key);
                db.write(&mut b).unwrap();
            }
            _ => {
                let v = format!("value {seed}/{i} ")
                    .repeat(1 + (r % 5) as usize)
                    .into_bytes();
                db.put(&key, &v).unwrap();
                model.insert(key, v);
            }
        }
    }
}

fn counting_listener() -> (Arc<[AtomicUsize; 3]>, Options) {
    let counts: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
    let c = counts.clone();
    let opts = Options {
        listener: Some(Arc::new(move |e: &Event| {
            let i = match e {
                Event::FlushFinished { .. } => 0,
                Event::CompactionFinished { .. } => 1,
                Event::TrivialMove { .. } => 2,
                _ => return,
            };
            c[i].fetch_add(1, Ordering::Relaxed);
        })),
        ..small()
    };
    (counts, opts)
}

#[test]
fn leveldb_reads_exactly_the_model_after_random_workloads_with_flushes_compactions_and_reopens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let (counts, opts) = counting_listener();
    let mut model = Model::new();
    for round in 0..4u64 {
        let db = Db::open(&dir, opts.clone()).unwrap();
        assert_eq!(
            scan(&db),
            model.clone().into_iter().collect::<Vec<_>>(),
            "reopen {round}"
        );
        workload(&db, &mut model, 6_000, round + 1);
        if round % 2 == 0 {
            db.wait_for_compactions().unwrap();
        }
        let levels = db.tables_per_level();
        drop(db); // unflushed writes stay in the log, which LevelDB replays
        let want: Vec<_> = model.clone().into_iter().collect();
        assert_eq!(
            leveldb_reads(&dir, false),
            want,
            "LevelDB, round {round}, tables per level {levels:?}"
        );
    }
    let db = Db::open(&dir, opts.clone()).unwrap();
    db.wait_for_compactions().unwrap();
    let levels = db.tables_per_level();
    assert!(
        levels[2..].iter().any(|&n| n > 0),
        "data reached level 2 or deeper: {levels:?}"
    );
    drop(db);
    let (flushes, merges, moves) = (
        counts[0].load(Ordering::Relaxed),
        counts[1].load(Ordering::Relaxed),
        counts[2].load(Ordering::Relaxed),
    );
    assert!(
        flushes > 50 && merges > 10,
        "flushes {flushes}, compactions {merges}, moves {moves}"
    );
    // LevelDB opens the real directory (and recovers, writes to it); the engine then opens
    // what LevelDB left.
    let want: Vec<_> = model.into_iter().collect();
    assert_eq!(leveldb_reads(&dir, true), want);
    let db = Db::open(&dir, small()).unwrap();
    assert_eq!(
        scan(&db),
        want,
        "the engine reads the directory LevelDB recovered"
    );
}

#[test]
fn the_engine_continues_a_directory_leveldb_wrote_and_leveldb_reads_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // LevelDB: random puts and deletions with a 16 KiB write buffer (tables at several
    // levels, and writes left in its log), then its view, printed.
    let listed = python(
        "import sys, random, plyvel\n\
         rng = random.Random(7)\n\
         db = plyvel.DB(sys.argv[1], create_if_missing=True, write_buffer_size=16384,\n\
                        max_file_size=16384, paranoid_checks=True)\n\
         for i in range(20000):\n\
         \x20   k = b'key%05d' % rng.randrange(3000)\n\
         \x20   if rng.random() < 0.15: db.delete(k)\n\
         \x20   else: db.put(k, b'leveldb %d ' % i * rng.randrange(1, 4))\n\
         for k, v in db.iterator(): print(k.hex(), v.hex())\n\
         db.close()\n",
        &[dir.to_str().unwrap()],
    );
    let mut model: Model = listed
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (hex::decode(k).unwrap(), hex::decode(v).unwrap())
        })
        .collect();
    assert!(model.len() > 2000);
    let db = Db::open(&dir, small()).unwrap();
    assert_eq!(scan(&db), model.clone().into_iter().collect::<Vec<_>>());
    for (k, v) in model.iter().step_by(97) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v));
    }
    workload(&db, &mut model, 8_000, 99);
    db.wait_for_compactions().unwrap();
    workload(&db, &mut model, 500, 100); // some left in the log
    drop(db);
    let want: Vec<_> = model.into_iter().collect();
    assert_eq!(
        leveldb_reads(&dir, true),
        want,
        "LevelDB reads what the engine wrote"
    );
}

#[test]
fn the_lock_keeps_out_a_second_engine_and_leveldb_and_leveldbs_lock_keeps_out_the_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, Options::default()).unwrap();
    db.put(b"k", b"v").unwrap();
    let e = Db::open(&dir, Options::default())
        .err()
        .expect("a second engine is refused");
    assert!(e.to_string().contains("LOCK"), "{e}");
    let refused = python(
        "import sys, plyvel\n\
         try:\n    plyvel.DB(sys.argv[1]); print('opened')\n\
         except plyvel.IOError as e: print('refused', e)\n",
        &[dir.to_str().unwrap()],
    );
    assert!(refused.starts_with("refused"), "LevelDB: {refused}");
    drop(db);
    // LevelDB holds it (a child python process waits on stdin while it has the database open).
    let mut child = Command::new("python3")
        .arg("-c")
        .arg("import sys, plyvel\ndb = plyvel.DB(sys.argv[1])\nprint('open', flush=True)\nsys.stdin.read()\n")
        .arg(&dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "open");
    let e = Db::open(&dir, Options::default())
        .err()
        .expect("refused while LevelDB holds it");
    assert!(e.to_string().contains("LOCK"), "{e}");
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn snapshots_and_ranges_see_what_they_should_across_flushes_and_compactions() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), small()).unwrap();
    let mut model = Model::new();
    workload(&db, &mut model, 3_000, 5);
    let snap = db.snapshot();
    let frozen = model.clone();
    workload(&db, &mut model, 6_000, 6);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let it = db.iter(None, None, Some(&snap)).unwrap();
    let seen: Vec<_> = it.map(Result::unwrap).collect();
    assert_eq!(seen, frozen.clone().into_iter().collect::<Vec<_>>());
    for k in frozen.keys().step_by(50).chain(model.keys().step_by(50)) {
        assert_eq!(
            db.get_at(k, &snap).unwrap().as_ref(),
            frozen.get(k),
            "{k:?}"
        );
        assert_eq!(db.get(k).unwrap().as_ref(), model.get(k));
    }
    let (from, to) = (b"key00500".to_vec(), b"key01200".to_vec());
    let ranged: Vec<_> = db
        .iter(Some(&from), Some(&to), None)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want: Vec<_> = model
        .range(from..to)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(ranged, want);
}

/// The command line's fixed contract: `get` prints the value and exits 0, or exits 1 when
/// the key is absent; `scan` prints key<TAB>value lines in key order, `--from` inclusive,
/// `--to` exclusive; bad usage exits 2.
#[test]
fn the_command_line_keeps_its_contract() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db").to_str().unwrap().to_string();
    let run = |args: &[&str]| {
        let args: Vec<String> = std::iter::once(dir.as_str())
            .chain(args.iter().copied())
            .map(String::from)
            .collect();
        let mut out = Vec::new();
        let code = cli::main(&args, &mut out);
        (code, String::from_utf8(out).unwrap())
    };
    let ok = std::process::ExitCode::SUCCESS;
    for (k, v) in [("b", "2"), ("a", "1"), ("c", "three 3"), ("d", "4")] {
        assert_eq!(run(&["put", k, v]), (ok, String::new()));
    }
    assert_eq!(run(&["delete", "d"]), (ok, String::new()));
    assert_eq!(run(&["get", "c"]), (ok, "three 3\n".into()));
    assert_eq!(
        run(&["get", "d"]),
        (std::process::ExitCode::from(1), String::new())
    );
    assert_eq!(run(&["get", "zz"]).0, std::process::ExitCode::from(1));
    assert_eq!(run(&["scan"]), (ok, "a\t1\nb\t2\nc\tthree 3\n".into()));
    assert_eq!(
        run(&["scan", "--from", "b"]),
        (ok, "b\t2\nc\tthree 3\n".into())
    );
    assert_eq!(
        run(&["scan", "--from", "a", "--to", "c"]),
        (ok, "a\t1\nb\t2\n".into())
    );
    assert_eq!(run(&["scan", "--to", "b"]), (ok, "a\t1\n".into()));
    assert_eq!(run(&["bench", "--num", "2000"]).0, ok);
    assert_eq!(run(&["frobnicate"]).0, std::process::ExitCode::from(2));
    assert_eq!(run(&["get"]).0, std::process::ExitCode::from(2));
    // The directory is LevelDB's: 2,000 bench keys plus a, b, c.
    assert_eq!(
        leveldb_reads(Path::new(&dir), false).len(),
        run(&["scan"]).1.lines().count()
    );
}

/// Lookups that keep probing a table in vain before finding their key deeper make it
/// compact (LevelDB's seek-triggered compaction): with the size rules already met and no
/// write in between, gets alone start a compaction, and every answer stays right.
#[test]
fn lookups_that_probe_a_table_in_vain_compact_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (counts, opts) = counting_listener();
    let db = Db::open(tmp.path(), opts).unwrap();
    let mut model = Model::new();
    workload(&db, &mut model, 6_000, 11);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let before = db.tables_per_level();
    let merged = counts[1].load(Ordering::Relaxed) + counts[2].load(Ordering::Relaxed);
    for round in 0..50 {
        for n in 0..2000 {
            let k = format!("key{n:05}").into_bytes();
            assert_eq!(db.get(&k).unwrap().as_ref(), model.get(&k), "round {round}");
        }
    }
    db.wait_for_compactions().unwrap();
    let after = counts[1].load(Ordering::Relaxed) + counts[2].load(Ordering::Relaxed);
    assert!(
        after > merged,
        "no compaction from lookups: {before:?} -> {:?}",
        db.tables_per_level()
    );
    assert_eq!(scan(&db), model.into_iter().collect::<Vec<_>>());
}

/// Obsolete files go: after reopens, flushes and compactions the directory holds one
/// MANIFEST (a new one per open, named by CURRENT), one log, the live tables and nothing
/// else but CURRENT and LOCK.
#[test]
fn obsolete_logs_tables_and_manifests_are_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let mut model = Model::new();
    let mut manifests = Vec::new();
    for round in 0..3 {
        let db = Db::open(tmp.path(), small()).unwrap();
        workload(&db, &mut model, 4_000, 20 + round);
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let count = |suffix: &str| names.iter().filter(|n| n.ends_with(suffix)).count();
        let live: usize = db.tables_per_level().iter().sum();
        assert_eq!(count(".ldb"), live, "{names:?}");
        assert_eq!(count(".log"), 1, "{names:?}");
        let m: Vec<_> = names
            .iter()
            .filter(|n| n.starts_with("MANIFEST-"))
            .collect();
        assert_eq!(m.len(), 1, "{names:?}");
        let current = std::fs::read_to_string(tmp.path().join("CURRENT")).unwrap();
        assert_eq!(current, format!("{}\n", m[0]));
        assert!(!manifests.contains(m[0]), "a new MANIFEST per open");
        manifests.push(m[0].clone());
        assert_eq!(
            names.len(),
            live + 4,
            "only CURRENT, LOCK, one MANIFEST, one log: {names:?}"
        );
    }
}

/// What a crash during the very first open leaves (a MANIFEST and an empty log, no
/// CURRENT) opens as a new database, as LevelDB's `create_if_missing` does; tables or logged
/// writes without a CURRENT are refused, never silently dropped.
#[test]
fn a_directory_without_current_is_new_only_when_it_holds_no_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("MANIFEST-000003"), b"").unwrap();
    std::fs::write(dir.join("000002.log"), b"").unwrap();
    let db = Db::open(&dir, Options::default()).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    assert_eq!(
        leveldb_reads(&dir, false),
        vec![(b"k".to_vec(), b"v".to_vec())]
    );
    assert!(
        !dir.join("MANIFEST-000003").exists(),
        "the orphan MANIFEST is deleted"
    );

    for (name, bytes) in [("000007.log", &b"x"[..]), ("000007.ldb", &b""[..])] {
        let other = tmp.path().join(name);
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(name), bytes).unwrap();
        let e = Db::open(&other, Options::default()).err().expect("refused");
        assert!(e.to_string().contains("no CURRENT"), "{e}");
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(u16, u8),
    Delete(u16),
    Batch(Vec<(u16, Option<u8>)>),
    Get(u16),
    Scan(u16, u16),
    Snapshot,
    ReadSnapshot(u16),
    Flush,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u16..400;
    prop_oneof![
        40 => (key.clone(), any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        10 => key.clone().prop_map(Op::Delete),
        5 => prop::collection::vec((key.clone(), prop::option::of(any::<u8>())), 1..8).prop_map(Op::Batch),
        10 => key.clone().prop_map(Op::Get),
        3 => (key.clone(), key.clone()).prop_map(|(a, b)| Op::Scan(a.min(b), a.max(b))),
        2 => Just(Op::Snapshot),
        4 => key.prop_map(Op::ReadSnapshot),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
    ]
}

fn k(n: u16) -> Vec<u8> {
    format!("k{n:04}").into_bytes()
}

fn v(n: u16, x: u8) -> Vec<u8> {
    // Values of 1-300 bytes: tables fill after some dozens of writes.
    vec![x; 1 + (usize::from(n) * 7 + usize::from(x)) % 300]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Random operations against a BTreeMap, with snapshots (a frozen copy of the model),
    /// reopens (a snapshot does not survive one), flushes and background compactions.
    #[test]
    fn the_engine_agrees_with_a_btreemap(ops in prop::collection::vec(op(), 1..400)) {
        let tmp = tempfile::tempdir().unwrap();
        let opts = Options { write_buffer_size: 2 << 10, max_file_size: 2 << 10, level1_max_bytes: 8 << 10, ..Options::default() };
        let mut db = Db::open(tmp.path(), opts.clone()).unwrap();
        let mut model = Model::new();
        let mut snap: Option<(mini_lsm::Snapshot, Model)> = None;
        for op in ops {
            match op {
                Op::Put(n, x) => { db.put(&k(n), &v(n, x)).unwrap(); model.insert(k(n), v(n, x)); }
                Op::Delete(n) => { db.delete(&k(n)).unwrap(); model.remove(&k(n)); }
                Op::Batch(items) => {
                    let mut b = WriteBatch::new();
                    for (n, x) in items {
                        match x {
                            Some(x) => { b.put(&k(n), &v(n, x)); model.insert(k(n), v(n, x)); }
                            None => { b.delete(&k(n)); model.remove(&k(n)); }
                        }
                    }
                    db.write(&mut b).unwrap();
                }
                Op::Get(n) => prop_assert_eq!(db.get(&k(n)).unwrap(), model.get(&k(n)).cloned()),
                Op::Scan(a, b) => {
                    let got: Vec<_> = db.iter(Some(&k(a)), Some(&k(b)), None).unwrap().map(Result::unwrap).collect();
                    let want: Vec<_> = model.range(k(a)..k(b)).map(|(x, y)| (x.clone(), y.clone())).collect();
                    prop_assert_eq!(got, want);
                }
                Op::Snapshot => snap = Some((db.snapshot(), model.clone())),
                Op::ReadSnapshot(n) => {
                    if let Some((s, frozen)) = &snap {
                        prop_assert_eq!(db.get_at(&k(n), s).unwrap(), frozen.get(&k(n)).cloned());
                    }
                }
                Op::Flush => db.flush().unwrap(),
                Op::Reopen => {
                    snap = None;
                    drop(db);
                    db = Db::open(tmp.path(), opts.clone()).unwrap();
                }
            }
        }
        if let Some((s, frozen)) = &snap {
            let got: Vec<_> = db.iter(None, None, Some(s)).unwrap().map(Result::unwrap).collect();
            prop_assert_eq!(got, frozen.clone().into_iter().collect::<Vec<_>>());
        }
        drop(snap);
        db.wait_for_compactions().unwrap();
        prop_assert_eq!(scan(&db), model.clone().into_iter().collect::<Vec<_>>());
        drop(db);
        let db = Db::open(tmp.path(), opts).unwrap();
        prop_assert_eq!(scan(&db), model.into_iter().collect::<Vec<_>>());
    }
}
