//! A block cache charged in bytes, shareable across tables (LevelDB's `Options::block_cache`).
//!
//! Entries are uncompressed, validated blocks keyed by (table id, block offset); each costs
//! its uncompressed size, as LevelDB charges, plus the bytes of its search directory
//! (`block_dir.rs`) when it has one. A block that is a zero-copy view of a memory map or an
//! in-memory source owns no memory: it costs only its bookkeeping, and caching it records
//! that its checksum was verified. The cache is sharded and lock-light (`quick_cache`), and a
//! hit hands out a reference-counted entry: no copy, no allocation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::block::Block;
use crate::block_dir::BlockDir;

/// What the cache holds for one block.
pub(crate) struct CachedBlock {
    pub(crate) block: Block,
    /// Search directory, for blocks of bytewise-ordered tables that have the shape for one.
    pub(crate) dir: Option<BlockDir>,
    charge: u64,
}

/// Charge of the bookkeeping of one entry (the entry, its `Arc` and the block handle).
const ENTRY_OVERHEAD: u64 = 96;

impl CachedBlock {
    /// An entry for `block`; `owns_bytes` is false for zero-copy views of the source.
    pub(crate) fn new(block: Block, dir: Option<BlockDir>, owns_bytes: bool) -> CachedBlock {
        let bytes = if owns_bytes { block.size() as u64 } else { 0 };
        let charge = bytes + dir.as_ref().map_or(0, |d| d.charge() as u64);
        CachedBlock {
            block,
            dir,
            charge: if owns_bytes {
                charge
            } else {
                charge + ENTRY_OVERHEAD
            },
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct BlockWeight;

impl Weighter<(u64, u64), Arc<CachedBlock>> for BlockWeight {
    fn weight(&self, _key: &(u64, u64), entry: &Arc<CachedBlock>) -> u64 {
        entry.charge.max(1)
    }
}

/// A cache of uncompressed blocks with a capacity in bytes.
pub struct BlockCache {
    cache: Cache<(u64, u64), Arc<CachedBlock>, BlockWeight>,
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
        self.get_entry(id, offset).map(|e| e.block.clone())
    }

    /// Caches a block (charged its size).
    pub fn insert(&self, id: u64, offset: u64, block: Block) {
        self.insert_entry(id, offset, Arc::new(CachedBlock::new(block, None, true)));
    }

    #[inline]
    pub(crate) fn get_entry(&self, id: u64, offset: u64) -> Option<Arc<CachedBlock>> {
        self.cache.get(&(id, offset))
    }

    pub(crate) fn insert_entry(&self, id: u64, offset: u64, entry: Arc<CachedBlock>) {
        self.cache.insert((id, offset), entry);
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
