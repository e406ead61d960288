//! This project's reader as the kit's oracle: the expected entries of a table or directory,
//! a table's `verify`, the compressions its blocks use, and where a byte of it lies.

use std::path::Path;
use std::sync::Arc;

use leveldb_table::db::reader::{DbOptions, KnownOrder};
use leveldb_table::raw::compress::name as compression_name;
use leveldb_table::raw::format::{BlockHandle, BLOCK_TRAILER_LEN, FOOTER_LEN};
use leveldb_table::table::KeyFormat;
use leveldb_table::{Comparator, Db, OpenOptions, ReadOptions, TableReader};

use crate::protocol::Entry;

/// A table's blocks, in file order: what each is and its handle.
pub(crate) struct Layout {
    /// `("data", handle)` per data block, then the filter, metaindex and index blocks.
    pub blocks: Vec<(&'static str, BlockHandle)>,
    /// The file's length.
    pub len: u64,
}

fn open(bytes: &[u8]) -> Result<TableReader<&[u8]>, String> {
    // Keys as stored: plain, whatever they look like (an internal-key table is read the
    // same way; only lookups would differ).
    let opts = OpenOptions::default().keys(KeyFormat::Plain);
    TableReader::open(bytes, opts).map_err(|e| e.to_string())
}

/// Every entry of a table, keys as stored, checksums verified.
pub(crate) fn table_entries(bytes: &[u8]) -> Result<Vec<Entry>, String> {
    let table = open(bytes)?;
    let read = ReadOptions::default().fill_cache(false);
    table
        .iter(&read)
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

fn db_options(comparators: &[Arc<dyn Comparator>]) -> DbOptions {
    DbOptions::default().comparators(comparators.iter().cloned().map(KnownOrder::new).collect())
}

/// The live view of a directory, checksums verified, in its MANIFEST's order (the
/// bytewise comparator, or one of `comparators` by name).
pub(crate) fn db_entries(
    dir: &Path,
    comparators: &[Arc<dyn Comparator>],
) -> Result<Vec<Entry>, String> {
    let db = Db::open(dir, db_options(comparators)).map_err(|e| e.to_string())?;
    db.iter(&ReadOptions::default().fill_cache(false))
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())
}

/// The name of the comparator a directory's MANIFEST names.
pub(crate) fn db_comparator(
    dir: &Path,
    comparators: &[Arc<dyn Comparator>],
) -> Result<String, String> {
    let db = Db::open(dir, db_options(comparators)).map_err(|e| e.to_string())?;
    Ok(db.comparator_name().to_string())
}

/// `verify`: every block's checksum, every entry, key order, filters. The first problem.
pub(crate) fn verify_table(bytes: &[u8]) -> Result<(), String> {
    let table = open(bytes)?;
    let report = table.verify();
    match report.problems.first() {
        None if report.is_ok() => Ok(()),
        first => Err(format!(
            "verify: {} problem(s), the first: {}",
            report.problem_count,
            first.map_or_else(|| "not kept".to_string(), ToString::to_string)
        )),
    }
}

/// The table's blocks in file order.
pub(crate) fn layout(bytes: &[u8]) -> Result<Layout, String> {
    let table = open(bytes)?;
    let mut blocks: Vec<(&'static str, BlockHandle)> = table
        .data_block_handles()
        .map_err(|e| e.to_string())?
        .into_iter()
        .map(|(_, h)| ("data", h))
        .collect();
    if let Some(h) = table.filter_handle() {
        blocks.push(("filter", h));
    }
    let footer = table.footer();
    blocks.push(("metaindex", footer.metaindex));
    blocks.push(("index", footer.index));
    blocks.sort_by_key(|(_, h)| h.offset);
    Ok(Layout {
        blocks,
        len: bytes.len() as u64,
    })
}

/// The compressions a table's blocks are stored with, by the names of the protocol, `none`
/// left out (every adapter reads raw blocks).
pub(crate) fn compressions(bytes: &[u8]) -> Result<Vec<&'static str>, String> {
    let table = open(bytes)?;
    let profile = table.compression_profile();
    let mut out = Vec::new();
    for (_, h) in layout(bytes)?.blocks {
        let (start, end) = (h.offset as usize, (h.offset + h.size) as usize);
        let (Some(data), Some(&id)) = (bytes.get(start..end), bytes.get(end)) else {
            return Err(format!("block at {} past the end of the file", h.offset));
        };
        let name = match compression_name(id, data, profile) {
            "raw-deflate" => "deflate",
            n => n,
        };
        if name != "none" && !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// Where byte `offset` of a table lies: "data block 3 at 8123 (size 4021)", "the footer".
pub(crate) fn locate(bytes: &[u8], offset: u64) -> String {
    let Ok(layout) = layout(bytes) else {
        return "a table this project's reader does not open".to_string();
    };
    if offset >= layout.len.saturating_sub(FOOTER_LEN as u64) {
        return "the footer".to_string();
    }
    let mut data_index = 0;
    for (kind, h) in &layout.blocks {
        let end = h.offset + h.size + BLOCK_TRAILER_LEN as u64;
        if (h.offset..end).contains(&offset) {
            let part = if offset >= h.offset + h.size {
                " trailer"
            } else {
                ""
            };
            let which = if *kind == "data" {
                format!("data block {data_index}")
            } else {
                format!("{kind} block")
            };
            return format!("{which}{part} at {} (size {})", h.offset, h.size);
        }
        if *kind == "data" {
            data_index += 1;
        }
    }
    "no block".to_string()
}
