//! A memtable written as a table (LevelDB's `BuildTable`): every entry in internal-key
//! order into a `TableFileBuilder` (temporary file, fsync, rename, directory fsync), so the
//! table appears complete or not at all.

use leveldb_table::table::KeyFormat;
use std::path::Path;

use leveldb_table::db::files::{table_file_name, FileMeta};
use leveldb_table::table::TableFileBuilder;
use leveldb_table::Options as TableOptions;

use crate::error::Result;
use crate::memtable::MemTable;

/// Writes `mem` as table `number` of `dir`; its metadata for the MANIFEST.
///
/// # Errors
/// An I/O error (nothing then appears under the table's name).
pub fn build_table(
    dir: &Path,
    table_opts: &TableOptions,
    number: u64,
    mem: &MemTable,
) -> Result<FileMeta> {
    let path = dir.join(table_file_name(number));
    let mut b = TableFileBuilder::create(&path, &table_opts.clone().keys(KeyFormat::Internal))?;
    let (mut smallest, mut largest) = (Vec::new(), Vec::new());
    mem.for_each(|k, v| {
        if smallest.is_empty() {
            smallest = k.to_vec();
        }
        largest.clear();
        largest.extend_from_slice(k);
        b.add(k, v)
    })?;
    let stats = b.finish()?;
    Ok(FileMeta {
        number,
        size: stats.file_size,
        smallest,
        largest,
    })
}
