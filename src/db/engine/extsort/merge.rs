//! The merge of an [`ExternalSorter`](super::ExternalSorter)'s sorted runs: a binary heap of
//! run numbers over each run's current entry, on the calling thread or on a helper thread
//! that hands the merged entries over in batches; and [`Sorted`], which lends them.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc;

use super::arena::{key_cmp, Arena, Rec};
use crate::error::{Error, Result};
use crate::format::coding;

/// A spilled run being merged: its reader and its current entry.
struct Run {
    reader: BufReader<File>,
    /// Its place among the runs (0: the first written), to name it in an error.
    number: usize,
    /// Offset in the run file of the next byte to read.
    offset: u64,
    /// Offset in the run file of the entry being read.
    entry: u64,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Run {
    /// Reads the next entry into `key`/`value`; false at the end of the run.
    fn advance(&mut self) -> Result<bool> {
        self.entry = self.offset;
        // Usually the whole entry is in the read buffer: parse it there.
        let number = self.number;
        let buf = self.reader.fill_buf().map_err(|e| run_io(number, e))?;
        if buf.is_empty() {
            return Ok(false);
        }
        let mut rest = buf;
        if let Some(k) = coding::get_length_prefixed_slice(&mut rest) {
            if let Some(v) = coding::get_length_prefixed_slice(&mut rest) {
                self.key.clear();
                self.key.extend_from_slice(k);
                self.value.clear();
                self.value.extend_from_slice(v);
                let used = buf.len() - rest.len();
                self.reader.consume(used);
                self.offset += used as u64;
                return Ok(true);
            }
        }
        let Some(kl) = self.read_len()? else {
            return Ok(false);
        };
        self.read_into(false, kl)?;
        let vl = self
            .read_len()?
            .ok_or_else(|| self.corrupt("the run ends inside an entry"))?;
        self.read_into(true, vl)?;
        Ok(true)
    }

    /// What a damaged run says: the run and the offset of the entry.
    fn corrupt(&self, what: &str) -> Error {
        Error::Corruption {
            file: Some(format!("sort run {}", self.number)),
            offset: Some(self.entry),
            what: what.to_string(),
        }
    }

    fn read_into(&mut self, value: bool, len: u32) -> Result<()> {
        let buf = if value {
            &mut self.value
        } else {
            &mut self.key
        };
        buf.clear();
        buf.resize(len as usize, 0);
        match self.reader.read_exact(buf) {
            Ok(()) => {
                self.offset += u64::from(len);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(self.corrupt("the run ends inside an entry"))
            }
            Err(e) => Err(run_io(self.number, e)),
        }
    }

    fn read_len(&mut self) -> Result<Option<u32>> {
        let mut v: u32 = 0;
        for i in 0..5 {
            let mut b = [0u8];
            let number = self.number;
            if self.reader.read(&mut b).map_err(|e| run_io(number, e))? == 0 {
                return if i == 0 {
                    Ok(None)
                } else {
                    Err(self.corrupt("the run ends inside an entry"))
                };
            }
            self.offset += 1;
            v |= u32::from(b[0] & 0x7f) << (7 * i);
            if b[0] < 0x80 {
                return Ok(Some(v));
            }
        }
        Err(self.corrupt("a length that is not a varint32"))
    }
}

/// An I/O error reading run `number`, naming it.
fn run_io(number: usize, e: std::io::Error) -> Error {
    Error::from(e).in_file(format!("sort run {number}"))
}

/// Orders runs by current key, then by run number (earlier runs first).
fn less(runs: &[Run], a: usize, b: usize) -> bool {
    match key_cmp(&runs[a].key, &runs[b].key) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => a < b,
    }
}

fn sift_down(heap: &mut [usize], runs: &[Run], mut i: usize) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut m = i;
        if l < heap.len() && less(runs, heap[l], heap[m]) {
            m = l;
        }
        if r < heap.len() && less(runs, heap[r], heap[m]) {
            m = r;
        }
        if m == i {
            return;
        }
        heap.swap(i, m);
        i = m;
    }
}

/// The k-way merge of the spilled runs.
pub(super) struct Merger {
    runs: Vec<Run>,
    /// Min-heap of run numbers by current key; the top's entry is the next one.
    heap: Vec<usize>,
    /// The top run's entry was handed out: advance it before the next one.
    pending: bool,
}

impl Merger {
    /// The merge of the run files `files` (each rewound, sorted by key).
    pub(super) fn open(files: impl Iterator<Item = File>) -> Result<Merger> {
        let mut runs = Vec::new();
        for (number, f) in files.enumerate() {
            let mut r = Run {
                reader: BufReader::with_capacity(1 << 16, f),
                number,
                offset: 0,
                entry: 0,
                key: Vec::new(),
                value: Vec::new(),
            };
            if r.advance()? {
                runs.push(r);
            }
        }
        let mut heap: Vec<usize> = (0..runs.len()).collect();
        // Heapify: a min-heap of run numbers by their current key.
        for i in (0..heap.len() / 2).rev() {
            sift_down(&mut heap, &runs, i);
        }
        Ok(Merger {
            runs,
            heap,
            pending: false,
        })
    }

    /// The next entry of the merge, lent until the next call.
    pub(super) fn next(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        let Merger {
            runs,
            heap,
            pending,
        } = self;
        if *pending {
            *pending = false;
            if let Some(&top) = heap.first() {
                if !runs[top].advance()? {
                    let last = heap.len() - 1;
                    heap.swap(0, last);
                    heap.pop();
                }
                sift_down(heap, runs, 0);
            }
        }
        let Some(&top) = heap.first() else {
            return Ok(None);
        };
        *pending = true;
        Ok(Some((runs[top].key.as_slice(), runs[top].value.as_slice())))
    }
}

/// Bytes of merged entries per batch a merging thread hands over.
const BATCH_BYTES: usize = 1 << 20;

/// Runs `m` on a helper thread, which sends the merged entries in batches (arenas in
/// order) and gets the consumed ones back for reuse; an error ends the stream.
pub(super) fn merge_on_thread(mut m: Merger) -> Result<Threaded> {
    let (full_tx, full_rx) = mpsc::sync_channel::<Result<Arena>>(2);
    let (empty_tx, empty_rx) = mpsc::channel::<Arena>();
    std::thread::Builder::new()
        .name("extsort-merge".into())
        .spawn(move || loop {
            let mut b = empty_rx.try_recv().unwrap_or_default();
            let r = loop {
                match m.next() {
                    Ok(Some((k, v))) => {
                        let at = b.data.len();
                        b.data.extend_from_slice(k);
                        b.data.extend_from_slice(v);
                        // ok: each key and value was pushed with a u32 length.
                        b.recs.push(Rec {
                            at,
                            klen: k.len() as u32,
                            vlen: v.len() as u32,
                            prefix: 0,
                        });
                        if b.data.len() >= BATCH_BYTES {
                            break Ok(true);
                        }
                    }
                    Ok(None) => break Ok(false),
                    Err(e) => break Err(e),
                }
            };
            match r {
                Ok(more) => {
                    if (!b.recs.is_empty() && full_tx.send(Ok(b)).is_err()) || !more {
                        return;
                    }
                }
                Err(e) => {
                    let _ = full_tx.send(Err(e));
                    return;
                }
            }
        })?;
    Ok(Threaded {
        full: full_rx,
        empty: empty_tx,
        batch: Arena::default(),
        next: 0,
    })
}

/// The consuming end of [`merge_on_thread`].
pub(super) struct Threaded {
    full: mpsc::Receiver<Result<Arena>>,
    empty: mpsc::Sender<Arena>,
    batch: Arena,
    next: usize,
}

pub(super) enum Source {
    Memory { arena: Arena, next: usize },
    Merge(Merger),
    Threaded(Threaded),
}

/// The sorted entries of an [`ExternalSorter`](super::ExternalSorter): [`next_entry`](Self::next_entry) lends each
/// one; as an `Iterator` it gives owned copies.
pub struct Sorted {
    source: Source,
    /// The previous key, for finding duplicates.
    last: Vec<u8>,
    started: bool,
    _dir: Option<tempfile::TempDir>,
}

impl Sorted {
    /// The entries of `source`; `dir` (the run files' directory) lives as long as they.
    pub(super) fn new(source: Source, dir: Option<tempfile::TempDir>) -> Sorted {
        Sorted {
            source,
            last: Vec::new(),
            started: false,
            _dir: dir,
        }
    }

    /// The next entry in key order, lent until the next call.
    ///
    /// # Errors
    /// I/O errors reading a run; [`Error::InvalidArgument`] naming a key given twice.
    pub fn next_entry(&mut self) -> Result<Option<(&[u8], &[u8])>> {
        let (key, value) = match &mut self.source {
            Source::Memory { arena, next } => {
                let Some(r) = arena.recs.get(*next) else {
                    return Ok(None);
                };
                *next += 1;
                (arena.key(r), arena.value(r))
            }
            Source::Merge(m) => match m.next()? {
                Some(e) => e,
                None => return Ok(None),
            },
            Source::Threaded(t) => {
                if t.next >= t.batch.recs.len() {
                    let Ok(b) = t.full.recv() else {
                        return Ok(None);
                    };
                    let mut done = std::mem::replace(&mut t.batch, b?);
                    done.clear();
                    let _ = t.empty.send(done);
                    t.next = 0;
                }
                let Some(r) = t.batch.recs.get(t.next) else {
                    return Ok(None);
                };
                t.next += 1;
                (t.batch.key(r), t.batch.value(r))
            }
        };
        if self.started && self.last == key {
            return Err(Error::InvalidArgument(format!(
                "the key {} is given twice",
                String::from_utf8_lossy(key)
            )));
        }
        self.started = true;
        self.last.clear();
        self.last.extend_from_slice(key);
        Ok(Some((key, value)))
    }
}

impl Iterator for Sorted {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_entry() {
            Ok(Some((k, v))) => Some(Ok((k.to_vec(), v.to_vec()))),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        }
    }
}
