//! The CLOCK + TinyLFU replacement behind [`CachePolicy::ClockTinyLfu`](super::CachePolicy).
//!
//! Sharded by key (up to 16 shards of at least 2 MiB, each under its own lock). Each shard
//! keeps its blocks in a CLOCK ring: a use sets the entry's reference count (up to 3, in
//! the entry itself, so a table's lookup record reports a use without the lock), and the
//! hand takes one off each entry it passes, evicting the first it finds at zero. A new
//! block is admitted only if it was used more often lately than that victim, by a
//! [`FrequencySketch`] of recent uses, cached or not (TinyLFU; see `sketch.rs`): a block
//! read once does not push out one in steady use, and blocks used more often take the
//! place of those used less. Measured against `quick_cache` in docs/performance.md.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use super::entry::{CachedBlock, Key, KeyHasher, Replacement};
use crate::cache::sketch::FrequencySketch;

/// CLOCK rings with TinyLFU admission, one per shard.
pub(super) struct ClockCache {
    shards: Box<[Mutex<Shard>]>,
    sketches: Box<[FrequencySketch]>,
    shard_mask: usize,
}

/// One shard: its resident blocks in CLOCK order, a map from key to ring position, and the
/// ring's free positions (left by evictions, filled by the next admissions: just behind the
/// hand, so a new block is looked at last).
#[derive(Default)]
struct Shard {
    map: HashMap<(u64, u64), usize, BuildHasherDefault<KeyHasher>>,
    ring: Vec<Option<Resident>>,
    free: Vec<usize>,
    hand: usize,
    charge: u64,
    capacity: u64,
}

struct Resident {
    key: (u64, u64),
    hash: u64,
    weight: u64,
    entry: Arc<CachedBlock>,
}

impl Shard {
    /// Whether `entry` (key `key`, hash `hash`) joined the shard; if so, `on_admit` has
    /// run on it under the shard's lock. `sketch` estimates recent uses.
    fn insert(
        &mut self,
        key: (u64, u64),
        hash: u64,
        entry: Arc<CachedBlock>,
        sketch: &FrequencySketch,
        on_admit: impl FnOnce(&Arc<CachedBlock>),
    ) -> bool {
        let weight = entry.charge.max(1);
        if weight > self.capacity {
            return false;
        }
        if let Some(&i) = self.map.get(&key) {
            // The same block again (a second reader raced this one): keep the newer entry.
            if let Some(r) = self.ring.get_mut(i).and_then(Option::as_mut) {
                self.charge = self.charge - r.weight + weight;
                r.weight = weight;
                on_admit(&entry);
                let old = std::mem::replace(&mut r.entry, entry);
                old.release();
            }
            while self.charge > self.capacity && self.evict_one(None, sketch) {}
            return true;
        }
        if self.charge + weight > self.capacity / 2 {
            sketch.activate();
        }
        let freq = sketch.estimate(hash);
        while self.charge + weight > self.capacity {
            if !self.evict_one(Some(freq), sketch) {
                return false;
            }
        }
        on_admit(&entry);
        let resident = Some(Resident {
            key,
            hash,
            weight,
            entry,
        });
        let i = match self.free.pop() {
            Some(i) => {
                self.ring[i] = resident; // ok: free positions are ring positions
                i
            }
            None => {
                self.ring.push(resident);
                self.ring.len() - 1
            }
        };
        self.map.insert(key, i);
        self.charge += weight;
        true
    }

    /// Whether a block of `weight` bytes, used `freq` times lately, would join the shard
    /// now: it fits, or the entry the next eviction would take was used less often. Moves
    /// the hand as an eviction does (taking a reference off each entry it passes) but
    /// evicts nothing; an insert that follows meets the same victim.
    fn would_admit(&mut self, weight: u64, freq: u8, sketch: &FrequencySketch) -> bool {
        if weight > self.capacity {
            return false;
        }
        if self.charge + weight <= self.capacity {
            return true;
        }
        self.next_victim()
            .is_none_or(|hash| freq > sketch.estimate(hash))
    }

    /// Moves the hand to the next entry without references, taking one off each entry it
    /// passes, and returns that entry's hash; `None` when the shard is empty.
    fn next_victim(&mut self) -> Option<u64> {
        if self.map.is_empty() {
            return None;
        }
        loop {
            if self.hand >= self.ring.len() {
                self.hand = 0;
            }
            let Some(r) = self.ring.get(self.hand).and_then(Option::as_ref) else {
                self.hand += 1;
                continue;
            };
            let refs = r.entry.referenced.load(Ordering::Relaxed);
            if refs == 0 {
                return Some(r.hash);
            }
            r.entry.referenced.store(refs - 1, Ordering::Relaxed);
            self.hand += 1;
        }
    }

    /// Moves the hand to the next entry without references (taking one off each entry it
    /// passes) and evicts it, unless `candidate` (a block waiting to be admitted, by its
    /// estimated uses) was used no more often than it: then the victim stays and nothing
    /// changes. Returns whether an entry was evicted.
    fn evict_one(&mut self, candidate: Option<u8>, sketch: &FrequencySketch) -> bool {
        let Some(hash) = self.next_victim() else {
            return false;
        };
        if candidate.is_some_and(|c| c <= sketch.estimate(hash)) {
            return false;
        }
        let i = self.hand;
        if let Some(r) = self.ring.get_mut(i).and_then(Option::take) {
            self.map.remove(&r.key);
            self.charge -= r.weight;
            self.free.push(i);
            r.entry.release();
        }
        self.hand += 1;
        true
    }
}

impl ClockCache {
    /// `shards` shards (a power of two) sharing `capacity` bytes.
    pub(super) fn new(capacity: u64, shards: u64) -> ClockCache {
        let per_shard = capacity / shards;
        let items = usize::try_from((per_shard / 4096).clamp(4, 1 << 20)).unwrap_or(1 << 20);
        ClockCache {
            // The maps and rings grow with their blocks (as LevelDB's table, which starts
            // small): a cache is made at open, and a large one may never fill.
            shards: (0..shards)
                .map(|_| {
                    Mutex::new(Shard {
                        capacity: per_shard,
                        ..Shard::default()
                    })
                })
                .collect(),
            sketches: (0..shards).map(|_| FrequencySketch::new(items)).collect(),
            shard_mask: (shards - 1) as usize,
        }
    }

    /// The shard of a key hash.
    #[inline]
    fn shard_of(&self, hash: u64) -> usize {
        // Bits 28..32: apart from those the shard's map (the lowest and the top 7), its
        // sketch's block (the lowest) and the sketch's counters (32..64) use.
        (hash >> 28) as usize & self.shard_mask
    }

    fn sum(&self, f: impl Fn(&Shard) -> u64) -> u64 {
        self.shards
            .iter()
            .filter_map(|s| s.lock().ok().map(|s| f(&s)))
            .sum()
    }
}

impl Replacement for ClockCache {
    /// Runs `on_found` under the shard's lock, while the entry is certainly resident.
    #[inline]
    fn get(
        &self,
        key: Key,
        hash: u64,
        on_found: impl FnOnce(&Arc<CachedBlock>),
    ) -> Option<Arc<CachedBlock>> {
        let s = self.shard_of(hash);
        let found = match self.shards[s].lock() {
            // ok: s <= shard_mask < shards.len()
            Ok(shard) => shard
                .map
                .get(&key)
                .and_then(|&i| shard.ring.get(i))
                .and_then(Option::as_ref)
                .map(|r| {
                    on_found(&r.entry);
                    r.entry.clone()
                }),
            Err(_) => None,
        };
        if let Some(e) = &found {
            e.note_use();
        }
        self.sketches[s].increment(hash); // ok: as above
        found
    }

    /// Runs `on_admit` under the shard's lock if the entry is admitted.
    fn insert(
        &self,
        key: Key,
        hash: u64,
        entry: Arc<CachedBlock>,
        on_admit: impl FnOnce(&Arc<CachedBlock>),
    ) -> bool {
        let s = self.shard_of(hash);
        let sketch = &self.sketches[s]; // ok: s < shards.len()
        match self.shards[s].lock() {
            // ok: as above
            Ok(mut shard) => shard.insert(key, hash, entry, sketch, on_admit),
            Err(_) => false,
        }
    }

    fn would_admit(&self, hash: u64, weight: u64) -> bool {
        let s = self.shard_of(hash);
        let sketch = &self.sketches[s]; // ok: s < shards.len()
        let freq = sketch.estimate(hash);
        match self.shards[s].lock() {
            // ok: as above
            Ok(mut shard) => shard.would_admit(weight, freq, sketch),
            Err(_) => false,
        }
    }

    #[inline]
    fn note_use(&self, _key: Key, hash: u64) {
        self.sketches[self.shard_of(hash)].increment(hash); // ok: shard_of < shards.len()
    }

    fn charge(&self) -> u64 {
        self.sum(|s| s.charge)
    }

    fn len(&self) -> usize {
        usize::try_from(self.sum(|s| s.map.len() as u64)).unwrap_or(usize::MAX)
    }

    fn shards(&self) -> usize {
        self.shards.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::entry;
    use super::super::{key_hash, BlockCache, CachePolicy, Engine};
    use super::*;

    fn clock(c: &BlockCache) -> &ClockCache {
        match &c.engine {
            Engine::Clock(k) => k,
            #[cfg(feature = "quick-cache")]
            Engine::Quick(_) => panic!("not a CLOCK cache"),
        }
    }

    fn new(capacity: u64) -> BlockCache {
        BlockCache::with_policy(capacity, CachePolicy::ClockTinyLfu)
    }

    /// Uses of block `k` of table 1, `n` times (through the cache, found or not).
    fn use_block(c: &BlockCache, k: u64, n: usize) -> bool {
        (0..n).fold(false, |_, _| c.get_entry(1, k).is_some())
    }

    /// A full cache takes a block in place of one used less often lately, and declines one
    /// used no more often than the block it would evict; either way the charge stays
    /// within the capacity and equals the entries' charges.
    #[test]
    fn full_cache_admits_by_recent_use() {
        let one = entry(1000).charge;
        let c = new(4 * one);
        assert_eq!(clock(&c).shards.len(), 1);
        for k in 0..4 {
            use_block(&c, k, 2);
            assert!(c.insert_entry(1, k, entry(1000)));
        }
        assert_eq!((c.len(), c.charge()), (4, 4 * one));
        // Block 9, seen once, against blocks used twice (and twice more now, which the
        // CLOCK hand takes back on its way): declined.
        for k in 0..4 {
            assert!(use_block(&c, k, 1));
        }
        use_block(&c, 9, 1);
        assert!(!c.insert_entry(1, 9, entry(1000)));
        assert!((0..4).all(|k| use_block(&c, k, 1)), "nothing was evicted");
        // Block 8, used more often than any of them: admitted, one of them evicted.
        use_block(&c, 8, 8);
        assert!(c.insert_entry(1, 8, entry(1000)));
        assert!(use_block(&c, 8, 1));
        assert_eq!((c.len(), c.charge()), (4, 4 * one));
        let kept = (0..4).filter(|&k| c.get_entry(1, k).is_some()).count();
        assert_eq!(kept, 3);
    }

    /// `would_admit` foretells the insert that follows and evicts nothing itself: yes
    /// while there is room, no for a block used no more often than the victim, yes for
    /// one used more often; blocks larger than a shard, never.
    #[test]
    fn would_admit_foretells_the_insert() {
        let one = entry(1000).charge;
        let c = new(4 * one);
        assert!(!c.would_admit(1, 99, 5 * one));
        for k in 0..4 {
            assert!(c.would_admit(1, k, one));
            use_block(&c, k, 2);
            assert!(c.insert_entry(1, k, entry(1000)));
        }
        // Uses counted now that the cache is full: each block once, block 9 once.
        for k in 0..4 {
            assert!(use_block(&c, k, 1));
        }
        use_block(&c, 9, 1);
        for _ in 0..3 {
            assert!(!c.would_admit(1, 9, one));
        }
        assert_eq!(c.len(), 4);
        assert!(
            (0..4).all(|k| c.get_entry(1, k).is_some()),
            "nothing was evicted"
        );
        assert!(!c.insert_entry(1, 9, entry(1000)));
        use_block(&c, 8, 8);
        assert!(c.would_admit(1, 8, one));
        assert_eq!(c.len(), 4);
        assert!(c.insert_entry(1, 8, entry(1000)));
    }

    /// Uses are counted only once the cache is half full: a cache larger than what it
    /// holds never admits by frequency, and its lookups skip the sketch.
    #[test]
    fn uses_are_counted_once_half_full() {
        let one = entry(1000).charge;
        let c = new(8 * one);
        for k in 0..4 {
            assert!(c.insert_entry(1, k, entry(1000)));
            use_block(&c, k, 2);
        }
        assert_eq!(clock(&c).sketches[0].estimate(key_hash(1, 0)), 0);
        assert!(c.insert_entry(1, 4, entry(1000)));
        use_block(&c, 0, 2);
        assert_eq!(clock(&c).sketches[0].estimate(key_hash(1, 0)), 2);
    }

    /// Keys spread over the shards.
    #[test]
    fn keys_spread_over_shards() {
        let c = new(64 << 20);
        let mut seen = [0usize; 16];
        for off in 0..1600u64 {
            seen[clock(&c).shard_of(key_hash(3, off * 4096))] += 1;
        }
        assert!(seen.iter().all(|&n| (50..=150).contains(&n)), "{seen:?}");
    }
}
