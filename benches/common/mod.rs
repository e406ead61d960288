//! Seeded data shared by the benches: the shape of the peer benchmark's workload
//! (`shared/bench/WORKLOAD.md`): 16-byte keys `k` + 15-digit zero-padded `2*i`, 100-byte values
//! whose second half repeats the first (compressible to about half, like `db_bench`).
#![allow(dead_code)]

use bytes::Bytes;
use leveldb_table::{
    table::KeyFormat, BlockCache, Compression, OpenOptions, Options, TableBuilder, TableReader,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::Arc;

pub const SEED: u64 = 42;

/// Key of entry `i` (present keys are even numbers; `miss_key` gives odd ones).
pub fn key(i: u64) -> Vec<u8> {
    format!("k{:015}", 2 * i).into_bytes()
}

/// A key strictly between `key(i)` and `key(i + 1)`: never present.
pub fn miss_key(i: u64) -> Vec<u8> {
    format!("k{:015}", 2 * i + 1).into_bytes()
}

/// `n` sorted entries with seeded values.
pub fn entries(n: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = StdRng::seed_from_u64(SEED);
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    (0..n)
        .map(|i| {
            let half: Vec<u8> = (0..50).map(|_| LETTERS[rng.gen_range(0..52)]).collect();
            let mut v = half.clone();
            v.extend_from_slice(&half);
            (key(i), v)
        })
        .collect()
}

/// `count` random indices in `0..n` (seeded).
pub fn probes(n: u64, count: usize, seed: u64) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count).map(|_| rng.gen_range(0..n)).collect()
}

/// The benchmark's table options: block 4096, restart 16, bloom 10, bytewise.
pub fn options(compression: Compression) -> Options {
    Options::default()
        .block_size(4096)
        .block_restart_interval(16)
        .bloom(10)
        .compression(compression)
}

/// Builds a table in memory.
pub fn build_table(entries: &[(Vec<u8>, Vec<u8>)], compression: Compression) -> Bytes {
    let mut b = TableBuilder::new(Vec::new(), &options(compression)).expect("builder");
    for (k, v) in entries {
        b.add(k, v).expect("add");
    }
    let (bytes, _) = b.finish().expect("finish");
    Bytes::from(bytes)
}

/// Opens an in-memory table (zero-copy reads) with a block cache of `cache_bytes` (none if 0).
pub fn open(bytes: &Bytes, cache_bytes: u64, use_filter: bool) -> TableReader<Bytes> {
    let mut ro = OpenOptions::default()
        .keys(KeyFormat::Plain)
        .use_filter(use_filter);
    if cache_bytes > 0 {
        ro = ro.block_cache(Some(Arc::new(BlockCache::new(cache_bytes))));
    }
    TableReader::open(bytes.clone(), ro).expect("open")
}
