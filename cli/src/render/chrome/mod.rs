//! Chrome's storage as `sst` shows it: what a directory's records are decoded as
//! (`decoding`: IndexedDB, localStorage, sessionStorage; `--decode`, `--database`,
//! `--store`), the rows they make (`idb_rows`, `storage_rows`; IndexedDB keys and envelopes
//! in `idb` and `idb_json`, values in `value_json` with Blink's host objects in
//! `host_json`, JavaScript text in `json_text`), lookups by IndexedDB key (`lookup`),
//! Chromium's SQLite IndexedDB (`sqlite`), and what is not LevelDB named (`not_leveldb`).
//! Everything Chrome-specific of the CLI is here.
//!
//! Layers, each importing only those before it: `json_text` -> `idb_json`, `idb`,
//! `host_json` -> `value_json` -> `decoding` -> `idb_rows`, `storage_rows`, `lookup` (keys
//! of `db get --store` as IndexedDB keys); `sqlite` (Chromium's SQLite IndexedDB: scan,
//! get, records, info) over `value_json` and `idb_json`.

mod decoding;
mod host_json;
mod idb;
mod idb_json;
mod idb_rows;
mod json_text;
mod lookup;
pub mod sqlite;
mod storage_rows;
mod value_json;

pub use decoding::{DecodeArgs, Decoding};
pub use lookup::IdbLookup;
pub use sst_chrome::folder::not_leveldb;
