//! Refiltering: a table's filter rebuilt (another policy, other bits, or none) while its data
//! blocks are copied byte for byte, without decompressing or recompressing them.
//!
//! ```text
//! in:  | data blocks (+ trailers) | filter | metaindex | index | footer |
//! out: | the same data blocks     | new filter (raw) | new metaindex (raw) | the same index
//!      block, copied with its trailer | footer with the two new handles |
//! ```
//!
//! The data blocks keep their offsets, so the index (whose values are their handles) is
//! copied unchanged; only the filter, the metaindex and the footer are written anew. Keys are
//! read from each data block (checksums verified: a damaged table is refused, never
//! refiltered) and fed to the filter block builder exactly as LevelDB's `TableBuilder` does
//! (`StartBlock` at each block's offset, then after the last block). Refiltering a LevelDB
//! table with LevelDB's policy and its own bits gives back the same bytes.

use std::io::Write;
use std::sync::Arc;

use crate::block_builder::BlockBuilder;
use crate::error::{BlockKind, Error, Result};
use crate::filter::FilterPolicy;
use crate::filter_block::FilterBlockBuilder;
use crate::format::{BlockHandle, Footer, BLOCK_TRAILER_LEN, COMPRESSION_NONE, FILTER_META_PREFIX};
use crate::internal_key::InternalFilterPolicy;
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::table::TableReader;

/// What a refilter wrote.
#[derive(Debug, Clone, Default)]
pub struct RefilterStats {
    /// Data blocks copied.
    pub data_blocks: u64,
    /// Keys fed to the new filter.
    pub keys: u64,
    /// Bytes of the new filter block (0 without a filter).
    pub filter_bytes: u64,
    /// Bytes written in all.
    pub bytes: u64,
}

/// Writes `table` to `out` with its filter rebuilt by `policy` (`None`: no filter). For a
/// table of internal keys the filter is built over user keys, as LevelDB does.
///
/// # Errors
/// A damaged data block or index (the table is refused), data blocks that are not back to
/// back from offset 0, or the writer's error.
pub fn refilter<R: RandomAccess, W: Write>(
    table: &TableReader<R>,
    policy: Option<Arc<dyn FilterPolicy>>,
    out: &mut W,
) -> Result<RefilterStats> {
    let mut stats = RefilterStats::default();
    let policy = policy.map(|p| {
        if table.is_internal() {
            Arc::new(InternalFilterPolicy::new(p)) as Arc<dyn FilterPolicy>
        } else {
            p
        }
    });
    let mut filter = policy.clone().map(FilterBlockBuilder::new);
    let read = ReadOptions {
        verify_checksums: true,
        fill_cache: false,
    };
    let mut at = 0u64;
    let mut idx = table.index_block().iter(table.comparator());
    idx.seek_to_first();
    while idx.valid() {
        let mut v = idx.value();
        let handle = BlockHandle::decode_from(&mut v).ok_or(Error::BadIndexValue {
            kind: BlockKind::Index,
            handle: table.footer().index,
        })?;
        if handle.offset != at {
            return Err(Error::InvalidArgument(format!(
                "data block at offset {} does not follow the previous one (ends at {at}); \
                 such a table is not refiltered",
                handle.offset
            )));
        }
        if let Some(f) = filter.as_mut() {
            f.start_block(handle.offset);
            let block = table.read_data_block(handle, read)?;
            let mut it = block.iter(table.comparator());
            it.seek_to_first();
            while it.valid() {
                f.add_key(it.key());
                stats.keys += 1;
                it.next();
            }
            if let Some(e) = it.take_error() {
                return Err(e);
            }
        } else {
            // Still verify the block: a damaged table is refused, not copied.
            table.read_data_block(handle, read)?;
        }
        let n = handle.size as usize + BLOCK_TRAILER_LEN;
        let raw = table
            .source()
            .read_at(handle.offset, n)
            .map_err(|e| Error::io_at(e, BlockKind::Data, handle))?;
        if raw.len() != n {
            return Err(Error::TruncatedBlock {
                kind: BlockKind::Data,
                handle,
                got: raw.len(),
            });
        }
        out.write_all(&raw)?;
        at += n as u64;
        stats.data_blocks += 1;
        idx.next();
    }
    if let Some(e) = idx.take_error() {
        return Err(e);
    }
    let write_raw = |out: &mut W, block: &[u8], at: &mut u64| -> Result<BlockHandle> {
        let h = BlockHandle {
            offset: *at,
            size: block.len() as u64,
        };
        out.write_all(block)?;
        out.write_all(&crate::block_read::block_trailer(block, COMPRESSION_NONE))?;
        *at += (block.len() + BLOCK_TRAILER_LEN) as u64;
        Ok(h)
    };
    let mut meta = BlockBuilder::new(crate::format::DEFAULT_RESTART_INTERVAL);
    let mut meta_value = Vec::new();
    if let (Some(mut f), Some(p)) = (filter, policy) {
        f.start_block(at);
        let bytes = f.finish();
        stats.filter_bytes = bytes.len() as u64;
        let h = write_raw(out, &bytes, &mut at)?;
        h.encode_to(&mut meta_value);
        let mut key = FILTER_META_PREFIX.to_vec();
        key.extend_from_slice(p.name().as_bytes());
        meta.add(&key, &meta_value);
    }
    let metaindex = write_raw(out, meta.finish(), &mut at)?;
    // The index, copied with its trailer (its checksum covers only its bytes).
    let ih = table.footer().index;
    let n = ih.size as usize + BLOCK_TRAILER_LEN;
    let raw = table
        .source()
        .read_at(ih.offset, n)
        .map_err(|e| Error::io_at(e, BlockKind::Index, ih))?;
    if raw.len() != n {
        return Err(Error::TruncatedBlock {
            kind: BlockKind::Index,
            handle: ih,
            got: raw.len(),
        });
    }
    out.write_all(&raw)?;
    let index = BlockHandle {
        offset: at,
        size: ih.size,
    };
    at += n as u64;
    let footer = Footer { metaindex, index }.encode();
    out.write_all(&footer)?;
    at += footer.len() as u64;
    stats.bytes = at;
    Ok(stats)
}
