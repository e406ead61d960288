//! Where a point lookup goes (`lookup.rs`, step "route"): the index search (through the
//! decoded index, or the index block), the block's lookup record and its filter, and the
//! record's hold on the cached block (steps 1 and 4 of the pipeline).

use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock, Weak};

use super::reader::TableReader;
use super::records::{
    BlockFilter, BlockLookup, BlockView, Held, HeldLookup, Lookups, Route, Slot, INLINE_FILTER,
};
use crate::cache::{CachedBlock, SlotOwner};
use crate::error::{BlockKind, Error, Result};
use crate::filter::block::FilterSpan;
use crate::format::BlockHandle;
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::search::index::ParsedIndex;
use crate::util::comparator::{BytewiseComparator, Comparator};

thread_local! {
    /// Scratch space for index keys when the index is searched as a block.
    static INDEX_SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

impl<R: RandomAccess> TableReader<R> {
    /// The index decoded for searching, built on first use; `None` when the comparator is
    /// not bytewise-based or the index does not store whole keys.
    pub(super) fn parsed_index(&self) -> Option<&ParsedIndex> {
        self.parsed_index
            .get_or_init(|| {
                // The prefix search needs keys ordered bytewise (plain or by user key).
                (self.user_comparator.name() == BytewiseComparator.name())
                    .then(|| ParsedIndex::build(&self.index, self.internal))
                    .flatten()
            })
            .as_ref()
    }

    /// The handle of the data block that may hold `seek_key` (a table key), if any.
    pub(super) fn index_lookup(&self, seek_key: &[u8]) -> Result<Option<BlockHandle>> {
        if let Some(p) = self.parsed_index() {
            return Ok(p.seek(self.index.data(), &*self.comparator, seek_key));
        }
        let mut scratch = INDEX_SCRATCH.take();
        let found = self
            .index
            .seek_value_range(&*self.comparator, seek_key, &mut scratch);
        INDEX_SCRATCH.set(scratch);
        match found? {
            None => Ok(None),
            Some(r) => {
                let mut v = &self.index.data()[r];
                BlockHandle::decode_from(&mut v)
                    .map(Some)
                    .ok_or(Error::BadIndexValue {
                        kind: BlockKind::Index,
                        handle: self.footer.index,
                    })
            }
        }
    }

    /// Where a point lookup for `seek_key` (a table key) goes: the data block the index
    /// routes it to, if any and if the filter does not rule out `filter_key` (the user key
    /// for database tables). Through the decoded index and the block's lookup record when
    /// the table has them, else through the index block and the filter block.
    #[inline]
    pub(super) fn route(&self, seek_key: &[u8], filter_key: &[u8]) -> Result<Option<Route<'_>>> {
        // The filter is keyed by bytes: its "absent" stands only for a key whose equals in
        // the order all have its bytes.
        let trust_filter = self.user_comparator.equal_keys_identical(filter_key);
        if let Some(p) = self.parsed_index() {
            let Some(pos) = p.seek_position(self.index.data(), &*self.comparator, seek_key) else {
                return Ok(None);
            };
            let Some(l) = self.block_lookup(pos) else {
                return Ok(None);
            };
            return Ok(
                (!trust_filter || self.lookup_may_match(l, filter_key)).then(|| Route {
                    pos: Some(pos),
                    lookup: Some(l),
                    handle: l.handle,
                    tp: p.key_prefix(seek_key),
                }),
            );
        }
        let Some(handle) = self.index_lookup(seek_key)? else {
            return Ok(None);
        };
        let excluded = trust_filter
            && self
                .filter()
                .is_some_and(|f| !f.key_may_match(handle.offset, filter_key));
        Ok((!excluded).then_some(Route {
            pos: None,
            lookup: None,
            handle,
            tp: 0,
        }))
    }

    /// Runs `f` on the block at `handle` if its lookup record holds it (under the slot's
    /// read lock), reporting the use to the cache's policy; otherwise says whether the cache
    /// may hold the block anyway: only if the slot was never filled (a scan or another
    /// reader of the table loaded it). A slot the cache emptied was evicted; probing would
    /// only miss (a cold hash-table line).
    #[inline]
    pub(super) fn held_lookup<T>(
        &self,
        lookup: Option<&BlockLookup>,
        handle: BlockHandle,
        f: impl FnOnce(BlockView<'_>) -> T,
    ) -> HeldLookup<T> {
        let miss = |probe| HeldLookup::Miss { probe, len: None };
        let (Some(l), Some(cache)) = (lookup, &self.cache) else {
            return miss(true);
        };
        let Ok(slot) = l.slot.read() else {
            return miss(true);
        };
        match &*slot {
            Slot::Held(h) if h.block.handle() == handle => {
                // The entry's reference count is read first and written after the search:
                // its line (not otherwise needed) then arrives during the search, and the
                // lock's release (an atomic read-modify-write, which waits for earlier
                // stores) does not wait for it.
                let refs = h.entry.references();
                let r = f(BlockView {
                    block: &h.block,
                    hints: h.hints.as_ref(),
                    dir: None,
                });
                h.entry.mark_used(refs);
                drop(slot);
                cache.note_use(self.cache_id, handle.offset);
                HeldLookup::Hit(r)
            }
            Slot::Never => miss(true),
            Slot::Gone(len) => HeldLookup::Miss {
                probe: false,
                len: *len,
            },
            Slot::Held(_) => miss(false),
        }
    }

    /// The block at `handle` for a point lookup, from the cache (if `probe`) or the file;
    /// the lookup record at index position `pos` holds it from then on while the cache does.
    pub(super) fn load_for_lookup(
        &self,
        pos: Option<usize>,
        handle: BlockHandle,
        opts: ReadOptions,
        probe: bool,
    ) -> Result<Arc<CachedBlock>> {
        let links = self.cache.as_ref().is_some_and(|c| c.holds_record_links());
        let owner = self.lookups.get().filter(|_| links);
        let record = owner
            .zip(pos)
            .and_then(|(o, p)| o.0.get(p).map(|l| (o, p, l)));
        let Some((owner, pos, l)) = record else {
            return self.load_data_block(handle, opts, None, true, probe, None);
        };
        let installed = Cell::new(false);
        let install = |e: &Arc<CachedBlock>| {
            // A block with a search directory is searched through its entry (the record
            // holds no directory).
            if e.dir.is_some() {
                return;
            }
            installed.set(true);
            if let Ok(mut slot) = l.slot.write() {
                *slot = Slot::Held(Held {
                    entry: e.clone(),
                    block: e.block.clone(),
                    hints: e.hints.clone(),
                });
            }
            let owner: Weak<dyn SlotOwner> = Arc::downgrade(owner) as Weak<Lookups>;
            e.link_to(owner, pos);
        };
        let e = self.load_data_block(handle, opts, None, true, probe, Some(&install))?;
        if !installed.get() && e.dir.is_none() {
            // Not taken by the cache: later lookups read it again without probing.
            if let Ok(mut slot) = l.slot.write() {
                if matches!(*slot, Slot::Never | Slot::Gone(None)) {
                    *slot = Slot::Gone(u32::try_from(e.block.size()).ok());
                }
            }
        }
        Ok(e)
    }

    /// The lookup record of the data block at index position `pos`, when this table has a
    /// decoded index (built on first use, with the filter).
    pub(super) fn block_lookup(&self, pos: usize) -> Option<&BlockLookup> {
        let index = self.parsed_index()?;
        self.lookups
            .get_or_init(|| {
                let filter = self.filter();
                let mut records = Vec::with_capacity(index.len());
                // Records of a large table span megabytes, one touched per lookup at random:
                // in 4 KiB pages nearly every lookup would also miss the TLB. Advised before
                // the first write, so the pages are huge from the start.
                #[cfg(target_os = "linux")]
                crate::util::os::advise_huge_pages(records.spare_capacity_mut());
                records.extend((0..index.len()).map(|i| {
                    // ok: i < index.len().
                    let handle = index.handle(i).unwrap_or_default();
                    let span = match filter {
                        Some(f) => f.filter_span(handle.offset),
                        None => FilterSpan::MayMatch,
                    };
                    let filter = match (span, filter) {
                        (FilterSpan::Filter(r), Some(f)) if r.len() <= INLINE_FILTER => {
                            let mut bits = [0u8; INLINE_FILTER];
                            bits[..r.len()].copy_from_slice(&f.data()[r.clone()]);
                            BlockFilter::Inline {
                                len: r.len() as u8,
                                bits,
                            }
                        }
                        (FilterSpan::Filter(r), _) => {
                            match (u32::try_from(r.start), u32::try_from(r.len())) {
                                (Ok(start), Ok(len)) => BlockFilter::At { start, len },
                                _ => BlockFilter::MayMatch,
                            }
                        }
                        (FilterSpan::NoMatch, _) => BlockFilter::NoMatch,
                        (FilterSpan::MayMatch, _) => BlockFilter::MayMatch,
                    };
                    BlockLookup {
                        handle,
                        filter,
                        not_in_place: AtomicBool::new(false),
                        slot: RwLock::new(Slot::Never),
                    }
                }));
                Arc::new(Lookups(records.into_boxed_slice()))
            })
            .0
            .get(pos)
    }

    /// Whether `key` may be in the block of `lookup`, by its filter.
    #[inline]
    pub(super) fn lookup_may_match(&self, lookup: &BlockLookup, key: &[u8]) -> bool {
        // Records say other than "may match" only when built with this filter block.
        let Some(f) = self.filter() else {
            return true;
        };
        let bits = match &lookup.filter {
            BlockFilter::MayMatch => return true,
            BlockFilter::NoMatch => return false,
            BlockFilter::Inline { len, bits } => &bits[..usize::from(*len)],
            // ok: the span was taken from this filter block (`block_lookup`).
            BlockFilter::At { start, len } => &f.data()[*start as usize..][..*len as usize],
        };
        f.policy().key_may_match(key, bits)
    }
}
