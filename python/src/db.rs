//! `Db`: a LevelDB directory opened read-only (the library's `db::reader::Db`): point lookups, the
//! live view scanned in batches, every record with where it is, what the directory holds.
//! Nothing is written and no LOCK is taken, so a directory another process holds open
//! reads the same.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use leveldb_table::db::reader::Db;
use leveldb_table::Comparator;
use leveldb_table::ReadOptions;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use sst_chrome::dom_storage::{detect_storage, StorageKind};
use sst_chrome::idb::format::IDB_COMPARATOR_NAME;
use sst_chrome::idb::{idb_blob_dir, idb_catalog};

use crate::chrome::{Area, IdbContext, IdbIter, StorageIter};
use crate::errors::{self, not_a_database, to_py, IntoPy};
use crate::info;
use crate::records::RecordIter;
use crate::scan::{Batch, Batches, Bounds, Resume, ScanIter, Source, MAX_BATCH_BYTES};
use leveldb_table::Cursor;

/// A LevelDB database directory, opened read-only.
#[pyclass(module = "leveldb_table._native", name = "Db", frozen)]
pub struct PyDb {
    /// `None` once closed.
    db: Mutex<Option<Arc<Db>>>,
    path: PathBuf,
}

impl PyDb {
    fn storage(&self, py: Python<'_>, area: Area) -> PyResult<StorageIter> {
        let db = self.db()?;
        // A directory of another kind is an error, not an empty answer.
        let (found, empty) = py
            .detach(|| -> sst_chrome::Result<_> {
                let mut view = db.iter(&ReadOptions::default());
                view.seek_to_first();
                let empty = !view.valid();
                view.status()?;
                Ok((detect_storage(&db)?, empty))
            })
            .py_err(py, None)?;
        let (wanted, name) = match area {
            Area::Local => (StorageKind::Local, "localStorage"),
            Area::Session => (StorageKind::Session, "sessionStorage"),
        };
        if found != Some(wanted) && !empty {
            let is = match found {
                Some(StorageKind::Local) => "localStorage; read it with local_storage()".into(),
                Some(StorageKind::Session) => {
                    "sessionStorage; read it with session_storage()".into()
                }
                None if db.comparator_name() == IDB_COMPARATOR_NAME => {
                    "Chrome IndexedDB (idb_cmp1 order); read it with indexeddb()".into()
                }
                None => format!(
                    "a database whose keys are not {name}'s (its order is {})",
                    db.comparator_name()
                ),
            };
            let shown = self.path.display().to_string();
            let msg = format!("{shown}: not a {name} directory: it is {is}");
            return Err(errors::invalid(py, "WrongKind", msg, Some(&shown)));
        }
        let view = DbView {
            db: db.clone(),
            snapshot: db.last_sequence(),
        };
        let batches = Batches::new(Box::new(view), Bounds::default());
        py.detach(|| StorageIter::new(&db, area, batches))
            .py_err(py, None)
    }

    /// The open database (an error once closed).
    pub fn db(&self) -> PyResult<Arc<Db>> {
        let guard = self.db.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .clone()
            .ok_or_else(|| PyValueError::new_err("the database is closed"))
    }
}

#[pymethods]
impl PyDb {
    /// Opens the database in `path` read-only.
    #[new]
    #[pyo3(signature = (path, salvage = false, verify_checksums = true))]
    fn new(py: Python<'_>, path: PathBuf, salvage: bool, verify_checksums: bool) -> PyResult<Self> {
        // Chrome's IndexedDB order is among those a MANIFEST may name.
        let opts = sst_chrome::db_options()
            .salvage(salvage)
            .verify_checksums(verify_checksums);
        let shown = path.display().to_string();
        let db = match py.detach(|| Db::open(&path, opts)) {
            Ok(db) => db,
            Err(e) => {
                return Err(match py.detach(|| what_else(&path, &e)) {
                    Some(message) => not_a_database(py, message),
                    None => to_py(py, e, Some(&shown)),
                })
            }
        };
        Ok(PyDb {
            db: Mutex::new(Some(Arc::new(db))),
            path,
        })
    }

    /// The value of `key` at the newest sequence, or at `at_seq`; `None` when absent or
    /// deleted.
    #[pyo3(signature = (key, at_seq = None))]
    fn get(
        &self,
        py: Python<'_>,
        key: Cow<'_, [u8]>,
        at_seq: Option<u64>,
    ) -> PyResult<Option<Py<PyBytes>>> {
        let db = self.db()?;
        let read = ReadOptions::default().snapshot(at_seq);
        let found = py.detach(|| db.get(&key, &read)).py_err(py, None)?;
        Ok(found.value().map(|v| PyBytes::new(py, v).unbind()))
    }

    /// `(key, value)` of every live key with `start <= key < stop`, in the database's order
    /// (last first with `reverse`), at the newest sequence or at `at_seq`.
    #[pyo3(signature = (start = None, stop = None, at_seq = None, reverse = false))]
    fn scan(
        &self,
        start: Option<Vec<u8>>,
        stop: Option<Vec<u8>>,
        at_seq: Option<u64>,
        reverse: bool,
    ) -> PyResult<ScanIter> {
        let db = self.db()?;
        let snapshot = at_seq.unwrap_or_else(|| db.last_sequence());
        let bounds = Bounds {
            start,
            stop,
            reverse,
        };
        Ok(ScanIter::new(Box::new(DbView { db, snapshot }), bounds))
    }

    /// Every record of every table and log, with its status and where it is.
    fn records(&self, py: Python<'_>) -> PyResult<RecordIter> {
        let db = self.db()?;
        let all = py
            .detach(|| leveldb_table::db::reader::records(&db))
            .py_err(py, None)?;
        Ok(RecordIter::new(all))
    }

    /// The object-store records of a Chrome IndexedDB directory (`idb_cmp1` order), with
    /// database and store names and values decoded (`leveldb_table.chrome.IdbRecord`);
    /// only those of the database and store named, if given.
    #[pyo3(signature = (database = None, store = None))]
    fn indexeddb(
        &self,
        py: Python<'_>,
        database: Option<&str>,
        store: Option<&str>,
    ) -> PyResult<IdbIter> {
        let db = self.db()?;
        if db.comparator_name() != IDB_COMPARATOR_NAME {
            return Err(PyValueError::new_err(format!(
                "{}: not a Chrome IndexedDB directory (its order is {}, not idb_cmp1)",
                self.path.display(),
                db.comparator_name()
            )));
        }
        let catalog = py.detach(|| idb_catalog(&db)).py_err(py, None)?;
        let shown = self.path.display().to_string();
        let keep = catalog.select(database, store).map_err(|e| {
            errors::invalid(py, "NoSuchName", format!("{shown}: {e}"), Some(&shown))
        })?;
        if let Some(why) = &catalog.partial {
            // Said as `sst` says it; the iterator's `names_partial` keeps it.
            let msg = format!("{shown}: IndexedDB names may be missing: {why}");
            let warning = py.get_type::<pyo3::exceptions::PyUserWarning>();
            PyErr::warn(
                py,
                &warning,
                &std::ffi::CString::new(msg).unwrap_or_default(),
                1,
            )?;
        }
        let ctx = IdbContext {
            catalog,
            blob_dir: idb_blob_dir(&self.path),
            keep,
        };
        let view = DbView {
            db: db.clone(),
            snapshot: db.last_sequence(),
        };
        let batches = Batches::new(Box::new(view), Bounds::default());
        Ok(IdbIter::new(db, ctx, batches))
    }

    /// The record of object store `store` (of `database`, if named) whose IndexedDB key
    /// is `key` (a number, str, bytes, aware datetime or list, as `indexeddb()` gives
    /// keys), as an `IdbRecord`; `None` when absent or deleted. One filter-first lookup.
    #[pyo3(signature = (key, store, database = None))]
    fn indexeddb_get(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        store: &str,
        database: Option<&str>,
    ) -> PyResult<Option<Py<PyAny>>> {
        crate::idb_lookup::indexeddb_get(py, self.db()?, &self.path, key, store, database)
    }

    /// The items of a Chrome localStorage directory (`Local Storage/leveldb`) as text
    /// (`leveldb_table.chrome.StorageItem`).
    fn local_storage(&self, py: Python<'_>) -> PyResult<StorageIter> {
        self.storage(py, Area::Local)
    }

    /// The items of a Chrome sessionStorage directory (`Session Storage`) as text, with
    /// the sessions (namespaces) and origin of their map.
    fn session_storage(&self, py: Python<'_>) -> PyResult<StorageIter> {
        self.storage(py, Area::Session)
    }

    /// What the directory holds: the MANIFEST, levels, logs, notes, damage.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let db = self.db()?;
        info::info(py, &db, &self.path)
    }

    /// What salvage skipped so far (opening, then every read).
    fn damage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        info::damage(py, &*self.db()?)
    }

    /// The newest sequence number.
    #[getter]
    fn last_sequence(&self) -> PyResult<u64> {
        Ok(self.db()?.last_sequence())
    }

    /// The comparator's name (`leveldb.BytewiseComparator`, `idb_cmp1`).
    #[getter]
    fn comparator(&self) -> PyResult<String> {
        Ok(self.db()?.comparator_name().to_string())
    }

    /// The directory.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// Releases the files (scans already started keep their own reference).
    fn close(&self) {
        let mut guard = self.db.lock().unwrap_or_else(|p| p.into_inner());
        *guard = None;
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) {
        self.close();
    }

    fn __repr__(&self) -> String {
        format!("Db({:?})", self.path.display().to_string())
    }
}

/// One line saying what `path` is when it did not open as a database because it is
/// something else: Chrome's (a SQLite file or folder, IndexedDB's blob files), a file of a
/// LevelDB database (then which class reads it), a folder holding none (the library's
/// `NotADatabase`, said whole).
fn what_else(path: &std::path::Path, e: &leveldb_table::Error) -> Option<String> {
    if let Some(msg) = sst_chrome::folder::not_leveldb(path) {
        return Some(msg);
    }
    if !matches!(e, leveldb_table::Error::NotADatabase { .. }) {
        return None;
    }
    if path.is_file() {
        use leveldb_table::db::files::FileKind;
        let what = match FileKind::of_path(path) {
            _ if ends_in_table_magic(path) => "a LevelDB table: open it with leveldb_table.Table",
            Some(FileKind::Log(_)) => "a write-ahead log of a LevelDB database: open its folder",
            Some(FileKind::Manifest(_)) => "a MANIFEST of a LevelDB database: open its folder",
            Some(FileKind::Current) => "the CURRENT file of a LevelDB database: open its folder",
            Some(FileKind::Lock | FileKind::InfoLog | FileKind::Temp(_)) => {
                "a file of a LevelDB database, not its data: open its folder"
            }
            Some(FileKind::Table(_)) | None => "a file, not a LevelDB database directory",
        };
        return Some(format!("{}: {what}", path.display()));
    }
    Some(format!("{}: {e}", path.display()))
}

/// Whether the file at `path` ends in LevelDB's table magic number.
fn ends_in_table_magic(path: &std::path::Path) -> bool {
    use std::io::{Read, Seek, SeekFrom};
    let mut tail = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| {
            f.seek(SeekFrom::End(-8))?;
            f.read_exact(&mut tail)
        })
        .is_ok_and(|()| u64::from_le_bytes(tail) == leveldb_table::raw::format::TABLE_MAGIC)
}

/// The live view of a database at a snapshot, as a batch source.
pub struct DbView {
    /// The database.
    pub db: Arc<Db>,
    /// The sequence read at.
    pub snapshot: u64,
}

impl DbView {
    /// [`Source::fill`] going backward (the library's database cursor, moved backward).
    fn fill_backward(
        &self,
        cmp: &dyn Comparator,
        bounds: &Bounds,
        resume: &Resume,
        batch: &mut Batch,
        max: usize,
    ) -> leveldb_table::Result<bool> {
        let mut view = self
            .db
            .iter(&ReadOptions::default().snapshot(Some(self.snapshot)));
        match resume {
            Resume::Done => return Ok(true),
            Resume::Start => match &bounds.stop {
                Some(s) => view.seek_before(s),
                None => view.seek_to_last(),
            },
            Resume::Past(k) => view.seek_before(k),
        }
        while view.valid() {
            if bounds.past_end(cmp, view.key()) {
                return Ok(true);
            }
            batch.push(view.key(), view.value());
            if batch.len() >= max || batch.bytes() >= MAX_BATCH_BYTES {
                return Ok(false);
            }
            view.prev();
        }
        view.status()?;
        Ok(true)
    }
}

impl Source for DbView {
    fn fill(
        &self,
        bounds: &Bounds,
        resume: &Resume,
        batch: &mut Batch,
        max: usize,
    ) -> leveldb_table::Result<bool> {
        let cmp: &dyn Comparator = &**self.db.internal_comparator().user_comparator();
        if bounds.reverse {
            return self.fill_backward(cmp, bounds, resume, batch, max);
        }
        let mut view = self
            .db
            .iter(&ReadOptions::default().snapshot(Some(self.snapshot)));
        match resume {
            Resume::Done => return Ok(true),
            Resume::Start => match &bounds.start {
                Some(s) => view.seek(s),
                None => view.seek_to_first(),
            },
            Resume::Past(k) => {
                view.seek(k);
                if view.valid() && cmp.compare(view.key(), k).is_eq() {
                    view.next();
                }
            }
        }
        while view.valid() {
            if bounds.past_end(cmp, view.key()) {
                return Ok(true);
            }
            batch.push(view.key(), view.value());
            if batch.len() >= max || batch.bytes() >= MAX_BATCH_BYTES {
                return Ok(false);
            }
            view.next();
        }
        view.status()?;
        Ok(true)
    }
}
