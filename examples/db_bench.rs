//! The crate's side of `scripts/bench_db_open_scan.sh`: times `Db::open` and a full scan of
//! the live view of a database directory (one written by C++ LevelDB), with the options the
//! C++ side uses (64 MiB block cache; checksums verified here, not there).
//!
//! ```text
//! db_bench open DIR [--mmap]   {"open_s": ..., "tables": T}
//! db_bench scan DIR [--mmap]   {"entries": N, "scan_cold_s": ..., "scan_s": ...}
//! ```
//!
//! `--mmap` reads the tables through memory maps (`Db::open_mmap`), as LevelDB's Env does;
//! `--no-verify` skips block checksums, as LevelDB's default `ReadOptions` do.

use std::sync::Arc;
use std::time::Instant;

use leveldb_table::db::{Db, DbOptions};
use leveldb_table::BlockCache;

fn open(dir: &str, mmap: bool, verify: bool) -> Db {
    let opts = DbOptions {
        block_cache: Some(Arc::new(BlockCache::new(64 << 20))),
        verify_checksums: verify,
        ..DbOptions::default()
    };
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: db_bench open|scan DIR [--mmap]");
        std::process::exit(2);
    }
    let (cmd, dir) = (args[1].as_str(), args[2].as_str());
    let mmap = args.iter().any(|a| a == "--mmap");
    let verify = !args.iter().any(|a| a == "--no-verify");
    let peer = format!(
        "ours{}{}",
        if mmap { "-mmap" } else { "" },
        if verify { "" } else { "-noverify" }
    );
    match cmd {
        "open" => {
            let a = Instant::now();
            let db = open(dir, mmap, verify);
            let t = a.elapsed().as_secs_f64();
            let tables: usize = (0..7).map(|l| db.level_files(l).len()).sum();
            drop(db);
            println!("{{\"peer\": \"{peer}\", \"open_s\": {t:.9}, \"tables\": {tables}}}");
        }
        "scan" => {
            let db = open(dir, mmap, verify);
            let mut times = [0.0; 2];
            let (mut n, mut sum) = (0u64, 0u64);
            for t in &mut times {
                let a = Instant::now();
                let mut view = db.view().unwrap_or_else(|e| {
                    eprintln!("view: {e}");
                    std::process::exit(2)
                });
                view.seek_to_first();
                n = 0;
                while view.valid() {
                    let (k, v) = (view.key(), view.value());
                    sum += (k.len() + v.len()) as u64 + u64::from(v.first().copied().unwrap_or(0));
                    n += 1;
                    view.next();
                }
                if let Some(e) = view.error() {
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
        _ => std::process::exit(2),
    }
}
