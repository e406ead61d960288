//! Point lookups in blocks the cache will not keep: it let the block go or turned it away,
//! and would turn it away again now (or the read asks not to fill the cache). Such a block
//! is read for the one lookup and dropped, so nothing in it needs to exist beyond the
//! lookup's key: a snappy block whose outline the lookup record keeps
//! ([`BlockOutline`]) is decoded only that far, into a reused thread-local buffer (about
//! half of the decompression for a key drawn at random, no allocation); other blocks are
//! read whole, and leave their outline in the record for the next time.

use std::cell::Cell;

use super::reader::TableReader;
use super::records::{BlockView, Route, Slot, SCRATCH};
use crate::block::{Block, BlockOutline, OutlineError};
use crate::compress::snappy_prefix::SnappyPrefix;
use crate::compress::MAX_BLOCK_BYTES;
use crate::error::{BlockKind, Error, Result};
use crate::format;
use crate::io::RandomAccess;
use crate::options::ReadOptions;

thread_local! {
    /// Where outlined blocks are decoded: reused, so that it stays in the CPU cache.
    static PARTIAL: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

#[cfg(test)]
thread_local! {
    /// Lookups this thread answered past the cache: through an outline, and by a whole
    /// decode (the tests' view of which path ran).
    pub(super) static TRANSIENT: Cell<[u64; 2]> = const { Cell::new([0; 2]) };
}

/// Counts a lookup answered past the cache (`outlined`: through an outline), for tests.
#[inline]
fn count(outlined: bool) {
    #[cfg(test)]
    TRANSIENT.set({
        let mut c = TRANSIENT.get();
        c[usize::from(!outlined)] += 1;
        c
    });
    let _ = outlined;
}

impl<R: RandomAccess> TableReader<R> {
    /// Step 3 of a point lookup (`lookup.rs`): the block `route` leads to, which the cache
    /// does not hold, if the cache would not take it either: `Some` with the answer (`f`
    /// run on the first entry `>= seek_key`, through the block's outline when the record
    /// keeps one, else `search` on the whole block), `None` when the block is worth reading
    /// into the cache (the caller does that).
    pub(super) fn find_transient<T, F: FnOnce(&[u8], &[u8]) -> T>(
        &self,
        route: &Route<'_>,
        outline: Option<BlockOutline>,
        opts: ReadOptions,
        seek_key: &[u8],
        f: &mut Option<F>,
        search: impl FnOnce(BlockView<'_>, &mut Option<F>) -> Result<Option<T>>,
    ) -> Result<Option<Option<T>>> {
        let Some(cache) = &self.cache else {
            return Ok(None);
        };
        let handle = route.handle;
        // The block is read next whichever way the cache decides: its lines start coming
        // in while the cache decides (its own memory misses).
        if let Some(mem) = self.file.as_slice() {
            let (at, n) = (handle.offset as usize, handle.size as usize);
            if let Some(b) = at
                .checked_add(n + format::BLOCK_TRAILER_LEN)
                .and_then(|end| mem.get(at..end))
            {
                crate::util::os::prefetch_lines(b);
            }
        }
        let weight = outline.map_or(handle.size, |o| u64::from(o.len()));
        if opts.fill_cache && cache.would_admit(self.cache_id, handle.offset, weight) {
            return Ok(None);
        }
        // Used, though not cached: the admission policy counts it.
        cache.note_use(self.cache_id, handle.offset);
        let kind = BlockKind::Data;
        let stored = self.stored_block(handle, kind, self.verify_checksums)?;
        if let (Some(o), format::COMPRESSION_SNAPPY) = (outline, stored.compression) {
            match self.seek_outlined(&o, &stored.data, seek_key, route.tp, f) {
                Err(OutlineError::Stale) => {}
                Ok(r) => {
                    count(true);
                    return Ok(Some(r));
                }
                Err(OutlineError::Decompress(reason)) => {
                    return Err(Error::Decompress {
                        kind,
                        handle,
                        compression: stored.compression,
                        reason,
                    })
                }
                Err(OutlineError::BadEntry(entry_offset)) => {
                    return Err(Error::BadEntry {
                        kind,
                        handle,
                        entry_offset,
                    })
                }
            }
        }
        // Into one of the cache's recycled buffers, back in the pool when the block drops.
        let data = stored.decompress_in(Some(cache.pool()))?.data;
        let block = Block::new(data, kind, handle)?;
        let r = search(BlockView::bare(&block), f)?;
        count(false);
        if let Some(l) = route.lookup {
            if let Ok(mut slot) = l.slot.write() {
                if matches!(*slot, Slot::Gone(None)) {
                    *slot = Slot::Gone(self.outline_of(&block));
                }
            }
        }
        Ok(Some(r))
    }

    /// [`BlockOutline::seek`] over the snappy block `stored`, decoded into the thread's
    /// buffer: `f` run on the entry found.
    fn seek_outlined<T, F: FnOnce(&[u8], &[u8]) -> T>(
        &self,
        outline: &BlockOutline,
        stored: &[u8],
        seek_key: &[u8],
        tp: u64,
        f: &mut Option<F>,
    ) -> std::result::Result<Option<T>, OutlineError> {
        let mut out = PARTIAL.take();
        let mut key = SCRATCH.take();
        let r = SnappyPrefix::new(stored, &mut out, MAX_BLOCK_BYTES)
            .map_err(OutlineError::from)
            .and_then(|mut dec| {
                outline.seek(
                    &mut dec,
                    &mut out,
                    &*self.comparator,
                    seek_key,
                    tp,
                    &mut key,
                )
            })
            .map(|found| found.and_then(|v| f.take().map(|f| f(&key, &out[v]))));
        SCRATCH.set(key);
        PARTIAL.set(out);
        r
    }

    /// The outline of `block` (a data block of this table) for its lookup record, by the
    /// decoded index's key prefix; `None` without a decoded index.
    pub(super) fn outline_of(&self, block: &Block) -> Option<BlockOutline> {
        let p = self.parsed_index()?;
        block.outline(|k| p.key_prefix(k))
    }
}
