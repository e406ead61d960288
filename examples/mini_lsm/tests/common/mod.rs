//! What the engine's tests share: small options, a scan, LevelDB (plyvel) reading a
//! directory, a random workload with its model.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use leveldb_table::db::files::WriteBatch;
use mini_lsm::{Db, Event, Options};

pub type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Options that flush every ~8 KiB and keep tables and levels tiny.
pub fn small() -> Options {
    Options {
        write_buffer_size: 8 << 10,
        max_file_size: 8 << 10,
        level1_max_bytes: 32 << 10,
        ..Options::default()
    }
}

pub fn scan(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iter(None, None, None)
        .unwrap()
        .collect::<mini_lsm::Result<_>>()
        .unwrap()
}

pub fn python(script: &str, args: &[&str]) -> String {
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
pub fn leveldb_reads(dir: &Path, in_place: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
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

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "LOCK" && e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

pub fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// `n` random puts, deletions and small batches over 2,000 keys.
pub fn workload(db: &Db, model: &mut Model, n: u64, seed: u64) {
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

pub fn counting_listener() -> (Arc<[AtomicUsize; 3]>, Options) {
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
