//! The database level: a LevelDB directory's files (CURRENT, MANIFEST, write-ahead logs,
//! tables at levels 0-6), in four folders, each importing only those before it:
//!
//! - [`files`]: each file's format, both ways: log records (physical and logical), write
//!   batches, version edits, file names and CURRENT, the constants of those formats, and
//!   [`ManifestState`](files::ManifestState) (the live tables a MANIFEST adds up to).
//! - [`salvage`]: reading past damage: what was skipped ([`Damage`](salvage::Damage)) and
//!   the walks over tables whose blocks are damaged or whose footer or index is lost.
//! - [`engine`]: the pieces an engine that writes is built from: the memtable, cursors over
//!   memtables and levels, the merging cursor and the database cursor on top of it
//!   ([`DbIter`](engine::DbIter)), compaction output, the bulk builder with its external
//!   sort, the directory's LOCK.
//! - [`reader`]: [`Db`](reader::Db), a directory read without writing a byte (no LOCK, no
//!   log, no MANIFEST), its options, the orders it reads in and the listing of every
//!   record of every file (for forensics).

pub mod engine;
pub mod files;
pub mod reader;
pub mod salvage;
pub mod verify;
