//! The memtable: the writes not yet in a table, in internal-key order, readable while the
//! writer adds to it (a `BTreeSet` behind a `RwLock`; LevelDB uses a lock-free skiplist).
//!
//! ```text
//! entry (one allocation): | user key | tag (8, LE: sequence << 8 | type) | value |
//! order:                  user key ascending (bytewise), then tag descending (newest first)
//! ```

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, RwLock, RwLockReadGuard};

use leveldb_table::db::engine::Cursor;
use leveldb_table::raw::coding::decode_fixed64;
use leveldb_table::raw::internal_key::{append_internal_key, parse_internal_key, ValueType};
use ref_cast::RefCast;

/// Bytes charged per entry on top of its key and value (the skiplist node and arena
/// rounding LevelDB's `ApproximateMemoryUsage` counts), so that a memtable fills after about
/// as many writes as LevelDB's at the same `write_buffer_size`.
const ENTRY_OVERHEAD: usize = 20;

/// An internal key, ordered as the engine orders them: the set is searched by one (a
/// borrowed key, no entry built) through `Borrow<IKey> for Entry`.
#[derive(RefCast)]
#[repr(transparent)]
struct IKey([u8]);

impl IKey {
    fn new(b: &[u8]) -> &IKey {
        IKey::ref_cast(b)
    }
}

impl Ord for IKey {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_ikeys(&self.0, &other.0)
    }
}
impl PartialOrd for IKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for IKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for IKey {}

/// One version of one key.
struct Entry {
    buf: Box<[u8]>,
    klen: u32,
}

impl Entry {
    fn ikey(&self) -> &[u8] {
        self.buf.get(..self.klen as usize).unwrap_or_default()
    }
    fn value(&self) -> &[u8] {
        self.buf.get(self.klen as usize..).unwrap_or_default()
    }
}

impl Borrow<IKey> for Entry {
    fn borrow(&self) -> &IKey {
        IKey::new(self.ikey())
    }
}

/// Internal-key order for the bytewise user comparator, on the raw bytes.
fn compare_ikeys(a: &[u8], b: &[u8]) -> Ordering {
    let (ua, ta) = a.split_at(a.len().saturating_sub(8));
    let (ub, tb) = b.split_at(b.len().saturating_sub(8));
    ua.cmp(ub).then_with(|| tag(tb).cmp(&tag(ta)))
}

fn tag(t: &[u8]) -> u64 {
    if t.len() == 8 {
        decode_fixed64(t)
    } else {
        0
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_ikeys(self.ikey(), other.ikey())
    }
}

/// What the memtable holds for a key at a snapshot.
pub enum MemGet {
    /// A value (copied into the caller's buffer).
    Found,
    /// The newest visible version is a deletion.
    Deleted,
    /// No version at or below the snapshot.
    Absent,
}

/// A memtable.
#[derive(Default)]
pub struct MemTable {
    set: RwLock<BTreeSet<Entry>>,
    bytes: AtomicUsize,
}

impl MemTable {
    fn read(&self) -> RwLockReadGuard<'_, BTreeSet<Entry>> {
        self.set.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds one version.
    pub fn add(&self, sequence: u64, kind: ValueType, key: &[u8], value: &[u8]) {
        let mut buf = Vec::with_capacity(key.len() + 8 + value.len());
        append_internal_key(&mut buf, key, sequence, kind);
        let klen = buf.len() as u32;
        buf.extend_from_slice(value);
        let charge = buf.len() + ENTRY_OVERHEAD;
        let entry = Entry {
            buf: buf.into_boxed_slice(),
            klen,
        };
        self.set
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(entry);
        self.bytes.fetch_add(charge, AtomicOrdering::Relaxed);
    }

    /// Bytes charged so far (compared with the write buffer size).
    pub fn approximate_bytes(&self) -> usize {
        self.bytes.load(AtomicOrdering::Relaxed)
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.read().is_empty()
    }

    /// The newest version of `key` with a sequence <= `snapshot`; a value goes to `value`.
    /// `probe` is scratch space for the search key.
    pub fn get(
        &self,
        key: &[u8],
        snapshot: u64,
        value: &mut Vec<u8>,
        probe: &mut Vec<u8>,
    ) -> MemGet {
        probe.clear();
        append_internal_key(probe, key, snapshot, ValueType::Value);
        let set = self.read();
        let Some(e) = set
            .range::<IKey, _>((Bound::Included(IKey::new(probe)), Bound::Unbounded))
            .next()
        else {
            return MemGet::Absent;
        };
        match parse_internal_key(e.ikey()) {
            Some(p) if p.user_key == key => match p.value_type {
                ValueType::Value => {
                    value.clear();
                    value.extend_from_slice(e.value());
                    MemGet::Found
                }
                ValueType::Deletion => MemGet::Deleted,
            },
            _ => MemGet::Absent,
        }
    }

    /// Calls `f(internal key, value)` for every entry in order (the memtable being flushed,
    /// which no writer changes any more).
    pub fn for_each<E>(&self, mut f: impl FnMut(&[u8], &[u8]) -> Result<(), E>) -> Result<(), E> {
        for e in self.read().iter() {
            f(e.ikey(), e.value())?;
        }
        Ok(())
    }
}

/// Entries copied per refill of a [`MemCursor`]: the read lock is taken once per batch.
const BATCH: usize = 64;

/// A cursor over a memtable that a writer may still be adding to: it copies the entries
/// next to its position in batches into its own buffer (newer writes it meets are hidden by
/// the snapshot of the view above it). It moves both ways.
pub struct MemCursor {
    mem: Arc<MemTable>,
    /// Entries of the batch in key order, back to back: (key end, value end) offsets.
    spans: Vec<(usize, usize)>,
    bytes: Vec<u8>,
    pos: usize,
    /// No entry before the batch / after it (as of its copy).
    at_start: bool,
    at_end: bool,
    scratch: Vec<u8>,
}

impl MemCursor {
    /// A cursor over `mem`, not positioned.
    pub fn new(mem: Arc<MemTable>) -> MemCursor {
        MemCursor {
            mem,
            spans: Vec::new(),
            bytes: Vec::new(),
            pos: 0,
            at_start: true,
            at_end: true,
            scratch: Vec::new(),
        }
    }

    fn push(&mut self, e: &Entry) {
        self.bytes.extend_from_slice(&e.buf);
        let end = self.bytes.len();
        self.spans.push((end - e.value().len(), end));
    }

    /// Copies up to BATCH entries from `from` on, and leaves the cursor on the first.
    fn fill_forward(&mut self, from: Bound<&[u8]>) {
        self.spans.clear();
        self.bytes.clear();
        self.pos = 0;
        let mem = self.mem.clone();
        let set = mem.read();
        let lower = from.map(IKey::new);
        let mut it = set.range::<IKey, _>((lower, Bound::Unbounded));
        for e in it.by_ref().take(BATCH) {
            self.push(e);
        }
        self.at_end = it.next().is_none();
        self.at_start = match lower {
            Bound::Unbounded => true,
            b => set
                .range::<IKey, _>((Bound::Unbounded, flip(b)))
                .next_back()
                .is_none(),
        };
    }

    /// Copies up to BATCH entries before `to` (the last of them nearest it), and leaves the
    /// cursor on the last.
    fn fill_backward(&mut self, to: Bound<&[u8]>) {
        self.spans.clear();
        self.bytes.clear();
        let mem = self.mem.clone();
        let set = mem.read();
        let upper = to.map(IKey::new);
        let mut it = set.range::<IKey, _>((Bound::Unbounded, upper));
        let mut got: Vec<&Entry> = it.by_ref().rev().take(BATCH).collect();
        self.at_start = it.next_back().is_none();
        got.reverse();
        for e in got {
            self.push(e);
        }
        self.at_end = match upper {
            Bound::Unbounded => true,
            b => set
                .range::<IKey, _>((flip(b), Bound::Unbounded))
                .next()
                .is_none(),
        };
        self.pos = self.spans.len().saturating_sub(1);
        if self.spans.is_empty() {
            self.pos = 0;
        }
    }

    fn start(&self) -> usize {
        match self.pos {
            0 => 0,
            i => self.spans.get(i - 1).map_or(0, |s| s.1),
        }
    }

    fn invalidate(&mut self) {
        self.pos = self.spans.len();
    }
}

/// The complementary bound: entries strictly before `Included(k)` / at or before
/// `Excluded(k)`.
fn flip(b: Bound<&IKey>) -> Bound<&IKey> {
    match b {
        Bound::Included(k) => Bound::Excluded(k),
        Bound::Excluded(k) => Bound::Included(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Cursor for MemCursor {
    fn valid(&self) -> bool {
        self.pos < self.spans.len()
    }
    fn seek_to_first(&mut self) {
        self.fill_forward(Bound::Unbounded);
    }
    fn seek(&mut self, target: &[u8]) {
        self.fill_forward(Bound::Included(target));
    }
    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if self.pos + 1 < self.spans.len() {
            self.pos += 1;
            return;
        }
        if self.at_end {
            self.invalidate();
            return;
        }
        let mut last = std::mem::take(&mut self.scratch);
        last.clear();
        last.extend_from_slice(self.key());
        self.fill_forward(Bound::Excluded(&last));
        self.scratch = last;
    }
    fn key(&self) -> &[u8] {
        match self.spans.get(self.pos) {
            Some(&(kend, _)) => self.bytes.get(self.start()..kend).unwrap_or_default(),
            None => &[],
        }
    }
    fn value(&self) -> &[u8] {
        match self.spans.get(self.pos) {
            Some(&(kend, vend)) => self.bytes.get(kend..vend).unwrap_or_default(),
            None => &[],
        }
    }
    fn error(&self) -> Option<&leveldb_table::Error> {
        None
    }
    fn can_reverse(&self) -> bool {
        true
    }
    fn seek_to_last(&mut self) {
        self.fill_backward(Bound::Unbounded);
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.fill_backward(Bound::Excluded(target));
    }
    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if self.pos > 0 {
            self.pos -= 1;
            return;
        }
        if self.at_start {
            self.invalidate();
            return;
        }
        let mut first = std::mem::take(&mut self.scratch);
        first.clear();
        first.extend_from_slice(self.key());
        self.fill_backward(Bound::Excluded(&first));
        self.scratch = first;
    }
}
