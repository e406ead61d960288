//! LevelDB's `Hash(data, seed)` (`util/hash.cc`), the hash under its bloom filters.
//!
//! ```text
//! h = seed ^ (len * m)                       m = 0xc6a4a793, all arithmetic wrapping u32
//! for each 4-byte little-endian word w:  h += w; h *= m; h ^= h >> 16
//! tail (1..3 bytes b0 b1 b2):            h += b2 << 16; h += b1 << 8; h += b0; h *= m; h ^= h >> 24
//! ```
//!
//! Since LevelDB 1.18 the tail bytes are zero-extended ([`hash`]). Before, they were plain
//! `char`s, sign-extended on x86 ([`hash_signed_tail`]); filters written by such builds (and
//! RocksDB's legacy filters) need that variant to be probed.

use crate::format::{HASH_M, HASH_R};

#[inline]
fn hash_impl(data: &[u8], seed: u32, signed_tail: bool) -> u32 {
    let n = data.len() as u32;
    let mut h = seed ^ n.wrapping_mul(HASH_M);
    let mut chunks = data.chunks_exact(4);
    for w in &mut chunks {
        let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        h = h.wrapping_add(w).wrapping_mul(HASH_M);
        h ^= h >> 16;
    }
    let tail = chunks.remainder();
    if !tail.is_empty() {
        let ext = |b: u8| {
            if signed_tail {
                b as i8 as i32 as u32
            } else {
                u32::from(b)
            }
        };
        if tail.len() == 3 {
            h = h.wrapping_add(ext(tail[2]) << 16);
        }
        if tail.len() >= 2 {
            h = h.wrapping_add(ext(tail[1]) << 8);
        }
        h = h.wrapping_add(ext(tail[0])).wrapping_mul(HASH_M);
        h ^= h >> HASH_R;
    }
    h
}

/// LevelDB's hash with unsigned tail bytes (LevelDB >= 1.18, goleveldb, every platform).
#[inline]
pub fn hash(data: &[u8], seed: u32) -> u32 {
    hash_impl(data, seed, false)
}

/// The pre-1.18 variant: tail bytes sign-extended, as x86 builds of LevelDB < 1.18 (and
/// RocksDB's legacy bloom filter) computed it.
pub fn hash_signed_tail(data: &[u8], seed: u32) -> u32 {
    hash_impl(data, seed, true)
}
