//! A block cache charged in bytes, shareable across tables (LevelDB's `Options::block_cache`).
//!
//! Entries are uncompressed, validated blocks keyed by (table id, block offset); each costs
//! its uncompressed size, as LevelDB charges, plus the bytes of its search directory
//! (`search/block_dir.rs`) when it has one; the entry's fixed bookkeeping (including the 56 bytes
//! of restart hints) is not charged, as LevelDB does not charge its `Block` object and
//! handle. A block that is a zero-copy view of a memory map or an in-memory source owns no
//! memory: it costs only its bookkeeping, and caching it records that its checksum was
//! verified. A hit hands out a reference-counted entry: no copy, no allocation.
//! Decompressed blocks live in pieces of huge-page slabs ([`BufferPool`], `compress/pool.rs`).
//!
//! Which blocks stay is the business of a replacement policy behind the small
//! [`Replacement`] trait ([`CachePolicy`]): our own CLOCK with TinyLFU admission
//! (`clock.rs`) or, with the `quick-cache` feature, the `quick_cache` crate (`quick.rs`). A table's lookup records may hold
//! the entries of their blocks ([`SlotOwner`]), and the cache tells them when an entry
//! leaves, whichever the policy.

mod clock;
mod entry;
#[cfg(feature = "quick-cache")]
mod quick;
pub(crate) mod sketch;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::block::Block;
use crate::compress::BufferPool;
use entry::{key_hash, Replacement};

pub(crate) use entry::{CachedBlock, SlotOwner};

/// Most shards, and the least capacity of one (LevelDB's cache has 16 shards).
const MAX_SHARDS: u64 = 16;
const MIN_SHARD_BYTES: u64 = 2 << 20;

/// Which replacement policy a [`BlockCache`] uses (measured side by side in
/// docs/performance.md, "Block cache policies").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CachePolicy {
    /// Our own: sharded CLOCK rings with TinyLFU admission (a count-min sketch of recent
    /// uses; a block is admitted only if it was used more often lately than the block it
    /// would displace).
    #[default]
    ClockTinyLfu,
    /// The `quick_cache` crate's sharded cache (hot and cold queues with ghost keys, in the
    /// manner of CLOCK-PRO), weighed by the same charges. The measured alternative to
    /// ours (docs/performance.md), built only with the `quick-cache` feature.
    #[cfg(feature = "quick-cache")]
    QuickCache,
}

/// The policy in use (an enum rather than a trait object: the lookup path stays inlined).
enum Engine {
    Clock(clock::ClockCache),
    #[cfg(feature = "quick-cache")]
    Quick(quick::QuickCache),
}

/// Runs `$body` with `$r` bound to the engine's [`Replacement`].
macro_rules! with_engine {
    ($engine:expr, $r:ident => $body:expr) => {
        match $engine {
            Engine::Clock($r) => $body,
            #[cfg(feature = "quick-cache")]
            Engine::Quick($r) => $body,
        }
    };
}

/// A cache of uncompressed blocks with a capacity in bytes, shared by the tables opened
/// with it ([`OpenOptions::block_cache`](crate::OpenOptions::block_cache)).
///
/// Sharded by key (up to 16 shards of at least 2 MiB, LevelDB's count); the policy that
/// chooses which blocks stay is a [`CachePolicy`] ([`BlockCache::new`] takes the default,
/// [`BlockCache::with_policy`] chooses). The charge never exceeds the capacity. A table's
/// point lookups may keep the entries of their blocks in their own per-block records and
/// skip the cache's hash table while the cache keeps them ([`BlockCache::record_links`]).
pub struct BlockCache {
    engine: Engine,
    policy: CachePolicy,
    links: bool,
    next_id: AtomicU64,
    capacity: u64,
    pool: Arc<BufferPool>,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("policy", &self.policy)
            .field("record_links", &self.links)
            .field("capacity", &self.capacity)
            .field("charge", &self.charge())
            .field("entries", &self.len())
            .field("shards", &with_engine!(&self.engine, r => r.shards()))
            .finish()
    }
}

impl BlockCache {
    /// A cache holding up to `capacity_bytes` of uncompressed blocks, with the default
    /// [`CachePolicy`].
    pub fn new(capacity_bytes: u64) -> Self {
        Self::with_policy(capacity_bytes, CachePolicy::default())
    }

    /// A cache holding up to `capacity_bytes` of uncompressed blocks, replaced by `policy`.
    pub fn with_policy(capacity_bytes: u64, policy: CachePolicy) -> Self {
        let capacity = capacity_bytes.max(1);
        let shards = (capacity / MIN_SHARD_BYTES).clamp(1, MAX_SHARDS);
        // A power of two, so that bits of the hash choose the shard.
        let shards = if shards.is_power_of_two() {
            shards
        } else {
            shards.next_power_of_two() / 2
        };
        let engine = match policy {
            CachePolicy::ClockTinyLfu => Engine::Clock(clock::ClockCache::new(capacity, shards)),
            #[cfg(feature = "quick-cache")]
            CachePolicy::QuickCache => {
                Engine::Quick(quick::QuickCache::new(capacity, shards, true))
            }
        };
        BlockCache {
            engine,
            policy,
            links: true,
            next_id: AtomicU64::new(1),
            capacity: capacity_bytes,
            pool: Arc::new(BufferPool::new(capacity_bytes)),
        }
    }

    /// This cache with tables' lookup records allowed to hold its entries (`true`, the
    /// default) or not. When they may, a point lookup whose block the cache holds reads it
    /// straight from the table's per-block record, and the cache empties the record when
    /// the block leaves; when not, every lookup goes through the cache's hash table. Set it
    /// before the cache is given to a table.
    pub fn record_links(mut self, on: bool) -> Self {
        self.links = on;
        #[cfg(feature = "quick-cache")]
        if let Engine::Quick(q) = &mut self.engine {
            q.set_links(on);
        }
        self
    }

    /// Whether tables' lookup records may hold this cache's entries
    /// ([`record_links`](Self::record_links)).
    pub fn holds_record_links(&self) -> bool {
        self.links
    }

    /// The replacement policy.
    pub fn policy(&self) -> CachePolicy {
        self.policy
    }

    /// A fresh id for a table that uses this cache (LevelDB's `Cache::NewId`).
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The block of table `id` at `offset`, if cached (found or not, counted as a use).
    pub fn get(&self, id: u64, offset: u64) -> Option<Block> {
        self.get_entry(id, offset).map(|e| e.block.clone())
    }

    /// Offers a block to the cache (charged its size). Whether a full cache takes it, and
    /// which block it displaces, is the policy's choice ([`CachePolicy`]).
    pub fn insert(&self, id: u64, offset: u64, block: Block) {
        self.insert_entry(id, offset, Arc::new(CachedBlock::new(block, None, true)));
    }

    /// The cached entry of (`id`, `offset`); found or not, counted as a use.
    #[inline]
    pub(crate) fn get_entry(&self, id: u64, offset: u64) -> Option<Arc<CachedBlock>> {
        self.get_entry_with(id, offset, |_| {})
    }

    /// [`get_entry`](Self::get_entry), running `on_found` on the entry found; an entry it
    /// links to a lookup record ([`CachedBlock::link_to`]) is always released when it
    /// leaves the cache.
    #[inline]
    pub(crate) fn get_entry_with(
        &self,
        id: u64,
        offset: u64,
        on_found: impl FnOnce(&Arc<CachedBlock>),
    ) -> Option<Arc<CachedBlock>> {
        let h = key_hash(id, offset);
        with_engine!(&self.engine, r => r.get((id, offset), h, on_found))
    }

    /// Offers `entry` to the cache; returns whether it was admitted.
    pub(crate) fn insert_entry(&self, id: u64, offset: u64, entry: Arc<CachedBlock>) -> bool {
        self.insert_entry_with(id, offset, entry, |_| {})
    }

    /// [`insert_entry`](Self::insert_entry), running `on_admit` on the entry the cache then
    /// holds for the block: a record that holds it outside the cache
    /// ([`CachedBlock::link_to`]) is always told when it leaves.
    pub(crate) fn insert_entry_with(
        &self,
        id: u64,
        offset: u64,
        entry: Arc<CachedBlock>,
        on_admit: impl FnOnce(&Arc<CachedBlock>),
    ) -> bool {
        let h = key_hash(id, offset);
        with_engine!(&self.engine, r => r.insert((id, offset), h, entry, on_admit))
    }

    /// Records a use of the block (`id`, `offset`) that did not look it up: one the caller
    /// knows the cache does not hold, or one served from a lookup record holding the entry
    /// (which also marks the entry itself, [`CachedBlock::mark_used`]).
    #[inline]
    pub(crate) fn note_use(&self, id: u64, offset: u64) {
        let h = key_hash(id, offset);
        with_engine!(&self.engine, r => r.note_use((id, offset), h));
    }

    /// Whether the block (`id`, `offset`) of about `weight` bytes would be admitted if
    /// offered now: when not, a reader need not prepare it for the cache.
    pub(crate) fn would_admit(&self, id: u64, offset: u64, weight: u64) -> bool {
        let h = key_hash(id, offset);
        with_engine!(&self.engine, r => r.would_admit(h, weight))
    }

    /// Where decompressions for this cache take their buffers from.
    pub(crate) fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    /// Bytes currently charged.
    pub fn charge(&self) -> u64 {
        with_engine!(&self.engine, r => r.charge())
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Number of cached blocks.
    pub fn len(&self) -> usize {
        with_engine!(&self.engine, r => r.len())
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests;
