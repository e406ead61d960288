//! `mini_lsm`: a small LSM engine built only from `leveldb_table`'s public API. Its
//! directory is a LevelDB directory at every moment (C++ LevelDB opens it, crashed or not),
//! and it opens the directories LevelDB writes.
//!
//! ```text
//!  put/delete/write ─► queue (group commit) ─► log (NNNNNN.log) ─► memtable
//!                                                                      │ full
//!  get/iter ◄─ memtable + immutable memtable + Version ◄─ table cache  ▼
//!                       ▲                              immutable memtable ──► background
//!                       │ new Version, VersionEdit in MANIFEST               threads:
//!                       └──────────── flush: level-0 table (or deeper if no overlap)
//!                                      compaction: level L + overlapping L+1 ─► L+1
//! open: LOCK, CURRENT ─► MANIFEST replay, live logs replayed ─► level-0 tables,
//!       new log + new MANIFEST (whole state) + CURRENT, obsolete files deleted
//! ```
//!
//! ```no_run
//! # fn main() -> mini_lsm::Result<()> {
//! let db = mini_lsm::Db::open("dir", mini_lsm::Options::default())?;
//! db.put(b"k", b"v")?;
//! assert_eq!(db.get(b"k")?.as_deref(), Some(&b"v"[..]));
//! for kv in db.iter(Some(b"a"), Some(b"z"), None)? {
//!     let (key, value) = kv?;
//!     println!("{key:?} {value:?}");
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Modules, each importing only those before it: `error`, `options`, `memtable` (the
//! ordered in-memory writes), `table_cache` (open tables, bounded), `version` (live
//! tables), `manifest`, `state` (what the threads share), `build` (a memtable as a table),
//! `cursors` (cursors owning their tables), `compaction`, `background` (flush and
//! compaction threads), `write` (group commit), `iter` (iteration over a snapshot, both
//! ways), `recovery` (open), `db` ([`Db`]), `repair`, `destroy`, and the command line
//! (`cli`).

#![deny(unsafe_code)]

mod background;
mod build;
pub mod cli;
mod compaction;
mod cursors;
mod db;
mod destroy;
mod error;
mod iter;
mod manifest;
mod memtable;
mod options;
mod recovery;
mod repair;
mod state;
mod table_cache;
mod version;
mod write;

pub use db::{Db, Snapshot};
pub use destroy::destroy;
pub use error::{Error, Result};
pub use iter::DbIter;
pub use options::{Event, Listener, Options, WriteOptions};
pub use recovery::{DroppedRecord, Recovery};
pub use repair::{repair, RepairReport};
