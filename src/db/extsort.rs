//! External sort of key/value entries within a memory budget, for bulk builds of unsorted
//! input: entries are copied into one arena until the budget is reached, sorted (an index of
//! 24-byte records, not the entries, is what moves) and spilled as a run to a temporary file;
//! at the end the runs are merged (a binary heap of run numbers over their current entries).
//!
//! ```text
//! run file: ( varint32 key length | key | varint32 value length | value )*   sorted by key
//! ```
//!
//! Peak memory: the budget (the arena and the index, grown by doubling only while both fit
//! in it) plus a 64 KiB read buffer and the current entry per run while merging. No
//! allocation per entry: [`Sorted::next_entry`] lends each entry; the `Iterator` copies.
//! Duplicate keys are an error, found where the merge meets them.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};

use crate::coding;
use crate::error::{Error, Result};

/// An entry in the arena: where its key starts, and the key's and value's lengths.
#[derive(Clone, Copy)]
struct Rec {
    at: usize,
    klen: u32,
    vlen: u32,
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

    fn sort(&mut self) {
        let data = &self.data;
        let key = |r: &Rec| &data[r.at..r.at + r.klen as usize];
        self.recs.sort_unstable_by(|a, b| key_cmp(key(a), key(b)));
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
    budget: usize,
    arena: Arena,
    dir: Option<tempfile::TempDir>,
    runs: Vec<File>,
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
            budget: budget.max(1),
            arena: Arena::default(),
            dir: None,
            runs: Vec::new(),
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
        a.recs.push(Rec { at, klen, vlen });
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

    /// Runs written to disk so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> Result<()> {
        if self.arena.recs.is_empty() {
            return Ok(());
        }
        self.arena.sort();
        if self.dir.is_none() {
            self.dir = Some(tempfile::tempdir()?);
        }
        let dir = self
            .dir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default();
        let file = tempfile::tempfile_in(&dir)?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        let mut len = Vec::with_capacity(10);
        let a = &self.arena;
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
        self.runs.push(file);
        self.arena.clear();
        Ok(())
    }

    /// The entries in key order.
    ///
    /// # Errors
    /// I/O errors (a key given twice is reported by the [`Sorted`] where it is met).
    pub fn finish(mut self) -> Result<Sorted> {
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
        self.spill()?;
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
        Ok(Sorted {
            source: Source::Merge {
                runs,
                heap,
                pending: false,
            },
            last: Vec::new(),
            started: false,
            _dir: self.dir.take(),
        })
    }
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

enum Source {
    Memory {
        arena: Arena,
        next: usize,
    },
    Merge {
        runs: Vec<Run>,
        /// Min-heap of run numbers by current key; the top's entry is the next one.
        heap: Vec<usize>,
        /// The top run's entry was handed out: advance it before the next one.
        pending: bool,
    },
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
            Source::Merge {
                runs,
                heap,
                pending,
            } => {
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
                (runs[top].key.as_slice(), runs[top].value.as_slice())
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
        for budget in [1 << 30, 64 << 10, 1000] {
            let mut s = ExternalSorter::new(budget);
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
            assert!(s.arena.charge() <= budget, "{} bytes", s.arena.charge());
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
        for budget in [1 << 30, 100] {
            let mut s = ExternalSorter::new(budget);
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
        ) {
            let mut s = ExternalSorter::new(budget);
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
