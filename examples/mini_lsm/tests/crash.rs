//! Crash test of the example LSM engine (`mini_lsm`): a child process
//! writes with sync on and is killed with SIGKILL, again and again, while it writes, while
//! its background thread flushes a memtable, while it compacts, and while it recovers. After
//! every kill:
//!
//! - the engine reopens the directory and holds exactly the first `c` writes, where `c` is
//!   the number the child acknowledged, or one more (the write in flight when it died):
//!   every acknowledged write, nothing after the one in flight;
//! - C++ LevelDB (plyvel, paranoid checks) opens a copy of the directory as the kill left it
//!   and sees the same data.
//!
//! The run goes on until at least 120 kills landed, at least 25 of them during a flush and
//! 25 during a compaction (the phase of each kill is read from the events the child had
//! written before it died, not guessed from timing), and prints the count per phase.
//!
//! This is a test without the libtest harness (`harness = false` in Cargo.toml): the same
//! binary is the child when `MINI_LSM_CRASH_CHILD` is set.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use mini_lsm::{Db, Event, Options};
use sha2::{Digest, Sha256};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const MIN_KILLS: usize = 120;
const MIN_PER_PHASE: usize = 25;
const MAX_RUNS: usize = 1_000;

fn options() -> Options {
    Options {
        write_buffer_size: 3 << 10,
        max_file_size: 3 << 10,
        level1_max_bytes: 12 << 10,
        sync: true,
        ..Options::default()
    }
}

fn xorshift(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

/// Write number `i`: a put (value 64-447 bytes naming `i`) or a deletion, of one of 300 keys.
fn op(i: u64) -> (Vec<u8>, Option<Vec<u8>>) {
    let r = xorshift(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let key = format!("key{:03}", r % 300).into_bytes();
    if r % 5 == 0 {
        return (key, None);
    }
    let mut v = format!("write {i};").into_bytes();
    v.resize(64 + (r >> 20) as usize % 384, b'a' + (i % 26) as u8);
    (key, Some(v))
}

fn apply(model: &mut Model, i: u64) {
    match op(i) {
        (k, Some(v)) => model.insert(k, v),
        (k, None) => model.remove(&k),
    };
}

/// The child: opens DIR, writes from write number `start` on, acknowledging each on stdout
/// ("A n": the first n writes are durable), with the background thread's events.
fn child(dir: &str, start: u64) -> ! {
    let say = |s: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{s}");
        let _ = out.flush();
    };
    let opts = Options {
        listener: Some(Arc::new(move |e: &Event| {
            let line = match e {
                Event::FlushStarted { .. } => "F+",
                Event::FlushFinished { .. } => "F-",
                Event::CompactionStarted { .. } => "C+",
                Event::CompactionFinished { .. } => "C-",
                Event::TrivialMove { .. } => "M",
                // A kill leaves at most a torn last record, never a damaged one.
                e => panic!("unexpected event {e:?}"),
            };
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        })),
        ..options()
    };
    say("O+");
    let db = Db::open(dir, opts).unwrap_or_else(|e| {
        eprintln!("child: open: {e}");
        std::process::exit(3)
    });
    say("O-");
    for i in start.. {
        let r = match op(i) {
            (k, Some(v)) => db.put(&k, &v),
            (k, None) => db.delete(&k),
        };
        if let Err(e) = r {
            eprintln!("child: write {i}: {e}");
            std::process::exit(3);
        }
        say(&format!("A {}", i + 1));
    }
    unreachable!()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    Open,
    Write,
    Flush,
    Compaction,
}

fn digest(entries: impl Iterator<Item = (Vec<u8>, Vec<u8>)>) -> String {
    let mut h = Sha256::new();
    for (k, v) in entries {
        h.update(hex::encode(k));
        h.update(b" ");
        h.update(hex::encode(v));
        h.update(b"\n");
    }
    hex::encode(h.finalize())
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

fn crash_test() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let copies = tmp.path().join("copies");
    let exe = std::env::current_exe().unwrap();
    let mut model = Model::new(); // the first `applied` writes
    let mut applied = 0u64;
    let mut kills: BTreeMap<Phase, usize> = BTreeMap::new();
    let mut expected_digests = Vec::new();
    let mut rng = 0x5eed_u64;
    let mut runs = 0;
    let enough = |k: &BTreeMap<Phase, usize>| {
        k.values().sum::<usize>() >= MIN_KILLS
            && k.get(&Phase::Flush).copied().unwrap_or(0) >= MIN_PER_PHASE
            && k.get(&Phase::Compaction).copied().unwrap_or(0) >= MIN_PER_PHASE
    };
    while !enough(&kills) {
        runs += 1;
        assert!(
            runs <= MAX_RUNS,
            "{MAX_RUNS} runs without enough kills per phase: {kills:?}"
        );
        rng = xorshift(rng);
        // The event to kill at, and how many lines later.
        let target = ["O+", "A", "F+", "C+"][(rng % 4) as usize];
        let after = if target == "A" {
            1 + (rng >> 8) % 200
        } else {
            (rng >> 8) % 3
        };
        let mut c = Command::new(&exe)
            .env("MINI_LSM_CRASH_CHILD", &dir)
            .env("MINI_LSM_CRASH_START", applied.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(c.stdout.take().unwrap()).lines();
        let mut seen: Vec<String> = Vec::new();
        let mut countdown: Option<u64> = None;
        loop {
            let Some(Ok(line)) = lines.next() else {
                panic!("the child stopped by itself: {seen:?} {:?}", c.wait());
            };
            let hit = line == target || (target == "A" && line.starts_with("A "));
            seen.push(line);
            if hit && countdown.is_none() {
                countdown = Some(after);
            }
            if let Some(n) = countdown.as_mut() {
                if *n == 0 {
                    break;
                }
                *n -= 1;
            }
        }
        c.kill().unwrap(); // SIGKILL
        c.wait().unwrap();
        // Everything the child wrote before it died.
        seen.extend(lines.map_while(Result::ok));
        let mut phase = Phase::Write;
        let mut acked = applied;
        for l in &seen {
            match l.as_str() {
                "O+" => phase = Phase::Open,
                "O-" | "F-" | "C-" => phase = Phase::Write,
                "F+" => phase = Phase::Flush,
                "C+" => phase = Phase::Compaction,
                a => {
                    if let Some(n) = a.strip_prefix("A ") {
                        acked = n.parse().unwrap();
                    }
                }
            }
        }
        *kills.entry(phase).or_default() += 1;
        // LevelDB reads a copy of the directory as the kill left it (checked below, in one
        // python process for all kills).
        // (Killed before the first open made the directory: nothing for LevelDB to open.)
        let copied = dir.join("CURRENT").exists();
        if copied {
            copy_dir(&dir, &copies.join(runs.to_string()));
        }
        // The engine recovers exactly the acknowledged writes, or one more.
        for i in applied..acked {
            apply(&mut model, i);
        }
        let mut next = model.clone();
        apply(&mut next, acked);
        let db = Db::open(&dir, options()).unwrap();
        let got: Vec<_> = db
            .iter(None, None, None)
            .unwrap()
            .collect::<mini_lsm::Result<_>>()
            .unwrap();
        drop(db);
        if got == model.clone().into_iter().collect::<Vec<_>>() {
            applied = acked;
        } else {
            assert_eq!(
                got,
                next.clone().into_iter().collect::<Vec<_>>(),
                "run {runs} (killed in {phase:?}): neither the {acked} acknowledged writes nor one more"
            );
            model = next;
            applied = acked + 1;
        }
        if copied {
            expected_digests.push((runs, digest(got.into_iter())));
        }
    }
    // C++ LevelDB opens every crashed copy and sees what the engine recovered.
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, os, hashlib, plyvel\n\
             root = sys.argv[1]\n\
             for name in sorted(os.listdir(root), key=int):\n\
             \x20   db = plyvel.DB(os.path.join(root, name), paranoid_checks=True)\n\
             \x20   h = hashlib.sha256()\n\
             \x20   for k, v in db.iterator(): h.update(b'%s %s\\n' % (k.hex().encode(), v.hex().encode()))\n\
             \x20   db.close()\n\
             \x20   print(name, h.hexdigest())\n",
        )
        .arg(&copies)
        .output()
        .expect("python3 with plyvel");
    assert!(
        out.status.success(),
        "LevelDB: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let leveldb: BTreeMap<usize, String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (n, h) = l.split_once(' ').unwrap();
            (n.parse().unwrap(), h.to_string())
        })
        .collect();
    assert_eq!(leveldb.len(), expected_digests.len());
    for (run, want) in &expected_digests {
        assert_eq!(
            leveldb.get(run),
            Some(want),
            "run {run}: LevelDB's view of the crashed directory"
        );
    }
    println!(
        "{} kills in {runs} runs, {applied} writes recovered; per phase: {kills:?}",
        kills.values().sum::<usize>()
    );
}

fn main() {
    if let Ok(dir) = std::env::var("MINI_LSM_CRASH_CHILD") {
        let start = std::env::var("MINI_LSM_CRASH_START")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        child(&dir, start);
    }
    crash_test();
    println!(
        "test sigkill_at_random_points_keeps_a_prefix_of_the_writes_that_leveldb_opens ... ok"
    );
    println!("\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
}
