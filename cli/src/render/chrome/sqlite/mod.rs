//! `sst db scan|get|records|info` on Chromium's SQLite IndexedDB: an origin's folder
//! (`IndexedDB/<origin>/`, one SQLite file per database) or one database file, read as of
//! its last commit (the `-wal` file included) without writing anything.
//!
//! `open` finds and reads the databases and applies `--database` / `--store`; `rows`
//! writes a record or index entry as text or JSON (the LevelDB backend's `"idb"` object:
//! `kind`, `db_name`, `store_name`, `key`, `data`); `scan`, `records`, `get` and `info`
//! are the commands.

mod get;
mod info;
mod open;
mod records;
mod rows;
mod scan;

pub use get::{get, GetArgs};
pub use info::info;
pub use open::is_sqlite_target;
pub use records::records;
pub use scan::{scan, ScanArgs};
