//! The database level: a LevelDB directory's files (CURRENT, MANIFEST, write-ahead logs,
//! tables at levels 0-6): [`Db`] reads one without writing a byte (no LOCK, no log, no
//! MANIFEST); [`engine`] holds the writers' pieces (compaction output, the bulk builder, the
//! directory's LOCK) and [`files`] each file's format, both ways.
//!
//! Layers, each importing only those above it: `format` (constants) -> `log_physical`
//! (a log's records as laid out) -> `log_reader`,
//! `log_writer`, `write_batch`, `version_edit`, `filename` (one file format each) ->
//! `version` (the live tables from the MANIFEST), `damage` and `salvage_table` (a table read
//! past its damaged blocks) -> `memtable`, `cursor`, `merging` (the merged, snapshot-aware
//! view; `reverse_view`, the same read backward) -> `reader` ([`Db`], the read-only
//! database; an application's order reaches it through [`DbOptions::comparators`]) and
//! `records` (every record of every file, for forensics). For writers:
//! `lock` (the directory's LOCK, as LevelDB holds it), `compaction` and `bulk`.
//!
//! Public: [`Db`] and its options, [`records`], and two groups of re-exports,
//! [`files`] and [`engine`]; the files above are private.

mod bulk;
mod compaction;
mod cursor;
mod damage;
mod extsort;
mod filename;
mod folder;
mod format;
mod lock;
mod log_physical;
mod log_reader;
mod log_writer;
mod memtable;
mod merging;
mod reader;
mod records;
mod reverse_view;
mod salvage_table;
pub mod verify;
mod version;
mod version_edit;
mod write_batch;

pub use damage::{Damage, DamageLog};
pub use reader::{Db, DbOptions, KeyTest, KnownOrder, OrderSource};
pub use records::{records, DbRecord, Location, RecordStatus};

/// The directory's files, one format each: log records (LevelDB's `log_format.h`) and the
/// write batches they carry, the MANIFEST's version edits and the live tables they add up to,
/// file names and CURRENT, the constants of those formats.
pub mod files {
    pub use super::filename::*;
    pub use super::format::*;
    pub use super::log_physical::*;
    pub use super::log_reader::*;
    pub use super::log_writer::*;
    pub use super::version::{FileMeta, ManifestState};
    pub use super::version_edit::*;
    pub use super::write_batch::*;
}

/// The pieces an engine that writes is built from: the memtable, cursors over tables,
/// levels and memtables, the merged snapshot-aware view (forward and backward),
/// compaction output, the bulk builder with its external sort, the directory's LOCK.
pub mod engine {
    pub use super::bulk::*;
    pub use super::compaction::*;
    pub use super::cursor::*;
    pub use super::extsort::*;
    pub use super::lock::*;
    pub use super::memtable::*;
    pub use super::merging::*;
    pub use super::reverse_view::*;
    pub use super::salvage_table::*;
}
