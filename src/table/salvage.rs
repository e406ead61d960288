//! Salvage: the entries that can still be read from a damaged table.
//!
//! Two ways in, for two kinds of damage:
//!
//! - [`salvage_table`]: the table opens (footer and index intact) but some data blocks are
//!   damaged. Every block the index names is read; a block that fails (checksum,
//!   decompression, a bad entry) is reported with its offset and reason and skipped, and the
//!   entries of the other blocks are returned. A table's reader stops at the first bad block
//!   instead; this goes on.
//! - [`salvage_bytes`]: the footer or the index is destroyed (a file cut short, an
//!   overwritten tail), so nothing says where blocks are. Data blocks are laid out back to
//!   back from offset 0, each followed by its 5-byte trailer:
//!
//!   ```text
//!   offset 0                                   s + n        s + n + 5
//!   | block 0 (n bytes) | type (1) | crc (4) | block 1 ... | ...
//!   ```
//!
//!   so each block is found by extending a CRC32C over the bytes from the block's start
//!   until the byte after it is a known compression id and the next four bytes are the
//!   masked CRC of everything before them. The block found must also decompress and parse
//!   as a block. After a damaged stretch, later starts are tried within a bounded window (at
//!   most [`RESYNC_WINDOW`] bytes of starts, each for blocks up to twice the largest found so
//!   far, within a total work budget), and what is given up is reported.
//!
//! In both ways, every entry comes from a block whose checksum matched (when checksums are
//! verified): salvage never turns damaged bytes into data. Blocks that are not data blocks
//! (the filter block, the metaindex, the index) are recognised and left out.

use bytes::Bytes;

use crate::block::stored::{ReadBlockOptions, StoredBlock};
use crate::block::Block;
use crate::compress::CompressionProfile;
use crate::cursor::Cursor;
use crate::error::{BlockKind, Error};
use crate::format::{self, BlockHandle, BLOCK_TRAILER_LEN};
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::table::TableReader;
use crate::util::comparator::{BytewiseComparator, Comparator};
use crate::util::crc32c;

/// How far past a damaged stretch [`salvage_bytes`] tries block starts (bytes).
pub const RESYNC_WINDOW: usize = 1 << 20;
/// The largest stored block [`salvage_bytes`] looks for (bytes, without the trailer).
pub const MAX_FOUND_BLOCK: usize = 4 << 20;

/// One data block's salvaged entries, or one damaged stretch.
#[derive(Debug)]
pub enum Salvaged {
    /// The entries of one data block (all of them, or those before a bad entry, which then
    /// follows as `Damaged`).
    Entries {
        /// Where the block is.
        handle: BlockHandle,
        /// Its entries, in block order.
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        /// Each entry's byte offset in the decompressed block (parallel to `entries`).
        offsets: Vec<usize>,
    },
    /// A block or stretch that could not be read; `error` says what and where.
    Damaged {
        /// Offset of the damaged block or stretch in the file.
        offset: u64,
        /// Length of the damaged stretch, when known (the block's stored size plus trailer).
        len: Option<u64>,
        /// What is wrong.
        error: Error,
    },
}

/// Reads every data block the index of `table` names, skipping damaged ones.
///
/// Blocks are returned in index order. An index entry that is not a block handle ends the
/// walk with a `Damaged` item (the index itself is damaged: use [`salvage_bytes`] on the
/// file's bytes for the rest).
pub fn salvage_table<R: RandomAccess>(table: &TableReader<R>, opts: ReadOptions) -> Vec<Salvaged> {
    let mut out = Vec::new();
    let cmp = table.comparator();
    let mut idx = table.index_block().iter(cmp);
    idx.seek_to_first();
    while idx.valid() {
        let mut v = idx.value();
        let handle = match BlockHandle::decode_from(&mut v) {
            Some(h) => h,
            None => {
                let ih = table.footer().index;
                out.push(Salvaged::Damaged {
                    offset: ih.offset,
                    len: None,
                    error: Error::BadIndexValue {
                        kind: BlockKind::Index,
                        handle: ih,
                    },
                });
                return out;
            }
        };
        match table.read_data_block(handle, &opts) {
            Ok(block) => push_block(&mut out, &block, handle, cmp),
            Err(error) => out.push(Salvaged::Damaged {
                offset: handle.offset,
                len: Some(handle.size + BLOCK_TRAILER_LEN as u64),
                error,
            }),
        }
        idx.next();
    }
    if let Err(error) = idx.status() {
        let ih = table.footer().index;
        out.push(Salvaged::Damaged {
            offset: ih.offset,
            len: None,
            error,
        });
    }
    out
}

/// Appends the entries of `block` (and its bad entry, if any).
fn push_block(out: &mut Vec<Salvaged>, block: &Block, handle: BlockHandle, cmp: &dyn Comparator) {
    let mut it = block.iter(cmp);
    it.seek_to_first();
    let mut entries = Vec::new();
    let mut offsets = Vec::new();
    while it.valid() {
        entries.push((it.key().to_vec(), it.value().to_vec()));
        offsets.push(it.entry_offset());
        it.next();
    }
    out.push(Salvaged::Entries {
        handle,
        entries,
        offsets,
    });
    if let Err(error) = it.status() {
        out.push(Salvaged::Damaged {
            offset: handle.offset,
            len: Some(handle.size + BLOCK_TRAILER_LEN as u64),
            error,
        });
    }
}

/// A block found by its checksum in [`salvage_bytes`].
struct Found {
    handle: BlockHandle,
    /// The uncompressed contents.
    data: Bytes,
    /// The contents parsed as a block (not for a filter block, which is not one).
    block: Option<Block>,
}

/// Finds the blocks of a table whose footer or index is lost, by their checksums, and
/// returns the entries of its data blocks in file order, with the damaged stretches.
///
/// `profile` says how compression id 2 is read (as [`crate::OpenOptions`]).
pub fn salvage_bytes(file: &[u8], profile: CompressionProfile) -> Vec<Salvaged> {
    let rb = ReadBlockOptions {
        verify_checksum: true,
        profile,
    };
    // Work budget for resynchronising after damage, in bytes run through the CRC.
    let mut budget: u64 = 64 * file.len() as u64 + (1 << 20);
    let mut found: Vec<Found> = Vec::new();
    let mut damaged: Vec<(u64, u64, &'static str)> = Vec::new();
    let mut at = 0usize;
    let mut max_seen = 0usize;
    while at + BLOCK_TRAILER_LEN < file.len() {
        if let Some(f) = block_at(file, at, MAX_FOUND_BLOCK, rb, &mut budget) {
            max_seen = max_seen.max(f.handle.size as usize);
            at = (f.handle.offset + f.handle.size) as usize + BLOCK_TRAILER_LEN;
            found.push(f);
            continue;
        }
        // Damage at `at`: try the following starts, each for blocks up to twice the
        // largest seen (blocks of one table are of similar size). (A start within the
        // first 5 bytes of the file cannot follow a trailer and is not tried.)
        let max_len = (2 * max_seen).clamp(8 << 10, MAX_FOUND_BLOCK);
        let limit = (at + RESYNC_WINDOW).min(file.len());
        let mut next = None;
        for s in at + 1..limit {
            if budget == 0 {
                break;
            }
            // A block starts right after the previous block's trailer, whose first byte is
            // a compression id: only such positions are tried (about 2 in 100).
            if s.checked_sub(BLOCK_TRAILER_LEN)
                .is_none_or(|t| file[t] > format::COMPRESSION_MOJANG_RAW_DEFLATE)
            {
                continue;
            }
            if let Some(f) = block_at(file, s, max_len, rb, &mut budget) {
                next = Some(f);
                break;
            }
        }
        match next {
            Some(f) => {
                damaged.push((
                    at as u64,
                    f.handle.offset - at as u64,
                    "no block checks out here",
                ));
                at = (f.handle.offset + f.handle.size) as usize + BLOCK_TRAILER_LEN;
                found.push(f);
            }
            None => {
                let why = if budget == 0 {
                    "the salvage work budget is spent"
                } else if limit < file.len() {
                    "nothing within the resync window after it"
                } else {
                    "nothing from here to the end of the file (a lost footer or tail)"
                };
                damaged.push((at as u64, (file.len() - at) as u64, why));
                break;
            }
        }
    }
    let non_data = non_data_blocks(&found);
    let mut out = Vec::new();
    let cmp = BytewiseComparator;
    let mut d = damaged.into_iter().peekable();
    for (i, f) in found.iter().enumerate() {
        while let Some(&(offset, len, reason)) = d.peek() {
            if offset > f.handle.offset {
                break;
            }
            out.push(damaged_item(offset, len, reason));
            d.next();
        }
        if let Some(block) = f.block.as_ref().filter(|_| !non_data.contains(&i)) {
            push_block(&mut out, block, f.handle, &cmp);
        }
    }
    out.extend(d.map(|(offset, len, reason)| damaged_item(offset, len, reason)));
    out
}

fn damaged_item(offset: u64, len: u64, reason: &'static str) -> Salvaged {
    Salvaged::Damaged {
        offset,
        len: Some(len),
        error: Error::NoBlockFound {
            offset,
            len,
            reason,
        },
    }
}

/// The block starting at `s`, if a trailer that checks out follows it within `max_len`
/// bytes and the block decompresses and parses.
fn block_at(
    file: &[u8],
    s: usize,
    max_len: usize,
    rb: ReadBlockOptions,
    budget: &mut u64,
) -> Option<Found> {
    let max_end = file.len().saturating_sub(BLOCK_TRAILER_LEN);
    let last = max_end.min(s.saturating_add(max_len));
    if s >= last || *budget == 0 {
        return None;
    }
    // Only positions holding a compression id can start a trailer; the CRC is extended over
    // the bytes between them in one call each (`crc` covers `file[s..done]`).
    let scan = (last - s) as u64;
    let (mut crc, mut done) = (0u32, s);
    let mut found = None;
    for (e, &ty) in file.iter().enumerate().take(last).skip(s) {
        if ty > format::COMPRESSION_MOJANG_RAW_DEFLATE {
            continue;
        }
        if (e - s) as u64 >= *budget {
            break;
        }
        crc = crc32c::extend(crc, &file[done..e]);
        done = e;
        let want = crc32c::mask(crc32c::extend(crc, &[ty]));
        // ok: e < max_end = file.len() - 5
        let stored = u32::from_le_bytes([file[e + 1], file[e + 2], file[e + 3], file[e + 4]]);
        if want != stored {
            continue;
        }
        let handle = BlockHandle {
            offset: s as u64,
            size: (e - s) as u64,
        };
        let raw = Bytes::copy_from_slice(&file[s..e + BLOCK_TRAILER_LEN]);
        if let Ok(c) = StoredBlock::from_raw(raw, handle, BlockKind::Data, rb)
            .and_then(StoredBlock::decompress)
        {
            let block = Block::new(c.data.clone(), BlockKind::Data, handle).ok();
            if block.is_some() || looks_like_filter_block(&c.data) {
                found = Some(Found {
                    handle,
                    data: c.data,
                    block,
                });
                break;
            }
        }
    }
    let used = found.as_ref().map_or(scan, |f| f.handle.size);
    *budget = budget.saturating_sub(used.max(1));
    found
}

/// Indexes (into `found`) of the blocks that are not data blocks: an index (every value
/// exactly one block handle, the handles back to back as data blocks are written), a
/// metaindex (keys `filter.*` with handle values) and the filter block it names, or a block
/// laid out as a filter block.
fn non_data_blocks(found: &[Found]) -> Vec<usize> {
    let cmp = BytewiseComparator;
    let mut out = Vec::new();
    for (i, f) in found.iter().enumerate() {
        let Some(block) = &f.block else {
            out.push(i); // a filter block
            continue;
        };
        let mut it = block.iter(&cmp);
        it.seek_to_first();
        let mut handles: Vec<BlockHandle> = Vec::new();
        let (mut n, mut filter_keys) = (0usize, 0usize);
        while it.valid() {
            n += 1;
            let mut v = it.value();
            match BlockHandle::decode_from(&mut v) {
                Some(h) if v.is_empty() => handles.push(h),
                _ => {}
            }
            if it.key().starts_with(format::FILTER_META_PREFIX) {
                filter_keys += 1;
            }
            it.next();
        }
        let all_handles = n > 0 && handles.len() == n && it.status().is_ok();
        let chained = handles
            .windows(2)
            .all(|w| w[0].end_with_trailer() == Some(w[1].offset));
        let index = all_handles && chained && handles.first().is_some_and(|h| h.offset == 0);
        let metaindex = all_handles && filter_keys > 0;
        if index || metaindex || looks_like_filter_block(&f.data) {
            out.push(i);
        }
        if metaindex {
            // The filter block it names is not data either.
            for h in &handles {
                if let Some(j) = found.iter().position(|g| g.handle.offset == h.offset) {
                    out.push(j);
                }
            }
        }
    }
    out
}

/// A filter block's layout: `[filters][u32 offsets...][u32 array start][base_lg]`, offsets
/// ascending within the filters, base_lg a sane shift. A data block ends with its restart
/// count, whose high byte is 0 for any block under 16 M restarts, so base_lg 11 (LevelDB's)
/// never matches one.
fn looks_like_filter_block(d: &[u8]) -> bool {
    let n = d.len();
    if n < 5 {
        return false;
    }
    let base_lg = d[n - 1];
    let array_start = u32::from_le_bytes([d[n - 5], d[n - 4], d[n - 3], d[n - 2]]) as usize;
    if !(1..=30).contains(&base_lg) || array_start > n - 5 || (n - 5 - array_start) % 4 != 0 {
        return false;
    }
    let mut prev = 0usize;
    d[array_start..n - 5].chunks_exact(4).all(|c| {
        let o = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize;
        let ok = o >= prev && o <= array_start;
        prev = o;
        ok
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_block_layout_is_recognised() {
        // Two filters of 3 and 2 bytes, then offsets 0 and 3, array start 5, base_lg 11.
        let mut d = vec![1, 2, 3, 4, 5];
        d.extend_from_slice(&0u32.to_le_bytes());
        d.extend_from_slice(&3u32.to_le_bytes());
        d.extend_from_slice(&5u32.to_le_bytes());
        d.push(11);
        assert!(looks_like_filter_block(&d));
        // A data block's tail (restart count 1): not a filter block.
        let mut data = vec![0, 1, 1, b'k', b'v'];
        data.extend_from_slice(&0u32.to_le_bytes());
        data.extend_from_slice(&1u32.to_le_bytes());
        assert!(!looks_like_filter_block(&data));
    }

    #[test]
    fn nothing_is_found_in_noise_and_nothing_panics() {
        let noise: Vec<u8> = (0..5000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        let out = salvage_bytes(&noise, CompressionProfile::default());
        assert!(out.iter().all(|s| matches!(s, Salvaged::Damaged { .. })));
        for n in 0..8 {
            let _ = salvage_bytes(&noise[..n], CompressionProfile::default());
        }
    }
}
