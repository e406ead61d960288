//! The pieces an engine that writes is built from: the memtable, cursors over tables,
//! levels and memtables, the merged snapshot-aware view (forward and backward), compaction
//! output, the bulk builder with its external sort, the directory's LOCK.
//!
//! Layers, each importing only those above it: `memtable` -> `cursor` (memtable and level
//! cursors) -> `merging` (the merging cursor and the view at a snapshot) -> `reverse_view`;
//! `lock`, `extsort` -> `bulk`; `compaction` (over any cursor).

mod bulk;
mod compaction;
mod cursor;
pub mod extsort;
mod lock;
mod memtable;
mod merging;
mod reverse_view;

pub use bulk::{BulkBuilder, BulkOptions, BulkStats};
pub use compaction::{write_compaction_output, CompactionOptions, CompactionStats};
pub(crate) use cursor::{cannot_reverse, in_table};
pub use cursor::{Cursor, LevelCursor, MemCursor, TableCursor, TableFile, TableSource};
pub use lock::DirLock;
pub use memtable::{MemLookup, MemTable, Origin};
pub use merging::{MergingCursor, ViewCursor};
pub use reverse_view::ReverseView;
