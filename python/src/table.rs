//! `Table`: one table file (`.ldb`/`.sst`) opened read-only: point lookups (filter first),
//! scans in batches either way, whole-file verification, what the file says about itself.

use std::borrow::Cow;
use std::fs::File;
use std::path::PathBuf;
use std::sync::Arc;

use leveldb_table::raw::format::MAX_SEQUENCE;
use leveldb_table::raw::internal_key;
use leveldb_table::{
    table::FilterStatus, table::KeyFormat, Comparator, Lookup, OpenOptions, ReadOptions,
    TableReader,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::errors::{self, IntoPy};
use crate::scan::{Batch, Bounds, Resume, ScanIter, Source, MAX_BATCH_BYTES};
use leveldb_table::Cursor;

/// `Table.lookup`'s answer: kind, value, sequence.
type LookupTuple<'py> = (&'static str, Option<Bound<'py, PyBytes>>, Option<u64>);

/// An open table file.
#[pyclass(module = "leveldb_table._native", name = "Table", frozen)]
pub struct PyTable {
    table: Arc<TableReader<File>>,
    path: String,
    read: ReadOptions,
}

#[pymethods]
impl PyTable {
    /// Opens the table at `path` (`verify_checksums`: of every block read, as LevelDB's
    /// `paranoid_checks` and `ReadOptions.verify_checksums`). `comparator`: the key order by name (LevelDB's bytewise by
    /// default; `"idb_cmp1"` for Chrome IndexedDB tables); `keys`: `"auto"` (internal keys
    /// detected), `"plain"` or `"internal"`.
    #[new]
    #[pyo3(signature = (path, comparator = None, keys = "auto", verify_checksums = true))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        comparator: Option<&str>,
        keys: &str,
        verify_checksums: bool,
    ) -> PyResult<Self> {
        let mut opts = OpenOptions::default().verify_checksums(verify_checksums);
        opts = opts.keys(match keys {
            "auto" => KeyFormat::Auto,
            "plain" => KeyFormat::Plain,
            "internal" => KeyFormat::Internal,
            other => {
                return Err(PyValueError::new_err(format!(
                    "keys must be \"auto\", \"plain\" or \"internal\", not {other:?}"
                )))
            }
        });
        if let Some(name) = comparator {
            opts.comparator = comparator_named(name).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "unknown comparator {name:?} (known: leveldb.BytewiseComparator, idb_cmp1)"
                ))
            })?;
        }
        let shown = path.display().to_string();
        let table = py
            .detach(|| TableReader::open(File::open(&path)?, opts))
            .py_err(py, Some(&shown))?;
        Ok(PyTable {
            table: Arc::new(table),
            path: shown,
            read: ReadOptions::default(),
        })
    }

    /// The value of `key`, or `None`. In a database's table (internal keys) `key` is a user
    /// key: its newest version, or the newest at or below `at_seq`; a deletion is `None`.
    #[pyo3(signature = (key, at_seq = None))]
    fn get(
        &self,
        py: Python<'_>,
        key: Cow<'_, [u8]>,
        at_seq: Option<u64>,
    ) -> PyResult<Option<Py<PyBytes>>> {
        let mut value = Vec::new();
        let kind = py
            .detach(|| {
                self.table
                    .get_into(&key, &self.read.snapshot(at_seq), &mut value)
            })
            .py_err(py, Some(&self.path))?;
        Ok(match kind {
            Lookup::Found { .. } => Some(PyBytes::new(py, &value).unbind()),
            Lookup::Deleted { .. } | Lookup::NotFound => None,
        })
    }

    /// What the table holds for `key` (at or below `at_seq`): `("value", value, sequence)`,
    /// `("deletion", None, sequence)`, or `None` when it holds no version of it. Plain
    /// tables have no sequence (`None`).
    #[pyo3(signature = (key, at_seq = None))]
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        key: Cow<'_, [u8]>,
        at_seq: Option<u64>,
    ) -> PyResult<Option<LookupTuple<'py>>> {
        let mut value = Vec::new();
        let kind = py
            .detach(|| {
                self.table
                    .get_into(&key, &self.read.snapshot(at_seq), &mut value)
            })
            .py_err(py, Some(&self.path))?;
        Ok(match kind {
            Lookup::Found { sequence, .. } => {
                Some(("value", Some(PyBytes::new(py, &value)), sequence))
            }
            Lookup::Deleted { sequence } => Some(("deletion", None, Some(sequence))),
            Lookup::NotFound => None,
        })
    }

    /// `(key, value)` of every entry with `start <= key < stop`, in the table's order (last
    /// first with `reverse`). Keys are as stored: in a database's table, internal keys
    /// (user key + 8-byte tag; `parse_internal_key` splits them), and `start`/`stop` are
    /// user keys.
    #[pyo3(signature = (start = None, stop = None, reverse = false))]
    fn scan(&self, start: Option<Vec<u8>>, stop: Option<Vec<u8>>, reverse: bool) -> ScanIter {
        let internal = self.table.is_internal();
        // A user key's first version is the smallest internal key of that user key.
        let bound = |k: Vec<u8>| {
            if internal {
                let mut t = Vec::with_capacity(k.len() + 8);
                internal_key::lookup_key(&mut t, &k, MAX_SEQUENCE);
                t
            } else {
                k
            }
        };
        let bounds = Bounds {
            start: start.map(bound),
            stop: stop.map(bound),
            reverse,
        };
        let source = TableSource {
            table: self.table.clone(),
            path: self.path.clone(),
            read: self.read,
        };
        ScanIter::new(Box::new(source), bounds)
    }

    /// Checks every block's checksum, every entry, the key order and the filters:
    /// `{"ok", "problem_count", "problems", "data_blocks", "entries", "filter_checked"}`,
    /// each problem `{"kind", "message", "offset", "block"}`.
    fn verify<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let report = py.detach(|| self.table.verify());
        let problems = PyList::empty(py);
        for e in &report.problems {
            problems.append(errors::describe(py, e)?)?;
        }
        let d = PyDict::new(py);
        d.set_item("ok", report.is_ok())?;
        d.set_item("problem_count", report.problem_count)?;
        d.set_item("problems", problems)?;
        d.set_item("data_blocks", report.data_blocks)?;
        d.set_item("entries", report.entries)?;
        d.set_item("filter_checked", report.filter_checked)?;
        Ok(d)
    }

    /// What the footer, index and metaindex say (no data block is read): sizes, key format,
    /// order, filter, handles.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let t = &self.table;
        let handles = py
            .detach(|| t.data_block_handles())
            .py_err(py, Some(&self.path))?;
        let handle = |h: leveldb_table::raw::format::BlockHandle| (h.offset, h.size);
        let footer = t.footer();
        let d = PyDict::new(py);
        d.set_item("file_size", t.file_size())?;
        d.set_item("data_end", t.data_end())?;
        d.set_item("data_blocks", handles.len())?;
        d.set_item("internal_keys", t.is_internal())?;
        d.set_item("comparator", t.comparator().name())?;
        d.set_item("index", handle(footer.index))?;
        d.set_item("metaindex", handle(footer.metaindex))?;
        let meta = PyList::empty(py);
        for (name, h) in t.metaindex() {
            meta.append((PyBytes::new(py, name), handle(*h)))?;
        }
        d.set_item("meta_blocks", meta)?;
        d.set_item("filter", t.filter_handle().map(handle))?;
        let status = match t.filter_status() {
            FilterStatus::Used => "used".to_string(),
            FilterStatus::Absent => "absent".to_string(),
            FilterStatus::UnknownPolicy(name) => format!("unknown policy {name}"),
            FilterStatus::Disabled => "disabled".to_string(),
            FilterStatus::Unreadable(e) => format!("unreadable: {e}"),
        };
        d.set_item("filter_status", status)?;
        Ok(d)
    }

    /// The file.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// Whether the keys are a database's internal keys.
    #[getter]
    fn internal_keys(&self) -> bool {
        self.table.is_internal()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&self, _args: &Bound<'_, pyo3::types::PyTuple>) {}

    fn __repr__(&self) -> String {
        format!("Table({:?})", self.path)
    }
}

/// A table as a batch source.
struct TableSource {
    table: Arc<TableReader<File>>,
    path: String,
    read: ReadOptions,
}

impl Source for TableSource {
    fn fill(
        &self,
        bounds: &Bounds,
        resume: &Resume,
        batch: &mut Batch,
        max: usize,
    ) -> leveldb_table::Result<bool> {
        let cmp: &dyn Comparator = self.table.comparator();
        let mut it = self.table.iter(&self.read);
        match (resume, bounds.reverse) {
            (Resume::Done, _) => return Ok(true),
            (Resume::Start, false) => match &bounds.start {
                Some(s) => it.seek(s),
                None => it.seek_to_first(),
            },
            (Resume::Past(k), false) => {
                it.seek(k);
                if it.valid() && cmp.compare(it.key(), k).is_eq() {
                    it.next();
                }
            }
            // Going backward: the last entry before `stop` (or before the key handed out).
            (Resume::Start, true) | (Resume::Past(_), true) => {
                let before = match resume {
                    Resume::Past(k) => Some(k.as_slice()),
                    _ => bounds.stop.as_deref(),
                };
                match before {
                    Some(k) => {
                        it.seek(k);
                        if it.valid() {
                            it.prev();
                        } else if it.status().is_ok() {
                            it.seek_to_last();
                        }
                    }
                    None => it.seek_to_last(),
                }
            }
        }
        while it.valid() {
            if bounds.past_end(cmp, it.key()) {
                return Ok(true);
            }
            batch.push(it.key(), it.value());
            if batch.len() >= max || batch.bytes() >= MAX_BATCH_BYTES {
                return Ok(false);
            }
            if bounds.reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status()?;
        Ok(true)
    }

    fn file(&self) -> Option<&str> {
        Some(&self.path)
    }
}

/// The order named `name` (as a MANIFEST records it): bytewise or Chrome's `idb_cmp1`.
fn comparator_named(name: &str) -> Option<Arc<dyn Comparator>> {
    if name == leveldb_table::BytewiseComparator.name() {
        Some(Arc::new(leveldb_table::BytewiseComparator))
    } else if name == sst_chrome::idb::format::IDB_COMPARATOR_NAME {
        Some(Arc::new(sst_chrome::idb::IdbComparator))
    } else {
        None
    }
}
