//! Shared helpers of the `robust_*` tests: a seeded PRNG, a table taken apart into its blocks
//! and put back together (so a mutation inside a block can keep a valid CRC and so reach the
//! parser behind the checksum), a mutant generator, and a bounded "use everything" routine.
//!
//! Included by each `tests/robust_*.rs` with `mod robust_common;`; not every test uses every
//! helper.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use leveldb_table::raw::BlockBuilder;
use leveldb_table::raw::{coding, compress as rcompress, format as rformat};
use leveldb_table::Cursor;
use leveldb_table::{
    error::BlockKind, raw::format::BlockHandle, raw::format::Footer, table::CompressionProfile,
    table::KeyFormat, BytewiseComparator, Error, OpenOptions, RandomAccess, ReadOptions,
    TableReader,
};

mod exercise;
mod mutants;
mod parts;
mod structural;

// Not every test uses every part (as `dead_code` above).
#[allow(unused_imports)]
pub use exercise::*;
#[allow(unused_imports)]
pub use mutants::*;
#[allow(unused_imports)]
pub use parts::*;

// ---------------------------------------------------------------------------------------
// Files

pub fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

pub fn read_testdata(rel: &str) -> Vec<u8> {
    std::fs::read(testdata(rel)).unwrap_or_else(|e| panic!("read testdata/{rel}: {e}"))
}

// ---------------------------------------------------------------------------------------
// PRNG: splitmix64, deterministic across platforms and Rust versions.

#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }
}
