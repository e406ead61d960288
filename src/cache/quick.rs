//! The `quick_cache` replacement behind [`CachePolicy::QuickCache`](super::CachePolicy):
//! the crate's sharded `sync::Cache` (CLOCK-PRO-like hot and cold queues with ghost keys),
//! weighed by the entries' charges, telling evicted entries through its `Lifecycle` hook.
//!
//! `quick_cache` runs no code of ours under its locks except that hook, so an entry that a
//! callback links to a lookup record outside the cache may leave the cache before the link
//! is made; each such link is therefore checked after it is made (`confirm`): an entry no
//! longer resident is released at once. Replacing a resident entry would not be reported
//! (the hook sees evictions only), so an entry is only ever inserted into a free key.

use std::hash::BuildHasherDefault;
use std::sync::Arc;
use std::time::Duration;

use quick_cache::sync::{Cache, GuardResult};
use quick_cache::{Lifecycle, OptionsBuilder, Weighter};

use super::entry::{CachedBlock, Key, KeyHasher, Replacement};

/// Weight of an entry: its charge (at least 1).
#[derive(Clone, Copy, Debug)]
struct Charge;

impl Weighter<Key, Arc<CachedBlock>> for Charge {
    fn weight(&self, _key: &Key, entry: &Arc<CachedBlock>) -> u64 {
        entry.charge.max(1)
    }
}

/// Tells an evicted entry's lookup record, if any, to let it go.
#[derive(Clone, Copy, Debug)]
struct Release;

impl Lifecycle<Key, Arc<CachedBlock>> for Release {
    type RequestState = ();

    fn begin_request(&self) -> Self::RequestState {}

    fn on_evict(&self, _state: &mut (), _key: Key, entry: Arc<CachedBlock>) {
        entry.release();
    }
}

type Inner = Cache<Key, Arc<CachedBlock>, Charge, BuildHasherDefault<KeyHasher>, Release>;

/// A `quick_cache::sync::Cache` of blocks.
pub(super) struct QuickCache {
    cache: Inner,
    /// Whether lookup records hold entries (`BlockCache::record_links`): found entries are
    /// then checked after `on_found`, and uses served from a record are passed on as lookups.
    links: bool,
    /// Capacity of one shard (the crate declines heavier entries).
    shard_capacity: u64,
}

impl QuickCache {
    /// `shards` shards (a power of two) sharing `capacity` bytes; `links` as the field.
    pub(super) fn new(capacity: u64, shards: u64, links: bool) -> QuickCache {
        // Each shard gets the capacity divided by the shard count rounded *up*: a multiple of
        // the count keeps the sum within the capacity (as does every halving of the count).
        let weight = (capacity / shards * shards).max(1);
        let items = usize::try_from((capacity / 4096).max(1)).unwrap_or(usize::MAX);
        let options = OptionsBuilder::new()
            .shards(usize::try_from(shards).unwrap_or(1))
            .estimated_items_capacity(items)
            .weight_capacity(weight)
            .build()
            .expect("both capacities are set"); // ok: fails only without a capacity; both set above
        let cache = Cache::with_options(options, Charge, BuildHasherDefault::default(), Release);
        QuickCache {
            shard_capacity: cache.shard_capacity(),
            cache,
            links,
        }
    }

    /// Sets whether lookup records hold entries.
    pub(super) fn set_links(&mut self, links: bool) {
        self.links = links;
    }

    /// Whether `entry` is still the cache's entry for `key`; if not, it is released (its
    /// lookup record, linked after the cache may have let it go, drops it).
    fn confirm(&self, key: &Key, entry: &Arc<CachedBlock>) -> bool {
        let resident = self.cache.peek(key).is_some_and(|r| Arc::ptr_eq(&r, entry));
        if !resident {
            entry.release();
        }
        resident
    }
}

impl Replacement for QuickCache {
    /// Runs `on_found` after the lookup, then checks that the entry is still resident.
    #[inline]
    fn get(
        &self,
        key: Key,
        _hash: u64,
        on_found: impl FnOnce(&Arc<CachedBlock>),
    ) -> Option<Arc<CachedBlock>> {
        let e = self.cache.get(&key)?;
        on_found(&e);
        if self.links {
            self.confirm(&key, &e);
        }
        Some(e)
    }

    /// With record links: inserts `entry` if the key is free (a racing reader's entry is
    /// kept, and `on_admit` runs on it); `on_admit` runs after the insertion, then residency
    /// is checked. Without: a plain insertion (one lock; a replaced entry is held by no
    /// record), and the crate admits every entry no heavier than a shard.
    fn insert(
        &self,
        key: Key,
        _hash: u64,
        entry: Arc<CachedBlock>,
        on_admit: impl FnOnce(&Arc<CachedBlock>),
    ) -> bool {
        if !self.links {
            let fits = entry.charge.max(1) <= self.shard_capacity;
            self.cache.insert(key, entry.clone());
            on_admit(&entry);
            return fits;
        }
        let resident = match self.cache.get_value_or_guard(&key, Some(Duration::ZERO)) {
            GuardResult::Value(old) => old,
            GuardResult::Guard(g) => {
                if g.insert(entry.clone()).is_err() {
                    return false;
                }
                entry
            }
            // Another reader is inserting this block right now.
            GuardResult::Timeout => return false,
        };
        on_admit(&resident);
        self.confirm(&key, &resident)
    }

    /// `quick_cache` decides admission inside its insert and cannot be asked beforehand.
    fn would_admit(&self, _hash: u64, _weight: u64) -> bool {
        true
    }

    /// A use served from a lookup record: passed on as a lookup (the crate counts uses
    /// only there).
    #[inline]
    fn note_use(&self, key: Key, _hash: u64) {
        if self.links {
            drop(self.cache.get(&key));
        }
    }

    fn charge(&self) -> u64 {
        self.cache.weight()
    }

    fn len(&self) -> usize {
        self.cache.len()
    }

    fn shards(&self) -> usize {
        self.cache.num_shards()
    }
}
