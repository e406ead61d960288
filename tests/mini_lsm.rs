//! The example LSM engine (`examples/mini_lsm`, built from the crate's public pieces) against
//! a model, and against C++ LevelDB both ways: LevelDB (plyvel, paranoid checks) opens and
//! reads the engine's directory after a random workload with reopens, and the engine opens
//! a directory LevelDB wrote and goes on writing to it.

#[path = "../examples/mini_lsm/engine.rs"]
#[allow(dead_code)]
mod engine;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use engine::MiniLsm;

fn view(db: &MiniLsm) -> Vec<(Vec<u8>, Vec<u8>)> {
    let r = db.reader().unwrap();
    let mut v = r.view().unwrap();
    v.seek_to_first();
    let mut out = Vec::new();
    while v.valid() {
        out.push((v.key().to_vec(), v.value().to_vec()));
        v.next();
    }
    assert!(v.error().is_none());
    out
}

fn leveldb_iterates(dir: &Path) -> Vec<(Vec<u8>, Vec<u8>)> {
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, plyvel\n\
             db = plyvel.DB(sys.argv[1], paranoid_checks=True)\n\
             for k, v in db.iterator():\n    print(k.hex(), v.hex())\n\
             db.close()\n",
        )
        .arg(dir)
        .output()
        .expect("python3 with plyvel");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (hex::decode(k).unwrap(), hex::decode(v).unwrap())
        })
        .collect()
}

fn workload(db: &mut MiniLsm, model: &mut BTreeMap<Vec<u8>, Vec<u8>>, n: u64, seed: u64) {
    let mut x = seed | 1;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = format!("key{:05}", x % 3000).into_bytes();
        if x % 9 == 0 {
            db.delete(&key).unwrap();
            model.remove(&key);
        } else {
            let v = format!("value {seed}/{i} ")
                .repeat(1 + (x % 4) as usize)
                .into_bytes();
            db.put(&key, &v).unwrap();
            model.insert(key, v);
        }
    }
}

#[test]
fn a_random_workload_with_reopens_matches_the_model_and_leveldb_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let mut model = BTreeMap::new();
    let mut db = MiniLsm::open(&dir).unwrap();
    workload(&mut db, &mut model, 20_000, 1);
    assert!(
        db.table_counts().1 > 0,
        "a compaction ran: {:?}",
        db.table_counts()
    );
    let want: Vec<_> = model.clone().into_iter().collect();
    assert_eq!(view(&db), want);
    drop(db); // unflushed writes stay in the log
    let mut db = MiniLsm::open(&dir).unwrap();
    assert_eq!(view(&db), want, "after reopen (log replayed)");
    workload(&mut db, &mut model, 8_000, 2);
    drop(db);
    let want: Vec<_> = model.into_iter().collect();
    assert_eq!(
        leveldb_iterates(&dir),
        want,
        "LevelDB reads the engine's directory"
    );
}

#[test]
fn the_engine_opens_a_directory_leveldb_wrote_and_goes_on() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/db/basic");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        if e.file_name() != "expected.json" {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let e: serde_json::Value =
        serde_json::from_slice(&std::fs::read(src.join("expected.json")).unwrap()).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = e["scan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| {
            (
                hex::decode(kv[0].as_str().unwrap()).unwrap(),
                hex::decode(kv[1].as_str().unwrap()).unwrap(),
            )
        })
        .collect();
    let mut db = MiniLsm::open(&dir).unwrap();
    let want: Vec<_> = model.clone().into_iter().collect();
    assert_eq!(view(&db), want, "the engine reads what LevelDB wrote");
    // Keys of the fixture ("key/NNNNN") and new ones, with deletions of both.
    let mut x = 99u64;
    for i in 0..6000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let key = format!("key/{:05}", x % 1200).into_bytes();
        if x % 5 == 0 {
            db.delete(&key).unwrap();
            model.remove(&key);
        } else {
            let v = format!("engine {i}").into_bytes();
            db.put(&key, &v).unwrap();
            model.insert(key, v);
        }
    }
    let want: Vec<_> = model.into_iter().collect();
    assert_eq!(view(&db), want);
    drop(db);
    assert_eq!(leveldb_iterates(&dir), want, "and LevelDB reads the result");
}
