//! The memtable: the writes not yet in a table, in internal-key order, readable while the
//! writer adds to it (a `BTreeSet` behind a `RwLock`; LevelDB uses a lock-free skiplist).
//!
//! ```text
//! entry (one allocation): | user key | tag (8, LE: sequence << 8 | type) | value |
//! order:                  user key ascending (bytewise), then tag descending (newest first)
//! ```

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, RwLock, RwLockReadGuard};

use leveldb_table::db::engine::Cursor;
use leveldb_table::raw::coding::decode_fixed64;
use leveldb_table::raw::internal_key::{append_internal_key, parse_internal_key};
use leveldb_table::{raw::internal_key::ValueType, Error};

/// Bytes charged per entry on top of its key and value (the skiplist node and arena
/// rounding LevelDB's `ApproximateMemoryUsage` counts), so that a memtable fills after about
/// as many writes as LevelDB's at the same `write_buffer_size`.
const ENTRY_OVERHEAD: usize = 20;

/// One version of one key.
struct Entry {
    buf: Box<[u8]>,
    klen: u32,
}

impl Entry {
    fn ikey(&self) -> &[u8] {
        &self.buf[..self.klen as usize]
    }
    fn value(&self) -> &[u8] {
        &self.buf[self.klen as usize..]
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
    pub fn get(&self, key: &[u8], snapshot: u64, value: &mut Vec<u8>) -> MemGet {
        let mut probe = Vec::with_capacity(key.len() + 8);
        append_internal_key(&mut probe, key, snapshot, ValueType::Value);
        let probe = Entry {
            klen: probe.len() as u32,
            buf: probe.into_boxed_slice(),
        };
        let set = self.read();
        let Some(e) = set
            .range((Bound::Included(&probe), Bound::Unbounded))
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
    pub fn for_each(
        &self,
        mut f: impl FnMut(&[u8], &[u8]) -> leveldb_table::Result<()>,
    ) -> leveldb_table::Result<()> {
        for e in self.read().iter() {
            f(e.ikey(), e.value())?;
        }
        Ok(())
    }
}

/// Entries copied per refill of a [`MemCursor`]: the read lock is taken once per batch.
const BATCH: usize = 64;

/// A cursor over a memtable that a writer may still be adding to: it copies the next
/// entries in batches into its own buffer (newer writes it meets are filtered out by the
/// snapshot of the view above it).
pub struct MemCursor {
    mem: Arc<MemTable>,
    /// Entries of the batch, back to back: (key end, value end) offsets into `bytes`.
    spans: Vec<(usize, usize)>,
    bytes: Vec<u8>,
    pos: usize,
    /// The memtable has no entry after the batch (as of its copy).
    last_batch: bool,
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
            last_batch: true,
            scratch: Vec::new(),
        }
    }

    /// Copies up to BATCH entries from `from` on.
    fn fill(&mut self, from: Bound<&[u8]>) {
        let probe = match from {
            Bound::Included(k) | Bound::Excluded(k) => Some(Entry {
                buf: k.to_vec().into_boxed_slice(),
                klen: k.len() as u32,
            }),
            Bound::Unbounded => None,
        };
        let lower = match (&probe, from) {
            (Some(p), Bound::Included(_)) => Bound::Included(p),
            (Some(p), _) => Bound::Excluded(p),
            (None, _) => Bound::Unbounded,
        };
        self.spans.clear();
        self.bytes.clear();
        self.pos = 0;
        let set = self.mem.read();
        let mut it = set.range((lower, Bound::Unbounded));
        for e in it.by_ref().take(BATCH) {
            self.bytes.extend_from_slice(&e.buf);
            let end = self.bytes.len();
            self.spans.push((end - e.value().len(), end));
        }
        self.last_batch = it.next().is_none();
    }

    fn start(&self) -> usize {
        match self.pos {
            0 => 0,
            i => self.spans[i - 1].1,
        }
    }
}

impl Cursor for MemCursor {
    fn valid(&self) -> bool {
        self.pos < self.spans.len()
    }
    fn seek_to_first(&mut self) {
        self.fill(Bound::Unbounded);
    }
    fn seek(&mut self, target: &[u8]) {
        self.fill(Bound::Included(target));
    }
    fn next(&mut self) {
        if self.pos + 1 < self.spans.len() {
            self.pos += 1;
            return;
        }
        if self.last_batch || !self.valid() {
            self.pos = self.spans.len();
            return;
        }
        let mut last = std::mem::take(&mut self.scratch);
        last.clear();
        last.extend_from_slice(self.key());
        self.fill(Bound::Excluded(&last));
        self.scratch = last;
    }
    fn key(&self) -> &[u8] {
        match self.spans.get(self.pos) {
            Some(&(kend, _)) => &self.bytes[self.start()..kend],
            None => &[],
        }
    }
    fn value(&self) -> &[u8] {
        match self.spans.get(self.pos) {
            Some(&(kend, vend)) => &self.bytes[kend..vend],
            None => &[],
        }
    }
    fn error(&self) -> Option<&Error> {
        None
    }
}
