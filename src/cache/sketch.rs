//! An approximate count of how often each block was used recently: the frequency sketch
//! behind the block cache's admission decisions (TinyLFU: Einziger, Friedman and Manes,
//! "TinyLFU: A Highly Efficient Cache Admission Policy", ACM TOS 2017; the layout of four
//! 4-bit counters inside one 64-byte block of the table follows Caffeine's
//! `FrequencySketch`).
//!
//! ```text
//! words: [u64; 8 * blocks]       one block = 8 words = 64 bytes = one cache line
//! word:  16 counters of 4 bits   counter j = bits 4j..4j+4
//! key hash h:  block  = h mod blocks
//!              counter i (0..4) = word 2i + bit (h >> 32 + 8i) of the block,
//!                                 nibble (h >> 33 + 8i) mod 16
//! estimate(h) = min of its 4 counters (0..=15)
//! ```
//!
//! Every `sample` increments all counters are halved, so that old popularity fades (the
//! paper's "reset"; `sample` is ten times the number of items the cache is expected to
//! hold, as in the paper and Caffeine). Counters and the count of uses are atomics updated
//! with plain loads and stores: two threads incrementing at once may lose an increment,
//! which only makes an estimate a little low (or the halving a little late), and never
//! carries into a neighbouring counter.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;

/// Largest value of one counter.
const MAX_COUNT: u64 = 15;

/// Four 4-bit counters per key in a table of 64-byte blocks, halved every `sample` uses.
#[derive(Debug)]
pub(crate) struct FrequencySketch {
    /// Allocated at the first use: a cache is made when a table opens, and fresh memory
    /// costs a page fault per 4 KiB (a 64 MiB cache has 128 KiB of counters).
    words: OnceLock<Box<[AtomicU64]>>,
    len: usize,
    block_mask: u64,
    additions: AtomicU64,
    sample: u64,
    /// Whether uses are counted yet: only once the cache is half full (as Caffeine starts
    /// its sketch), since admission only matters to a full cache. A cache larger than
    /// what it holds never pays for counting (with a 1 GiB cache the counters are 2 MiB,
    /// and counting was 12% of an all-cached lookup pass).
    active: AtomicBool,
}

impl FrequencySketch {
    /// A sketch for about `items` keys held at a time (at least 16 counters per item).
    pub(crate) fn new(items: usize) -> FrequencySketch {
        let words = items.clamp(8, 1 << 24).next_power_of_two();
        FrequencySketch {
            words: OnceLock::new(),
            len: words,
            block_mask: (words / 8 - 1) as u64,
            additions: AtomicU64::new(0),
            sample: 10 * items.max(1) as u64,
            active: AtomicBool::new(false),
        }
    }

    /// (word index, bit shift) of the four counters of hash `h`.
    #[inline]
    fn counters(&self, h: u64) -> [(usize, u32); 4] {
        let block = ((h & self.block_mask) * 8) as usize;
        let hi = h >> 32;
        std::array::from_fn(|i| {
            let bits = hi >> (8 * i);
            // ok: block + 2i + 1 < block + 8 <= words.len()
            (
                block + 2 * i + (bits & 1) as usize,
                ((bits >> 1) & 15) as u32 * 4,
            )
        })
    }

    /// The counters, allocated now if not yet.
    #[inline]
    fn words(&self) -> &[AtomicU64] {
        self.words
            .get_or_init(|| (0..self.len).map(|_| AtomicU64::new(0)).collect())
    }

    /// How often `h` was seen lately (0..=15).
    #[inline]
    pub(crate) fn estimate(&self, h: u64) -> u8 {
        let Some(words) = self.words.get() else {
            return 0;
        };
        self.counters(h)
            .iter()
            .map(|&(w, shift)| (words[w].load(Ordering::Relaxed) >> shift) & MAX_COUNT) // ok: counters() is in range
            .min()
            .unwrap_or(0) as u8
    }

    /// Starts counting uses.
    pub(crate) fn activate(&self) {
        if !self.active.load(Ordering::Relaxed) {
            self.active.store(true, Ordering::Relaxed);
        }
    }

    /// Counts one use of `h`, once active.
    #[inline]
    pub(crate) fn increment(&self, h: u64) {
        if !self.active.load(Ordering::Relaxed) {
            return;
        }
        let words = self.words();
        for (w, shift) in self.counters(h) {
            let word = &words[w]; // ok: counters() is in range
            let v = word.load(Ordering::Relaxed);
            if (v >> shift) & MAX_COUNT < MAX_COUNT {
                word.store(v + (1 << shift), Ordering::Relaxed);
            }
        }
        // A load and a store, not a read-modify-write: on x86 that is a locked instruction,
        // which waits for every earlier store of the lookup to reach the cache. Racing
        // threads may lose a count, which only delays the next halving a little.
        let n = self.additions.load(Ordering::Relaxed) + 1;
        if n >= self.sample {
            self.halve();
        } else {
            self.additions.store(n, Ordering::Relaxed);
        }
    }

    /// Halves every counter (the reset that ages old uses).
    fn halve(&self) {
        for word in self.words() {
            let v = word.load(Ordering::Relaxed);
            word.store((v >> 1) & 0x7777_7777_7777_7777, Ordering::Relaxed);
        }
        self.additions.store(self.sample / 2, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(i: u64) -> u64 {
        crate::cache::key_hash(1, i * 4096)
    }

    #[test]
    fn counts_saturate_at_fifteen_and_keys_stay_apart() {
        let s = FrequencySketch::new(1024);
        s.increment(hash(7)); // not counted: not active yet
        assert_eq!(s.estimate(hash(7)), 0);
        s.activate();
        for _ in 0..20 {
            s.increment(hash(7));
        }
        s.increment(hash(8));
        assert_eq!(s.estimate(hash(7)), 15);
        assert_eq!(s.estimate(hash(8)), 1);
        assert_eq!(s.estimate(hash(9)), 0);
        // Over a few hundred keys the minimum of four counters rarely overcounts.
        for i in 100..400 {
            for _ in 0..(i % 4) {
                s.increment(hash(i));
            }
        }
        let exact = (100..400).filter(|&i| s.estimate(hash(i)) == (i % 4) as u8);
        assert!(exact.count() >= 290);
    }

    #[test]
    fn counts_halve_after_the_sample() {
        let s = FrequencySketch::new(64); // a sample of 640 uses
        s.activate();
        for _ in 0..12 {
            s.increment(hash(1));
        }
        assert_eq!(s.estimate(hash(1)), 12);
        for _ in 0..(640 - 12 - 1) {
            s.increment(hash(2));
        }
        assert_eq!((s.estimate(hash(1)), s.estimate(hash(2))), (12, 15));
        // The 640th use halves everything.
        s.increment(hash(2));
        assert_eq!((s.estimate(hash(1)), s.estimate(hash(2))), (6, 7));
        assert_eq!(s.additions.load(Ordering::Relaxed), 320);
    }
}
