//! Chrome's storage from Python: IndexedDB object-store records with names and decoded
//! values (`Db.indexeddb()`), localStorage and sessionStorage items as text
//! (`Db.local_storage()`, `Db.session_storage()`), and `decode_v8()` for a value's bytes.
//! Entries are read in batches with the GIL released (`scan::Batches`); IndexedDB keys are
//! decoded and values found (snappy, blob files) without the GIL too; then values are
//! decoded and turned into `leveldb_table.chrome` objects.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

use leveldb_table::db::reader::Db;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use sst_chrome::dom_storage::{
    decode_local_storage, decode_session_storage, session_maps, LocalStorageEntry,
    SessionStorageEntry, StorageText,
};
use sst_chrome::idb::{
    decode_key, idb_blob_list, idb_value, Catalog, DecodedKey, IdbValue, KeyBody,
};
use sst_chrome::v8value::{decode, Object};

use crate::py_types::{self, classes, BlobCtx};
use crate::scan::{next_converted, Batches};
use crate::v8py;

/// The names and blob folder of an IndexedDB directory.
pub struct IdbContext {
    pub catalog: Catalog,
    pub blob_dir: Option<PathBuf>,
    /// Only these (database id, store id or all) when a filter was given.
    pub keep: Option<Vec<(i64, Option<i64>)>>,
}

/// One object-store record of a Chrome IndexedDB directory.
#[pyclass(module = "leveldb_table.chrome", name = "IdbRecord", frozen, get_all)]
pub struct PyIdbRecord {
    /// The database's name (`None` when the metadata does not name it).
    database: Option<String>,
    /// The object store's name.
    store: Option<String>,
    /// The database's id.
    database_id: i64,
    /// The object store's id.
    store_id: i64,
    /// The record's IndexedDB key (number, str, bytes, datetime, list).
    key: Py<PyAny>,
    /// The decoded value (`None` with `error` set when it does not decode).
    value: Py<PyAny>,
    /// What stopped the value from decoding, and where.
    error: Option<String>,
    /// The record's version.
    version: i64,
    /// The key as stored.
    raw_key: Py<PyBytes>,
    /// The value as stored.
    raw_value: Py<PyBytes>,
}

impl PyIdbRecord {
    /// A record of Chromium's SQLite backend (no version: the backend keeps none).
    #[allow(clippy::too_many_arguments)]
    pub fn sqlite(
        database: Option<String>,
        store: Option<String>,
        ids: (i64, i64),
        key: Py<PyAny>,
        value: Py<PyAny>,
        error: Option<String>,
        raw_key: Py<PyBytes>,
        raw_value: Py<PyBytes>,
    ) -> Self {
        PyIdbRecord {
            database,
            store,
            database_id: ids.0,
            store_id: ids.1,
            key,
            value,
            error,
            version: 0,
            raw_key,
            raw_value,
        }
    }
}

#[pymethods]
impl PyIdbRecord {
    fn __repr__(&self, py: Python<'_>) -> String {
        let r = |o: &Py<PyAny>| {
            o.bind(py)
                .repr()
                .map_or_else(|_| "?".into(), |r| r.to_string())
        };
        let name = |n: &Option<String>| n.as_ref().map_or("None".into(), |n| format!("{n:?}"));
        format!(
            "IdbRecord(database={}, store={}, key={}, value={}, error={}, version={})",
            name(&self.database),
            name(&self.store),
            r(&self.key),
            r(&self.value),
            name(&self.error),
            self.version
        )
    }
}

/// Object-store records of a Chrome IndexedDB directory, decoded.
#[pyclass(module = "leveldb_table._native", name = "IndexedDbIterator")]
pub struct IdbIter {
    db: Arc<Db>,
    ctx: IdbContext,
    batches: Batches,
    ready: VecDeque<Py<PyAny>>,
}

/// An object-store record of a batch, prepared without the GIL: its key decoded, the filter
/// applied, its serialized value found (snappy-decompressed, or read from its blob file).
pub(crate) struct Prepared<'b> {
    key: &'b [u8],
    value: &'b [u8],
    decoded: DecodedKey,
    found: sst_chrome::Result<IdbValue<'b>>,
}

impl IdbIter {
    /// Records of `db` read by `batches`.
    pub fn new(db: Arc<Db>, ctx: IdbContext, batches: Batches) -> Self {
        IdbIter {
            db,
            ctx,
            batches,
            ready: VecDeque::new(),
        }
    }

    /// The entry (`key`, `value`) prepared, or `None` when it is not an object-store record
    /// the filter keeps. Rust only: runs with the GIL released.
    pub(crate) fn prepare<'b>(
        db: &Db,
        ctx: &IdbContext,
        key: &'b [u8],
        value: &'b [u8],
    ) -> Option<Prepared<'b>> {
        let decoded = decode_key(key)?;
        if !matches!(decoded.body, KeyBody::Record(_)) {
            return None;
        }
        let p = decoded.prefix;
        if let Some(keep) = &ctx.keep {
            if !keep
                .iter()
                .any(|(db, st)| *db == p.database && st.is_none_or(|s| s == p.store))
            {
                return None;
            }
        }
        let found = idb_value(Some(db), ctx.blob_dir.as_deref(), key, value);
        Some(Prepared {
            key,
            value,
            decoded,
            found,
        })
    }

    /// The prepared record as an `IdbRecord`: its value decoded and made Python objects.
    pub(crate) fn record(
        db: &Arc<Db>,
        ctx: &IdbContext,
        py: Python<'_>,
        rec: Prepared<'_>,
    ) -> PyResult<Py<PyAny>> {
        let p = rec.decoded.prefix;
        let db_info = ctx.catalog.database(p.database);
        let store = ctx.catalog.store(p.database, p.store);
        let key_obj = match &rec.decoded.body {
            KeyBody::Record(Some(k)) => py_types::idb_key(py, k)?,
            _ => py.None().into_bound(py),
        };
        let (mut data, mut error, mut version) = (py.None().into_bound(py), None, 0i64);
        match rec.found {
            Err(e) => error = Some(e.to_string()),
            Ok(v) => {
                version = v.version;
                match v.decode() {
                    Err(e) => error = Some(e.to_string()),
                    Ok(decoded) => {
                        let needs_list = decoded
                            .objects
                            .iter()
                            .any(|o| matches!(o, Object::Host(h) if h.uses_blob_list()));
                        // Rare (values holding Blobs or Files): a lookup, without the GIL.
                        let looked_up = match (&v.blobs, needs_list) {
                            (None, true) => py.detach(|| idb_blob_list(db, rec.key).ok()),
                            _ => None,
                        };
                        let blobs = BlobCtx {
                            list: v.blobs.as_deref().or(looked_up.as_deref()),
                            dir: ctx.blob_dir.as_deref(),
                            database: p.database,
                            sqlite_files: None,
                        };
                        data = v8py::decoded(py, &decoded, blobs)?;
                    }
                }
            }
        }
        let rec = PyIdbRecord {
            database: db_info.and_then(|x| x.name.clone()),
            store: store.and_then(|x| x.name.clone()),
            database_id: p.database,
            store_id: p.store,
            key: key_obj.unbind(),
            value: data.unbind(),
            error,
            version,
            raw_key: PyBytes::new(py, rec.key).unbind(),
            raw_value: PyBytes::new(py, rec.value).unbind(),
        };
        Ok(Bound::new(py, rec)?.into_any().unbind())
    }
}

#[pymethods]
impl IdbIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Why names may be missing (the metadata was read past damage under salvage), or
    /// `None` when every metadata record was read.
    #[getter]
    fn names_partial(&self) -> Option<String> {
        self.ctx.catalog.partial.clone()
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                return Ok(Some(r));
            }
            let (db, ctx) = (&self.db, &self.ctx);
            let Some(batch) = self.batches.next_batch(py)? else {
                return Ok(None);
            };
            let prepared: Vec<Prepared<'_>> = py.detach(|| {
                batch
                    .entries()
                    .filter_map(|(k, v)| Self::prepare(db, ctx, k, v))
                    .collect()
            });
            for rec in prepared {
                self.ready.push_back(Self::record(db, ctx, py, rec)?);
            }
        }
    }
}

/// localStorage or sessionStorage.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `Local Storage/leveldb`.
    Local,
    /// `Session Storage`.
    Session,
}

/// The items of a localStorage or sessionStorage directory.
#[pyclass(module = "leveldb_table._native", name = "StorageIterator")]
pub struct StorageIter {
    area: Area,
    maps: BTreeMap<i64, (Vec<String>, String)>,
    batches: Batches,
    ready: VecDeque<Py<PyAny>>,
}

impl StorageIter {
    /// Items of `db` (as `area`) read by `batches`.
    ///
    /// # Errors
    /// sessionStorage's maps cannot be read.
    pub fn new(db: &Db, area: Area, batches: Batches) -> sst_chrome::Result<Self> {
        let maps = match area {
            Area::Session => session_maps(db)?,
            Area::Local => BTreeMap::new(),
        };
        Ok(StorageIter {
            area,
            maps,
            batches,
            ready: VecDeque::new(),
        })
    }

    /// The record (`key`, `value`) as a `StorageItem`, or `None` when it is not an item.
    fn item(
        area: Area,
        maps: &BTreeMap<i64, (Vec<String>, String)>,
        py: Python<'_>,
        key: &[u8],
        value: &[u8],
    ) -> PyResult<Option<Py<PyAny>>> {
        let text = |t: &StorageText<'_>| -> PyResult<Py<PyAny>> {
            match t {
                StorageText::Text(s) => py_types::js_str(py, s).map(Bound::unbind),
                StorageText::Corrupt(_) => Ok(py.None()),
            }
        };
        let kw = PyDict::new(py);
        match area {
            Area::Local => {
                let Some(LocalStorageEntry::Item {
                    origin,
                    key: k,
                    value: v,
                }) = decode_local_storage(key, value)
                else {
                    return Ok(None);
                };
                kw.set_item("origin", String::from_utf8_lossy(origin))?;
                kw.set_item("key", text(&k)?)?;
                kw.set_item("value", text(&v)?)?;
            }
            Area::Session => {
                let Some(SessionStorageEntry::Item {
                    map,
                    key: k,
                    value: v,
                }) = decode_session_storage(key, value)
                else {
                    return Ok(None);
                };
                let (namespaces, origin) = maps.get(&map).cloned().unwrap_or_default();
                kw.set_item("origin", (!namespaces.is_empty()).then_some(origin))?;
                kw.set_item("key", py_types::js_str(py, &k)?)?;
                kw.set_item("value", text(&v)?)?;
                kw.set_item("namespaces", pyo3::types::PyTuple::new(py, namespaces)?)?;
                kw.set_item("map", map)?;
            }
        }
        kw.set_item("raw_key", PyBytes::new(py, key))?;
        kw.set_item("raw_value", PyBytes::new(py, value))?;
        let c = classes(py)?;
        Ok(Some(
            c.class(py, "StorageItem")?.call((), Some(&kw))?.unbind(),
        ))
    }
}

#[pymethods]
impl StorageIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let (area, maps) = (self.area, &self.maps);
        next_converted(&mut self.batches, &mut self.ready, py, |py, k, v| {
            Self::item(area, maps, py, k, v)
        })
    }
}

/// A value Chrome serialized (V8's format inside Blink's envelope, as IndexedDB,
/// `postMessage` and `history.state` keep them) as a Python object; Blobs and Files are
/// named by their index (no record to resolve them).
#[pyfunction]
pub fn decode_v8<'py>(py: Python<'py>, data: Cow<'_, [u8]>) -> PyResult<Bound<'py, PyAny>> {
    let d = decode(&data).map_err(|e| PyValueError::new_err(e.to_string()))?;
    v8py::decoded(py, &d, BlobCtx::default())
}
