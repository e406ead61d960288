//! One database of Chromium's SQLite IndexedDB: its file and WAL read into memory
//! ([`super::image`]), handed to SQLite (`sqlite3_deserialize`, read-only), and queried as
//! Chromium queries it.
//!
//! ```text
//! indexed_db_metadata  name BLOB (UTF-16LE), version         one row
//! object_stores        id, name BLOB, key_path BLOB, auto_increment,
//!                      key_generator_current_number
//! indexes              object_store_id, id, name BLOB, key_path BLOB, is_unique, multi_entry
//! records              row_id, object_store_id, compression_type (0 none, 1 zstd,
//!                      2 snappy), key BLOB (super::key), value BLOB (Blink's serialized
//!                      value, compressed as compression_type says)
//! index_references     record_row_id, index_id, key BLOB, object_store_id, record_key BLOB
//! blobs                row_id (the blob number), object_type (0 Blob, 1 File, 2 handle),
//!                      mime_type TEXT, size_bytes, file_name TEXT, last_modified (µs since
//!                      1601), bytes BLOB (first 5 MiB; NULL: the legacy file <db>_/<hex id>)
//! overflow_blob_chunks blob_row_id, chunk_index (1..), bytes BLOB (the next 5 MiB each)
//! blob_references      blob_row_id, record_row_id (NULL: held by a live page)
//! key paths: NULL none, else UTF-16LE, several paths joined by U+0020
//! ```
//! (Chromium's `content/browser/indexed_db/instance/sqlite/database_connection.cc`.) A
//! record's blob list is its Blobs and Files by `blobs.row_id`, then its handles: the order
//! the value's blob indexes count in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

use super::image::{build_image, Image};
use super::key::encode_sortable_key;
use super::record::{SqliteIndexEntry, SqliteRecord};
use super::wal::{read_wal, Wal};
use crate::error::{Error, Result};
use crate::idb::{DatabaseInfo, IdbKey, IndexInfo, KeyPath, StoreInfo};

/// What the files of a database held when it was read.
#[derive(Debug, Clone)]
pub struct FileState {
    /// The main file's size.
    pub main_len: u64,
    /// The `-wal` file's size, if there is one.
    pub wal_len: Option<u64>,
    /// The log as read.
    pub wal: Wal,
    /// Page size.
    pub page_size: u32,
    /// Pages of the database as of its last commit.
    pub pages: u32,
    /// How many of them came from the log (committed, not yet checkpointed).
    pub pages_from_wal: u32,
}

/// One SQLite IndexedDB database, read as of its last commit.
pub struct SqliteDatabase {
    pub(crate) path: PathBuf,
    pub(crate) conn: Connection,
    /// The database's name, version, stores and indexes.
    pub info: DatabaseInfo,
    /// Each store's key generator (`key_generator_current_number`).
    pub key_generators: BTreeMap<i64, i64>,
    /// What its files held.
    pub files: FileState,
    pub(crate) image: Image,
    pub(crate) main: Vec<u8>,
    pub(crate) wal_bytes: Vec<u8>,
}

fn utf16le(b: &[u8]) -> String {
    let units: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16_lossy(&units)
}

fn key_path(b: Option<Vec<u8>>) -> KeyPath {
    match b {
        None => KeyPath::None,
        Some(b) => {
            let s = utf16le(&b);
            let parts: Vec<String> = s.split(' ').map(str::to_string).collect();
            match parts.len() {
                1 => KeyPath::String(s),
                _ => KeyPath::Array(parts),
            }
        }
    }
}

impl SqliteDatabase {
    /// Reads the database file at `path` and its `-wal` (never opening either with SQLite,
    /// never writing).
    ///
    /// # Errors
    /// A file that cannot be read, bytes that are not a SQLite database, a database that
    /// is not Chromium's IndexedDB (its tables are not there).
    pub fn open(path: &Path) -> Result<SqliteDatabase> {
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let main = std::fs::read(path).map_err(io)?;
        let wal_path = super::wal::wal_path(path);
        let wal_bytes = match std::fs::read(&wal_path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(Error::Io {
                    path: wal_path,
                    source,
                })
            }
        };
        let wal = wal_bytes.as_deref().map(read_wal).unwrap_or_default();
        let wal_bytes = wal_bytes.unwrap_or_default();
        let sqlite = |what: String| Error::Sqlite {
            path: path.to_path_buf(),
            what,
        };
        let image = build_image(&main, &wal, &wal_bytes)
            .map_err(|e| sqlite(format!("{} (offset {})", e.what, e.offset)))?;
        let mut conn = Connection::open_with_flags(
            ":memory:",
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| sqlite(e.to_string()))?;
        conn.deserialize_read_exact(rusqlite::MAIN_DB, &image.bytes[..], image.bytes.len(), true)
            .map_err(|e| sqlite(e.to_string()))?;
        let files = FileState {
            main_len: main.len() as u64,
            wal_len: (!wal_bytes.is_empty() || wal.stop.is_some() || wal_path_exists(path))
                .then_some(wal_bytes.len() as u64),
            page_size: image.page_size,
            pages: image.pages(),
            pages_from_wal: image.pages_from_wal,
            wal,
        };
        let mut db = SqliteDatabase {
            path: path.to_path_buf(),
            conn,
            info: DatabaseInfo::default(),
            key_generators: BTreeMap::new(),
            files,
            image,
            main,
            wal_bytes,
        };
        db.read_catalog().map_err(|e| match e {
            Error::Sqlite { what, .. } => sqlite(format!(
                "not Chromium's SQLite IndexedDB, or damaged: {what}"
            )),
            e => e,
        })?;
        Ok(db)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn sql(&self, e: rusqlite::Error) -> Error {
        Error::Sqlite {
            path: self.path.clone(),
            what: e.to_string(),
        }
    }

    fn read_catalog(&mut self) -> Result<()> {
        let (name, version): (Vec<u8>, i64) = self
            .conn
            .query_row("SELECT name, version FROM indexed_db_metadata", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(|e| self.sql(e))?;
        self.info.name = Some(utf16le(&name));
        self.info.version = Some(version);
        let mut stores = BTreeMap::new();
        let mut gens = BTreeMap::new();
        {
            let mut st = self
                .conn
                .prepare(
                    "SELECT id, name, key_path, auto_increment, key_generator_current_number \
                     FROM object_stores ORDER BY id",
                )
                .map_err(|e| self.sql(e))?;
            let mut rows = st.query([]).map_err(|e| self.sql(e))?;
            while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
                let get = |e: rusqlite::Error| self.sql(e);
                let id: i64 = r.get(0).map_err(get)?;
                let name: Vec<u8> = r.get(1).map_err(get)?;
                let info = StoreInfo {
                    name: Some(utf16le(&name)),
                    key_path: Some(key_path(r.get(2).map_err(get)?)),
                    auto_increment: Some(r.get::<_, i64>(3).map_err(get)? != 0),
                    indexes: BTreeMap::new(),
                    deleted: false,
                };
                gens.insert(id, r.get(4).map_err(get)?);
                stores.insert(id, info);
            }
        }
        {
            let mut st = self
                .conn
                .prepare(
                    "SELECT object_store_id, id, name, key_path, is_unique, multi_entry \
                     FROM indexes ORDER BY object_store_id, id",
                )
                .map_err(|e| self.sql(e))?;
            let mut rows = st.query([]).map_err(|e| self.sql(e))?;
            while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
                let get = |e: rusqlite::Error| self.sql(e);
                let store: i64 = r.get(0).map_err(get)?;
                let name: Vec<u8> = r.get(2).map_err(get)?;
                let info = IndexInfo {
                    name: Some(utf16le(&name)),
                    key_path: Some(key_path(r.get(3).map_err(get)?)),
                    unique: Some(r.get::<_, i64>(4).map_err(get)? != 0),
                    multi_entry: Some(r.get::<_, i64>(5).map_err(get)? != 0),
                    deleted: false,
                };
                stores
                    .entry(store)
                    .or_insert_with(StoreInfo::default)
                    .indexes
                    .insert(r.get(1).map_err(get)?, info);
            }
        }
        self.info.stores = stores;
        self.key_generators = gens;
        Ok(())
    }

    /// The number of records (live rows of `records`).
    ///
    /// # Errors
    /// SQLite cannot read the table.
    pub fn record_count(&self) -> Result<u64> {
        self.conn
            .query_row("SELECT count(*) FROM records", [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| self.sql(e))
    }

    /// Calls `f` with each record of object store `store` in key order (Chromium's order:
    /// the stored keys' bytes), until `f` returns `false`.
    ///
    /// # Errors
    /// SQLite cannot read the table, or `f`'s error.
    pub fn for_each_record(
        &self,
        store: i64,
        mut f: impl FnMut(SqliteRecord<'_>) -> Result<bool>,
    ) -> Result<()> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT row_id, key, compression_type, value FROM records \
                 WHERE object_store_id = ? ORDER BY key",
            )
            .map_err(|e| self.sql(e))?;
        let mut rows = st.query([store]).map_err(|e| self.sql(e))?;
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            let rec = record_of(r, store).map_err(|e| self.sql(e))?;
            if !f(rec)? {
                break;
            }
        }
        Ok(())
    }

    /// The record of `store` with key `key`, if there is one, given to `f`.
    ///
    /// # Errors
    /// A key Chromium never stores (NaN, `Min`), SQLite cannot read the table, `f`'s error.
    pub fn get<T>(
        &self,
        store: i64,
        key: &IdbKey,
        f: impl FnOnce(SqliteRecord<'_>) -> Result<T>,
    ) -> Result<Option<T>> {
        let Some(k) = encode_sortable_key(key) else {
            return Ok(None);
        };
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT row_id, key, compression_type, value FROM records \
                 WHERE object_store_id = ? AND key = ?",
            )
            .map_err(|e| self.sql(e))?;
        let mut rows = st.query(params![store, k]).map_err(|e| self.sql(e))?;
        match rows.next().map_err(|e| self.sql(e))? {
            Some(r) => Ok(Some(f(record_of(r, store).map_err(|e| self.sql(e))?)?)),
            None => Ok(None),
        }
    }

    /// Calls `f` with each index entry of `store`, by index, index key, then primary key.
    ///
    /// # Errors
    /// SQLite cannot read the table, or `f`'s error.
    pub fn for_each_index_entry(
        &self,
        store: i64,
        mut f: impl FnMut(SqliteIndexEntry<'_>) -> Result<bool>,
    ) -> Result<()> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT index_id, key, record_key, record_row_id FROM index_references \
                 WHERE object_store_id = ? ORDER BY index_id, key, record_key",
            )
            .map_err(|e| self.sql(e))?;
        let mut rows = st.query([store]).map_err(|e| self.sql(e))?;
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            let e = (|| {
                Ok::<_, rusqlite::Error>(SqliteIndexEntry {
                    index: r.get(0)?,
                    key: r.get_ref(1)?.as_blob()?,
                    primary_key: r.get_ref(2)?.as_blob()?,
                    record_row_id: r.get(3)?,
                })
            })()
            .map_err(|e| self.sql(e))?;
            if !f(e)? {
                break;
            }
        }
        Ok(())
    }
}

fn wal_path_exists(path: &Path) -> bool {
    super::wal::wal_path(path).exists()
}

fn record_of<'r>(r: &'r rusqlite::Row<'_>, store: i64) -> rusqlite::Result<SqliteRecord<'r>> {
    Ok(SqliteRecord {
        row_id: r.get(0)?,
        store,
        key: r.get_ref(1)?.as_blob()?,
        compression: r.get(2)?,
        value: r.get_ref(3)?.as_blob()?,
    })
}
