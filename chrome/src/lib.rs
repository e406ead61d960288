//! # sst-chrome
//!
//! Chrome's storage, read over `leveldb-table`'s public API (the table crate knows no
//! application: Chrome's order reaches its database reader through the comparator options).
//!
//! - [`idb`]: IndexedDB on LevelDB: the `idb_cmp1` order ([`idb::IdbComparator`]), keys
//!   decoded into their parts, the names of databases, object stores and indexes
//!   ([`idb::Catalog`], read whole by [`idb::idb_catalog`]), record values unwrapped (snappy,
//!   blob files) by [`idb::idb_value`]; Chromium's SQLite backend in [`idb::sqlite`].
//! - [`v8value`]: values Chrome serialized (V8's format inside Blink's envelope), decoded
//!   without copying.
//! - [`dom_storage`]: localStorage and sessionStorage records, and which of the two a
//!   directory holds.
//! - [`folder`]: what a profile's folder or file is when it is not a LevelDB database
//!   (SQLite, IndexedDB's blob files), in one line.
//! - [`profile`]: a whole Chrome or Electron profile surveyed, area by area.
//!
//! A Chrome IndexedDB directory is opened with [`db_options`] (or the options of one's own
//! with [`idb::known_order`] among their comparators):
//!
//! ```no_run
//! use leveldb_table::Db;
//!
//! # fn main() -> sst_chrome::Result<()> {
//! let db = Db::open("https_example.com_0.indexeddb.leveldb", sst_chrome::db_options())?;
//! let catalog = sst_chrome::idb::idb_catalog(&db)?;
//! for (id, d) in &catalog.databases {
//!     println!("{id}: {:?}", d.name);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Errors are one enum, [`Error`]; the table crate's errors are wrapped in it, so a damaged
//! file is named with its offset as the table crate names it. The layouts are in
//! `docs/indexeddb.md`.
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod dom_storage;
mod error;
pub mod folder;
pub mod idb;
pub mod profile;
pub mod v8value;

pub use error::{Error, Result, ValuePlace};

use leveldb_table::db::reader::DbOptions;

/// Database options that read Chrome's directories: the defaults, with Chrome's
/// IndexedDB order (`idb_cmp1`) among the comparators a MANIFEST may name, and among the
/// orders salvage may find the keys in when no MANIFEST names one.
pub fn db_options() -> DbOptions {
    let mut o = DbOptions::default();
    o.comparators.push(idb::known_order());
    o
}
