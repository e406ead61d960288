//! `Record`: one record of a database directory with what became of it and where it is to
//! the byte (the library's `db::reader::records`), named as `sst db records --format json` names
//! its fields.

use leveldb_table::raw::internal_key::ValueType;
use leveldb_table::{db::reader::DbRecord, db::reader::Location};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// One record of a database directory.
#[pyclass(module = "leveldb_table._native", name = "Record", frozen, get_all)]
pub struct PyRecord {
    /// The user key.
    key: Py<PyBytes>,
    /// The value (empty for a deletion).
    value: Py<PyBytes>,
    /// Its sequence number.
    seq: u64,
    /// `"value"` or `"deletion"`.
    kind: &'static str,
    /// `"live"`, `"shadowed"`, `"deleted"` or `"obsolete_file"`.
    status: &'static str,
    /// The file it is in, relative to the directory.
    file: String,
    /// Its data block's offset (tables) or its batch's offset (logs).
    offset: u64,
    /// Tables: the data block's offset.
    block_offset: Option<u64>,
    /// Tables: the data block's stored size (without its trailer).
    block_size: Option<u64>,
    /// Tables: the entry's offset in the decompressed block.
    offset_in_block: Option<u64>,
    /// Logs: the batch's first physical record's offset.
    batch_offset: Option<u64>,
    /// Logs: the record's offset in its batch.
    offset_in_batch: Option<u64>,
}

impl PyRecord {
    fn new(py: Python<'_>, r: &DbRecord) -> PyRecord {
        let (mut block_offset, mut block_size, mut offset_in_block) = (None, None, None);
        let (mut batch_offset, mut offset_in_batch) = (None, None);
        match r.location {
            Location::Table {
                block_offset: o,
                block_size: s,
                offset_in_block: i,
            } => (block_offset, block_size, offset_in_block) = (Some(o), Some(s), Some(i)),
            Location::Log {
                batch_offset: o,
                offset_in_batch: i,
            } => (batch_offset, offset_in_batch) = (Some(o), Some(i)),
        }
        PyRecord {
            key: PyBytes::new(py, &r.key).unbind(),
            value: PyBytes::new(py, &r.value).unbind(),
            seq: r.sequence,
            kind: match r.kind {
                ValueType::Value => "value",
                ValueType::Deletion => "deletion",
            },
            status: r.status.as_str(),
            file: r.file.clone(),
            offset: r.offset,
            block_offset,
            block_size,
            offset_in_block,
            batch_offset,
            offset_in_batch,
        }
    }
}

#[pymethods]
impl PyRecord {
    /// The fields as a dict (the location fields of the other kind of file left out), as
    /// `sst db records --format json` prints a row (bytes instead of hex).
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("key", &self.key)?;
        d.set_item("value", &self.value)?;
        d.set_item("seq", self.seq)?;
        d.set_item("kind", self.kind)?;
        d.set_item("status", self.status)?;
        d.set_item("file", &self.file)?;
        d.set_item("offset", self.offset)?;
        for (name, v) in [
            ("block_offset", self.block_offset),
            ("block_size", self.block_size),
            ("offset_in_block", self.offset_in_block),
            ("batch_offset", self.batch_offset),
            ("offset_in_batch", self.offset_in_batch),
        ] {
            if let Some(v) = v {
                d.set_item(name, v)?;
            }
        }
        Ok(d)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Record(key={}, seq={}, kind={:?}, status={:?}, file={:?}, offset={})",
            self.key
                .bind(py)
                .repr()
                .map_or_else(|_| "?".into(), |r| r.to_string()),
            self.seq,
            self.kind,
            self.status,
            self.file,
            self.offset
        )
    }
}

/// The records of a directory (read whole with the GIL released), each turned into a
/// `Record` when it is asked for.
#[pyclass(module = "leveldb_table._native", name = "RecordIterator")]
pub struct RecordIter {
    all: Vec<DbRecord>,
    next: usize,
}

impl RecordIter {
    /// An iterator over `all`.
    pub fn new(all: Vec<DbRecord>) -> Self {
        RecordIter { all, next: 0 }
    }
}

#[pymethods]
impl RecordIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyRecord>>> {
        let Some(r) = self.all.get(self.next) else {
            return Ok(None);
        };
        self.next += 1;
        Py::new(py, PyRecord::new(py, r)).map(Some)
    }

    /// Records not yet handed out.
    fn __len__(&self) -> usize {
        self.all.len() - self.next
    }
}
