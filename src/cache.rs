//! A block cache charged in bytes, shareable across tables (LevelDB's `Options::block_cache`).
//!
//! Entries are uncompressed, validated blocks keyed by (table id, block offset); each costs
//! its uncompressed size, as LevelDB charges, plus the bytes of its search directory
//! (`block_dir.rs`) when it has one. A block that is a zero-copy view of a memory map or an
//! in-memory source owns no memory: it costs only its bookkeeping, and caching it records
//! that its checksum was verified. The cache is sharded and lock-light (`quick_cache`), and a
//! hit hands out a reference-counted entry: no copy, no allocation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;

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
    /// Insertion count of the cache when it last saw this block used (see `note_hit`).
    seen_at: AtomicU64,
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
            seen_at: AtomicU64::new(0),
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

/// Buffers of decompressed blocks that have left the cache, for the next decompression.
///
/// A full cache evicts one block for each block it admits, so handing the evicted block's
/// buffer to the next decompression saves a `free` and a `malloc` of a few KiB (glibc serves
/// those from its bins, not its per-thread cache, and touches cold chunk headers) and the
/// zero-fill of the new buffer. Measured in docs/performance.md.
#[derive(Debug, Default)]
pub(crate) struct BufferPool {
    bufs: Mutex<Vec<Vec<u8>>>,
}

/// Buffers kept at most, and the largest buffer kept: enough for the evict-one-admit-one
/// rhythm of a full cache on several threads, small next to any useful cache.
const POOL_BUFFERS: usize = 16;
const POOL_MAX_BUFFER: usize = 256 << 10;

impl BufferPool {
    /// A recycled buffer for a block of `len` bytes (contents unspecified but initialized),
    /// or an empty one. A buffer is reused only if its capacity exceeds `len` by at most an
    /// eighth plus 512 bytes, so what the cache holds stays close to what it charges.
    pub(crate) fn take(&self, len: usize) -> Vec<u8> {
        let fits = |b: &Vec<u8>| b.capacity() >= len && b.capacity() - len <= len / 8 + 512;
        match self.bufs.lock() {
            Ok(mut bufs) => match bufs.iter().rposition(fits) {
                Some(i) => bufs.swap_remove(i),
                None => Vec::new(),
            },
            Err(_) => Vec::new(),
        }
    }

    fn put(&self, buf: Vec<u8>) {
        if buf.capacity() > POOL_MAX_BUFFER || buf.capacity() == 0 {
            return;
        }
        if let Ok(mut b) = self.bufs.lock() {
            // Newest last; the oldest makes room (it may be of a size nobody asks for now).
            if b.len() >= POOL_BUFFERS {
                b.remove(0);
            }
            b.push(buf);
        }
    }

    /// `buf` as shared bytes that hand their buffer back to this pool when the last
    /// reference (cache entry, iterator, block clone) is dropped.
    pub(crate) fn bytes(self: &Arc<Self>, buf: Vec<u8>) -> Bytes {
        Bytes::from_owner(Pooled {
            buf,
            pool: Arc::downgrade(self),
        })
    }
}

/// A block buffer that returns to its pool when dropped.
struct Pooled {
    buf: Vec<u8>,
    pool: std::sync::Weak<BufferPool>,
}

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.upgrade() {
            pool.put(std::mem::take(&mut self.buf));
        }
    }
}

/// A cache of uncompressed blocks with a capacity in bytes.
pub struct BlockCache {
    cache: Cache<(u64, u64), Arc<CachedBlock>, BlockWeight>,
    next_id: AtomicU64,
    capacity: u64,
    pool: Arc<BufferPool>,
    /// Insertions so far: the clock `note_hit` measures recency with.
    inserts: AtomicU64,
    /// Insertions after which a use seen only by a table's block slot is reported again.
    report_every: u64,
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
            pool: Arc::default(),
            inserts: AtomicU64::new(0),
            report_every: (estimated_items as u64 / 8).max(8),
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
        let now = self.inserts.fetch_add(1, Ordering::Relaxed) + 1;
        // Due at once: the first use of a new block must reach the policy, which admits
        // blocks on probation and keeps those used while there.
        entry
            .seen_at
            .store(now.wrapping_sub(self.report_every), Ordering::Relaxed);
        self.cache.insert((id, offset), entry);
    }

    /// Records a use of `entry` (table `id`, block at `offset`) that a table served from its
    /// own per-block slot, without asking the cache.
    ///
    /// The eviction policy only learns of uses through the cache's own lookups. A block
    /// served from a slot therefore reports its first use, and later a use whenever the cache
    /// has admitted `report_every` (an eighth of its expected block count) blocks since
    /// it last reported. The policy's clock sweeps the whole cache in about as many admissions as
    /// the cache holds blocks, so it sees every block used in the last sweep as used, as if
    /// every lookup had gone through it; the slot saves the hashing and probing on the rest.
    #[inline]
    pub(crate) fn note_hit(&self, id: u64, offset: u64, entry: &CachedBlock) {
        let now = self.inserts.load(Ordering::Relaxed);
        if now.wrapping_sub(entry.seen_at.load(Ordering::Relaxed)) >= self.report_every {
            entry.seen_at.store(now, Ordering::Relaxed);
            drop(self.cache.get(&(id, offset)));
        }
    }

    /// Where decompressions for this cache take their buffers from.
    pub(crate) fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A recycled buffer comes back only for a block it fits closely, and returns to the
    /// pool when the last reference to its bytes goes.
    #[test]
    fn pool_reuses_buffers_that_fit_and_gets_them_back_on_drop() {
        let pool = Arc::new(BufferPool::default());
        let b = pool.bytes(vec![7u8; 4096]);
        let clone = b.clone();
        drop(b);
        assert_eq!(
            pool.take(4096).capacity(),
            0,
            "still referenced: not in the pool"
        );
        drop(clone);
        // Too small a block for this buffer (it would hold 4 KiB charged as 1 KiB).
        assert_eq!(pool.take(1000).capacity(), 0);
        // Too large a block.
        assert_eq!(pool.take(5000).capacity(), 0);
        let v = pool.take(4000);
        assert_eq!(v.capacity(), 4096);
        assert_eq!(pool.take(4000).capacity(), 0, "taken once");
    }
}
