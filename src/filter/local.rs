//! A cache-local bloom filter: every probe of a key falls in one 64-byte cache line, and the
//! key is hashed once with a 64-bit hash (XXH3). Same contract and same filter block as
//! LevelDB's bloom policy (one filter per 2 KiB of data-block offset), under its own name, so
//! LevelDB, which does not know the name, reads such tables unfiltered.
//!
//! ```text
//! filter: | line 0 (64 bytes) | line 1 | ... | line L-1 | k (1) | version = 1 (1) |
//!   L = ceil(keys * bits_per_key / 512) lines (0 for no keys)
//! key:    h = XXH3-64(key)
//!         line = (high 32 bits of h * L) >> 32                     (no division)
//!         probe i = 0..k: bit (g >> 23) of the line, g = low 32 bits of h,
//!                         g = g * 0x9E3779B9 (mod 2^32) after each probe
//! ```
//!
//! The layout follows the idea of RocksDB's FastLocalBloom (a 64-bit hash, all probes in
//! one line, bits taken from the top of a 32-bit multiplicative sequence); the constants here
//! are this crate's own: the golden-ratio multiplier 0x9E3779B9 and `k = round(bits * ln 2)`
//! capped at 16. Expected false positives at 10 bits/key: about 0.9% (measured in
//! docs/filter.md), against LevelDB's bloom hash, which does worse on near-identical keys.
//! A filter whose trailer is not `(1..=16, 1)` or whose length is not whole lines is
//! malformed: it answers "may match" (it only costs speed).

use xxhash_rust::xxh3::xxh3_64;

use crate::filter::FilterPolicy;

pub use crate::format::CACHE_LOCAL_BLOOM_NAME;

/// Layout version stored in each filter's last byte.
const VERSION: u8 = 1;
/// Bytes (and bits) of a line.
const LINE_BYTES: usize = 64;
const LINE_BITS: u32 = 512;
/// Most probes per key.
const MAX_K: u8 = 16;
/// The multiplier that walks the probe sequence (2^32 / golden ratio, odd).
const STEP: u32 = 0x9E37_79B9;

/// The cache-local bloom filter policy (see the module documentation for the layout).
#[derive(Debug, Clone, Copy)]
pub struct CacheLocalBloomPolicy {
    bits_per_key: f64,
    k: u8,
}

impl CacheLocalBloomPolicy {
    /// A policy with `bits_per_key` bits per key (fractional allowed; at least 1).
    pub fn new(bits_per_key: f64) -> Self {
        let bits_per_key = if bits_per_key.is_finite() {
            bits_per_key.clamp(1.0, 100.0)
        } else {
            10.0
        };
        let k = (bits_per_key * std::f64::consts::LN_2)
            .round()
            .clamp(1.0, f64::from(MAX_K)) as u8;
        CacheLocalBloomPolicy { bits_per_key, k }
    }

    /// Bits per key.
    pub fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }

    /// Probes per key.
    pub fn k(&self) -> u8 {
        self.k
    }
}

/// The line of hash `h` among `lines` lines, and the start of its probe sequence.
#[inline]
fn locate(h: u64, lines: usize) -> (usize, u32) {
    let line = (((h >> 32) * lines as u64) >> 32) as usize;
    (line, h as u32)
}

impl FilterPolicy for CacheLocalBloomPolicy {
    fn name(&self) -> &str {
        CACHE_LOCAL_BLOOM_NAME
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let bits = (keys.len() as f64 * self.bits_per_key).ceil() as usize;
        let lines = bits.div_ceil(LINE_BITS as usize);
        let start = dst.len();
        dst.resize(start + lines * LINE_BYTES, 0);
        if lines > 0 {
            let array = &mut dst[start..];
            for key in keys {
                let (line, mut g) = locate(xxh3_64(key), lines);
                let l = &mut array[line * LINE_BYTES..(line + 1) * LINE_BYTES];
                for _ in 0..self.k {
                    let bit = (g >> 23) as usize; // 0..512
                    l[bit / 8] |= 1 << (bit % 8);
                    g = g.wrapping_mul(STEP);
                }
            }
        }
        dst.push(self.k);
        dst.push(VERSION);
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let n = filter.len();
        if n < 2 {
            return true; // malformed: costs speed only
        }
        let (k, version) = (filter[n - 2], filter[n - 1]);
        let array = &filter[..n - 2];
        if version != VERSION || k == 0 || k > MAX_K || array.len() % LINE_BYTES != 0 {
            return true;
        }
        let lines = array.len() / LINE_BYTES;
        if lines == 0 {
            return false; // a well-formed filter of no keys
        }
        let (line, mut g) = locate(xxh3_64(key), lines);
        let Some(l) = array.get(line * LINE_BYTES..(line + 1) * LINE_BYTES) else {
            return true; // unreachable for a well-formed length; costs speed only
        };
        // The line as eight words: every probe is a shift and a mask, all k are taken
        // without a branch (the line is in one cache line; a miss usually fails at a random
        // probe, which early exits would mispredict).
        let mut words = [0u64; LINE_BYTES / 8];
        for (w, c) in words.iter_mut().zip(l.chunks_exact(8)) {
            *w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        }
        let mut all = 1u64;
        for _ in 0..k {
            let bit = (g >> 23) as usize;
            all &= words[bit / 64] >> (bit % 64);
            g = g.wrapping_mul(STEP);
        }
        all & 1 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe as the layout says it, bit by bit with early exits: the reference the
    /// word-wise, branch-free probe must agree with on any filter bytes.
    fn reference_may_match(key: &[u8], filter: &[u8]) -> bool {
        let n = filter.len();
        if n < 2 {
            return true;
        }
        let (k, version) = (filter[n - 2], filter[n - 1]);
        let array = &filter[..n - 2];
        if version != VERSION || k == 0 || k > MAX_K || array.len() % LINE_BYTES != 0 {
            return true;
        }
        let lines = array.len() / LINE_BYTES;
        if lines == 0 {
            return false;
        }
        let (line, mut g) = locate(xxh3_64(key), lines);
        let l = &array[line * LINE_BYTES..(line + 1) * LINE_BYTES];
        for _ in 0..k {
            let bit = (g >> 23) as usize;
            if l[bit / 8] & (1 << (bit % 8)) == 0 {
                return false;
            }
            g = g.wrapping_mul(STEP);
        }
        true
    }

    #[test]
    fn branch_free_probe_agrees_with_the_bitwise_reference() {
        let p = CacheLocalBloomPolicy::new(10.0);
        let mut state = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..200 {
            let n = (next() % 300) as usize;
            let added: Vec<Vec<u8>> = (0..n)
                .map(|i| format!("k{round}:{i}").into_bytes())
                .collect();
            let refs: Vec<&[u8]> = added.iter().map(Vec::as_slice).collect();
            let mut f = Vec::new();
            p.create_filter(&refs, &mut f);
            // Sometimes random filter bytes (same shape), to cover any bit pattern.
            if round % 3 == 0 {
                let len = f.len().saturating_sub(2);
                for b in &mut f[..len] {
                    *b = next() as u8;
                }
            }
            for i in 0..500 {
                let key = format!("probe{round}:{i}:{}", next()).into_bytes();
                assert_eq!(p.key_may_match(&key, &f), reference_may_match(&key, &f));
            }
            for k in &added {
                assert_eq!(p.key_may_match(k, &f), reference_may_match(k, &f));
            }
        }
    }

    fn keys(n: usize, f: impl Fn(usize) -> String) -> Vec<Vec<u8>> {
        (0..n).map(|i| f(i).into_bytes()).collect()
    }

    fn fp(p: &CacheLocalBloomPolicy, added: &[Vec<u8>], absent: &[Vec<u8>]) -> f64 {
        let refs: Vec<&[u8]> = added.iter().map(Vec::as_slice).collect();
        let mut f = Vec::new();
        p.create_filter(&refs, &mut f);
        for k in added {
            assert!(p.key_may_match(k, &f), "a present key is never absent");
        }
        absent.iter().filter(|k| p.key_may_match(k, &f)).count() as f64 / absent.len() as f64
    }

    #[test]
    fn no_false_negatives_and_about_one_percent_at_ten_bits() {
        let p = CacheLocalBloomPolicy::new(10.0);
        assert_eq!(p.k(), 7);
        // Near-identical keys, as real tables hold them.
        let added = keys(20_000, |i| format!("user:{i:08}:name"));
        let absent = keys(100_000, |i| format!("user:{:08}:name", i + 1_000_000));
        let rate = fp(&p, &added, &absent);
        assert!(rate < 0.013, "{rate}");
        // Fewer bits, more false positives; a fractional setting works.
        let low = fp(&CacheLocalBloomPolicy::new(6.5), &added, &absent);
        assert!(low > rate && low < 0.08, "{low}");
    }

    #[test]
    fn malformed_filters_match_and_empty_ones_do_not() {
        let p = CacheLocalBloomPolicy::new(10.0);
        let mut f = Vec::new();
        p.create_filter(&[], &mut f);
        assert_eq!(f, [7, VERSION]);
        assert!(!p.key_may_match(b"x", &f));
        for bad in [&[][..], &[1], &[0, 1], &[7, 2], &[17, 1], &[0u8; 65][..]] {
            assert!(p.key_may_match(b"x", bad), "{bad:?}");
        }
        let mut f = Vec::new();
        p.create_filter(&[b"a", b"b"], &mut f);
        assert_eq!(f.len(), 64 + 2);
    }
}
