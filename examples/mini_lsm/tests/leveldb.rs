//! The engine against C++ LevelDB (plyvel, paranoid checks) both ways: LevelDB reads
//! exactly the model after random workloads with flushes, compactions and reopens; the
//! engine continues a directory LevelDB wrote; the LOCKs keep each other out.
//!
//! Small memtables and tables (a few KiB) make flushes and compactions, down to level 3 and
//! deeper, happen within a few thousand writes.

mod common;

use common::*;

use std::process::Command;
use std::sync::atomic::Ordering;

use mini_lsm::{Db, Options};

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
