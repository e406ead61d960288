//! The memtable: the writes not yet in a table, in internal-key order, readable while the
//! writer adds to it (an arena skiplist, `skiplist.rs`, behind a `RwLock`; LevelDB's is
//! lock-free).
//!
//! ```text
//! entry:  | user key | tag (8, LE: sequence << 8 | type) | value |   (in the arena)
//! order:  user key ascending (bytewise), then tag descending (newest first)
//! ```

mod skiplist;

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, RwLock, RwLockReadGuard};

use leveldb_table::raw::coding::decode_fixed64;
use leveldb_table::raw::internal_key::{append_internal_key, parse_internal_key, ValueType};
use leveldb_table::Cursor;
use skiplist::{KeyOrder, SkipList, HEAD, NIL};

/// Bytes charged per entry on top of its key and value (the skiplist node and arena
/// rounding LevelDB's `ApproximateMemoryUsage` counts), so that a memtable fills after about
/// as many writes as LevelDB's at the same `write_buffer_size`.
const ENTRY_OVERHEAD: usize = 20;

/// Internal-key order for the bytewise user comparator, on the raw bytes.
struct InternalOrder;

impl KeyOrder for InternalOrder {
    fn compare(a: &[u8], b: &[u8]) -> Ordering {
        compare_ikeys(a, b)
    }

    /// The user key's first 16 bytes, zero-padded, big-endian. Where two differ, the first
    /// differing byte is a real byte of both keys (the order of the bytes), or a real byte
    /// of the longer key against the shorter one's padding, which then is a prefix of it
    /// (the shorter is less); equal numbers leave it to `compare`.
    fn prefix(ikey: &[u8]) -> u128 {
        let user = ikey.get(..ikey.len().saturating_sub(8)).unwrap_or_default();
        let mut b = [0u8; 16];
        let n = user.len().min(16);
        b[..n].copy_from_slice(&user[..n]);
        u128::from_be_bytes(b)
    }
}

#[inline]
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
pub struct MemTable {
    list: RwLock<SkipList<InternalOrder>>,
    bytes: AtomicUsize,
}

impl Default for MemTable {
    fn default() -> Self {
        MemTable::with_capacity(0)
    }
}

impl MemTable {
    /// A memtable with room for about `bytes` of entries (the write buffer size), so that
    /// filling it copies nothing to make room.
    pub fn with_capacity(bytes: usize) -> MemTable {
        MemTable {
            list: RwLock::new(SkipList::with_capacity(bytes)),
            bytes: AtomicUsize::new(0),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, SkipList<InternalOrder>> {
        self.list.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds one version.
    pub fn add(&self, sequence: u64, kind: ValueType, key: &[u8], value: &[u8]) {
        let tag = (sequence << 8 | kind as u64).to_le_bytes();
        self.list
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(&[key, &tag], value);
        let charge = key.len() + 8 + value.len() + ENTRY_OVERHEAD;
        self.bytes.fetch_add(charge, AtomicOrdering::Relaxed);
    }

    /// Bytes charged so far (compared with the write buffer size).
    pub fn approximate_bytes(&self) -> usize {
        self.bytes.load(AtomicOrdering::Relaxed)
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.read().len() == 0
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
        let list = self.read();
        let n = list.seek(probe);
        if n == NIL {
            return MemGet::Absent;
        }
        match parse_internal_key(list.key(n)) {
            Some(p) if p.user_key == key => match p.value_type {
                ValueType::Value => {
                    value.clear();
                    value.extend_from_slice(list.value(n));
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
        let list = self.read();
        let mut n = list.first();
        while n != NIL {
            f(list.key(n), list.value(n))?;
            n = list.next(n);
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
    /// No entry after the batch (as of its copy).
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
            at_end: true,
            scratch: Vec::new(),
        }
    }

    fn push(&mut self, key: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(key);
        let kend = self.bytes.len();
        self.bytes.extend_from_slice(value);
        self.spans.push((kend, self.bytes.len()));
    }

    /// Copies up to BATCH entries from `from` on, and leaves the cursor on the first.
    fn fill_forward(&mut self, from: Bound<&[u8]>) {
        self.spans.clear();
        self.bytes.clear();
        self.pos = 0;
        let mem = self.mem.clone();
        let list = mem.read();
        let mut n = match from {
            Bound::Unbounded => list.first(),
            Bound::Included(k) => list.seek(k),
            Bound::Excluded(k) => match list.seek(k) {
                n if n != NIL && list.key(n) == k => list.next(n),
                n => n,
            },
        };
        while n != NIL && self.spans.len() < BATCH {
            self.push(list.key(n), list.value(n));
            n = list.next(n);
        }
        self.at_end = n == NIL;
    }

    /// Copies up to BATCH entries before `to` (the last of them nearest it), and leaves the
    /// cursor on the last.
    fn fill_backward(&mut self, to: Option<&[u8]>) {
        self.spans.clear();
        self.bytes.clear();
        let mem = self.mem.clone();
        let list = mem.read();
        let mut n = match to {
            None => list.last(),
            Some(k) => list.before(k),
        };
        let mut got = Vec::with_capacity(BATCH);
        while n != HEAD && got.len() < BATCH {
            got.push(n);
            n = list.before(list.key(n));
        }
        for &n in got.iter().rev() {
            self.push(list.key(n), list.value(n));
        }
        // The batch ends where the copy began: entries after it exist unless it began at
        // the list's end.
        self.at_end = match to {
            None => true,
            Some(k) => list.seek(k) == NIL,
        };
        self.pos = self.spans.len().saturating_sub(1);
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
    fn status(&self) -> leveldb_table::Result<()> {
        Ok(())
    }
    fn seek_to_last(&mut self) {
        self.fill_backward(None);
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.fill_backward(Some(target));
    }
    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if self.pos > 0 {
            self.pos -= 1;
            return;
        }
        let mut first = std::mem::take(&mut self.scratch);
        first.clear();
        first.extend_from_slice(self.key());
        self.fill_backward(Some(&first));
        self.scratch = first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cursor over more entries than one batch holds, moved every way, against a sorted
    /// list of the same internal keys.
    #[test]
    fn a_cursor_walks_batches_both_ways_and_seeks() {
        let mem = Arc::new(MemTable::default());
        let mut model: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut x = 99u64;
        for seq in 1..=700u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let key = format!("k{:03}", (x >> 33) % 300).into_bytes();
            let value = seq.to_le_bytes().to_vec();
            mem.add(seq, ValueType::Value, &key, &value);
            let mut ikey = Vec::new();
            append_internal_key(&mut ikey, &key, seq, ValueType::Value);
            model.push((ikey, value));
        }
        model.sort_by(|a, b| compare_ikeys(&a.0, &b.0));
        let mut c = MemCursor::new(mem.clone());
        let at = |c: &MemCursor| c.valid().then(|| (c.key().to_vec(), c.value().to_vec()));
        c.seek_to_first();
        for e in &model {
            assert_eq!(at(&c).as_ref(), Some(e));
            c.next();
        }
        assert!(!c.valid());
        c.seek_to_last();
        for e in model.iter().rev() {
            assert_eq!(at(&c).as_ref(), Some(e));
            c.prev();
        }
        assert!(!c.valid());
        // Seeks, then steps back and forth across batch edges.
        for i in [0usize, 1, 63, 64, 65, 130, 350, 699] {
            c.seek(&model[i].0);
            assert_eq!(at(&c).as_ref(), Some(&model[i]));
            c.seek_before(&model[i].0);
            assert_eq!(at(&c).as_ref(), i.checked_sub(1).map(|j| &model[j]));
            let mut pos = i.checked_sub(1);
            for step in 0..150 {
                let forward = (step / 37) % 2 == 0;
                if pos.is_none() {
                    break;
                }
                if forward {
                    c.next();
                    pos = pos.map(|p| p + 1).filter(|&p| p < model.len());
                } else {
                    c.prev();
                    pos = pos.and_then(|p| p.checked_sub(1));
                }
                assert_eq!(
                    at(&c).as_ref(),
                    pos.map(|p| &model[p]),
                    "from {i}, step {step}"
                );
            }
        }
        assert!(!mem.is_empty());
        let mut all = Vec::new();
        mem.for_each(|k, v| {
            all.push((k.to_vec(), v.to_vec()));
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(all, model);
    }
}
