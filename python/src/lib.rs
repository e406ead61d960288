//! `leveldb_table._native`: the Python binding of the `leveldb-table` crate, built by
//! maturin into the `leveldb_table` package (`python/leveldb_table/`).
//!
//! A thin layer: it converts arguments and results, releases the GIL while the library
//! reads, and hands scans out in batches. Everything else is the library's.
//!
//! ```text
//! lib (module) -> db (Db), table (Table) -> idb_lookup (Db.indexeddb_get) -> chrome
//!              (IndexedDB, localStorage), scan (batched iterators), records, info
//!              -> v8py (Chrome values as Python) -> v8py_host (Blink's objects)
//!              -> py_types (the chrome module's classes, JavaScript's primitives),
//!              errors (library errors as leveldb_table.errors exceptions)
//! ```

use std::borrow::Cow;

use leveldb_table::raw::internal_key;
use leveldb_table::raw::internal_key::ValueType;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

mod chrome;
mod db;
mod errors;
mod idb_lookup;
mod info;
mod py_types;
mod records;
mod scan;
mod sqlite;
mod table;
mod v8py;
mod v8py_host;

/// `(user_key, sequence, kind)` of a database's internal key (`kind` is `"value"` or
/// `"deletion"`), or `None` when the bytes are not an internal key.
#[pyfunction]
fn parse_internal_key<'py>(
    py: Python<'py>,
    key: Cow<'_, [u8]>,
) -> Option<(Bound<'py, PyBytes>, u64, &'static str)> {
    internal_key::parse_internal_key(&key).map(|p| {
        let kind = match p.value_type {
            ValueType::Value => "value",
            ValueType::Deletion => "deletion",
        };
        (PyBytes::new(py, p.user_key), p.sequence, kind)
    })
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<db::PyDb>()?;
    m.add_class::<table::PyTable>()?;
    m.add_class::<records::PyRecord>()?;
    m.add_class::<records::RecordIter>()?;
    m.add_class::<scan::ScanIter>()?;
    m.add_class::<chrome::IdbIter>()?;
    m.add_class::<chrome::PyIdbRecord>()?;
    m.add_class::<chrome::StorageIter>()?;
    m.add_function(wrap_pyfunction!(parse_internal_key, m)?)?;
    m.add_function(wrap_pyfunction!(chrome::decode_v8, m)?)?;
    m.add_class::<sqlite::PySqliteIdb>()?;
    m.add_function(wrap_pyfunction!(sqlite::profile, m)?)?;
    Ok(())
}
