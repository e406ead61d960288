//! What point lookups keep and pass between their steps: one 256-byte record per data block
//! (handle, filter, the cached block while the cache holds it), the blocks read in place,
//! and the step results of the pipeline (`lookup.rs`).

use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};

use crate::block::{Block, RestartHints};
use crate::cache::{CachedBlock, SlotOwner};
use crate::format::BlockHandle;
use crate::search::block_dir::BlockDir;

thread_local! {
    /// Scratch space for keys rebuilt during point lookups, so a warm `get` allocates nothing.
    pub(super) static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// Per data block, for point lookups: its handle, its filter, and the block itself while
/// the cache holds it, in one 256-byte record (four cache lines in two adjacent pairs, which
/// the CPU fetches together).
///
/// After the index search has found the block's position, everything else a lookup needs
/// before the block's bytes is here: in the index's entries and the filter block it would be
/// three more dependent cache misses (the handle, the filter's offset, the filter's bits),
/// and through the cache a hash probe and the cache entry. The slot holds the cached
/// block (its bytes, restart hints and cache entry) while the cache keeps it: the cache
/// tells the record when it evicts the block ([`SlotOwner`]), so the cache alone decides
/// what stays in memory, and a hit reads the block's bytes straight from the record. Uses
/// are still reported to the cache's eviction policy (`CachedBlock::mark_used`, the
/// cache's frequency sketch).
#[repr(align(128))]
pub(super) struct BlockLookup {
    pub(super) handle: BlockHandle,
    pub(super) filter: BlockFilter,
    /// Set once the in-place path (`in_place`) has found it has nothing for this block
    /// (stored compressed, or no directory): lookups then skip its slot, another cache line.
    pub(super) not_in_place: AtomicBool,
    pub(super) slot: RwLock<Slot>,
}

// Four cache lines, no more.
const _: () = assert!(std::mem::size_of::<BlockLookup>() == 256);

/// What a [`BlockLookup`]'s slot holds.
pub(super) enum Slot {
    /// Never filled: the cache may hold the block anyway (a scan or another path loaded it).
    Never,
    /// The cache let the block go, or did not take it: probing it would only miss. With
    /// the block's uncompressed length when known (what the cache would charge for it, so
    /// that a lookup can ask whether it would take the block before reading it).
    Gone(Option<u32>),
    /// The block, while the cache holds it.
    Held(Held),
}

/// A cached block as a lookup record holds it: what a lookup reads, without the cache
/// entry's line (the entry is kept for its identity and reference count).
pub(super) struct Held {
    pub(super) entry: Arc<CachedBlock>,
    pub(super) block: Block,
    pub(super) hints: Option<RestartHints>,
}

/// The lookup records of a table, shared with the cache so that it can empty a record's
/// slot when it evicts the block.
pub(super) struct Lookups(pub(super) Box<[BlockLookup]>);

impl SlotOwner for Lookups {
    fn release(&self, index: usize, entry: &Arc<CachedBlock>) {
        if let Some(Ok(mut slot)) = self.0.get(index).map(|l| l.slot.write()) {
            if let Slot::Held(h) = &*slot {
                if Arc::ptr_eq(&h.entry, entry) {
                    *slot = Slot::Gone(u32::try_from(h.block.size()).ok());
                }
            }
        }
    }
}

/// What `load_data_block` runs on a block's cache entry while the cache holds it.
pub(super) type Install<'a> = dyn Fn(&Arc<CachedBlock>) + 'a;

/// What [`TableReader::held_lookup`] found.
pub(super) enum HeldLookup<T> {
    /// The record held the block: the lookup's result.
    Hit(T),
    /// Not held; `probe`: the cache may hold the block all the same; the block's
    /// uncompressed length if the record keeps it.
    Miss { probe: bool, len: Option<u32> },
}

/// Filter bytes a [`BlockLookup`] holds inline (a 4 KiB block of 100-byte entries at 10
/// bits per key has a 50-byte filter).
pub(super) const INLINE_FILTER: usize = 86;

/// How a [`BlockLookup`] answers the filter question (LevelDB's rules, `FilterSpan`).
pub(super) enum BlockFilter {
    /// No filter applies: every key may match.
    MayMatch,
    /// No key matches (LevelDB's malformed empty filter).
    NoMatch,
    /// The filter's bytes, copied.
    Inline { len: u8, bits: [u8; INLINE_FILTER] },
    /// A longer filter: its place in the filter block.
    At { start: u32, len: u32 },
}

/// Where a point lookup goes after the index search and the filter (`TableReader::route`).
pub(super) struct Route<'a> {
    /// Position of the block in the decoded index, when the table has one.
    pub(super) pos: Option<usize>,
    /// The block's lookup record, when the table has a decoded index.
    pub(super) lookup: Option<&'a BlockLookup>,
    pub(super) handle: BlockHandle,
    /// The decoded index's prefix of the key (0 without a decoded index).
    pub(super) tp: u64,
}

/// What a lookup through `in_place` did.
pub(super) enum InPlaceLookup<T> {
    /// Answered: the caller's answer on the entry equal to the key, or `None` if the block
    /// has no such entry.
    Done(Option<T>),
    /// Read and verified the block, which has no directory: search it.
    Read(Block),
    /// The block is not kept in place: search it through the block cache.
    NotHere,
}

/// A data block of a zero-copy source that a point lookup has read and verified (`dir`
/// `None`: not kept, searched through the block cache, e.g. a compressed block).
pub(super) struct InPlace {
    pub(super) handle: BlockHandle,
    /// Its search directory; `None` when the block is compressed or does not have the shape
    /// for one (lookups then search it through the block cache).
    pub(super) dir: Option<BlockDir>,
}

/// What a point lookup looks for.
pub(super) struct Probe<'k> {
    /// The search's target: the first entry at or after it answers.
    pub(super) seek: &'k [u8],
    /// What the filter is asked about (the user key of a database table).
    pub(super) filter: &'k [u8],
    /// Only an entry equal to `seek` answers (plain tables): a block's search directory
    /// may then answer instead of a search.
    pub(super) exact: bool,
}

/// A block as a point lookup searches it: with its restart hints and its search directory,
/// when it has them.
#[derive(Clone, Copy)]
pub(super) struct BlockView<'a> {
    pub(super) block: &'a Block,
    pub(super) hints: Option<&'a RestartHints>,
    pub(super) dir: Option<&'a BlockDir>,
}

impl<'a> BlockView<'a> {
    /// A block without search aids.
    pub(super) fn bare(block: &'a Block) -> Self {
        BlockView {
            block,
            hints: None,
            dir: None,
        }
    }

    /// A cached block with the aids its entry holds.
    pub(super) fn of(entry: &'a CachedBlock) -> Self {
        BlockView {
            block: &entry.block,
            hints: entry.hints.as_ref(),
            dir: entry.dir.as_ref(),
        }
    }
}
