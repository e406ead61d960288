//! The metaindex as read at open, and readahead for scans.

use super::*;

pub(super) fn read_metaindex<R: RandomAccess>(
    file: &R,
    h: BlockHandle,
    data_end: u64,
    rb: ReadBlockOptions,
) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
    let contents = stored_block::read_block(file, h, BlockKind::Metaindex, data_end, rb)?;
    let block = Block::new(contents.data, BlockKind::Metaindex, h)?;
    let mut it = block.iter(&BytewiseComparator);
    let mut out = Vec::new();
    let mut key_bytes = 0usize;
    it.seek_to_first();
    while it.valid() {
        let mut v = it.value();
        let handle = BlockHandle::decode_from(&mut v).ok_or(Error::BadIndexValue {
            kind: BlockKind::Metaindex,
            handle: h,
        })?;
        key_bytes += it.key().len() + LIST_ENTRY_BYTES;
        if key_bytes > block.size().saturating_add(1 << 16) {
            return Err(list_too_long(BlockKind::Metaindex, h));
        }
        out.push((it.key().to_vec(), handle));
        it.next();
    }
    match it.take_error() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// What one entry of a list copied out of an index or metaindex block costs besides its key.
///
/// Such lists are bounded: the index list (`data_block_handles`) by 8x the index block plus
/// 64 KiB, the metaindex list by the block plus 64 KiB. A real index entry takes at least
/// its key plus 5 bytes in the block (LevelDB-family writers store index keys whole), so its
/// list entry costs at most 8x that; a real metaindex holds a few short names. But entries
/// that share one long key cost 5 bytes each in the block and the whole key each when
/// copied out: without a bound a hostile block of `b` bytes could cost `b * b / 5`.
pub(super) const LIST_ENTRY_BYTES: usize = std::mem::size_of::<(Vec<u8>, BlockHandle)>();

pub(super) fn list_too_long(kind: BlockKind, handle: BlockHandle) -> Error {
    Error::BadBlockContents {
        kind,
        handle,
        reason: "entries too many or keys too long to list",
    }
}

/// A RocksDB block-based table with the legacy (LevelDB) magic is recognised by the names
/// of its meta blocks.
pub(super) fn check_not_rocksdb(metaindex: &[(Vec<u8>, BlockHandle)]) -> Result<()> {
    let rocks = metaindex.iter().any(|(k, _)| {
        k.starts_with(b"rocksdb.")
            || k.starts_with(b"filter.rocksdb.")
            || k.starts_with(b"fullfilter.")
            || k.starts_with(b"partitionedfilter.")
    });
    if rocks {
        return Err(Error::RocksDb {
            format: crate::error::RocksDbFormat::LegacyBlockBased,
            format_version: Some(0),
        });
    }
    Ok(())
}

/// Bytes read ahead of a forward scan: one large read serves many consecutive blocks.
#[derive(Default)]
pub(crate) struct Readahead {
    start: u64,
    buf: Bytes,
}

/// Size of one readahead read.
pub(super) const READAHEAD_BYTES: u64 = 256 * 1024;

impl Readahead {
    /// The stored block plus trailer at `handle`, from the window or after refilling it.
    pub(crate) fn fetch<R: RandomAccess>(
        &mut self,
        file: &R,
        handle: BlockHandle,
        data_end: u64,
    ) -> Result<Bytes> {
        crate::format::footer::check_handle(handle, BlockKind::Data, data_end)?;
        // ok: check_handle proved offset + size + 5 <= data_end.
        let n = handle.size + format::BLOCK_TRAILER_LEN as u64;
        let inside =
            handle.offset >= self.start && handle.offset + n <= self.start + self.buf.len() as u64;
        if !inside {
            let len = n.max(READAHEAD_BYTES).min(data_end - handle.offset);
            self.buf = file
                .read_at(handle.offset, len as usize)
                .map_err(|e| Error::io_at(e, BlockKind::Data, handle))?;
            self.start = handle.offset;
            if (self.buf.len() as u64) < n {
                return Err(Error::TruncatedBlock {
                    kind: BlockKind::Data,
                    handle,
                    got: self.buf.len(),
                });
            }
        }
        let at = (handle.offset - self.start) as usize;
        Ok(self.buf.slice(at..at + n as usize))
    }
}
