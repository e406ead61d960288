//! SSTable peer benchmark for `leveldb-table`, speaking the protocol of the shared harness
//! (`shared/bench/README.md`, "Adding an implementation"): same workload file, same passes,
//! same timing boundaries and the same JSON field names as the C++ peer
//! (`leveldb_cpp/table_bench.cc`) and the `sstable` peer.
//!
//! ```text
//! cargo build --release --example peer_bench
//! peer_bench --workload W --table T [--compression snappy|none] [--cache-mb 64] [--read mmap|pread] [--build-only]
//! peer_bench --workload W --verify-table T [--compression snappy|none]
//! ```
//!
//! Benchmark mode builds T from the workload, then measures (each timed around a whole loop):
//! open; a cold then a warm full scan on one freshly opened table; cold and warm passes over
//! the hit probes, then the miss probes, then iterator-seek hits and misses, on a second
//! freshly opened table; and the data blocks one pass over the misses reads on a third table
//! opened without a block cache. It prints one JSON line and exits 1 on any wrong answer.
//!
//! Every read verifies block checksums (`ReadOptions::default()`), and opening verifies the
//! index, metaindex and filter blocks (`OpenOptions::default()`): compare with the C++
//! `+verify_checksums` row for like with like. The block cache is a
//! [`BlockCache`] of `--cache-mb` MiB charged in uncompressed bytes, as LevelDB charges.
//!
//! Not part of the harness protocol: `--build-only` stops after the build and reports the
//! build time and memory (used by `scripts/bench_scaling.sh` to show that a build streams);
//! `--only build|open|scan|get-hit|get-miss|seek-hit|db-get-hit|db-get-miss --repeat R [--reuse-table]` runs one phase R
//! times on one table (built first unless `--reuse-table`), for profilers (`docs/performance.md`, "Profiles");
//! `--parallel-compression` builds with `Options::parallel_compression` (snappy on a helper
//! thread; its JSON label says so), for a separate `--peer` next to the default one.
//! `--cache-policy clock|quick` chooses the block cache's [`CachePolicy`] (default: the
//! library's) and `--no-record-links` keeps tables' lookup records from holding cache
//! entries ([`BlockCache::record_links`]), for peers comparing them in one run.

use std::fs::File;
use std::io::BufWriter;
use std::process::exit;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::Cursor as _;
use leveldb_table::{db::engine::BulkBuilder, db::engine::BulkOptions};
use leveldb_table::{
    raw::map_file, raw::CountingReader, table::CachePolicy, table::FilterStatus, table::KeyFormat,
    BlockCache, Compression, Lookup, OpenOptions, Options, RandomAccess, ReadOptions, TableBuilder,
    TableReader,
};

pub(crate) const IMPL: &str = concat!("leveldb-table-", env!("CARGO_PKG_VERSION"));

pub(crate) fn die(msg: &str) -> ! {
    eprintln!("peer_bench: {msg}");
    exit(2)
}

mod bench;
mod passes;
mod phases;
mod workload;

use bench::*;
use passes::*;
use phases::*;
use workload::*;

pub(crate) fn usage() -> ! {
    eprintln!(
        "usage: peer_bench --workload W (--table T | --verify-table T) \
         [--compression snappy|none] [--cache-mb 64] [--read mmap|pread] [--build-only] \
         [--parallel-compression] [--local-bloom] [--cache-policy clock|quick] [--no-record-links] [--db DIR] [--only build|open|scan|get-hit|get-miss|seek-hit --repeat R [--reuse-table]]"
    );
    exit(2)
}

fn main() {
    let mut c = Config {
        workload: String::new(),
        table: String::new(),
        verify_table: String::new(),
        snappy: true,
        cache_mb: 64,
        build_only: false,
        only: None,
        repeat: 1,
        reuse_table: false,
        parallel_compression: false,
        db: String::new(),
        local_bloom: false,
        db_pread: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut next = || args.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--workload" => c.workload = next(),
            "--table" => c.table = next(),
            "--verify-table" => c.verify_table = next(),
            "--compression" => {
                c.snappy = match next().as_str() {
                    "snappy" => true,
                    "none" => false,
                    _ => usage(),
                }
            }
            "--cache-mb" => c.cache_mb = next().parse().unwrap_or_else(|_| usage()),
            "--build-only" => c.build_only = true,
            "--only" => c.only = Some(next()),
            "--repeat" => c.repeat = next().parse().unwrap_or_else(|_| usage()),
            "--reuse-table" => c.reuse_table = true,
            "--parallel-compression" => c.parallel_compression = true,
            "--db" => c.db = next(),
            "--local-bloom" => c.local_bloom = true,
            "--db-pread" => c.db_pread = true,
            "--cache-policy" => {
                let policy = match next().as_str() {
                    "clock" => CachePolicy::ClockTinyLfu,
                    #[cfg(feature = "quick-cache")]
                    "quick" => CachePolicy::QuickCache,
                    _ => usage(),
                };
                POLICY.set(policy).unwrap_or_else(|_| usage());
            }
            "--no-record-links" => NO_LINKS.set(true).unwrap_or_else(|_| usage()),
            "--read" => {
                let pread = match next().as_str() {
                    "pread" => true,
                    "mmap" => false,
                    _ => usage(),
                };
                PREAD.set(pread).unwrap_or_else(|_| usage());
            }
            _ => usage(),
        }
    }
    if c.workload.is_empty() || c.table.is_empty() == c.verify_table.is_empty() {
        usage();
    }
    let w = load_workload(&c.workload);
    let rc = if let Some(phase) = &c.only {
        run_phase(&c, &w, phase)
    } else if c.verify_table.is_empty() {
        run_bench(&c, &w)
    } else {
        run_verify(&c, &w)
    };
    exit(rc)
}
