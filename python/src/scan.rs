//! Streaming scans in batches: a [`Source`] reads up to a batch of entries with the GIL
//! released into one buffer ([`Batch`]); [`ScanIter`] turns them into `(key, value)` tuples
//! and hands them out one by one; the next batch resumes after the last key handed out.
//!
//! ```text
//! __next__: buffer empty? -> detach GIL: source.fill(bounds, resume, batch)  (Rust only)
//!                         -> attach: batch -> [(k, v), ...]                  (PyBytes)
//!           pop one
//! batch size: 16, 32, ... 4096 entries (or 4 MiB of keys and values): a caller that takes
//! one entry reads little, a full scan pays the Python-object step once per batch
//! ```
//!
//! Resuming re-positions a fresh cursor at the last key handed out (a seek per batch), so
//! the iterator holds no borrow of the database or table and can live on its own.

use std::cmp::Ordering;
use std::collections::VecDeque;

use leveldb_table::Comparator;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::errors::to_py;

/// Fewest and most entries per batch.
const FIRST_BATCH: usize = 16;
const MAX_BATCH: usize = 4096;
/// A batch stops growing past this many bytes of keys and values.
pub const MAX_BATCH_BYTES: usize = 4 << 20;

/// The key range of a scan: `start <= key < stop`, in the source's order.
#[derive(Clone, Default)]
pub struct Bounds {
    /// First key (inclusive).
    pub start: Option<Vec<u8>>,
    /// End key (exclusive).
    pub stop: Option<Vec<u8>>,
    /// Last key first.
    pub reverse: bool,
}

impl Bounds {
    /// Whether `key` is past the far end of the range (after `stop` going forward, before
    /// `start` going backward).
    pub fn past_end(&self, cmp: &dyn Comparator, key: &[u8]) -> bool {
        if self.reverse {
            self.start
                .as_deref()
                .is_some_and(|s| cmp.compare(key, s) == Ordering::Less)
        } else {
            self.stop
                .as_deref()
                .is_some_and(|s| cmp.compare(key, s) != Ordering::Less)
        }
    }
}

/// Where the next batch starts.
pub enum Resume {
    /// At the near end of the range.
    Start,
    /// Just past this key (after it going forward, before it going backward).
    Past(Vec<u8>),
    /// Nothing more.
    Done,
}

/// Entries read with the GIL released: keys and values back to back in one buffer.
#[derive(Default)]
pub struct Batch {
    data: Vec<u8>,
    /// Per entry: where its key ends and where its value ends in `data`.
    ends: Vec<(usize, usize)>,
}

impl Batch {
    /// Adds an entry.
    pub fn push(&mut self, key: &[u8], value: &[u8]) {
        self.data.extend_from_slice(key);
        let k = self.data.len();
        self.data.extend_from_slice(value);
        self.ends.push((k, self.data.len()));
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Bytes of keys and values held.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    /// The entries (key, value), in order.
    pub fn entries(&self) -> impl DoubleEndedIterator<Item = (&[u8], &[u8])> + '_ {
        (0..self.ends.len()).map(move |i| {
            let start = i.checked_sub(1).map_or(0, |p| self.ends[p].1);
            let (k, v) = self.ends[i];
            (&self.data[start..k], &self.data[k..v])
        })
    }

    fn last_key(&self) -> Option<Vec<u8>> {
        self.entries().next_back().map(|(k, _)| k.to_vec())
    }
}

/// Something scanned in batches: a database's view or a table.
pub trait Source: Send + Sync {
    /// Appends to `batch` the entries of `bounds` from `resume` on, in the direction of
    /// `bounds`, until `batch` holds `max` entries or [`MAX_BATCH_BYTES`]: true when the
    /// range ended first. Runs without the GIL.
    ///
    /// # Errors
    /// What the reader met (entries read before it are in `batch`).
    fn fill(
        &self,
        bounds: &Bounds,
        resume: &Resume,
        batch: &mut Batch,
        max: usize,
    ) -> leveldb_table::Result<bool>;

    /// The file named in errors that do not name one (a table's path).
    fn file(&self) -> Option<&str> {
        None
    }
}

/// A scan read in batches: the source, where the next batch starts, the batch read last.
pub struct Batches {
    source: Box<dyn Source>,
    bounds: Bounds,
    resume: Resume,
    batch: Batch,
    next_size: usize,
    /// An error met after the entries of the batch: raised once they are handed out.
    pending: Option<leveldb_table::Error>,
}

impl Batches {
    /// A scan of `source` over `bounds`.
    pub fn new(source: Box<dyn Source>, bounds: Bounds) -> Self {
        Batches {
            source,
            bounds,
            resume: Resume::Start,
            batch: Batch::default(),
            next_size: FIRST_BATCH,
            pending: None,
        }
    }

    /// Reads the next batch with the GIL released: `None` at the end. An error is raised
    /// after the entries read before it (in the batch returned before).
    pub fn next_batch(&mut self, py: Python<'_>) -> PyResult<Option<&Batch>> {
        if let Some(e) = self.pending.take() {
            return Err(to_py(py, e, self.source.file()));
        }
        if matches!(self.resume, Resume::Done) {
            return Ok(None);
        }
        self.batch.clear();
        let max = self.next_size;
        self.next_size = (self.next_size * 2).min(MAX_BATCH);
        let (source, bounds, resume, batch) =
            (&self.source, &self.bounds, &self.resume, &mut self.batch);
        let result = py.detach(|| source.fill(bounds, resume, batch, max));
        self.resume = match (&result, self.batch.last_key()) {
            (Ok(false), Some(k)) => Resume::Past(k),
            _ => Resume::Done,
        };
        match result {
            Err(e) if self.batch.len() == 0 => Err(to_py(py, e, self.source.file())),
            Err(e) => {
                self.pending = Some(e);
                Ok(Some(&self.batch))
            }
            Ok(_) if self.batch.len() == 0 => Ok(None),
            Ok(_) => Ok(Some(&self.batch)),
        }
    }
}

/// The next object of a scan whose entries `convert` turns into Python objects one by one
/// (skipping those it gives `None` for), reading batches as needed; `ready` holds the
/// converted entries of the batch not yet handed out.
pub fn next_converted(
    batches: &mut Batches,
    ready: &mut VecDeque<Py<PyAny>>,
    py: Python<'_>,
    mut convert: impl FnMut(Python<'_>, &[u8], &[u8]) -> PyResult<Option<Py<PyAny>>>,
) -> PyResult<Option<Py<PyAny>>> {
    loop {
        if let Some(r) = ready.pop_front() {
            return Ok(Some(r));
        }
        let Some(batch) = batches.next_batch(py)? else {
            return Ok(None);
        };
        for (k, v) in batch.entries() {
            if let Some(r) = convert(py, k, v)? {
                ready.push_back(r);
            }
        }
    }
}

/// An iterator of `(key, value)` bytes over a scan, read in batches.
#[pyclass(module = "leveldb_table._native", name = "ScanIterator")]
pub struct ScanIter {
    batches: Batches,
    /// Tuples not yet handed out, last first (popped from the end).
    ready: Vec<Py<PyAny>>,
}

impl ScanIter {
    /// A scan of `source` over `bounds`.
    pub fn new(source: Box<dyn Source>, bounds: Bounds) -> Self {
        ScanIter {
            batches: Batches::new(source, bounds),
            ready: Vec::new(),
        }
    }
}

#[pymethods]
impl ScanIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        if let Some(t) = self.ready.pop() {
            return Ok(Some(t));
        }
        let Some(batch) = self.batches.next_batch(py)? else {
            return Ok(None);
        };
        let mut ready = Vec::with_capacity(batch.len());
        for (k, v) in batch.entries().rev() {
            let pair = PyTuple::new(py, [PyBytes::new(py, k), PyBytes::new(py, v)])?;
            ready.push(pair.into_any().unbind());
        }
        self.ready = ready;
        Ok(self.ready.pop())
    }
}
