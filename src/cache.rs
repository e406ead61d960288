//! A block cache charged in bytes, shareable across tables (LevelDB's `Options::block_cache`).
//!
//! Entries are uncompressed, validated blocks keyed by (table id, block offset); each costs
//! its uncompressed size, as LevelDB charges, plus the bytes of its search directory
//! (`block_dir.rs`) when it has one; the entry's fixed bookkeeping (including the 56 bytes
//! of restart hints) is not charged, as LevelDB does not charge its `Block` object and
//! handle. A block that is a zero-copy view of a memory map or an in-memory source owns no
//! memory: it costs only its bookkeeping, and caching it records that its checksum was
//! verified. The cache is sharded and lock-light (`quick_cache`), and a hit hands out a
//! reference-counted entry: no copy, no allocation. Decompressed blocks live in pieces of
//! huge-page slabs ([`BufferPool`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use crate::block::{Block, RestartHints};
use crate::block_dir::BlockDir;
use crate::comparator::Comparator;

/// What the cache holds for one block.
pub(crate) struct CachedBlock {
    pub(crate) block: Block,
    /// Search directory, for blocks of bytewise-ordered tables that have the shape for one.
    pub(crate) dir: Option<BlockDir>,
    /// Restart points for point lookups, for blocks of tables with a decoded index.
    pub(crate) hints: Option<RestartHints>,
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
            hints: None,
        }
    }

    /// The block's [`Block::seek_value_range`], through the restart hints when the entry has
    /// them (`tp` is the decoded index's prefix of `target`; hints exist only for tables
    /// with a decoded index).
    #[inline]
    pub(crate) fn seek_value_range(
        &self,
        cmp: &dyn Comparator,
        target: &[u8],
        tp: u64,
        key: &mut Vec<u8>,
    ) -> crate::error::Result<Option<std::ops::Range<usize>>> {
        match &self.hints {
            Some(h) => self.block.seek_value_range_hinted(cmp, target, tp, h, key),
            None => self.block.seek_value_range(cmp, target, key),
        }
    }

    /// This entry with `hints`. They are a fixed part of the entry's bookkeeping (56 bytes
    /// inline, like LevelDB's `Block` object and cache handle next to each cached block),
    /// which is not charged: the charge is the block's uncompressed size, as LevelDB's.
    pub(crate) fn with_hints(mut self, hints: Option<RestartHints>) -> CachedBlock {
        self.hints = hints;
        self
    }
}

#[derive(Clone, Copy, Debug)]
struct BlockWeight;

impl Weighter<(u64, u64), Arc<CachedBlock>> for BlockWeight {
    fn weight(&self, _key: &(u64, u64), entry: &Arc<CachedBlock>) -> u64 {
        entry.charge.max(1)
    }
}

/// A buffer a block is decompressed into: ordinary heap memory, or a piece of a pool slab.
#[derive(Debug)]
pub(crate) enum BlockBuf {
    /// From the global allocator (no pool, or a block the pool does not serve).
    Heap(Vec<u8>),
    /// A piece of one of a [`BufferPool`]'s slabs.
    Piece(BytesMut),
}

impl Default for BlockBuf {
    fn default() -> Self {
        BlockBuf::Heap(Vec::new())
    }
}

impl BlockBuf {
    /// Sets the length to `len`: bytes kept from earlier use are not cleared, growth is
    /// zero-filled (a piece never grows beyond its capacity here: the pool hands out
    /// pieces of at least the asked length).
    pub(crate) fn set_len_filled(&mut self, len: usize) {
        match self {
            // A fresh buffer: `vec!` zero-allocates, which for large blocks (an index block
            // of hundreds of KiB read at open) takes pages the kernel zeroed instead of
            // writing zeros over them.
            BlockBuf::Heap(v) if v.capacity() == 0 => *v = vec![0; len],
            BlockBuf::Heap(v) => v.resize(len, 0),
            BlockBuf::Piece(b) => b.resize(len, 0),
        }
    }

    /// The buffer's bytes.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            BlockBuf::Heap(v) => v,
            BlockBuf::Piece(b) => b,
        }
    }

    /// The bytes as an owned vector (a copy for a piece).
    pub(crate) fn into_vec(self) -> Vec<u8> {
        match self {
            BlockBuf::Heap(v) => v,
            BlockBuf::Piece(b) => b.to_vec(),
        }
    }

    /// The bytes as shared [`Bytes`] that return to no pool.
    pub(crate) fn into_bytes(self) -> Bytes {
        match self {
            BlockBuf::Heap(v) => Bytes::from(v),
            BlockBuf::Piece(b) => b.freeze(),
        }
    }
}

/// Memory for the decompressed blocks a cache holds: slabs of a few MiB cut into pieces,
/// and the pieces of blocks that have left the cache, for the next decompression.
///
/// A full cache evicts one block for each block it admits, so the evicted block's piece
/// serves the next decompression: no `free`, `malloc` or zero-fill per block read. The slabs
/// are advised as transparent huge pages on Linux: a cache of tens of MiB in 4 KiB pages
/// costs a TLB miss (a page walk, nested in a VM) on most block accesses, in 2 MiB pages
/// the whole cache fits the TLB. Measured in docs/performance.md.
///
/// Pieces come in steps of [`PIECE_STEP`] bytes, so a block holds at most that much more
/// than it is charged. A slab's memory goes back to the allocator when its last piece is
/// dropped (when the cache and every block handed out from it are gone).
#[derive(Debug)]
pub(crate) struct BufferPool {
    slabs: Mutex<Slabs>,
    slab_bytes: usize,
    limit: usize,
}

#[derive(Debug, Default)]
struct Slabs {
    /// Free pieces by size step (`capacity / PIECE_STEP`).
    free: Vec<Vec<BytesMut>>,
    /// The uncut rest of the newest slab.
    tail: BytesMut,
    /// Bytes of all slabs allocated so far. Slabs live as long as the pool: each of their
    /// pieces is either a block's buffer or on a free list.
    carved: usize,
}

/// Size step of pieces.
const PIECE_STEP: usize = 512;
/// Largest piece: bigger blocks (rare: LevelDB's default block is 4 KiB) use the heap.
const POOL_MAX_BUFFER: usize = 256 << 10;
/// Largest slab (caches of 64 MiB and more).
const MAX_SLAB: usize = 8 << 20;
/// Smallest slab advised as huge pages: it holds at least one whole 2 MiB page.
const MIN_HUGE_SLAB: usize = 4 << 20;

impl BufferPool {
    /// A pool for a cache of `capacity` bytes: slabs of an eighth of it (64 KiB to
    /// [`MAX_SLAB`]), up to the capacity plus a quarter and two slabs in all.
    pub(crate) fn new(capacity: u64) -> BufferPool {
        let capacity = usize::try_from(capacity).unwrap_or(usize::MAX);
        let slab_bytes = (capacity / 8).clamp(64 << 10, MAX_SLAB);
        BufferPool {
            slabs: Mutex::default(),
            slab_bytes,
            limit: capacity
                .saturating_add(capacity / 4)
                .saturating_add(2 * slab_bytes),
        }
    }

    /// A buffer for a block of `len` bytes (contents unspecified but initialized up to its
    /// length): a free piece of `len` rounded up to the step (or, failing that, up to an
    /// eighth larger), or a new piece, or an empty heap vector for blocks the pool does not
    /// serve and once the pool has reached its limit.
    pub(crate) fn take(&self, len: usize) -> BlockBuf {
        if len == 0 || len > POOL_MAX_BUFFER {
            return BlockBuf::default();
        }
        let step = len.div_ceil(PIECE_STEP);
        let last_step = (len + len / 8 + PIECE_STEP) / PIECE_STEP;
        let Ok(mut s) = self.slabs.lock() else {
            return BlockBuf::default();
        };
        for i in step..=last_step.min(s.free.len().saturating_sub(1)) {
            if let Some(piece) = s.free[i].pop() {
                return BlockBuf::Piece(piece);
            }
        }
        let want = step * PIECE_STEP;
        if s.tail.capacity() < want {
            if s.carved.saturating_add(self.slab_bytes) > self.limit {
                return BlockBuf::default();
            }
            s.tail = new_slab(self.slab_bytes);
            s.carved += self.slab_bytes;
        }
        s.tail.resize(want, 0);
        BlockBuf::Piece(s.tail.split_to(want))
    }

    fn put(&self, piece: BytesMut) {
        let step = piece.capacity() / PIECE_STEP;
        if let Ok(mut s) = self.slabs.lock() {
            if s.free.len() <= step {
                s.free.resize_with(step + 1, Vec::new);
            }
            s.free[step].push(piece);
        }
    }

    /// `buf` as shared bytes; a piece goes back to this pool when the last reference
    /// (cache entry, iterator, block clone) is dropped.
    pub(crate) fn bytes(self: &Arc<Self>, buf: BlockBuf) -> Bytes {
        match buf {
            BlockBuf::Heap(v) => Bytes::from(v),
            BlockBuf::Piece(buf) => Bytes::from_owner(Pooled {
                buf,
                pool: Arc::downgrade(self),
            }),
        }
    }
}

/// An empty buffer with room for `bytes`, advised as transparent huge pages where it holds
/// whole 2 MiB pages.
fn new_slab(bytes: usize) -> BytesMut {
    let mut slab = BytesMut::with_capacity(bytes);
    #[cfg(target_os = "linux")]
    if bytes >= MIN_HUGE_SLAB {
        advise_huge_pages(slab.spare_capacity_mut());
    }
    slab
}

/// Asks Linux to back the whole 2 MiB pages inside `mem` with transparent huge pages.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(crate) fn advise_huge_pages<T>(mem: &mut [T]) {
    const HUGE: usize = 2 << 20;
    let start = mem.as_mut_ptr() as usize;
    let Some(first) = start.checked_next_multiple_of(HUGE) else {
        return;
    };
    let end = (start + std::mem::size_of_val(mem)) / HUGE * HUGE;
    if end <= first {
        return;
    }
    // SAFETY: `[first, end)` lies inside `mem`, memory this function borrows mutably, so no
    // other reference observes it. MADV_HUGEPAGE is advice about how to back the range; it
    // changes neither its contents nor its validity, and on failure (old kernel, THP
    // disabled) nothing changes, which is why the result is ignored.
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
    }
}

/// A block buffer that returns to its pool when dropped.
struct Pooled {
    buf: BytesMut,
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
            pool: Arc::new(BufferPool::new(capacity_bytes)),
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

    fn capacity(b: &BlockBuf) -> usize {
        match b {
            BlockBuf::Heap(v) => v.capacity(),
            BlockBuf::Piece(p) => p.capacity(),
        }
    }

    /// A piece comes back only for a block it fits closely, returns to the pool when the last
    /// reference to its bytes goes, and blocks the pool does not serve get heap buffers.
    #[test]
    fn pool_reuses_pieces_that_fit_and_gets_them_back_on_drop() {
        let pool = Arc::new(BufferPool::new(1 << 20));
        let mut piece = pool.take(4000);
        assert!(matches!(piece, BlockBuf::Piece(_)));
        assert_eq!(capacity(&piece), 4096, "rounded up to the step");
        piece.set_len_filled(4000);
        piece.as_mut_slice()[0] = 7;
        let b = pool.bytes(piece);
        assert_eq!((b.len(), b[0]), (4000, 7));
        let clone = b.clone();
        drop(b);
        // Still referenced: a new piece is cut instead.
        let other = pool.take(4000);
        assert_eq!(capacity(&other), 4096);
        drop(clone);
        drop(other);
        // Too small a block for these pieces (4 KiB held, 1 KiB charged): a new one.
        assert_eq!(capacity(&pool.take(1000)), 1024);
        // A block a little smaller reuses one; too large a block does not.
        let reused = pool.take(3900);
        assert_eq!(capacity(&reused), 4096);
        assert_eq!(capacity(&pool.take(5000)), 5120);
        // Nothing and huge blocks are not the pool's.
        assert!(matches!(pool.take(0), BlockBuf::Heap(_)));
        assert!(matches!(pool.take(1 << 20), BlockBuf::Heap(_)));
    }

    /// The pool stops cutting slabs at its limit; blocks then get heap buffers.
    #[test]
    fn pool_is_bounded() {
        let pool = BufferPool::new(256 << 10);
        let held: Vec<BlockBuf> = (0..200).map(|_| pool.take(4096)).collect();
        let pieces = held
            .iter()
            .filter(|b| matches!(b, BlockBuf::Piece(_)))
            .count();
        assert!(
            pieces * 4096 <= pool.limit,
            "{pieces} pieces over the limit"
        );
        assert!(pieces >= 64, "at least the capacity is served: {pieces}");
        assert!(matches!(held.last(), Some(BlockBuf::Heap(_))));
    }
}
