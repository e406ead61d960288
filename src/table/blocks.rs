//! Reading a table's blocks: as stored (past the cache), and data blocks through the block
//! cache (with readahead for scans, search aids for point lookups).

use std::sync::Arc;

use bytes::Bytes;

use super::readahead::Readahead;
use super::reader::TableReader;
use super::records::Install;
use crate::block::stored::{BlockContents, ReadBlockOptions, StoredBlock};
use crate::block::Block;
use crate::cache::CachedBlock;
use crate::error::{BlockKind, Error, Result};
use crate::format::{self, BlockHandle};
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::search::block_dir::BlockDir;

impl<R: RandomAccess> TableReader<R> {
    /// The block at `handle` as stored (compressed or not), read past the cache, its
    /// trailer checked, and its checksum if `verify`.
    ///
    /// # Errors
    /// As [`StoredBlock::read`].
    pub(crate) fn stored_block(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        verify: bool,
    ) -> Result<StoredBlock> {
        let rb = ReadBlockOptions {
            verify_checksum: verify,
            profile: self.profile,
        };
        StoredBlock::read(&self.file, handle, kind, self.data_end(), rb)
    }

    /// Reads any block of the table (data, index, metaindex or filter) past the block
    /// cache: its handle checked against the file, its checksum verified if the reader
    /// verifies checksums ([`OpenOptions::verify_checksums`]), decompressed.
    ///
    /// # Errors
    /// A handle outside the file, an I/O error, a checksum mismatch, a block that does
    /// not decompress; each error names the block.
    ///
    /// [`OpenOptions::verify_checksums`]: crate::OpenOptions::verify_checksums
    pub fn read_block(&self, handle: BlockHandle, kind: BlockKind) -> Result<BlockContents> {
        self.stored_block(handle, kind, self.verify_checksums)?
            .decompress()
    }

    /// The data block at `handle`, from the cache or the file. Only blocks whose checksum
    /// was verified are put into the cache, so a cached block is always a verified block.
    ///
    /// # Errors
    /// As [`read_block`](Self::read_block) and [`Block::new`].
    pub fn read_data_block(&self, handle: BlockHandle, opts: &ReadOptions) -> Result<Block> {
        self.read_data_block_ra(handle, *opts, None)
    }

    /// [`read_data_block`](Self::read_data_block), serving file reads from `readahead` (and
    /// refilling it with one large read) when given: a forward scan then costs one read per
    /// window instead of one per block.
    pub(crate) fn read_data_block_ra(
        &self,
        handle: BlockHandle,
        opts: ReadOptions,
        readahead: Option<&mut Readahead>,
    ) -> Result<Block> {
        Ok(self
            .load_data_block(handle, opts, readahead, false, true, None)?
            .block
            .clone())
    }

    /// The data block at `handle` as the cache holds it (with its search directory when it
    /// has one), from the cache or the file. Blocks read from a zero-copy source are used
    /// where they are, never through readahead. `for_lookup`: a point lookup reads the
    /// block, so a directory is worth building if the block is cached (scans do not search).
    /// `probe_cache`: false when the caller knows the cache does not hold the block.
    /// `install` runs on the entry while the cache holds it (found there or admitted),
    /// under the cache's lock.
    pub(super) fn load_data_block(
        &self,
        handle: BlockHandle,
        opts: ReadOptions,
        readahead: Option<&mut Readahead>,
        for_lookup: bool,
        probe_cache: bool,
        install: Option<&Install<'_>>,
    ) -> Result<Arc<CachedBlock>> {
        let install = |e: &Arc<CachedBlock>| {
            if let Some(f) = install {
                if e.block.handle() == handle {
                    f(e);
                }
            }
        };
        if let Some(cache) = &self.cache {
            if !probe_cache {
                cache.note_use(self.cache_id, handle.offset);
            } else if let Some(e) = cache.get_entry_with(self.cache_id, handle.offset, install) {
                if e.block.handle() == handle {
                    return Ok(e);
                }
            }
        }
        let zero_copy = self.file.is_zero_copy();
        let mut readahead = if zero_copy { None } else { readahead };
        // A block headed for the cache is verified even when this read does not ask for it:
        // the cache serves later readers that may (otherwise, with checksums off, nothing
        // would be cached at all and every lookup would read and decompress its block). If
        // that check fails, the read goes on unverified, as asked, and nothing is cached.
        let to_cache = opts.fill_cache && self.cache.is_some();
        // Blocks headed for the cache decompress into buffers of blocks it evicted.
        let pool = match &self.cache {
            Some(c) if opts.fill_cache => Some(c.pool()),
            _ => None,
        };
        let mut read = |verify: bool| -> Result<BlockContents> {
            let stored = match readahead.as_deref_mut() {
                None => self.stored_block(handle, BlockKind::Data, verify)?,
                Some(ra) => {
                    let raw = ra.fetch(&self.file, handle, self.data_end())?;
                    let rb = ReadBlockOptions {
                        verify_checksum: verify,
                        profile: self.profile,
                    };
                    let mut s = StoredBlock::from_raw(raw, handle, BlockKind::Data, rb)?;
                    if s.compression == format::COMPRESSION_NONE && to_cache {
                        // A slice of the window would keep the whole window alive in the
                        // cache.
                        s.data = Bytes::copy_from_slice(&s.data);
                    }
                    s
                }
            };
            stored.decompress_in(pool)
        };
        let verify = self.verify_checksums;
        let contents = match read(verify || to_cache) {
            Err(Error::ChecksumMismatch { .. }) if !verify => read(false)?,
            r => r?,
        };
        let owns_bytes = !(zero_copy && contents.compression == format::COMPRESSION_NONE);
        let block = Block::new(contents.data, BlockKind::Data, handle)?;
        match &self.cache {
            Some(cache) if opts.fill_cache && contents.checksum_verified => {
                // The directory orders keys bytewise: plain tables with a bytewise comparator.
                // It is built for blocks read in place from a map or buffer, whose entry
                // costs nothing else. For a block the cache holds a copy of, its bytes
                // would be charged next to the block's, and a full cache then holds ~8%
                // fewer blocks: measured, the extra decompressions cost more than the
                // directory saves (docs/performance.md).
                let dir =
                    (for_lookup && !owns_bytes && !self.internal && self.comparator.is_bytewise())
                        .then(|| BlockDir::build(&block))
                        .flatten();
                // Restart hints for owned blocks a lookup brings in (56 bytes of bookkeeping
                // next to ~4 KiB; a scan's blocks go without).
                let hints = (for_lookup && owns_bytes)
                    .then(|| self.parsed_index())
                    .flatten()
                    .and_then(|p| block.restart_hints(|k| p.key_prefix(k)));
                let e = Arc::new(CachedBlock::new(block, dir, owns_bytes).with_hints(hints));
                cache.insert_entry_with(self.cache_id, handle.offset, e.clone(), install);
                Ok(e)
            }
            _ => Ok(Arc::new(CachedBlock::new(block, None, owns_bytes))),
        }
    }
}
