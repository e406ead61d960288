//! The metaindex as read at open: its entries, bounded, and RocksDB's names in it.

use crate::block::stored::{read_block, ReadBlockOptions};
use crate::block::Block;
use crate::cursor::Cursor;
use crate::error::{BlockKind, Error, Result, RocksDbFormat};
use crate::format::BlockHandle;
use crate::io::RandomAccess;
use crate::util::comparator::BytewiseComparator;

pub(super) fn read_metaindex<R: RandomAccess>(
    file: &R,
    h: BlockHandle,
    data_end: u64,
    rb: ReadBlockOptions,
) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
    let contents = read_block(file, h, BlockKind::Metaindex, data_end, rb)?;
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
    it.status()?;
    Ok(out)
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
            format: RocksDbFormat::LegacyBlockBased,
            format_version: Some(0),
        });
    }
    Ok(())
}
