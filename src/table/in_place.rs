//! Step 2 of a point lookup (`lookup.rs`): uncompressed data blocks of a zero-copy source (a
//! memory map or a buffer), read where they are and verified once, searched through their
//! search directories, kept by index position for the table's lifetime.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::OnceLock;

use super::reader::TableReader;
use super::records::{InPlace, InPlaceLookup, Route};
use crate::block::Block;
use crate::error::{BlockKind, Error, Result};
use crate::format;
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::search::block_dir::BlockDir;

impl<R: RandomAccess> TableReader<R> {
    /// Step 2 of a point lookup (`lookup.rs`): `f` on the entry equal to `key` in the data
    /// block `route` leads to, read in place from a zero-copy source (see `in_place`), found
    /// through the block's search directory. Only uncompressed blocks are read in place,
    /// and only with checksums verified and cache filling on (so that what is kept was
    /// verified).
    pub(super) fn find_in_place<T, F: FnOnce(&[u8], &[u8]) -> T>(
        &self,
        route: &Route<'_>,
        opts: ReadOptions,
        key: &[u8],
        f: &mut Option<F>,
    ) -> Result<InPlaceLookup<T>> {
        let handle = route.handle;
        if route
            .lookup
            .is_some_and(|l| l.not_in_place.load(AtomicOrdering::Relaxed))
        {
            return Ok(InPlaceLookup::NotHere);
        }
        let Some(slot) = route.pos.and_then(|p| self.in_place_slot(p)) else {
            return Ok(InPlaceLookup::NotHere);
        };
        let Some(mem) = self.file.as_slice() else {
            return Ok(InPlaceLookup::NotHere);
        };
        if !self.verify_checksums || !opts.fill_cache {
            return Ok(InPlaceLookup::NotHere);
        }
        let ip = match slot.get() {
            Some(ip) => ip,
            None => {
                // The block's compression byte, read where it is: a compressed block is
                // searched through the block cache (it must be decompressed anyway).
                let type_at = handle
                    .offset
                    .checked_add(handle.size)
                    .and_then(|t| usize::try_from(t).ok());
                if type_at.and_then(|t| mem.get(t)) != Some(&format::COMPRESSION_NONE) {
                    slot.get_or_init(|| InPlace { handle, dir: None });
                    self.not_in_place(route, slot);
                    return Ok(InPlaceLookup::NotHere);
                }
                let c = self
                    .stored_block(handle, BlockKind::Data, true)?
                    .decompress()?;
                let block = Block::new(c.data, BlockKind::Data, handle)?;
                let dir = BlockDir::build(&block);
                let ip = slot.get_or_init(|| InPlace { handle, dir });
                if ip.dir.is_none() {
                    return Ok(InPlaceLookup::Read(block));
                }
                ip
            }
        };
        let (Some(dir), true) = (&ip.dir, ip.handle == handle) else {
            self.not_in_place(route, slot);
            return Ok(InPlaceLookup::NotHere);
        };
        let Some(i) = dir.find_exact(key) else {
            return Ok(InPlaceLookup::Done(None));
        };
        // The block was read (and verified) from these bytes, so its range is inside them.
        let start = usize::try_from(handle.offset).unwrap_or(usize::MAX);
        let block = start
            .checked_add(usize::try_from(handle.size).unwrap_or(usize::MAX))
            .and_then(|end| mem.get(start..end));
        let p = dir.entry_offset(i);
        match block.and_then(|b| crate::block::value_range_in(b, p).map(|r| &b[r])) {
            Some(v) => Ok(InPlaceLookup::Done(f.take().map(|f| f(key, v)))),
            None => Err(Error::BadEntry {
                kind: BlockKind::Data,
                handle,
                entry_offset: p,
            }),
        }
    }

    /// Marks the record of `route`'s block as not kept in place when its `in_place` slot was
    /// filled without a directory: lookups then skip the slot (another cache line).
    fn not_in_place(&self, route: &Route<'_>, slot: &OnceLock<InPlace>) {
        if let (Some(l), Some(ip)) = (route.lookup, slot.get()) {
            if ip.dir.is_none() && ip.handle == route.handle {
                l.not_in_place.store(true, AtomicOrdering::Relaxed);
            }
        }
    }

    /// The slot of the data block at index position `pos` in `in_place`, when this table
    /// keeps blocks in place (zero-copy source, block cache, decoded index).
    #[inline]
    pub(super) fn in_place_slot(&self, pos: usize) -> Option<&OnceLock<InPlace>> {
        if self.cache.is_none() || self.file.as_slice().is_none() {
            return None;
        }
        let n = self.parsed_index()?.len();
        self.in_place
            .get_or_init(|| (0..n).map(|_| OnceLock::new()).collect())
            .get(pos)
    }
}
