//! The pieces an engine that writes is built from: the memtable, cursors over memtables and
//! levels of tables, the merging cursor and the database's live view over it ([`DbIter`],
//! both ways, at a snapshot), compaction output, the bulk builder with its external sort,
//! the directory's LOCK.
//!
//! Layers, each importing only those above it: `memtable` -> `cursor` (memtable and level
//! cursors) -> `merging` (the merging cursor) -> `db_iter` (the view at a snapshot);
//! `lock`; `extsort` -> `bulk`; `compaction` (over any cursor).

mod bulk;
mod compaction;
mod cursor;
mod db_iter;
pub mod extsort;
mod lock;
mod memtable;
mod merging;

pub use bulk::{BulkBuilder, BulkOptions, BulkStats};
pub use compaction::{write_compaction_output, CompactionOptions, CompactionStats};
pub(crate) use cursor::in_table;
pub use cursor::{LevelCursor, MemCursor, TableFile, TableSource};
pub use db_iter::DbIter;
pub use lock::DirLock;
pub use memtable::{MemLookup, MemTable, Origin};
pub use merging::MergingCursor;
