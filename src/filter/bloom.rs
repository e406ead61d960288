//! LevelDB's built-in bloom filter (`util/bloom.cc`) and a standalone bloom filter that shares
//! its encoding.
//!
//! ```text
//! filter = bit array (bytes * 8 bits, at least 64) | k: u8
//! bit i  = byte[i / 8] & (1 << (i % 8))            (LSB first)
//! probes: h = Hash(key, 0xbc9f1d34); delta = rotr32(h, 17)
//!         repeat k times: set/test bit h % bits; h += delta
//! ```
//!
//! Sizing: with m bits for n keys and k probes the false-positive rate is about
//! (1 - e^(-kn/m))^k, smallest at k = ln 2 * m/n; for a target rate eps,
//! m/n = log2(1/eps) / ln 2 = 1.44 * log2(1/eps). LevelDB rounds k = 0.69 * bits_per_key down
//! (fewer probes are cheaper) and clamps it to 1..=30.

use super::FilterPolicy;
use crate::format::{
    BLOOM_HASH_SEED, BLOOM_MAX_K, BLOOM_MIN_BITS, BLOOM_POLICY_NAME, LEGACY_BLOOM_POLICY_NAME,
};
use crate::util::hash::{hash, hash_signed_tail};

#[inline]
fn bloom_hash(key: &[u8]) -> u32 {
    hash(key, BLOOM_HASH_SEED)
}

/// LevelDB's `k` for a bits-per-key setting: `trunc(bits_per_key * 0.69)` clamped to 1..=30
/// (`util/bloom.cc`: `k_ = bits_per_key * 0.69`, "0.69 =~ ln(2)").
pub fn k_for_bits_per_key(bits_per_key: usize) -> u8 {
    let k = (bits_per_key as f64 * 0.69) as usize;
    k.clamp(1, BLOOM_MAX_K as usize) as u8
}

/// Sets the k probe bits of hash `h` in `bits` (which holds `nbits` bits).
#[inline]
fn add_hash(bits: &mut [u8], nbits: u32, k: u8, mut h: u32) {
    let delta = h.rotate_right(17);
    for _ in 0..k {
        let pos = h % nbits;
        bits[(pos / 8) as usize] |= 1 << (pos % 8);
        h = h.wrapping_add(delta);
    }
}

/// The probes of LevelDB's bloom filter for key hash `h` against `filter` (bit array
/// followed by the k byte), one `(bit position, bit is set)` per probe, in probe order:
/// `h`, then `h + delta`, ... with `delta = h` rotated right by 17, modulo the bit count.
///
/// `None` when the filter has no probes to show: no bit array (it matches nothing) or a
/// k byte above 30 (reserved for other encodings; it matches everything). Otherwise a key
/// may match exactly when every probe's bit is set (tested against the filter's own
/// `key_may_match`).
pub fn probes(filter: &[u8], h: u32) -> Option<impl Iterator<Item = (u32, bool)> + '_> {
    let (&k, array) = filter.split_last()?;
    if array.is_empty() || k > BLOOM_MAX_K {
        return None;
    }
    let nbits = (array.len() as u64 * 8).min(u64::from(u32::MAX)) as u32;
    let delta = h.rotate_right(17);
    Some((0..u32::from(k)).map(move |i| {
        let pos = h.wrapping_add(delta.wrapping_mul(i)) % nbits;
        (pos, array[(pos / 8) as usize] & (1 << (pos % 8)) != 0) // ok: pos < nbits <= 8 * len
    }))
}

/// Tests the probe bits of hash `h` against `filter` (bit array followed by the k byte).
/// Exactly LevelDB's `KeyMayMatch` after the hash.
#[inline]
fn may_contain_hash(filter: &[u8], h: u32) -> bool {
    let Some((&k, array)) = filter.split_last() else {
        return false;
    };
    if array.is_empty() {
        return false;
    }
    if k > BLOOM_MAX_K {
        // Reserved for potentially new encodings for short bloom filters: consider it a match.
        return true;
    }
    let nbits = (array.len() as u64 * 8).min(u64::from(u32::MAX)) as u32;
    let mut h = h;
    let delta = h.rotate_right(17);
    for _ in 0..k {
        let pos = h % nbits;
        if array[(pos / 8) as usize] & (1 << (pos % 8)) == 0 {
            return false;
        }
        h = h.wrapping_add(delta);
    }
    true
}

/// LevelDB's bloom filter policy, `leveldb.BuiltinBloomFilter2`.
#[derive(Debug, Clone)]
pub struct BloomFilterPolicy {
    bits_per_key: usize,
    k: u8,
}

impl BloomFilterPolicy {
    /// LevelDB's `NewBloomFilterPolicy(bits_per_key)`; 10 gives about 1% false positives.
    pub fn new(bits_per_key: usize) -> Self {
        BloomFilterPolicy {
            bits_per_key,
            k: k_for_bits_per_key(bits_per_key),
        }
    }

    /// Bits per key the policy was made with.
    pub fn bits_per_key(&self) -> usize {
        self.bits_per_key
    }

    /// Number of probes per key.
    pub fn k(&self) -> u8 {
        self.k
    }

    /// Appends a filter over keys given by their bloom hashes.
    fn create_from_hashes(&self, hashes: impl ExactSizeIterator<Item = u32>, dst: &mut Vec<u8>) {
        let n = hashes.len();
        let bits = n.saturating_mul(self.bits_per_key).max(BLOOM_MIN_BITS);
        let bytes = bits.div_ceil(8);
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k);
        let nbits = (bytes as u64 * 8).min(u64::from(u32::MAX)) as u32;
        let array = &mut dst[start..start + bytes];
        for h in hashes {
            add_hash(array, nbits, self.k, h);
        }
    }
}

impl FilterPolicy for BloomFilterPolicy {
    fn name(&self) -> &str {
        BLOOM_POLICY_NAME
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        self.create_from_hashes(keys.iter().map(|k| bloom_hash(k)), dst);
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        may_contain_hash(filter, bloom_hash(key))
    }
}

/// The bloom policy under its pre-1.18 name, `leveldb.BuiltinBloomFilter`, as goleveldb still
/// writes it.
///
/// The filter bits are the same as [`BloomFilterPolicy`]'s for every key whose length is a
/// multiple of 4 or whose tail bytes are all below 0x80. For other keys, LevelDB builds before
/// 1.18 on x86 hashed the tail bytes as signed chars, while goleveldb and ARM builds did not;
/// the file does not say which. So [`key_may_match`](FilterPolicy::key_may_match) answers "may
/// match" if either hash matches: never a false "not found", at the price of roughly twice
/// the false-positive rate for such keys. Filters are created with the unsigned hash
/// (goleveldb's behaviour).
#[derive(Debug, Clone)]
pub struct LegacyBloomFilterPolicy {
    inner: BloomFilterPolicy,
}

impl LegacyBloomFilterPolicy {
    /// A legacy-named policy with `bits_per_key` bits per key (used only when writing).
    pub fn new(bits_per_key: usize) -> Self {
        LegacyBloomFilterPolicy {
            inner: BloomFilterPolicy::new(bits_per_key),
        }
    }
}

impl FilterPolicy for LegacyBloomFilterPolicy {
    fn name(&self) -> &str {
        LEGACY_BLOOM_POLICY_NAME
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        self.inner.create_filter(keys, dst)
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let h = bloom_hash(key);
        if may_contain_hash(filter, h) {
            return true;
        }
        // The hashes differ only when a tail byte (past the last whole 4-byte word) has
        // its high bit set.
        let tail = &key[key.len() - key.len() % 4..];
        if tail.iter().all(|&b| b < 0x80) {
            return false;
        }
        may_contain_hash(filter, hash_signed_tail(key, BLOOM_HASH_SEED))
    }
}

/// A standalone bloom filter for in-memory use, sized for a capacity and a false-positive
/// rate. Its bytes ([`as_bytes`](BloomFilter::as_bytes)) are a LevelDB bloom filter:
/// [`BloomFilterPolicy::key_may_match`] reads them with the same answers as
/// [`contains`](BloomFilter::contains).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BloomFilter {
    /// Bit array followed by the k byte.
    bytes: Vec<u8>,
    nbits: u32,
    k: u8,
}

impl BloomFilter {
    /// A filter for about `expected_items` keys at `false_positive_rate` (clamped to
    /// `[1e-9, 0.5]`): m/n = 1.44 * log2(1/eps) bits per key, k = round(ln 2 * m/n) in 1..=30.
    pub fn for_capacity(expected_items: usize, false_positive_rate: f64) -> Self {
        let eps = if false_positive_rate.is_nan() {
            0.01
        } else {
            false_positive_rate
        };
        let eps = eps.clamp(1e-9, 0.5);
        let bits_per_key = (1.0 / eps).log2() / std::f64::consts::LN_2;
        let n = expected_items.max(1) as f64;
        let bits = ((n * bits_per_key).ceil() as usize).max(BLOOM_MIN_BITS);
        let k = (std::f64::consts::LN_2 * bits_per_key)
            .round()
            .clamp(1.0, 30.0) as u8;
        Self::with_bits(bits, k)
    }

    /// A filter with at least `bits` bits (rounded up to whole bytes, at least 64) and
    /// `k` probes (clamped to 1..=30).
    pub fn with_bits(bits: usize, k: u8) -> Self {
        let bytes = bits
            .max(BLOOM_MIN_BITS)
            .div_ceil(8)
            .min(u32::MAX as usize / 8);
        let mut v = vec![0u8; bytes + 1];
        let k = k.clamp(1, BLOOM_MAX_K);
        v[bytes] = k;
        BloomFilter {
            bytes: v,
            nbits: (bytes * 8) as u32,
            k,
        }
    }

    /// Adds `key`.
    pub fn insert(&mut self, key: &[u8]) {
        let n = self.bytes.len() - 1;
        add_hash(&mut self.bytes[..n], self.nbits, self.k, bloom_hash(key));
    }

    /// Whether `key` may have been inserted (false positives possible, no false negatives).
    pub fn contains(&self, key: &[u8]) -> bool {
        may_contain_hash(&self.bytes, bloom_hash(key))
    }

    /// Number of probes per key.
    pub fn k(&self) -> u8 {
        self.k
    }

    /// Size of the bit array in bits.
    pub fn bits(&self) -> usize {
        self.nbits as usize
    }

    /// The filter in LevelDB's encoding (bit array, then the k byte).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

#[cfg(test)]
mod probe_tests {
    use super::*;

    #[test]
    fn probes_agree_with_the_filter_test() {
        let mut x = 0x9e37_79b9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for bytes in [1usize, 2, 8, 100, 1000] {
            for k in [1u8, 2, 6, 30] {
                let mut f: Vec<u8> = (0..bytes).map(|_| next() as u8 | next() as u8).collect();
                f.push(k);
                for _ in 0..200 {
                    let h = next();
                    let p: Vec<(u32, bool)> = probes(&f, h).unwrap().collect();
                    assert_eq!(p.len(), usize::from(k));
                    assert_eq!(p.iter().all(|&(_, set)| set), may_contain_hash(&f, h));
                }
            }
        }
        assert!(probes(&[6], 1).is_none());
        assert!(probes(&[0xff, 31], 1).is_none());
        assert!(probes(&[], 1).is_none());
        assert_eq!(k_for_bits_per_key(10), 6);
        assert_eq!(k_for_bits_per_key(0), 1);
        assert_eq!(k_for_bits_per_key(100), 30);
    }
}
