//! Chromium's SQLite IndexedDB from Python (`SqliteIndexedDb`): an origin's folder (or one
//! database file) read as of its last commit, the `-wal` included, nothing written; its
//! records as `IdbRecord`s, the older row versions the files still hold, Blobs' bytes; and
//! `profile()`, every storage area of a Chrome or Electron profile.

use std::path::PathBuf;
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use sst_chrome::idb::sqlite::{
    decompress, older_records, open_folder, RowPlace, SqliteDatabase, SqliteRecord,
};
use sst_chrome::v8value::decode;

use crate::chrome::PyIdbRecord;
use crate::errors::chrome_to_py;
use crate::py_types::{self, BlobCtx};
use crate::v8py;

/// The databases of an origin's SQLite IndexedDB folder.
#[pyclass(module = "leveldb_table._native", name = "SqliteIndexedDb")]
pub struct PySqliteIdb {
    path: PathBuf,
    dbs: Mutex<Vec<SqliteDatabase>>,
}

/// `rec` of database `i` (1-based) as an `IdbRecord`.
fn record(
    py: Python<'_>,
    db: &SqliteDatabase,
    i: usize,
    rec: SqliteRecord<'_>,
) -> PyResult<Py<PyAny>> {
    let key = match rec.idb_key() {
        Ok(k) => py_types::idb_key(py, &k)?,
        Err(_) => py.None().into_bound(py),
    };
    let (mut value, mut error) = (py.None().into_bound(py), None);
    let found = rec
        .idb_key()
        .and_then(|_| decompress(rec.compression, rec.value));
    match found {
        Err(e) => error = Some(e.to_string()),
        Ok(bytes) => match (decode(&bytes), db.blobs(rec.row_id)) {
            (Err(e), _) => error = Some(e.to_string()),
            (_, Err(e)) => error = Some(e.to_string()),
            (Ok(d), Ok(blobs)) => {
                let list: Vec<_> = blobs.iter().map(|b| b.object.clone()).collect();
                let files: Vec<_> = blobs.iter().map(|b| b.legacy_file.clone()).collect();
                let ctx = BlobCtx {
                    list: Some(&list),
                    dir: None,
                    database: i as i64,
                    sqlite_files: Some(&files),
                };
                value = v8py::decoded(py, &d, ctx)?;
            }
        },
    }
    let store = db.info.stores.get(&rec.store).and_then(|s| s.name.clone());
    let r = PyIdbRecord::sqlite(
        db.info.name.clone(),
        store,
        (i as i64, rec.store),
        key.unbind(),
        value.unbind(),
        error,
        PyBytes::new(py, rec.key).unbind(),
        PyBytes::new(py, rec.value).unbind(),
    );
    Ok(Bound::new(py, r)?.into_any().unbind())
}

#[pymethods]
impl PySqliteIdb {
    /// Reads the folder (`IndexedDB/<origin>/`) or database file at `path`.
    #[new]
    fn new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let dbs = py
            .detach(|| open_folder(&path))
            .map_err(|e| chrome_to_py(py, e, None))?;
        if dbs.is_empty() {
            return Err(PyValueError::new_err(format!(
                "{}: no SQLite database here",
                path.display()
            )));
        }
        Ok(PySqliteIdb {
            path,
            dbs: Mutex::new(dbs),
        })
    }

    /// The databases' names, in the order they are read.
    #[getter]
    fn databases(&self) -> Vec<Option<String>> {
        let dbs = self.dbs.lock().unwrap_or_else(|e| e.into_inner());
        dbs.iter().map(|d| d.info.name.clone()).collect()
    }

    /// Every record (each store's in key order), as `leveldb_table.chrome.IdbRecord`s;
    /// only those of the database and store named, if given.
    #[pyo3(signature = (database = None, store = None))]
    fn indexeddb(
        &self,
        py: Python<'_>,
        database: Option<&str>,
        store: Option<&str>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let dbs = self.dbs.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for (i, db) in dbs.iter().enumerate() {
            if database.is_some_and(|n| db.info.name.as_deref() != Some(n)) {
                continue;
            }
            for (&id, s) in &db.info.stores {
                if store.is_some_and(|n| s.name.as_deref() != Some(n)) {
                    continue;
                }
                let mut failed = None;
                db.for_each_record(id, |r| match record(py, db, i + 1, r) {
                    Ok(o) => {
                        out.push(o);
                        Ok(true)
                    }
                    Err(e) => {
                        failed = Some(e);
                        Ok(false)
                    }
                })
                .map_err(|e| chrome_to_py(py, e, None))?;
                if let Some(e) = failed {
                    return Err(e);
                }
            }
        }
        Ok(out)
    }

    /// The older versions of records the files still hold: dicts with `status`
    /// (`shadowed`, `deleted`, `uncommitted`), `file`, `place` (`wal_frame`, `main_page`,
    /// `free_page`), `page`, `frame` and `offset` where they apply, `copies`, `record`.
    fn older_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let dbs = self.dbs.lock().unwrap_or_else(|e| e.into_inner());
        let out = PyList::empty(py);
        for (i, db) in dbs.iter().enumerate() {
            let name = db
                .path()
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            for o in older_records(db).map_err(|e| chrome_to_py(py, e, None))? {
                let d = PyDict::new(py);
                d.set_item("status", o.status.as_str())?;
                match o.place {
                    RowPlace::WalFrame {
                        frame,
                        offset,
                        page,
                    } => {
                        d.set_item("file", format!("{name}-wal"))?;
                        d.set_item("place", "wal_frame")?;
                        d.set_item("frame", frame)?;
                        d.set_item("page", page)?;
                        d.set_item("offset", offset)?;
                    }
                    RowPlace::MainPage { page, offset } => {
                        d.set_item("file", &name)?;
                        d.set_item("place", "main_page")?;
                        d.set_item("page", page)?;
                        d.set_item("offset", offset)?;
                    }
                    RowPlace::FreePage { page } => {
                        d.set_item("file", &name)?;
                        d.set_item("place", "free_page")?;
                        d.set_item("page", page)?;
                    }
                }
                d.set_item("copies", o.copies)?;
                let rec = SqliteRecord {
                    row_id: o.row_id,
                    store: o.store,
                    key: &o.key,
                    compression: o.compression,
                    value: &o.value,
                };
                d.set_item("record", record(py, db, i + 1, rec)?)?;
                out.append(d)?;
            }
        }
        Ok(out)
    }

    /// The bytes of blob `blob_row_id` of the database named `database`.
    fn blob<'py>(
        &self,
        py: Python<'py>,
        database: &str,
        blob_row_id: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let dbs = self.dbs.lock().unwrap_or_else(|e| e.into_inner());
        let db = dbs
            .iter()
            .find(|d| d.info.name.as_deref() == Some(database))
            .ok_or_else(|| PyValueError::new_err(format!("no database named {database:?}")))?;
        let bytes = db
            .blob_bytes(blob_row_id)
            .map_err(|e| chrome_to_py(py, e, None))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Per database: name, version, file, records, and what its files hold (pages, the
    /// log's frames and commits).
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let dbs = self.dbs.lock().unwrap_or_else(|e| e.into_inner());
        let out = PyList::empty(py);
        for db in dbs.iter() {
            let d = PyDict::new(py);
            d.set_item("name", db.info.name.clone())?;
            d.set_item("version", db.info.version)?;
            d.set_item("file", db.path().to_string_lossy())?;
            d.set_item(
                "records",
                db.record_count().map_err(|e| chrome_to_py(py, e, None))?,
            )?;
            let stores = PyDict::new(py);
            for s in db.info.stores.values() {
                stores.set_item(
                    s.name.clone(),
                    s.indexes
                        .values()
                        .map(|i| i.name.clone())
                        .collect::<Vec<_>>(),
                )?;
            }
            d.set_item("stores", stores)?;
            let f = &db.files;
            d.set_item("pages", f.pages)?;
            d.set_item("page_size", f.page_size)?;
            d.set_item("wal_bytes", f.wal_len)?;
            d.set_item("wal_frames", f.wal.frames.len())?;
            d.set_item("wal_commits", f.wal.commits())?;
            d.set_item("pages_only_in_wal", f.pages_from_wal)?;
            out.append(d)?;
        }
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!("SqliteIndexedDb({:?})", self.path.display().to_string())
    }
}

/// Every storage area of a Chrome or Electron profile or user-data folder (`sst profile`):
/// dicts with `kind`, `origin`, `backend`, `path`, `records`, `databases`, `damage`.
#[pyfunction]
pub fn profile<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyList>> {
    let areas = py
        .detach(|| sst_chrome::profile::survey(&path))
        .map_err(|e| chrome_to_py(py, e, None))?;
    let out = PyList::empty(py);
    for a in areas {
        let d = PyDict::new(py);
        d.set_item("kind", a.kind.as_str())?;
        d.set_item("origin", a.origin)?;
        d.set_item("backend", a.backend.map(|b| b.as_str()))?;
        d.set_item("path", a.path.to_string_lossy())?;
        d.set_item("records", a.records)?;
        d.set_item("databases", a.databases)?;
        d.set_item("damage", a.damage)?;
        out.append(d)?;
    }
    Ok(out)
}
