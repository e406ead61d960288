//! # sst-bloom
//!
//! Standalone bloom filters of the `leveldb-table` project (the `sst bloom` command), built on
//! the same sizing as LevelDB's table filter but with their own bits (none of them is a table
//! filter policy):
//!
//! - [`CountingBloomFilter`]: 4-bit counters, so keys can be removed; saved to a file
//!   atomically ([`CountingBloomFilter::save`]).
//! - [`ScalableBloomFilter`]: grows without bound at a fixed false-positive target; saved to a
//!   file atomically ([`ScalableBloomFilter::save`]).
//! - With the `redis` feature, `RedisBloomFilter`: the scalable design kept in Redis and
//!   shared by any number of processes, on one server or spread over a Redis Cluster.
//!
//! Sizing is the math of LevelDB's `BloomFilter::for_capacity`: for `n` keys at rate `eps`,
//! `m/n = log2(1/eps) / ln 2` bits per key and `k = round(ln 2 * m/n)` probes, clamped to
//! `1..=30`. Hashing is one 128-bit XXH3 per key and layer (`hash.rs`). The layouts and the
//! measured rates are in `docs/bloom.md`.
//!
//! ```
//! use sst_bloom::{ScalableBloomFilter, ScalableParams};
//!
//! # fn main() -> sst_bloom::Result<()> {
//! let mut f = ScalableBloomFilter::new(ScalableParams { capacity: 100, ..Default::default() })?;
//! f.add(b"apple")?;
//! assert!(f.may_contain(b"apple"));
//! # Ok(())
//! # }
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod counting;
mod counting_file;
mod error;
mod file;
pub mod format;
mod hash;
#[cfg(feature = "redis")]
mod redis;
mod scalable;
mod scalable_file;

pub use counting::CountingBloomFilter;
pub use error::{Error, Result};
#[cfg(feature = "redis")]
pub use redis::{Durability, RedisAddSummary, RedisBloomFilter, RedisOptions, RedisStats, Servers};
pub use scalable::{LayerInfo, ScalableBloomFilter, ScalableParams};
