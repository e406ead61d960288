//! What `sst db` and `sst log` decode in a directory's records: Chrome IndexedDB (keys,
//! names, values), localStorage or sessionStorage (`--decode`, detected by default), and
//! the `--database` / `--store` filters. The rows are written in `idb_rows.rs` and
//! `storage_rows.rs`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leveldb_table::db::reader::{Db, DbRecord};
use sst_chrome::dom_storage::{detect_storage, session_maps, StorageKind};
use sst_chrome::idb::format::IDB_COMPARATOR_NAME;
use sst_chrome::idb::{
    idb_blob_dir, idb_catalog, idb_catalog_with_deleted, key_prefix, origin_from_identifier,
    origin_of_directory, prefix_key, Catalog,
};

use crate::exit::{self, Failure};

/// `--decode`: what the records hold.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DecodeMode {
    /// IndexedDB for a database in `idb_cmp1` order; localStorage or sessionStorage when
    /// the first keys are all keys those databases write and their version key is there;
    /// else nothing.
    Auto,
    /// Nothing: keys and values as bytes.
    None,
    /// Chrome IndexedDB keys, names and values.
    Indexeddb,
    /// Chrome localStorage (`Local Storage/leveldb`).
    Localstorage,
    /// Chrome sessionStorage (`Session Storage`).
    Sessionstorage,
}

/// Options of `sst db scan|get|records` about decoding.
#[derive(clap::Args, Debug, Clone)]
pub struct DecodeArgs {
    /// What the records hold: auto (IndexedDB for an idb_cmp1 database; localStorage or
    /// sessionStorage when every key is one they write), none, indexeddb, localstorage,
    /// sessionstorage. JSON rows add "idb", "local_storage" or "session_storage".
    #[arg(long, value_enum, default_value_t = DecodeMode::Auto, value_name = "WHAT")]
    pub decode: DecodeMode,
    /// IndexedDB: only the records of the database with this name (get: the database the
    /// keys are looked up in).
    #[arg(long, value_name = "NAME")]
    pub database: Option<String>,
    /// IndexedDB: only the records of the object store with this name, of --database if
    /// given (get: the store the keys are looked up in; each KEY is then an IndexedDB key
    /// as JSON: 7, '"k7"', '[1,"a"]', '{"$type":"date","value":0}').
    #[arg(long, value_name = "NAME")]
    pub store: Option<String>,
}

impl DecodeArgs {
    /// Whether `--database` or `--store` is given.
    pub fn names_a_store(&self) -> bool {
        self.database.is_some() || self.store.is_some()
    }
}

/// What is decoded.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Nothing.
    None,
    /// IndexedDB.
    IndexedDb,
    /// localStorage.
    Local,
    /// sessionStorage.
    Session,
}

enum DbHandle<'a> {
    None,
    Borrowed(&'a Db),
    Owned(Box<Db>),
}

/// The decoding of one command: the kind, IndexedDB's names and blob folder, the
/// sessionStorage maps, the filters.
pub struct Decoding<'a> {
    pub kind: Kind,
    db: DbHandle<'a>,
    pub catalog: Catalog,
    pub blob_dir: Option<PathBuf>,
    /// sessionStorage map -> (namespaces, origin).
    pub maps: BTreeMap<i64, (Vec<String>, String)>,
    /// IndexedDB: each database's origin (`http://host:port`), from its name record.
    origins: BTreeMap<i64, String>,
    /// IndexedDB: the origin the directory's name says, for rows no name record covers.
    dir_origin: Option<String>,
    /// `--database` / `--store`: the (database, store) pairs kept; store `None` = all.
    allowed: Option<Vec<Kept>>,
}

/// A (database, store) pair `--database` / `--store` keep; store `None`: all its stores.
pub type Kept = (i64, Option<i64>);

impl<'a> Decoding<'a> {
    /// Nothing decoded.
    pub fn none() -> Decoding<'static> {
        Decoding {
            kind: Kind::None,
            db: DbHandle::None,
            catalog: Catalog::default(),
            blob_dir: None,
            maps: BTreeMap::new(),
            origins: BTreeMap::new(),
            dir_origin: None,
            allowed: None,
        }
    }

    /// The decoding of the database `db` in `dir`, as `a` asks.
    ///
    /// With `records` (every record of every file, as `sst db records` lists them), the
    /// names of deleted object stores and databases whose records are still in the files
    /// come from their deleted metadata. A catalog read past damage is said to be partial
    /// (a warning here; `"names_partial"` in JSON rows).
    pub fn for_db(
        db: &'a Db,
        dir: &Path,
        a: &DecodeArgs,
        records: Option<&[DbRecord]>,
    ) -> Result<Decoding<'a>, Failure> {
        let is_idb = db.comparator_name() == IDB_COMPARATOR_NAME;
        let kind = match a.decode {
            DecodeMode::None => Kind::None,
            DecodeMode::Indexeddb => Kind::IndexedDb,
            DecodeMode::Localstorage => Kind::Local,
            DecodeMode::Sessionstorage => Kind::Session,
            DecodeMode::Auto if is_idb => Kind::IndexedDb,
            DecodeMode::Auto => match detect_storage(db) {
                Ok(Some(StorageKind::Local)) => Kind::Local,
                Ok(Some(StorageKind::Session)) => Kind::Session,
                Ok(None) => Kind::None,
                // The read that follows meets the same damage and reports it; meanwhile,
                // say why nothing is decoded.
                Err(e) => {
                    exit::warn(&format!(
                        "{}: whether it holds localStorage or sessionStorage cannot be told \
                         ({e}); keys and values are shown as bytes (--decode says what they are)",
                        dir.display()
                    ));
                    Kind::None
                }
            },
        };
        if (a.database.is_some() || a.store.is_some()) && kind != Kind::IndexedDb {
            return Err(Failure::error(format!(
                "{}: --database and --store select IndexedDB records; this directory is not \
                 read as IndexedDB (--decode indexeddb reads it so)",
                dir.display()
            )));
        }
        let mut d = Decoding {
            kind,
            db: DbHandle::Borrowed(db),
            ..Decoding::none()
        };
        match kind {
            Kind::IndexedDb => {
                let catalog = match records {
                    Some(all) => idb_catalog_with_deleted(db, all),
                    None => idb_catalog(db),
                }
                .map_err(|e| unreadable(dir, &e))?;
                warn_partial(dir, &catalog);
                d.set_names(catalog, dir);
                d.allowed = filter(&d.catalog, dir, a)?;
            }
            Kind::Session => d.maps = session_maps(db).map_err(|e| unreadable(dir, &e))?,
            Kind::Local | Kind::None => {}
        }
        Ok(d)
    }

    /// The decoding of a log file: IndexedDB keys when `idb_cmp1` is asked or the log's
    /// directory is in that order (then its names and blob folder too).
    ///
    /// # Errors
    /// The directory's names cannot be read.
    pub fn for_log(path: &Path, idb_asked: bool) -> Result<Decoding<'static>, Failure> {
        let dir = idb_directory(path);
        if !idb_asked && dir.is_none() {
            return Ok(Decoding::none());
        }
        Decoding::indexeddb_in(path, dir)
    }

    /// The decoding of a table read in `idb_cmp1` order (`idb`): IndexedDB keys and values,
    /// with the names and blob folder of the table's directory when it is an IndexedDB
    /// database; nothing otherwise.
    ///
    /// # Errors
    /// The directory's names cannot be read.
    pub fn for_table(path: &Path, idb: bool) -> Result<Decoding<'static>, Failure> {
        if !idb {
            return Ok(Decoding::none());
        }
        Decoding::indexeddb_in(path, idb_directory(path))
    }

    /// IndexedDB decoding for a file, with `db` (its directory's database) for names and
    /// blob entries when there is one.
    fn indexeddb_in(path: &Path, db: Option<Db>) -> Result<Decoding<'static>, Failure> {
        let mut d = Decoding {
            kind: Kind::IndexedDb,
            ..Decoding::none()
        };
        if let Some(db) = db {
            let dir = parent_dir(path);
            let catalog = idb_catalog(&db).map_err(|e| unreadable(dir, &e))?;
            warn_partial(dir, &catalog);
            d.set_names(catalog, dir);
            d.db = DbHandle::Owned(Box::new(db));
        }
        Ok(d)
    }

    /// Takes in an IndexedDB directory's names, and what its folder tells: the blob folder
    /// beside it, its origin.
    fn set_names(&mut self, catalog: Catalog, dir: &Path) {
        self.origins = catalog
            .databases
            .iter()
            .filter_map(|(id, d)| Some((*id, origin_from_identifier(d.origin.as_deref()?)?)))
            .collect();
        let name = std::fs::canonicalize(dir)
            .ok()
            .and_then(|d| Some(d.file_name()?.to_string_lossy().into_owned()));
        self.dir_origin = name.as_deref().and_then(origin_of_directory);
        self.catalog = catalog;
        self.blob_dir = idb_blob_dir(dir);
    }

    /// The origin of database `db`'s rows (`http://host:port`, as localStorage writes it):
    /// what its name record says, else the directory's name (one origin per directory).
    pub fn origin(&self, db: i64) -> Option<&str> {
        self.origins
            .get(&db)
            .or(self.dir_origin.as_ref())
            .map(String::as_str)
    }

    /// The (database, store) pairs `--database` / `--store` select, if given.
    pub fn kept(&self) -> Option<&[Kept]> {
        self.allowed.as_deref()
    }

    /// The database, for lookups of blob entries.
    pub fn db(&self) -> Option<&Db> {
        match &self.db {
            DbHandle::None => None,
            DbHandle::Borrowed(db) => Some(db),
            DbHandle::Owned(db) => Some(db),
        }
    }

    /// Whether a row with this key passes `--database` / `--store`.
    pub fn keep(&self, key: &[u8]) -> bool {
        let Some(allowed) = &self.allowed else {
            return true;
        };
        let Some(p) = key_prefix(key) else {
            return false;
        };
        allowed
            .iter()
            .any(|(db, store)| p.database == *db && store.is_none_or(|s| p.store == s))
    }

    /// Where a scan with filters may start (the first key of the first kept database or
    /// store), when no --from is given.
    pub fn start_key(&self) -> Option<Vec<u8>> {
        let &(db, store) = self.allowed.as_ref()?.iter().min()?;
        Some(match store {
            // A store's records come first: the bare record prefix (index 1).
            Some(store) => prefix_key(db, store, 1, None),
            // A database's metadata: the prefix and the first type byte.
            None => prefix_key(db, 0, 0, Some(0)),
        })
    }

    /// Whether a scan with filters has passed every kept database and store (keys are in
    /// `idb_cmp1` order: by database, then store).
    pub fn past_end(&self, key: &[u8]) -> bool {
        let Some(allowed) = &self.allowed else {
            return false;
        };
        let Some(p) = key_prefix(key) else {
            return false;
        };
        let last = allowed
            .iter()
            .map(|(db, store)| (*db, store.unwrap_or(i64::MAX)))
            .max();
        last.is_some_and(|l| (p.database, p.store) > l)
    }
}

/// The warning for a catalog read past damage.
fn warn_partial(dir: &Path, c: &Catalog) {
    if let Some(why) = &c.partial {
        exit::warn(&format!(
            "{}: IndexedDB names may be missing: {why}",
            dir.display()
        ));
    }
}

/// What could not be read of the directory `dir`.
fn unreadable(dir: &Path, e: &sst_chrome::Error) -> Failure {
    Failure::error(format!("{}: {e}", dir.display()))
}

/// The directory holding the file at `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The database of the directory holding `path`, when its MANIFEST names `idb_cmp1` (an
/// order inferred from the keys, with no usable MANIFEST, is not the directory telling us).
fn idb_directory(path: &Path) -> Option<Db> {
    let opts = sst_chrome::db_options().salvage(true);
    Db::open(parent_dir(path), opts)
        .ok()
        .filter(|db| !db.is_repair_view() && db.comparator_name() == IDB_COMPARATOR_NAME)
}

/// `--database` / `--store` as (database, store) pairs; an error names what exists when a
/// name matches nothing.
fn filter(c: &Catalog, dir: &Path, a: &DecodeArgs) -> Result<Option<Vec<Kept>>, Failure> {
    c.select(a.database.as_deref(), a.store.as_deref())
        .map_err(|e| unreadable(dir, &e))
}
