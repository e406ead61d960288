//! What a [`BlockCache`](super::BlockCache) holds and asks of its replacement policies: the
//! entry of one block ([`CachedBlock`]), with its charge, its CLOCK reference count and its
//! link to a table's lookup record ([`SlotOwner`]); the cache key and its hash; and the
//! [`Replacement`] trait each policy implements (`clock.rs`, `quick.rs`).

use std::hash::Hasher;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::block::{Block, RestartHints};
use crate::search::block_dir::BlockDir;

/// What the cache holds for one block.
pub(crate) struct CachedBlock {
    pub(crate) block: Block,
    /// Search directory, for blocks of bytewise-ordered tables that have the shape for one.
    pub(crate) dir: Option<BlockDir>,
    /// Restart points for point lookups, for blocks of tables with a decoded index.
    pub(crate) hints: Option<RestartHints>,
    pub(super) charge: u64,
    /// Uses since the cache's CLOCK hand last passed (up to [`MAX_REF`]).
    pub(super) referenced: AtomicU8,
    /// The table lookup record holding this entry outside the cache, if any: told when
    /// the cache lets the entry go.
    link: Mutex<Option<SlotLink>>,
}

/// A holder of cache entries outside the cache: a table's lookup records, each of which
/// may hold its block's entry for lookups that skip the cache (`table/records.rs`).
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
    pub(super) fn release(self: &Arc<Self>) {
        let link = self.link.lock().ok().and_then(|mut l| l.take());
        if let Some(SlotLink { owner, index }) = link {
            if let Some(owner) = owner.upgrade() {
                owner.release(index, self);
            }
        }
    }

    /// Counts a use for the CLOCK hand (no write once saturated: the line stays clean).
    #[inline]
    pub(super) fn note_use(&self) {
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

/// A cache key: (table id, block offset).
pub(super) type Key = (u64, u64);

/// Highest reference count of an entry: a block used at least this often since the CLOCK
/// hand last passed it survives this many passes without a use.
pub(super) const MAX_REF: u8 = 3;
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
pub(super) struct KeyHasher {
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

/// What [`BlockCache`] asks of the structure that decides which blocks stay: one
/// implementation per [`CachePolicy`].
///
/// The callbacks `on_found` and `on_admit` run on the entry the cache holds for the key,
/// and may link it to a lookup record ([`CachedBlock::link_to`]). Whatever the timing, a
/// linked entry is released ([`CachedBlock::release`]) once it is no longer in the cache,
/// even if it left before the link was made.
pub(super) trait Replacement {
    /// The entry of `key` (hash `hash`, [`key_hash`]); found or not, a use.
    fn get(
        &self,
        key: Key,
        hash: u64,
        on_found: impl FnOnce(&Arc<CachedBlock>),
    ) -> Option<Arc<CachedBlock>>;
    /// Offers `entry`; whether the cache holds an entry for `key` afterwards (`on_admit` has
    /// then run on it: this one, or one a racing reader put there).
    fn insert(
        &self,
        key: Key,
        hash: u64,
        entry: Arc<CachedBlock>,
        on_admit: impl FnOnce(&Arc<CachedBlock>),
    ) -> bool;
    /// A use of `key` that did not go through [`get`](Self::get): served from a lookup
    /// record, or known to miss.
    fn note_use(&self, key: Key, hash: u64);
    /// Whether a block of `weight` bytes at `hash`, offered now, would be admitted (a
    /// guess the insert itself may overrule; `true` when the policy cannot tell).
    fn would_admit(&self, hash: u64, weight: u64) -> bool;
    /// Bytes charged.
    fn charge(&self) -> u64;
    /// Entries held.
    fn len(&self) -> usize;
    /// Shards (for `Debug` and tests).
    fn shards(&self) -> usize;
}
