//! A block cache charged in bytes, shareable across tables (LevelDB's `Options::block_cache`).
//!
//! Entries are uncompressed, validated blocks keyed by (table id, block offset); each costs
//! its uncompressed size, as LevelDB charges, plus the bytes of its search directory
//! (`block_dir.rs`) when it has one; the entry's fixed bookkeeping (including the 56 bytes
//! of restart hints) is not charged, as LevelDB does not charge its `Block` object and
//! handle. A block that is a zero-copy view of a memory map or an in-memory source owns no
//! memory: it costs only its bookkeeping, and caching it records that its checksum was
//! verified. The cache is sharded, admits blocks by how often they were used lately
//! (CLOCK eviction, TinyLFU admission: [`BlockCache`]), and a hit hands out a
//! reference-counted entry: no copy, no allocation. Decompressed blocks live in pieces of
//! huge-page slabs ([`BufferPool`]).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};

use bytes::{Bytes, BytesMut};

use crate::block::{Block, RestartHints};
use crate::block_buf::BlockBuf;
use crate::block_dir::BlockDir;
use crate::comparator::Comparator;
use crate::sketch::FrequencySketch;

/// What the cache holds for one block.
pub(crate) struct CachedBlock {
    pub(crate) block: Block,
    /// Search directory, for blocks of bytewise-ordered tables that have the shape for one.
    pub(crate) dir: Option<BlockDir>,
    /// Restart points for point lookups, for blocks of tables with a decoded index.
    pub(crate) hints: Option<RestartHints>,
    charge: u64,
    /// Uses since the cache's CLOCK hand last passed (up to [`MAX_REF`]).
    referenced: AtomicU8,
    /// The table lookup record holding this entry outside the cache, if any: told when
    /// the cache lets the entry go.
    link: Mutex<Option<SlotLink>>,
}

/// A holder of cache entries outside the cache: a table's lookup records, each of which
/// may hold its block's entry for lookups that skip the cache (`table.rs`).
pub(crate) trait SlotOwner: Send + Sync {
    /// The cache has let `entry` go: slot `index` must drop it if it holds it.
    fn release(&self, index: usize, entry: &Arc<CachedBlock>);
}

/// Where an entry is held outside the cache.
struct SlotLink {
    owner: Weak<dyn SlotOwner>,
    index: usize,
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
            referenced: AtomicU8::new(0),
            link: Mutex::new(None),
            hints: None,
        }
    }

    /// Records that a slot outside the cache (`owner`'s slot `index`) holds this entry.
    /// Called while the entry is resident, under its shard's lock (see
    /// [`BlockCache::insert_entry_with`]), so that an eviction cannot slip in between.
    pub(crate) fn link_to(&self, owner: Weak<dyn SlotOwner>, index: usize) {
        if let Ok(mut l) = self.link.lock() {
            *l = Some(SlotLink { owner, index });
        }
    }

    /// The entry's reference count, for [`mark_used`](Self::mark_used).
    #[inline]
    pub(crate) fn references(&self) -> u8 {
        self.referenced.load(Ordering::Relaxed)
    }

    /// Counts a use seen by a slot holding the entry, given its reference count read
    /// earlier (`references`): a slot reads it before searching the block, so that the
    /// entry's line arrives meanwhile. A racing update may be lost (one use uncounted).
    #[inline]
    pub(crate) fn mark_used(&self, refs: u8) {
        if refs < MAX_REF {
            self.referenced.store(refs + 1, Ordering::Relaxed);
        }
    }

    /// Tells the slot holding this entry outside the cache, if any, to drop it.
    fn release(self: &Arc<Self>) {
        let link = self.link.lock().ok().and_then(|mut l| l.take());
        if let Some(SlotLink { owner, index }) = link {
            if let Some(owner) = owner.upgrade() {
                owner.release(index, self);
            }
        }
    }

    /// Counts a use for the CLOCK hand (no write once saturated: the line stays clean).
    #[inline]
    fn note_use(&self) {
        self.mark_used(self.references());
    }

    /// This entry with `hints`. They are a fixed part of the entry's bookkeeping (56 bytes
    /// inline, like LevelDB's `Block` object and cache handle next to each cached block),
    /// which is not charged: the charge is the block's uncompressed size, as LevelDB's.
    pub(crate) fn with_hints(mut self, hints: Option<RestartHints>) -> CachedBlock {
        self.hints = hints;
        self
    }
}

/// [`Block::seek_value_range`] of `block`, through its restart hints when there are any
/// (`tp` is the decoded index's prefix of `target`).
#[inline]
pub(crate) fn seek_value_range(
    block: &Block,
    hints: Option<&RestartHints>,
    cmp: &dyn Comparator,
    target: &[u8],
    tp: u64,
    key: &mut Vec<u8>,
) -> crate::error::Result<Option<std::ops::Range<usize>>> {
    match hints {
        Some(h) => block.seek_value_range_hinted(cmp, target, tp, h, key),
        None => block.seek_value_range(cmp, target, key),
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
        crate::os::advise_huge_pages(slab.spare_capacity_mut());
    }
    slab
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
///
/// Sharded by key (up to 16 shards of at least 2 MiB, each under its own lock). Each shard
/// keeps its blocks in a CLOCK ring: a use sets the entry's reference count (up to 3, in
/// the entry itself, so a table's per-block slot reports a use without the lock), and the
/// hand takes one off each entry it passes, evicting the first it finds at zero. A new
/// block is admitted only if it was used more often lately than that victim, by a
/// [`FrequencySketch`] of recent uses, cached or not (TinyLFU; see `sketch.rs`): a block
/// read once does not push out one in steady use, and blocks used more often take the
/// place of those used less. LevelDB's cache is a plain LRU; measured in
/// docs/performance.md, the admission saves about a fifth of the block reads of the
/// benchmark's random lookups.
pub struct BlockCache {
    shards: Box<[Mutex<Shard>]>,
    sketches: Box<[FrequencySketch]>,
    shard_mask: usize,
    next_id: AtomicU64,
    capacity: u64,
    pool: Arc<BufferPool>,
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

/// Highest reference count of an entry: a block used at least this often since the hand
/// last passed it survives this many passes without a use.
const MAX_REF: u8 = 3;
/// Most shards, and the least capacity of one (LevelDB's cache has 16 shards).
const MAX_SHARDS: u64 = 16;
const MIN_SHARD_BYTES: u64 = 2 << 20;

/// The hash of a cache key (table id, block offset): a splitmix64 finalizer over both.
#[inline]
pub(crate) fn key_hash(id: u64, offset: u64) -> u64 {
    let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ offset;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Hasher of the shards' maps: the keys are (id, offset) pairs, hashed by [`key_hash`].
#[derive(Default)]
struct KeyHasher {
    parts: [u64; 2],
    n: usize,
}

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        key_hash(self.parts[0], self.parts[1]) // ok: constant indexes of a [u64; 2]
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        let i = self.n % 2;
        self.parts[i] = self.parts[i].rotate_left(8) ^ v; // ok: i < 2
        self.n += 1;
    }
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

    /// Moves the hand to the next entry without references (taking one off each entry it
    /// passes) and evicts it, unless `candidate` (a block waiting to be admitted, by its
    /// estimated uses) was used no more often than it: then the victim stays and nothing
    /// changes. Returns whether an entry was evicted.
    fn evict_one(&mut self, candidate: Option<u8>, sketch: &FrequencySketch) -> bool {
        if self.map.is_empty() {
            return false;
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
            if refs > 0 {
                r.entry.referenced.store(refs - 1, Ordering::Relaxed);
                self.hand += 1;
                continue;
            }
            if candidate.is_some_and(|c| c <= sketch.estimate(r.hash)) {
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
            return true;
        }
    }
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("capacity", &self.capacity)
            .field("charge", &self.charge())
            .field("entries", &self.len())
            .field("shards", &self.shards.len())
            .finish()
    }
}

impl BlockCache {
    /// A cache holding up to `capacity_bytes` of uncompressed blocks.
    pub fn new(capacity_bytes: u64) -> Self {
        let capacity = capacity_bytes.max(1);
        let shards = (capacity / MIN_SHARD_BYTES).clamp(1, MAX_SHARDS);
        // A power of two, so that bits of the hash choose the shard.
        let shards = if shards.is_power_of_two() {
            shards
        } else {
            shards.next_power_of_two() / 2
        };
        let per_shard = capacity / shards;
        let items = usize::try_from((per_shard / 4096).clamp(4, 1 << 20)).unwrap_or(1 << 20);
        BlockCache {
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
            next_id: AtomicU64::new(1),
            capacity: capacity_bytes,
            pool: Arc::new(BufferPool::new(capacity_bytes)),
        }
    }

    /// A fresh id for a table that uses this cache (LevelDB's `Cache::NewId`).
    pub fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// The block of table `id` at `offset`, if cached (a use, as [`get_entry`](Self::get_entry)).
    pub fn get(&self, id: u64, offset: u64) -> Option<Block> {
        self.get_entry(id, offset).map(|e| e.block.clone())
    }

    /// Offers a block to the cache (charged its size). When the cache is full the block
    /// is admitted only if it was used more often lately than the block it would displace
    /// (the uses counted are this cache's `get`s of it, whether they found it or not).
    pub fn insert(&self, id: u64, offset: u64, block: Block) {
        self.insert_entry(id, offset, Arc::new(CachedBlock::new(block, None, true)));
    }

    /// The shard index and key hash of (`id`, `offset`).
    #[inline]
    fn locate(&self, id: u64, offset: u64) -> (usize, u64) {
        let h = key_hash(id, offset);
        // Bits 28..32: apart from those the shard's map (the lowest and the top 7), its
        // sketch's block (the lowest) and the sketch's counters (32..64) use.
        ((h >> 28) as usize & self.shard_mask, h)
    }

    /// The cached entry of (`id`, `offset`); found or not, counted as a use.
    #[inline]
    pub(crate) fn get_entry(&self, id: u64, offset: u64) -> Option<Arc<CachedBlock>> {
        self.get_entry_with(id, offset, |_| {})
    }

    /// [`get_entry`](Self::get_entry), running `on_found` on the entry under its shard's
    /// lock (while it is certainly resident).
    #[inline]
    pub(crate) fn get_entry_with(
        &self,
        id: u64,
        offset: u64,
        on_found: impl FnOnce(&Arc<CachedBlock>),
    ) -> Option<Arc<CachedBlock>> {
        let (s, h) = self.locate(id, offset);
        let found = match self.shards[s].lock() {
            // ok: s <= shard_mask < shards.len()
            Ok(shard) => shard
                .map
                .get(&(id, offset))
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
        self.sketches[s].increment(h); // ok: as above
        found
    }

    /// Offers `entry` to the cache; returns whether it was admitted.
    pub(crate) fn insert_entry(&self, id: u64, offset: u64, entry: Arc<CachedBlock>) -> bool {
        self.insert_entry_with(id, offset, entry, |_| {})
    }

    /// [`insert_entry`](Self::insert_entry), running `on_admit` on the entry under its
    /// shard's lock if it is admitted: a slot that holds the entry outside the cache
    /// ([`CachedBlock::link_to`]) is then always told when it leaves.
    pub(crate) fn insert_entry_with(
        &self,
        id: u64,
        offset: u64,
        entry: Arc<CachedBlock>,
        on_admit: impl FnOnce(&Arc<CachedBlock>),
    ) -> bool {
        let (s, h) = self.locate(id, offset);
        let sketch = &self.sketches[s]; // ok: s < shards.len()
        match self.shards[s].lock() {
            // ok: as above
            Ok(mut shard) => shard.insert((id, offset), h, entry, sketch, on_admit),
            Err(_) => false,
        }
    }

    /// Records a use of the block (`id`, `offset`) in the frequency sketch alone: a use the
    /// caller knows the cache does not hold the block for, or one served from a slot
    /// holding the entry (which marks the entry itself, [`CachedBlock::mark_used`]).
    #[inline]
    pub(crate) fn note_use(&self, id: u64, offset: u64) {
        let (s, h) = self.locate(id, offset);
        self.sketches[s].increment(h); // ok: s < shards.len()
    }

    /// Where decompressions for this cache take their buffers from.
    pub(crate) fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    fn sum(&self, f: impl Fn(&Shard) -> u64) -> u64 {
        self.shards
            .iter()
            .filter_map(|s| s.lock().ok().map(|s| f(&s)))
            .sum()
    }

    /// Bytes currently charged.
    pub fn charge(&self) -> u64 {
        self.sum(|s| s.charge)
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Number of cached blocks.
    pub fn len(&self) -> usize {
        usize::try_from(self.sum(|s| s.map.len() as u64)).unwrap_or(usize::MAX)
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    /// A cached block of about `bytes` bytes (its charge is its exact size).
    fn entry(bytes: usize) -> Arc<CachedBlock> {
        let mut b = crate::block_builder::BlockBuilder::new(16);
        b.add(b"k", &vec![7u8; bytes.saturating_sub(16)]);
        let data = Bytes::copy_from_slice(b.finish());
        let handle = crate::format::BlockHandle {
            offset: 0,
            size: data.len() as u64,
        };
        let block = Block::new(data, crate::error::BlockKind::Data, handle).unwrap();
        Arc::new(CachedBlock::new(block, None, true))
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
        let c = BlockCache::new(4 * one);
        assert_eq!(c.shards.len(), 1);
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

    /// Uses are counted only once the cache is half full: a cache larger than what it
    /// holds never admits by frequency, and its lookups skip the sketch.
    #[test]
    fn uses_are_counted_once_half_full() {
        let one = entry(1000).charge;
        let c = BlockCache::new(8 * one);
        for k in 0..4 {
            assert!(c.insert_entry(1, k, entry(1000)));
            use_block(&c, k, 2);
        }
        assert_eq!(c.sketches[0].estimate(key_hash(1, 0)), 0);
        assert!(c.insert_entry(1, 4, entry(1000)));
        use_block(&c, 0, 2);
        assert_eq!(c.sketches[0].estimate(key_hash(1, 0)), 2);
    }

    /// Blocks larger than a shard are not cached; the same key offered again replaces its
    /// entry and its charge.
    #[test]
    fn oversized_blocks_and_replaced_entries() {
        let c = BlockCache::new(10_000);
        assert!(!c.insert_entry(1, 0, entry(20_000)));
        assert!(c.is_empty());
        assert!(c.insert_entry(1, 0, entry(3000)));
        let small = entry(2000);
        let charge = small.charge;
        assert!(c.insert_entry(1, 0, small.clone()));
        assert_eq!((c.len(), c.charge()), (1, charge));
        assert!(Arc::ptr_eq(&c.get_entry(1, 0).unwrap(), &small));
        // Another table's block at the same offset is another key.
        assert!(c.get_entry(2, 0).is_none());
    }

    /// A 64 MiB cache has 16 shards (LevelDB's count), a small one a single shard; keys
    /// spread over the shards.
    #[test]
    fn shards_by_capacity() {
        assert_eq!(BlockCache::new(64 << 20).shards.len(), 16);
        assert_eq!(BlockCache::new(8 << 20).shards.len(), 4);
        assert_eq!(BlockCache::new(6 << 20).shards.len(), 2);
        assert_eq!(BlockCache::new(1).shards.len(), 1);
        let c = BlockCache::new(64 << 20);
        let mut seen = [0usize; 16];
        for off in 0..1600u64 {
            seen[c.locate(3, off * 4096).0] += 1;
        }
        assert!(seen.iter().all(|&n| (50..=150).contains(&n)), "{seen:?}");
    }

    /// Threads offering, finding and using blocks at once: the charge stays within the
    /// capacity, and every entry found is the block asked for.
    #[test]
    fn threads_share_a_full_cache() {
        let one = entry(1000).charge;
        let c = Arc::new(BlockCache::new(32 * one));
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let c = c.clone();
                s.spawn(move || {
                    for i in 0..3000u64 {
                        let k = (i * 7 + t * 13) % 97;
                        match c.get_entry(1, k * 4096) {
                            Some(e) => assert_eq!(e.block.size(), entry(1000).block.size()),
                            None => {
                                c.insert_entry(1, k * 4096, entry(1000));
                            }
                        }
                        if let Some(e) = c.get_entry(1, k * 4096) {
                            e.mark_used(e.references());
                            c.note_use(1, k * 4096);
                        }
                        assert!(c.charge() <= c.capacity());
                    }
                });
            }
        });
        assert!(c.len() <= 32 && c.len() >= 16, "{} entries", c.len());
        assert_eq!(c.charge(), c.len() as u64 * one);
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
