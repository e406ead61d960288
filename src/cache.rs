//! A block cache charged in bytes, shareable across tables (LevelDB's `Options::block_cache`).
//!
//! Entries are uncompressed, validated blocks keyed by (table id, block offset); each costs
//! its uncompressed size, as LevelDB charges. The cache is sharded and lock-light
//! (`quick_cache`), and a hit hands out a reference-counted block: no copy, no allocation.

use std::sync::atomic::{AtomicU64, Ordering};

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::block::Block;

#[derive(Clone, Copy, Debug)]
struct BlockWeight;

impl Weighter<(u64, u64), Block> for BlockWeight {
    fn weight(&self, _key: &(u64, u64), block: &Block) -> u64 {
        block.size().max(1) as u64
    }
}

/// A cache of uncompressed blocks with a capacity in bytes.
pub struct BlockCache {
    cache: Cache<(u64, u64), Block, BlockWeight>,
    next_id: AtomicU64,
    capacity: u64,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("capacity", &self.capacity)
            .field("charge", &self.charge())
            .field("entries", &self.cache.len())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding up to `capacity_bytes` of uncompressed blocks.
    pub fn new(capacity_bytes: u64) -> Self {
        let estimated_items = (capacity_bytes / 4096).clamp(16, 1 << 22) as usize;
        BlockCache {
            cache: Cache::with_weighter(estimated_items, capacity_bytes.max(1), BlockWeight),
            next_id: AtomicU64::new(1),
            capacity: capacity_bytes,
        }
    }

    /// A fresh id for a table that uses this cache (LevelDB's `Cache::NewId`).
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The block of table `id` at `offset`, if cached.
    pub fn get(&self, id: u64, offset: u64) -> Option<Block> {
        self.cache.get(&(id, offset))
    }

    /// Caches a block.
    pub fn insert(&self, id: u64, offset: u64, block: Block) {
        self.cache.insert((id, offset), block);
    }

    /// Bytes currently charged.
    pub fn charge(&self) -> u64 {
        self.cache.weight()
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Number of cached blocks.
    pub fn len(&self) -> usize {
        self.cache.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.cache.is_empty()
    }
}
