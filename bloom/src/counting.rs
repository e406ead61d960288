//! A counting bloom filter: 4-bit counters instead of bits, so keys can be removed.
//!
//! ```text
//! counters: m 4-bit counters, two per byte
//!   byte[i / 2] = counter(2j) in the low nibble | counter(2j+1) in the high nibble
//! probes:  (h, g) = XXH3-128(key, seed 0);  counter (h + i*g) mod m, i = 0..k
//!          (a probe position that repeats within one key counts once)
//! add:     every probed counter += 1, stopping at 15 (saturated)
//! remove:  only when every probed counter is > 0; then every probed counter that is not
//!          saturated -= 1 (a saturated counter may hold more keys than 15: it stays)
//! ```
//!
//! Sizing is the plain filter's (`m` counters, `k` probes for the capacity and rate), so the
//! false-positive rate is the plain filter's; memory is 4x.

use crate::format::COUNTER_MAX;
use crate::hash::{sizing, KeyHash};

/// A bloom filter with 4-bit saturating counters: [`add`](Self::add),
/// [`remove`](Self::remove) and [`may_contain`](Self::may_contain).
///
/// Never a false negative for a key that was added more times than removed, as long as only
/// added keys are removed: removing a key that was never added is refused when one of its
/// counters is 0 (`remove` returns `false` and changes nothing), but when all its counters
/// happen to be set (a false positive) the filter cannot tell, and the removal takes counts
/// that belong to other keys. Saturated counters (15) never decrement, which keeps them safe
/// from that too.
///
/// ```
/// use sst_bloom::CountingBloomFilter;
///
/// let mut f = CountingBloomFilter::for_capacity(1000, 0.01);
/// f.add(b"apple");
/// assert!(f.may_contain(b"apple"));
/// assert!(f.remove(b"apple"));
/// assert!(!f.may_contain(b"apple"));
/// assert!(!f.remove(b"apple"), "never added (any more): refused");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountingBloomFilter {
    pub(crate) nibbles: Vec<u8>,
    pub(crate) m: u64,
    pub(crate) k: u32,
    pub(crate) capacity: u64,
    /// The sized rate's bits (`f64::to_bits`), so the filter stays `Eq`.
    pub(crate) fp_bits: u64,
}

impl CountingBloomFilter {
    /// A filter for about `capacity` keys at `fp_rate` (clamped to `[1e-9, 0.5]`), sized as
    /// LevelDB's `BloomFilter::for_capacity` (the table crate's).
    pub fn for_capacity(capacity: u64, fp_rate: f64) -> Self {
        let (m, k) = sizing(capacity, fp_rate);
        CountingBloomFilter {
            // ok: m is at most capacity * 63 bits per key; one byte per two counters.
            nibbles: vec![0; m.div_ceil(2) as usize],
            m,
            k,
            capacity,
            fp_bits: fp_rate.to_bits(),
        }
    }

    /// The capacity it was sized for.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The false-positive rate it was sized for.
    pub fn fp_rate(&self) -> f64 {
        f64::from_bits(self.fp_bits)
    }

    /// Number of counters that are not 0.
    pub fn nonzero(&self) -> u64 {
        self.nibbles
            .iter()
            .map(|&b| u64::from(b & 0x0f != 0) + u64::from(b >> 4 != 0))
            .sum()
    }

    /// Estimated false-positive rate from the fill: `(nonzero / counters)^k`.
    pub fn estimated_fp_rate(&self) -> f64 {
        crate::hash::layer_fp(self.nonzero() as f64 / self.m.max(1) as f64, self.k)
    }

    /// Number of counters.
    pub fn counters(&self) -> u64 {
        self.m
    }

    /// Number of probes per key.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The distinct counters `key` probes, in ascending order.
    fn positions(&self, key: &[u8]) -> Vec<u64> {
        let h = KeyHash::new(key, 0);
        let mut p: Vec<u64> = (0..self.k).map(|i| h.bit(i, self.m)).collect();
        p.sort_unstable();
        p.dedup();
        p
    }

    fn get(&self, pos: u64) -> u8 {
        let byte = self.nibbles.get((pos / 2) as usize).copied().unwrap_or(0);
        if pos % 2 == 0 {
            byte & 0x0f
        } else {
            byte >> 4
        }
    }

    fn set(&mut self, pos: u64, v: u8) {
        if let Some(byte) = self.nibbles.get_mut((pos / 2) as usize) {
            *byte = if pos % 2 == 0 {
                (*byte & 0xf0) | (v & 0x0f)
            } else {
                (*byte & 0x0f) | (v << 4)
            };
        }
    }

    /// The counter at `pos` (for tests and tools), 0 past the end.
    pub fn counter(&self, pos: u64) -> u8 {
        self.get(pos)
    }

    /// Adds `key` (keys may be added several times; each add needs its own remove).
    pub fn add(&mut self, key: &[u8]) {
        for pos in self.positions(key) {
            let c = self.get(pos);
            if c < COUNTER_MAX {
                self.set(pos, c + 1);
            }
        }
    }

    /// Removes one addition of `key`. Returns `false`, changing nothing, when `key` is
    /// certainly not in the filter (one of its counters is 0).
    #[must_use = "false means the key was not in the filter"]
    pub fn remove(&mut self, key: &[u8]) -> bool {
        let positions = self.positions(key);
        if positions.iter().any(|&p| self.get(p) == 0) {
            return false;
        }
        for pos in positions {
            let c = self.get(pos);
            if c < COUNTER_MAX {
                self.set(pos, c - 1);
            }
        }
        true
    }

    /// Whether `key` may be in the filter (false positives possible at about the sized rate).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        let h = KeyHash::new(key, 0);
        (0..self.k).all(|i| self.get(h.bit(i, self.m)) > 0)
    }

    /// Number of saturated counters (a measure of how overfull the filter is).
    pub fn saturated(&self) -> u64 {
        self.nibbles
            .iter()
            .map(|&b| u64::from(b & 0x0f == COUNTER_MAX) + u64::from(b >> 4 == COUNTER_MAX))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_remove_roundtrip() {
        let mut f = CountingBloomFilter::for_capacity(100, 0.01);
        let empty = f.clone();
        f.add(b"a");
        f.add(b"a");
        assert!(f.may_contain(b"a"));
        assert!(f.remove(b"a"));
        assert!(f.may_contain(b"a"));
        assert!(f.remove(b"a"));
        assert!(!f.may_contain(b"a"));
        assert_eq!(f, empty);
        assert!(!f.remove(b"a"), "removing from an empty filter is refused");
        assert_eq!(f, empty);
    }

    #[test]
    fn saturated_counters_never_decrement() {
        let mut f = CountingBloomFilter::for_capacity(1, 0.5);
        for _ in 0..20 {
            f.add(b"x");
        }
        let sat = f.saturated();
        assert!(sat > 0);
        for _ in 0..20 {
            assert!(f.remove(b"x"));
        }
        assert_eq!(f.saturated(), sat);
        assert!(f.may_contain(b"x"));
    }
}
