//! Point lookups in blocks the cache will not keep: it let the block go or turned it away,
//! and would turn it away again now (or the read asks not to fill the cache). Such a block
//! is read for the one lookup into one of the cache's recycled buffers and dropped, never
//! offered to the cache (which would only turn it away).

use super::reader::TableReader;
use super::records::{BlockView, Route, Slot};
use crate::block::Block;
use crate::error::{BlockKind, Result};
use crate::format;
use crate::io::RandomAccess;
use crate::options::ReadOptions;

#[cfg(test)]
thread_local! {
    /// Lookups this thread answered past the cache (the tests' view of which path ran).
    pub(super) static TRANSIENT: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts a lookup answered past the cache, for tests.
#[inline]
fn count() {
    #[cfg(test)]
    TRANSIENT.set(TRANSIENT.get() + 1);
}

impl<R: RandomAccess> TableReader<R> {
    /// Step 3 of a point lookup (`lookup.rs`): the block `route` leads to, which the cache
    /// does not hold, if the cache would not take it either: `Some` with the answer
    /// (`search` on the block), `None` when the block is worth reading into the cache (the
    /// caller does that).
    pub(super) fn find_transient<T, F: FnOnce(&[u8], &[u8]) -> T>(
        &self,
        route: &Route<'_>,
        len: Option<u32>,
        opts: ReadOptions,
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
        let weight = len.map_or(handle.size, u64::from);
        if opts.fill_cache && cache.would_admit(self.cache_id, handle.offset, weight) {
            return Ok(None);
        }
        // Used, though not cached: the admission policy counts it.
        cache.note_use(self.cache_id, handle.offset);
        let kind = BlockKind::Data;
        let stored = self.stored_block(handle, kind, self.verify_checksums)?;
        // Into one of the cache's recycled buffers, back in the pool when the block drops.
        let data = stored.decompress_in(Some(cache.pool()))?.data;
        let block = Block::new(data, kind, handle)?;
        let r = search(BlockView::bare(&block), f)?;
        count();
        if let Some(l) = route.lookup {
            if let Ok(mut slot) = l.slot.write() {
                if matches!(*slot, Slot::Gone(None)) {
                    *slot = Slot::Gone(u32::try_from(block.size()).ok());
                }
            }
        }
        Ok(Some(r))
    }
}
