//! External sort of key/value entries within a memory budget, for bulk builds of unsorted
//! input: entries are copied into an arena of half the budget; a full arena is sorted (an
//! index of 24-byte records, each with the 8 key bytes after the run's common prefix, is
//! what moves) and handed to a helper thread that writes it as a run to a temporary file,
//! while the next arena fills; at the end the runs are merged (a binary heap of run numbers
//! over their current entries), on a helper thread that hands the merged entries over in
//! batches when the machine has a second core.
//!
//! ```text
//! run file: ( varint32 key length | key | varint32 value length | value )*   sorted by key
//! ```
//!
//! Peak memory: the budget (two arenas and their indexes, grown by doubling only while each
//! fits in half of it) plus, while merging, a 64 KiB read buffer and the current entry per
//! run and up to four 1 MiB batches. No allocation per entry: [`Sorted::next_entry`] lends
//! each entry; the `Iterator` copies. Duplicate keys are an error, found where the merge
//! meets them.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::sync::mpsc;

use crate::coding;
use crate::error::{Error, Result};

/// An entry in the arena: where its key starts, the key's and value's lengths, and (while
/// sorting) the 8 key bytes after the run's common prefix, big-endian.
#[derive(Clone, Copy)]
struct Rec {
    at: usize,
    klen: u32,
    vlen: u32,
    prefix: u64,
}

/// Bytes an index record costs.
const REC_BYTES: usize = std::mem::size_of::<Rec>();

/// The in-memory part: entries back to back in `data`, and their records.
#[derive(Default)]
struct Arena {
    data: Vec<u8>,
    recs: Vec<Rec>,
}

impl Arena {
    fn key(&self, r: &Rec) -> &[u8] {
        &self.data[r.at..r.at + r.klen as usize]
    }

    fn value(&self, r: &Rec) -> &[u8] {
        let at = r.at + r.klen as usize;
        &self.data[at..at + r.vlen as usize]
    }

    /// Sorts the records by key. Every key of the run starts with the run's common prefix
    /// (found in one pass in arena order), so the 8 bytes after it order most pairs without
    /// reading the arena: the sort then moves and compares 24-byte records in place
    /// instead of chasing two keys per comparison (measured: 4M shuffled 16-byte keys,
    /// `db_bench bulk --shuffled`).
    fn sort(&mut self) {
        let data = &self.data;
        let key = |r: &Rec| &data[r.at..r.at + r.klen as usize];
        let lcp = match self.recs.first() {
            Some(first) => {
                let f = key(first);
                self.recs.iter().fold(f.len(), |n, r| {
                    let k = key(r);
                    n.min(k.iter().zip(&f[..n]).take_while(|(a, b)| a == b).count())
                })
            }
            None => 0,
        };
        for r in &mut self.recs {
            let rest = &data[r.at + lcp..r.at + r.klen as usize];
            let mut b = [0u8; 8];
            let n = rest.len().min(8);
            b[..n].copy_from_slice(&rest[..n]);
            r.prefix = u64::from_be_bytes(b);
        }
        self.recs.sort_unstable_by(|a, b| {
            a.prefix
                .cmp(&b.prefix)
                .then_with(|| key_cmp(key(a), key(b)))
        });
    }

    /// Bytes allocated.
    fn charge(&self) -> usize {
        self.data.capacity() + self.recs.capacity() * REC_BYTES
    }

    fn clear(&mut self) {
        self.data.clear();
        self.recs.clear();
    }
}

/// Bytewise order, compared 8 bytes at a time: keys are short (16-byte keys spend more in
/// the call to libc's `memcmp` than in comparing; measured in `db_bench bulk --shuffled`).
#[inline]
fn key_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut x, mut y) = (a, b);
    while let (Some((p, xr)), Some((q, yr))) =
        (x.split_first_chunk::<8>(), y.split_first_chunk::<8>())
    {
        if p != q {
            return u64::from_be_bytes(*p).cmp(&u64::from_be_bytes(*q));
        }
        (x, y) = (xr, yr);
    }
    for (p, q) in x.iter().zip(y) {
        if p != q {
            return p.cmp(q);
        }
    }
    x.len().cmp(&y.len())
}

/// Collects entries in any order and gives them back sorted by key (bytewise).
pub struct ExternalSorter {
    /// Bytes for one arena: half the budget (the other half is the arena being written).
    budget: usize,
    arena: Arena,
    dir: Option<tempfile::TempDir>,
    runs: Vec<File>,
    /// The run being sorted and written by a helper thread.
    pending: Option<std::thread::JoinHandle<Result<(Arena, File)>>>,
    /// Merge the runs on a helper thread (when the machine has a second core).
    threaded_merge: bool,
}

impl Drop for ExternalSorter {
    fn drop(&mut self) {
        // Let the helper finish before the run directory goes.
        let _ = self.collect_pending();
    }
}

/// Grows `v` to hold `extra` more elements: doubling, but not past `limit` elements unless
/// `extra` alone needs it. Returns false when it could not grow within `limit` (the caller
/// spills first).
fn grow<T>(v: &mut Vec<T>, extra: usize, limit: usize, may_exceed: bool) -> bool {
    let need = v.len() + extra;
    if need <= v.capacity() {
        return true;
    }
    let doubled = (v.capacity() * 2).max(need).max(64);
    let target = doubled.min(limit.max(need));
    if target > limit && !may_exceed {
        return false;
    }
    v.reserve_exact(target - v.len());
    true
}

impl ExternalSorter {
    /// A sorter that holds at most about `budget` bytes of entries in memory.
    pub fn new(budget: usize) -> Self {
        ExternalSorter {
            budget: (budget / 2).max(1),
            arena: Arena::default(),
            dir: None,
            runs: Vec::new(),
            pending: None,
            threaded_merge: true,
        }
    }

    /// Adds an entry.
    ///
    /// # Errors
    /// An I/O error writing a run; a key or value of 4 GiB or more.
    pub fn push(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<()> {
        self.push_slices(&key, &value)
    }

    /// Adds an entry, copying it (no allocation of its own).
    ///
    /// # Errors
    /// As [`push`](Self::push).
    pub fn push_slices(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let too_big = || Error::InvalidArgument("an entry of 4 GiB or more".into());
        let klen = u32::try_from(key.len()).map_err(|_| too_big())?;
        let vlen = u32::try_from(value.len()).map_err(|_| too_big())?;
        let bytes = key.len() + value.len();
        if !self.fits(bytes) {
            self.spill()?;
            // An empty arena takes any entry, even one over the budget alone.
            let a = &mut self.arena;
            grow(&mut a.data, bytes, 0, true);
            grow(&mut a.recs, 1, 0, true);
        }
        let a = &mut self.arena;
        let at = a.data.len();
        a.data.extend_from_slice(key);
        a.data.extend_from_slice(value);
        a.recs.push(Rec {
            at,
            klen,
            vlen,
            prefix: 0,
        });
        Ok(())
    }

    /// Whether an entry of `bytes` fits, growing the arena within the budget if needed.
    fn fits(&mut self, bytes: usize) -> bool {
        let a = &mut self.arena;
        // The limits: what the budget leaves each vector beside the other's allocation.
        let data_limit = self
            .budget
            .saturating_sub(a.recs.capacity().max(a.recs.len() + 1) * REC_BYTES);
        if !grow(&mut a.data, bytes, data_limit, false) {
            return false;
        }
        let recs_limit = self.budget.saturating_sub(a.data.capacity()) / REC_BYTES;
        grow(&mut a.recs, 1, recs_limit, false) && a.charge() <= self.budget
    }

    /// Merges on the calling thread (tests reach both ways this way).
    #[cfg(test)]
    fn one_thread(mut self) -> Self {
        self.threaded_merge = false;
        self
    }

    /// Runs written to disk so far.
    pub fn runs(&self) -> usize {
        self.runs.len() + usize::from(self.pending.is_some())
    }

    /// Sorts the full arena and hands it to a helper thread that writes it as a run, and
    /// goes on with the arena of the previous run (waiting for that one first): filling and
    /// sorting overlap with writing, each arena within half the budget.
    fn spill(&mut self) -> Result<()> {
        if self.arena.recs.is_empty() {
            return Ok(());
        }
        let dir = self.run_dir()?;
        // Sorted here, written there: filling and sorting an arena take about as long as
        // writing one (measured with 4M shuffled entries: sorting on the helper too left
        // this thread waiting for it).
        self.arena.sort();
        let spare = self.collect_pending()?.unwrap_or_default();
        let full = std::mem::replace(&mut self.arena, spare);
        let h = std::thread::Builder::new()
            .name("extsort-run".into())
            .spawn(move || {
                let mut a = full;
                let f = write_run(&mut a, &dir)?;
                a.clear();
                Ok((a, f))
            })?;
        self.pending = Some(h);
        Ok(())
    }

    /// The directory of the run files (created on first use).
    fn run_dir(&mut self) -> Result<std::path::PathBuf> {
        if self.dir.is_none() {
            self.dir = Some(tempfile::tempdir()?);
        }
        Ok(self
            .dir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default())
    }

    /// Waits for the run being written, if any: its file joins the runs, its (emptied)
    /// arena is returned for reuse.
    fn collect_pending(&mut self) -> Result<Option<Arena>> {
        let Some(h) = self.pending.take() else {
            return Ok(None);
        };
        match h.join() {
            Ok(Ok((a, f))) => {
                self.runs.push(f);
                Ok(Some(a))
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::InvalidArgument(
                "the thread writing a sorted run panicked".into(),
            )),
        }
    }

    /// The entries in key order.
    ///
    /// # Errors
    /// I/O errors (a key given twice is reported by the [`Sorted`] where it is met).
    pub fn finish(mut self) -> Result<Sorted> {
        self.collect_pending()?;
        if self.runs.is_empty() {
            self.arena.sort();
            return Ok(Sorted {
                source: Source::Memory {
                    arena: std::mem::take(&mut self.arena),
                    next: 0,
                },
                last: Vec::new(),
                started: false,
                _dir: None,
            });
        }
        if !self.arena.recs.is_empty() {
            let dir = self.run_dir()?;
            self.arena.sort();
            let f = write_run(&mut self.arena, &dir)?;
            self.runs.push(f);
        }
        self.arena = Arena::default();
        let mut runs = Vec::with_capacity(self.runs.len());
        for f in self.runs.drain(..) {
            let mut r = Run {
                reader: BufReader::with_capacity(1 << 16, f),
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
        let m = Merger {
            runs,
            heap,
            pending: false,
        };
        // With a second core the merge runs beside the consumer (who builds tables).
        let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        let source = if two_cores && self.threaded_merge {
            Source::Threaded(merge_on_thread(m)?)
        } else {
            Source::Merge(m)
        };
        Ok(Sorted {
            source,
            last: Vec::new(),
            started: false,
            _dir: self.dir.take(),
        })
    }
}

/// Writes `a` (sorted) to a new unnamed file in `dir`, rewound for reading.
fn write_run(a: &mut Arena, dir: &std::path::Path) -> Result<File> {
    let file = tempfile::tempfile_in(dir)?;
    let mut w = BufWriter::with_capacity(1 << 16, file);
    let mut len = Vec::with_capacity(10);
    for r in &a.recs {
        for part in [a.key(r), a.value(r)] {
            len.clear();
            // ok: push_slices checked both lengths fit in u32.
            coding::put_varint32(&mut len, part.len() as u32);
            w.write_all(&len)?;
            w.write_all(part)?;
        }
    }
    let mut file = w.into_inner().map_err(|e| Error::from(e.into_error()))?;
    std::io::Seek::rewind(&mut file)?;
    Ok(file)
}

/// A spilled run being merged: its reader and its current entry.
struct Run {
    reader: BufReader<File>,
    key: Vec<u8>,
    value: Vec<u8>,
}

impl Run {
    /// Reads the next entry into `key`/`value`; false at the end of the run.
    fn advance(&mut self) -> Result<bool> {
        // Usually the whole entry is in the read buffer: parse it there.
        let buf = self.reader.fill_buf()?;
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
                return Ok(true);
            }
        }
        let Some(kl) = read_len(&mut self.reader)? else {
            return Ok(false);
        };
        read_into(&mut self.reader, &mut self.key, kl)?;
        let vl = read_len(&mut self.reader)?.ok_or_else(ends_inside)?;
        read_into(&mut self.reader, &mut self.value, vl)?;
        Ok(true)
    }
}

fn ends_inside() -> Error {
    Error::InvalidArgument("a sort run ends inside an entry".into())
}

fn read_into(r: &mut BufReader<File>, buf: &mut Vec<u8>, len: u32) -> Result<()> {
    buf.clear();
    buf.resize(len as usize, 0);
    r.read_exact(buf)?;
    Ok(())
}

fn read_len(r: &mut BufReader<File>) -> Result<Option<u32>> {
    let mut v: u32 = 0;
    for i in 0..5 {
        let mut b = [0u8];
        if r.read(&mut b)? == 0 {
            return if i == 0 { Ok(None) } else { Err(ends_inside()) };
        }
        v |= u32::from(b[0] & 0x7f) << (7 * i);
        if b[0] < 0x80 {
            return Ok(Some(v));
        }
    }
    Err(Error::InvalidArgument("a bad length in a sort run".into()))
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
struct Merger {
    runs: Vec<Run>,
    /// Min-heap of run numbers by current key; the top's entry is the next one.
    heap: Vec<usize>,
    /// The top run's entry was handed out: advance it before the next one.
    pending: bool,
}

impl Merger {
    /// The next entry of the merge, lent until the next call.
    fn next(&mut self) -> Result<Option<(&[u8], &[u8])>> {
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
fn merge_on_thread(mut m: Merger) -> Result<Threaded> {
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
struct Threaded {
    full: mpsc::Receiver<Result<Arena>>,
    empty: mpsc::Sender<Arena>,
    batch: Arena,
    next: usize,
}

enum Source {
    Memory { arena: Arena, next: usize },
    Merge(Merger),
    Threaded(Threaded),
}

/// The sorted entries of an [`ExternalSorter`]: [`next_entry`](Self::next_entry) lends each
/// one; as an `Iterator` it gives owned copies.
pub struct Sorted {
    source: Source,
    /// The previous key, for finding duplicates.
    last: Vec<u8>,
    started: bool,
    _dir: Option<tempfile::TempDir>,
}

impl Sorted {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: u64) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| format!("k{:08}", (i * 7919) % n).into_bytes())
            .collect()
    }

    #[test]
    fn small_budgets_spill_runs_and_merge_them_in_order() {
        for (budget, threaded) in [
            (1 << 30, true),
            (64 << 10, true),
            (64 << 10, false),
            (1000, true),
            (1000, false),
        ] {
            let mut s = ExternalSorter::new(budget);
            if !threaded {
                s = s.one_thread();
            }
            for k in keys(20_000) {
                let v = k.repeat(2);
                s.push(k, v).unwrap();
            }
            let spilled = s.runs();
            assert_eq!(spilled > 0, budget < 1 << 30);
            let out: Vec<(Vec<u8>, Vec<u8>)> = s.finish().unwrap().map(|r| r.unwrap()).collect();
            assert_eq!(out.len(), 20_000);
            assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
            assert!(out.iter().all(|(k, v)| *v == k.repeat(2)));
        }
    }

    #[test]
    fn the_arena_stays_within_the_budget() {
        let budget = 256 << 10;
        let mut s = ExternalSorter::new(budget);
        for k in keys(50_000) {
            s.push_slices(&k, &[7u8; 40]).unwrap();
            // The arena being filled holds half; the run being written the other half.
            assert!(2 * s.arena.charge() <= budget, "{} bytes", s.arena.charge());
        }
        assert!(s.runs() > 1);
        // An entry larger than the budget is taken alone.
        s.push_slices(b"big", &vec![1u8; budget * 2]).unwrap();
        let mut sorted = s.finish().unwrap();
        let mut n = 0;
        let mut big = false;
        while let Some((k, v)) = sorted.next_entry().unwrap() {
            big |= k == b"big" && v.len() == budget * 2;
            n += 1;
        }
        assert_eq!(n, 50_001);
        assert!(big);
    }

    #[test]
    fn a_key_given_twice_is_an_error() {
        for (budget, threaded) in [(1 << 30, true), (100, true), (100, false)] {
            let mut s = ExternalSorter::new(budget);
            if !threaded {
                s = s.one_thread();
            }
            for k in [&b"b"[..], b"a", b"c", b"a"] {
                s.push(k.to_vec(), b"v".to_vec()).unwrap();
            }
            let r: Result<Vec<_>> = s.finish().unwrap().collect();
            assert!(r.unwrap_err().to_string().contains("given twice"));
        }
    }

    proptest::proptest! {
        #[test]
        fn key_order_is_bytewise(a in proptest::collection::vec(0u8..3, 0..20), b in proptest::collection::vec(0u8..3, 0..20)) {
            proptest::prop_assert_eq!(key_cmp(&a, &b), a.cmp(&b));
        }

        /// Any entries, any budget: the output is the input sorted, or an error exactly when a
        /// key repeats.
        #[test]
        fn sorts_like_a_sort(
            entries in proptest::collection::vec(
                (proptest::collection::vec(0u8..4, 0..6), proptest::collection::vec(proptest::num::u8::ANY, 0..20)),
                0..300,
            ),
            budget in 1usize..4096,
            threaded: bool,
        ) {
            let mut s = ExternalSorter::new(budget);
            if !threaded {
                s = s.one_thread();
            }
            for (k, v) in &entries {
                s.push_slices(k, v).unwrap();
            }
            let got: Result<Vec<(Vec<u8>, Vec<u8>)>> = s.finish().unwrap().collect();
            let mut want = entries.clone();
            want.sort_by(|a, b| a.0.cmp(&b.0));
            let dup = want.windows(2).any(|w| w[0].0 == w[1].0);
            match got {
                Ok(got) => {
                    proptest::prop_assert!(!dup);
                    proptest::prop_assert_eq!(got, want);
                }
                Err(e) => {
                    proptest::prop_assert!(dup, "{}", e);
                }
            }
        }
    }
}
