//! Hashing and sizing shared by the filters.
//!
//! Sizing is the math of LevelDB's `BloomFilter::for_capacity` (the table crate's): for `n`
//! keys at rate `eps`, `m/n = log2(1/eps) / ln 2` (about `1.44 * log2(1/eps)`) bits per key
//! and `k = round(ln 2 * m/n)` probes, clamped to `1..=30`.
//!
//! Hashing: one 128-bit XXH3 (`xxhash-rust`) of the key with a seed gives two 64-bit halves
//! `a` and `b` (made odd); probe `i` is bit `(a + i*b) mod m` (Kirsch and Mitzenmacher's
//! double hashing). Layers of a scalable filter use the seed plus a per-layer constant, so
//! their probes are independent. The Redis filter picks a key's bitmap from a third mix of
//! the two halves (multiply-shift), independent of the probe positions.

use crate::format::{MAX_FP_RATE, MAX_K, MIN_BITS, MIN_FP_RATE};
use xxhash_rust::xxh3::xxh3_128_with_seed;

/// Bits per key for a false-positive rate: `log2(1/eps) / ln 2`, `eps` clamped to
/// `[1e-9, 0.5]` (NaN counts as 0.01), as `BloomFilter::for_capacity`.
pub(crate) fn bits_per_key(fp_rate: f64) -> f64 {
    let eps = if fp_rate.is_nan() { 0.01 } else { fp_rate };
    let eps = eps.clamp(MIN_FP_RATE, MAX_FP_RATE);
    (1.0 / eps).log2() / std::f64::consts::LN_2
}

/// `(bits, k)` for `capacity` keys at `fp_rate`: the sizing of `BloomFilter::for_capacity`.
pub(crate) fn sizing(capacity: u64, fp_rate: f64) -> (u64, u32) {
    let bpk = bits_per_key(fp_rate);
    let n = capacity.max(1) as f64;
    let bits = ((n * bpk).ceil() as u64).max(MIN_BITS);
    let k = (std::f64::consts::LN_2 * bpk)
        .round()
        .clamp(1.0, f64::from(MAX_K)) as u32;
    (bits, k)
}

/// Seed of layer `layer` of a filter seeded with `seed`.
pub(crate) fn layer_seed(seed: u64, layer: u32) -> u64 {
    seed.wrapping_add(u64::from(layer).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// A key's hash: the two halves that generate its probe positions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyHash {
    a: u64,
    b: u64,
}

impl KeyHash {
    /// The 128-bit XXH3 of `key` with `seed`, split in two.
    pub(crate) fn new(key: &[u8], seed: u64) -> KeyHash {
        let h = xxh3_128_with_seed(key, seed);
        KeyHash {
            a: h as u64,
            b: ((h >> 64) as u64) | 1,
        }
    }

    /// Probe `i` in a bit array of `m` bits (`m > 0`).
    pub(crate) fn bit(&self, i: u32, m: u64) -> u64 {
        self.a.wrapping_add(u64::from(i).wrapping_mul(self.b)) % m.max(1)
    }

    /// One of `n` buckets (`n > 0`), independent of the probe positions.
    #[cfg(feature = "redis")]
    pub(crate) fn pick(&self, n: u64) -> u64 {
        let mix = self.a.rotate_left(32) ^ self.b.wrapping_mul(0xff51_afd7_ed55_8ccd);
        ((u128::from(mix) * u128::from(n.max(1))) >> 64) as u64
    }
}

/// The estimated false-positive rate of one layer with `k` probes and a fraction `fill` of
/// its bits set: `fill^k`.
pub(crate) fn layer_fp(fill: f64, k: u32) -> f64 {
    fill.clamp(0.0, 1.0).powi(k as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_stay_in_range() {
        let h = KeyHash::new(b"key", 7);
        for m in [1u64, 2, 63, 64, 1 << 20] {
            for i in 0..30 {
                assert!(h.bit(i, m) < m);
            }
            #[cfg(feature = "redis")]
            assert!(h.pick(m) < m);
        }
    }
}
