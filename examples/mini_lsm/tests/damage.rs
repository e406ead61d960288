//! Damage: a flipped bit anywhere in a table is an error or the right answer, never a
//! missing key or a wrong value; a damaged log record is dropped on open as LevelDB drops it
//! (and reported), or refused under paranoid checks; a repair keeps every readable entry and
//! LevelDB opens its result.

mod common;

use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use common::*;
use mini_lsm::{Db, Event, Options};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value {i} ")
        .repeat(1 + (i % 7) as usize)
        .into_bytes()
}

/// A directory with `n` keys in one table (no log records left).
fn one_table(dir: &Path, n: u32) -> std::path::PathBuf {
    let opts = Options {
        bloom_bits_per_key: 10,
        ..Options::default()
    };
    let db = Db::open(dir, opts).unwrap();
    for i in 0..n {
        db.put(&key(i), &value(i)).unwrap();
    }
    db.flush().unwrap();
    drop(db);
    let tables: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "ldb"))
        .collect();
    assert_eq!(tables.len(), 1, "{tables:?}");
    tables[0].clone()
}

fn flip(path: &Path, offset: usize, bit: u8) {
    let mut b = std::fs::read(path).unwrap();
    b[offset] ^= 1 << bit;
    std::fs::write(path, b).unwrap();
}

/// One bit flipped at offsets all over a table (data blocks, the filter, the index, the
/// footer): every lookup answers right or fails, every scan yields right entries and then
/// fails or yields them all: never a missing key, never a wrong value.
#[test]
fn a_flipped_bit_in_a_table_is_an_error_or_the_right_answer_never_a_missing_key() {
    let tmp = tempfile::tempdir().unwrap();
    let clean = tmp.path().join("clean");
    let n = 600;
    let table = one_table(&clean, n);
    let size = std::fs::metadata(&table).unwrap().len() as usize;
    let name = table.file_name().unwrap().to_owned();
    let (mut get_errors, mut scan_errors, mut cases) = (0, 0, 0);
    for offset in (0..size).step_by(89).chain([size - 1, size - 20, 5]) {
        cases += 1;
        let dir = tmp.path().join(format!("flip{offset}"));
        copy_dir(&clean, &dir);
        flip(&dir.join(&name), offset, (offset % 8) as u8);
        let db = match Db::open(&dir, Options::default()) {
            Ok(db) => db,
            Err(e) => panic!("open does not read the table: {e}"),
        };
        for i in (0..n).step_by(7) {
            match db.get(&key(i)) {
                Ok(Some(v)) => assert_eq!(v, value(i), "offset {offset}: key {i}"),
                Ok(None) => panic!("offset {offset}: key {i} silently missing"),
                Err(_) => get_errors += 1,
            }
        }
        assert_eq!(db.get(b"absent").ok().flatten(), None, "offset {offset}");
        let mut seen = 0;
        let scan = db.iter(None, None, None);
        match scan {
            Err(_) => scan_errors += 1,
            Ok(it) => {
                for kv in it {
                    match kv {
                        Ok((k, v)) => {
                            assert_eq!((k, v), (key(seen), value(seen)), "offset {offset}");
                            seen += 1;
                        }
                        Err(_) => {
                            scan_errors += 1;
                            seen = n;
                        }
                    }
                }
                assert_eq!(
                    seen, n,
                    "offset {offset}: a scan ended early without an error"
                );
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(cases > 20, "{cases}");
    assert!(
        get_errors > 10 && scan_errors > 10,
        "{get_errors} {scan_errors}"
    );
}

/// A byte flipped in a data block: `get` of its keys and `scan` fail, through the
/// library API and the command line (exit 2, the file named).
#[test]
fn a_flipped_byte_in_a_data_block_fails_get_and_scan() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let table = one_table(&dir, 600);
    flip(&table, 40, 3); // inside the first data block (key000000...)
    let db = Db::open(&dir, Options::default()).unwrap();
    let e = db.get(&key(0)).expect_err("a damaged block is an error");
    assert!(e.is_corruption(), "{e}");
    assert!(e.to_string().contains(".ldb"), "{e}");
    assert!(db.iter(None, None, None).is_err());
    assert!(db.iter_rev(Some(&key(0)), Some(&key(3)), None).is_err());
    drop(db);
    let run = |args: &[&str]| {
        let mut all = vec![dir.clone().into_os_string()];
        all.extend(args.iter().map(Into::into));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = mini_lsm::cli::main(&all, &mut &b""[..], &mut out, &mut err);
        (code, String::from_utf8(err).unwrap())
    };
    let (code, err) = run(&["get", "key000000"]);
    assert_eq!(code, ExitCode::from(2), "{err}");
    assert!(err.contains("checksum") && err.contains(".ldb"), "{err}");
    let (code, err) = run(&["scan"]);
    assert_eq!(code, ExitCode::from(2), "{err}");
}

fn log_of(dir: &Path) -> std::path::PathBuf {
    let logs: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .filter(|p| std::fs::metadata(p).unwrap().len() > 0)
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs[0].clone()
}

/// What LevelDB (plyvel, paranoid checks off: it drops a damaged record and opens) reads
/// from a copy of `dir`.
fn leveldb_reads_leniently(dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let tmp = tempfile::tempdir().unwrap();
    let c = tmp.path().join("copy");
    copy_dir(dir, &c);
    python(
        "import sys, plyvel\n\
         db = plyvel.DB(sys.argv[1])\n\
         for k, v in db.iterator():\n    print(k.hex(), v.hex())\n\
         db.close()\n",
        &[c.to_str().unwrap()],
    )
    .lines()
    .map(|l| {
        let (k, v) = l.split_once(' ').unwrap();
        (hex::decode(k).unwrap(), hex::decode(v).unwrap())
    })
    .collect()
}

/// A damaged record in the log: the open drops it and goes on, as LevelDB does (the same
/// keys survive on both), tells the listener and reports it; under paranoid checks the open
/// fails naming the log.
#[test]
fn a_damaged_log_record_is_dropped_and_reported_as_leveldb_drops_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, Options::default()).unwrap();
    for i in 0..3000 {
        db.put(&key(i), &value(i)).unwrap();
    }
    drop(db); // the writes stay in the log
    let log = log_of(&dir);
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(size > 100_000, "{size}");
    flip(&log, 40_000, 2); // inside the second 32 KiB block
    let lenient = leveldb_reads_leniently(&dir);
    assert!(
        lenient.len() > 2000 && lenient.len() < 3000,
        "{}",
        lenient.len()
    );

    let paranoid = Options {
        paranoid_checks: true,
        ..Options::default()
    };
    let e = Db::open(&dir, paranoid)
        .err()
        .expect("paranoid checks refuse");
    assert!(e.to_string().contains(".log"), "{e}");

    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let opts = Options {
        listener: Some(Arc::new(move |e: &Event| {
            if let Event::LogRecordDropped { .. } = e {
                seen.lock().unwrap().push(e.clone());
            }
        })),
        ..Options::default()
    };
    let db = Db::open(&dir, opts).unwrap();
    // The damaged record, and what follows it in its block (a record's length may be what
    // is damaged); then the rest of a record it began.
    let dropped = &db.recovery().dropped;
    assert!(!dropped.is_empty(), "{dropped:?}");
    let name = log.file_name().unwrap().to_str().unwrap();
    assert!(
        dropped.iter().all(|d| d.log == name && d.bytes > 0),
        "{dropped:?}"
    );
    assert!(
        dropped[0].offset <= 40_000 && dropped[0].offset > 32_768,
        "{dropped:?}"
    );
    assert_eq!(events.lock().unwrap().len(), dropped.len());
    assert_eq!(scan(&db), lenient, "the engine keeps what LevelDB keeps");
    // The open rewrote the survivors into a table: the next open has nothing to drop.
    drop(db);
    let db = Db::open(&dir, Options::default()).unwrap();
    assert!(db.recovery().dropped.is_empty());
    assert_eq!(scan(&db), lenient);
}

/// A repair after a damaged table block and a lost MANIFEST: every entry outside the
/// damaged block is back, the damaged table is in lost/, and LevelDB (paranoid checks)
/// opens the result and reads the same.
#[test]
fn repair_keeps_every_readable_entry_and_leveldb_opens_the_result() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let table = one_table(&dir, 600);
    let db = Db::open(&dir, Options::default()).unwrap();
    for i in 600..900 {
        db.put(&key(i), &value(i)).unwrap(); // left in the log
    }
    db.delete(&key(599)).unwrap();
    drop(db);
    flip(&table, 40, 3);
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("MANIFEST")
        {
            std::fs::remove_file(p).unwrap();
        }
    }
    assert!(Db::open(&dir, Options::default()).is_err());
    let report = mini_lsm::repair(&dir, &Options::default()).unwrap();
    assert_eq!(report.damage.len(), 1, "{:?}", report.damage);
    let table_name = table.file_name().unwrap().to_str().unwrap().to_string();
    assert_eq!(report.archived, vec![table_name.clone()]);
    assert!(dir.join("lost").join(&table_name).exists());
    let db = Db::open(&dir, Options::default()).unwrap();
    let got = scan(&db);
    drop(db);
    // The first data block's keys are gone, every other key is back with its value.
    let lost = (0..900)
        .filter(|&i| !got.iter().any(|(k, _)| *k == key(i)))
        .count();
    assert!(lost > 0 && lost < 100, "{lost} keys lost");
    for (k, v) in &got {
        let i: u32 = std::str::from_utf8(&k[3..]).unwrap().parse().unwrap();
        assert_eq!(*v, value(i));
        assert_ne!(i, 599, "a deleted key came back");
    }
    assert!(got.iter().any(|(k, _)| *k == key(899)));
    assert_eq!(leveldb_reads(&dir, false), got);
}
