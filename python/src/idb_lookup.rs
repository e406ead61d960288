//! `Db.indexeddb_get(key, store, database=None)`: one record of a Chrome IndexedDB
//! directory by its IndexedDB key, as `sst db get DIR --database D --store S KEY` finds it:
//! the key (a Python value, as `Db.indexeddb()` gives keys) encoded into its record's
//! LevelDB key as Chromium encodes it, then one filter-first `Db::get`.
//!
//! ```text
//! int, float     number (not NaN, not bool)     str        string (lone surrogates kept)
//! datetime       date (aware; chrome.Date too)  bytes...   binary (bytearray, memoryview,
//! list, tuple    array                                     chrome.TypedArray's data)
//! ```

use std::path::Path;
use std::sync::Arc;

use leveldb_table::db::reader::Db;
use leveldb_table::ReadOptions;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyFloat, PyInt, PyList, PyMemoryView, PyString, PyTuple,
};
use sst_chrome::idb::format::{IDB_COMPARATOR_NAME, MAX_KEY_DEPTH};
use sst_chrome::idb::{idb_blob_dir, idb_catalog, Catalog, IdbKey};

use crate::chrome::{IdbContext, IdbIter};
use crate::errors::IntoPy;
use crate::py_types::{classes, Classes};

/// The record of `store` (of `database`, if named) whose key is `key`, as an `IdbRecord`;
/// `None` when there is none (never written, or deleted).
///
/// # Errors
/// Not an IndexedDB directory; no such database or store, or a store name several
/// databases share without `database`; a key that is not an IndexedDB key; a read error.
pub fn indexeddb_get(
    py: Python<'_>,
    db: Arc<Db>,
    path: &Path,
    key: &Bound<'_, PyAny>,
    store: &str,
    database: Option<&str>,
) -> PyResult<Option<Py<PyAny>>> {
    if db.comparator_name() != IDB_COMPARATOR_NAME {
        return Err(PyValueError::new_err(format!(
            "{}: not a Chrome IndexedDB directory (its order is {}, not idb_cmp1)",
            path.display(),
            db.comparator_name()
        )));
    }
    let k = py_key(key, classes(py)?, 0)?;
    let catalog = py.detach(|| idb_catalog(&db)).py_err(py, None)?;
    let (database_id, store_id) = the_store(&catalog, path, store, database)?;
    let record_key = k.record_key(database_id, store_id);
    let found = py
        .detach(|| db.get(&record_key, &ReadOptions::default()))
        .py_err(py, None)?;
    let Some(value) = found.value() else {
        return Ok(None);
    };
    let ctx = IdbContext {
        catalog,
        blob_dir: idb_blob_dir(path),
        keep: None,
    };
    let Some(rec) = IdbIter::prepare(&db, &ctx, &record_key, value) else {
        return Ok(None);
    };
    IdbIter::record(&db, &ctx, py, rec).map(Some)
}

/// The (database id, store id) of the store named.
fn the_store(
    c: &Catalog,
    path: &Path,
    store: &str,
    database: Option<&str>,
) -> PyResult<(i64, i64)> {
    let mut found = Vec::new();
    for (id, d) in &c.databases {
        if database.is_some_and(|n| d.name.as_deref() != Some(n)) {
            continue;
        }
        found.extend(
            d.stores
                .iter()
                .filter(|(_, s)| s.name.as_deref() == Some(store))
                .map(|(sid, _)| (*id, *sid)),
        );
    }
    match found[..] {
        [one] => Ok(one),
        [] => Err(PyValueError::new_err(format!(
            "{}: no object store named {store:?}{}",
            path.display(),
            database.map_or(String::new(), |d| format!(" in a database named {d:?}"))
        ))),
        _ => Err(PyValueError::new_err(format!(
            "{}: {} databases have an object store named {store:?}; say which with database=",
            path.display(),
            found.len()
        ))),
    }
}

/// A Python value as the IndexedDB key it stands for (module docs).
fn py_key(o: &Bound<'_, PyAny>, c: &Classes, depth: usize) -> PyResult<IdbKey> {
    let py = o.py();
    let not_a_key = |what: &str| PyTypeError::new_err(format!("{what} is not an IndexedDB key"));
    if o.is_instance_of::<PyBool>() {
        return Err(not_a_key("a bool"));
    }
    if o.is_instance(&c.class(py, "BigInt")?)? {
        return Err(not_a_key("a BigInt"));
    }
    if o.is_instance_of::<PyInt>() || o.is_instance_of::<PyFloat>() {
        let x: f64 = o.extract()?;
        if x.is_nan() {
            return Err(PyValueError::new_err("NaN is not an IndexedDB key"));
        }
        return Ok(IdbKey::Number(x));
    }
    if o.is_instance_of::<PyString>() {
        let b = o.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
        let b = b.cast::<PyBytes>()?.as_bytes();
        return Ok(IdbKey::String(
            b.chunks_exact(2)
                .map(|p| u16::from_le_bytes([p[0], p[1]]))
                .collect(),
        ));
    }
    if o.is_instance_of::<PyBytes>()
        || o.is_instance_of::<PyByteArray>()
        || o.is_instance_of::<PyMemoryView>()
    {
        let b = py.get_type::<PyBytes>().call1((o,))?;
        return Ok(IdbKey::Binary(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    if o.is_instance(&c.class(py, "TypedArray")?)? {
        return py_key(&o.getattr("data")?, c, depth);
    }
    if o.is_instance(c.datetime.bind(py))? {
        if o.call_method0("utcoffset")?.is_none() {
            return Err(PyValueError::new_err(
                "a naive datetime is no date key: give it a timezone (dates are UTC instants)",
            ));
        }
        let epoch = c
            .datetime
            .bind(py)
            .call((1970, 1, 1, 0, 0, 0, 0, c.utc.bind(py)), None)?;
        let td = o.call_method1("__sub__", (epoch,))?;
        let (days, secs, us): (i64, i64, i64) = (
            td.getattr("days")?.extract()?,
            td.getattr("seconds")?.extract()?,
            td.getattr("microseconds")?.extract()?,
        );
        return Ok(IdbKey::Date(
            (days * 86_400_000 + secs * 1000) as f64 + us as f64 / 1000.0,
        ));
    }
    if o.is_instance(c.date.bind(py))? {
        let ms: f64 = o.getattr("ms")?.extract()?;
        if !ms.is_finite() {
            return Err(PyValueError::new_err(
                "an invalid date is not an IndexedDB key",
            ));
        }
        return Ok(IdbKey::Date(ms + 0.0));
    }
    if o.is_instance_of::<PyList>() || o.is_instance_of::<PyTuple>() {
        if depth >= MAX_KEY_DEPTH {
            return Err(PyValueError::new_err(
                "arrays nested deeper than Chromium allows are not IndexedDB keys",
            ));
        }
        let mut items = Vec::new();
        for item in o.try_iter()? {
            items.push(py_key(&item?, c, depth + 1)?);
        }
        return Ok(IdbKey::Array(items));
    }
    Err(not_a_key(&format!("a {}", o.get_type().name()?)))
}
