//! The database level: a LevelDB directory's files (CURRENT, MANIFEST, write-ahead logs,
//! tables at levels 0-6), read without writing a byte.
//!
//! Layers, each importing only those above it: `format` (constants) -> `log_physical`
//! (a log's records as laid out) -> `log_reader`,
//! `log_writer`, `write_batch`, `version_edit`, `filename` (one file format each) ->
//! `version` (the live tables from the MANIFEST), `damage` and `salvage_table` (a table read
//! past its damaged blocks) -> `memtable`, `cursor`, `merging` (the merged, snapshot-aware
//! view) -> `reader` ([`Db`], the read-only database) and `records` (every record of every
//! file, for forensics). For writers: `lock` (the directory's LOCK, as LevelDB holds it),
//! `compaction` and `bulk`.

pub mod bulk;
pub mod compaction;
pub mod cursor;
pub mod damage;
pub mod extsort;
pub mod filename;
pub mod format;
pub mod lock;
pub mod log_physical;
pub mod log_reader;
pub mod log_writer;
pub mod memtable;
pub mod merging;
pub mod reader;
pub mod records;
pub mod salvage_table;
pub mod version;
pub mod version_edit;
pub mod write_batch;

pub use cursor::Cursor;
pub use filename::FileKind;
pub use reader::{builtin_comparator, Db, DbOptions, OrderSource};
