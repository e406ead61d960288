//! The crate's side of `scripts/bench_db_open_scan.sh`: times `Db::open` and a full scan of
//! the live view of a database directory (one written by C++ LevelDB), with the options the
//! C++ side uses (64 MiB block cache; checksums verified here, not there).
//!
//! ```text
//! db_bench open DIR [--mmap]   {"open_s": ..., "tables": T}
//! db_bench scan DIR [--mmap]   {"entries": N, "scan_cold_s": ..., "scan_s": ...}
//! db_bench get DIR N [--mmap]  {"hits": H, "found": F, "hit_s_per_op": ..., "miss_s_per_op": ...}
//! ```
//!
//! `get` makes the same probes as the C++ side (`tools/db_bench_cpp`): 200,000 present keys
//! (key i, i = splitmix64(j) mod N) and 200,000 absent ones (the odd number between two
//! present keys), one untimed pass of each, then a timed pass of each through
//! `Db::get_into` with a reused value buffer.
//!
//! The bulk load (`db::engine::BulkBuilder`), against `leveldb_db_bench load` (WriteBatch +
//! CompactRange):
//!
//! ```text
//! db_bench bulk DIR N [--shuffled] [--memory-mb M] [--parallel]
//!     {"entries": N, "load_s": ..., "tables": T, "peak_rss_bytes": ...}
//! ```
//!
//! writes the same N entries as the C++ side, in the same order (key order, or the same
//! splitmix64-driven shuffle), made in memory before the clock starts, through
//! `BulkBuilder`; shuffled input goes through the `ExternalSorter` first within M MiB (64).
//! Timed from the first entry to the published, fsynced directory. `--parallel` compresses
//! on a second thread. The peak RSS includes the entries held in memory.
//!
//! `--cache-mb MB` sets the block cache (64 MiB, as the C++ side).
//! `--mmap` reads the tables through memory maps (`Db::open_mmap`), as LevelDB's Env does;
//! `--no-verify` skips block checksums, as LevelDB's default `ReadOptions` do.

use std::sync::Arc;
use std::time::Instant;

use leveldb_table::db::engine::extsort::ExternalSorter;
use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::Cursor;
use leveldb_table::{db::engine::BulkBuilder, db::engine::BulkOptions};
use leveldb_table::{BlockCache, Compression, Lookup, Options, ReadOptions};

fn open(dir: &str, mmap: bool, verify: bool, cache_mb: u64) -> Db {
    let opts = DbOptions::default()
        .block_cache(Some(Arc::new(BlockCache::new(cache_mb << 20))))
        .verify_checksums(verify);
    let db = if mmap {
        // SAFETY: `open_mmap` requires that no table is truncated or rewritten in place while
        // the `Db` lives. The directory is the benchmark's own copy (the script gives LevelDB
        // separate copies); nothing writes to it while this process runs.
        #[allow(unsafe_code)]
        unsafe {
            Db::open_mmap(dir, opts)
        }
    } else {
        Db::open(dir, opts)
    };
    db.unwrap_or_else(|e| {
        eprintln!("open {dir}: {e}");
        std::process::exit(2)
    })
}

/// SplitMix64 (Steele, Lea, Flood 2014), as the C++ side computes it.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Key i of the C++ side: "k" + the 15-digit 2i.
fn key_of(i: u64) -> Vec<u8> {
    format!("k{:015}", 2 * i).into_bytes()
}

/// Value i of the C++ side: 50 letters from a xorshift stream seeded by i, then the same 50.
fn value_of(i: u64, v: &mut Vec<u8>) {
    const LETTERS: &[u8; 52] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    v.clear();
    v.resize(100, 0);
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(1);
    for j in 0..50 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let c = LETTERS[(x % 52) as usize];
        v[j] = c;
        v[50 + j] = c;
    }
}

/// The load order of the C++ side's `load`: key order or its Fisher-Yates shuffle.
fn load_order(n: u64, shuffled: bool) -> Vec<u64> {
    let mut order: Vec<u64> = (0..n).collect();
    if shuffled {
        for i in (2..=n).rev() {
            let j = (splitmix64(i - 1) % i) as usize;
            order.swap((i - 1) as usize, j);
        }
    }
    order
}

/// Peak resident memory of this process (`VmHWM`), in bytes.
fn peak_rss() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn bulk(dir: &str, n: u64, shuffled: bool, memory_mb: u64, parallel: bool) -> String {
    let order = load_order(n, shuffled);
    let fail = |e: leveldb_table::Error| -> ! {
        eprintln!("bulk {dir}: {e}");
        std::process::exit(2)
    };
    let opts = BulkOptions::default().table(
        Options::default()
            .bloom(10)
            .block_size(4096)
            .block_restart_interval(16)
            .compression(Compression::Snappy)
            .parallel_compression(parallel),
    );
    // The entries are made before the clock starts, in load order, as on the C++ side.
    let entries: Vec<(Vec<u8>, Vec<u8>)> = order
        .iter()
        .map(|&i| {
            let mut v = Vec::with_capacity(100);
            value_of(i, &mut v);
            (key_of(i), v)
        })
        .collect();
    let a = Instant::now();
    let mut b = BulkBuilder::create(dir, opts).unwrap_or_else(|e| fail(e));
    if shuffled {
        let mut sorter = ExternalSorter::new((memory_mb << 20) as usize);
        for (k, v) in &entries {
            sorter.push_slices(k, v).unwrap_or_else(|e| fail(e));
        }
        let mut sorted = sorter.finish().unwrap_or_else(|e| fail(e));
        while let Some((k, v)) = sorted.next_entry().unwrap_or_else(|e| fail(e)) {
            b.add(k, v).unwrap_or_else(|e| fail(e));
        }
    } else {
        for (k, v) in &entries {
            b.add(k, v).unwrap_or_else(|e| fail(e));
        }
    }
    let stats = b.finish().unwrap_or_else(|e| fail(e));
    let t = a.elapsed().as_secs_f64();
    drop(entries);
    format!(
        "\"entries\": {}, \"load_s\": {t:.9}, \"tables\": {}, \"peak_rss_bytes\": {}",
        stats.entries,
        stats.files.len(),
        peak_rss()
    )
}

/// Probes per kind (hits, misses), as the C++ side.
const PROBES: u64 = 200_000;

fn gets(db: &Db, n: u64) -> String {
    let key = |x: u64| format!("k{x:015}").into_bytes();
    let hits: Vec<Vec<u8>> = (0..PROBES).map(|j| key(2 * (splitmix64(j) % n))).collect();
    let misses: Vec<Vec<u8>> = (0..PROBES)
        .map(|j| key(2 * (splitmix64(j + (1 << 32)) % (n - 1)) + 1))
        .collect();
    let read = ReadOptions::default().snapshot(Some(db.last_sequence()));
    let mut v = Vec::with_capacity(128);
    let (mut found, mut sum, mut wrong) = (0u64, 0u64, 0u64);
    let (mut t_hit, mut t_miss) = (0.0, 0.0);
    for _pass in 0..2 {
        (found, sum, wrong) = (0, 0, 0);
        let a = Instant::now();
        for k in &hits {
            match db.get_into(k, &read, &mut v) {
                Ok(Lookup::Found { .. }) => {
                    found += 1;
                    sum += v.len() as u64 + u64::from(v.first().copied().unwrap_or(0));
                }
                _ => wrong += 1,
            }
        }
        let b = Instant::now();
        for k in &misses {
            if !matches!(db.get_into(k, &read, &mut v), Ok(Lookup::NotFound)) {
                wrong += 1;
            }
        }
        t_hit = (b - a).as_secs_f64();
        t_miss = b.elapsed().as_secs_f64();
    }
    format!(
        "\"hits\": {PROBES}, \"found\": {found}, \"wrong\": {wrong}, \"check\": {sum}, \"hit_s_per_op\": {:.12}, \"miss_s_per_op\": {:.12}",
        t_hit / PROBES as f64,
        t_miss / PROBES as f64
    )
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!(
            "usage: db_bench open|scan DIR [--mmap] | get DIR N [--mmap] | bulk DIR N [--shuffled]"
        );
        std::process::exit(2);
    }
    let (cmd, dir) = (args[1].as_str(), args[2].as_str());
    let mmap = args.iter().any(|a| a == "--mmap");
    let verify = !args.iter().any(|a| a == "--no-verify");
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let cache_mb = flag("--cache-mb").unwrap_or(64);
    let peer = format!(
        "ours{}{}",
        if mmap { "-mmap" } else { "" },
        if verify { "" } else { "-noverify" }
    );
    match cmd {
        "open" => {
            let a = Instant::now();
            let db = open(dir, mmap, verify, cache_mb);
            let t = a.elapsed().as_secs_f64();
            let tables: usize = (0..7).map(|l| db.level_files(l).len()).sum();
            drop(db);
            println!("{{\"peer\": \"{peer}\", \"open_s\": {t:.9}, \"tables\": {tables}}}");
        }
        "scan" => {
            let db = open(dir, mmap, verify, cache_mb);
            let mut times = [0.0; 2];
            let (mut n, mut sum) = (0u64, 0u64);
            for t in &mut times {
                let a = Instant::now();
                let mut view = db.iter(&leveldb_table::ReadOptions::default());
                view.seek_to_first();
                n = 0;
                while view.valid() {
                    let (k, v) = (view.key(), view.value());
                    sum += (k.len() + v.len()) as u64 + u64::from(v.first().copied().unwrap_or(0));
                    n += 1;
                    view.next();
                }
                if let Err(e) = view.status() {
                    eprintln!("scan: {e}");
                    std::process::exit(2);
                }
                *t = a.elapsed().as_secs_f64();
            }
            println!(
                "{{\"peer\": \"{peer}\", \"entries\": {n}, \"scan_cold_s\": {:.9}, \"scan_s\": {:.9}, \"check\": {sum}}}",
                times[0], times[1]
            );
        }
        "get" => {
            let n: u64 = args
                .get(3)
                .and_then(|a| a.parse().ok())
                .filter(|&n| n >= 2)
                .unwrap_or_else(|| {
                    eprintln!("get DIR N: N >= 2 entries");
                    std::process::exit(2)
                });
            let db = open(dir, mmap, verify, cache_mb);
            println!("{{\"peer\": \"{peer}\", {}}}", gets(&db, n));
        }
        "bulk" => {
            let n: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or_else(|| {
                eprintln!("bulk DIR N");
                std::process::exit(2)
            });
            let shuffled = args.iter().any(|a| a == "--shuffled");
            let parallel = args.iter().any(|a| a == "--parallel");
            let peer = format!("ours{}", if parallel { "-parallel" } else { "" });
            let line = bulk(
                dir,
                n,
                shuffled,
                flag("--memory-mb").unwrap_or(64),
                parallel,
            );
            println!("{{\"peer\": \"{peer}\", {line}}}");
        }
        _ => std::process::exit(2),
    }
}
