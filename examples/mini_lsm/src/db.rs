//! `Db`: one open database directory, shareable between threads.
//!
//! ```text
//! put / delete / write ─► write.rs (queue, group commit) ─► log ─► memtable
//! get:  memtable ─► immutable memtable ─► Version (level 0 newest first, then one table
//!       per level; the table cache opens them; every block's checksum verified)
//! iter / iter_rev: iter.rs over a snapshot
//! flush / compact_range / wait_for_compactions: hand work to the background threads
//! ```

use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use leveldb_table::db::files::WriteBatch;

use crate::background::{self, Worker};
use crate::compaction::needs_compaction;
use crate::error::{Error, Result};
use crate::iter::{DbIter, Sources};
use crate::memtable::MemGet;
use crate::options::{Options, WriteOptions};
use crate::recovery::{self, Recovery};
use crate::state::{Inner, Manual};
use crate::version::TableGet;
use crate::write::{self, Request};

/// A consistent view: reads through it see the database as it was when it was taken.
/// Compactions keep the versions it can see until it is dropped.
pub struct Snapshot {
    sequence: u64,
    inner: Arc<Inner>,
}

impl Snapshot {
    /// The sequence number it reads at.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let mut st = self.inner.lock();
        if let Some(n) = st.snapshots.get_mut(&self.sequence) {
            *n -= 1;
            if *n == 0 {
                st.snapshots.remove(&self.sequence);
            }
        }
    }
}

thread_local! {
    /// The batch `put` and `delete` fill, reused per thread.
    static SCRATCH: RefCell<WriteBatch> = RefCell::new(WriteBatch::new());
    /// The search key of memtable lookups, reused per thread.
    static PROBE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The engine: one open database directory. Shareable between threads (`&self` methods;
/// concurrent writers are committed in groups).
pub struct Db {
    inner: Arc<Inner>,
    recovery: Recovery,
    bg: Vec<JoinHandle<()>>,
}

impl Db {
    /// Opens the database in `dir`, creating it if missing (see `recovery.rs`).
    ///
    /// # Errors
    /// The directory is locked by another process or handle, its MANIFEST is damaged (or a
    /// log is, under [`Options::paranoid_checks`]), a table it names is missing, its
    /// comparator is not bytewise, or I/O fails.
    pub fn open(dir: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let (inner, recovery) = recovery::open(dir.as_ref(), opts)?;
        let mut db = Db {
            inner,
            recovery,
            bg: Vec::new(),
        };
        for (name, worker) in [
            ("mini-lsm-flush", Worker::Flush),
            ("mini-lsm-compact", Worker::Compaction),
        ] {
            let inner = db.inner.clone();
            let h = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || background::run(inner, worker))
                .map_err(|e| Error::io(&db.inner.dir, e))?;
            db.bg.push(h);
        }
        Ok(db)
    }

    /// What the open found: damaged log records it dropped, writes it replayed.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// Writes `value` under `key`.
    ///
    /// # Errors
    /// The log cannot be written, or an earlier failure stopped writes ([`Error::Stopped`]).
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        SCRATCH.with_borrow_mut(|b| {
            b.clear();
            b.put(key, value);
            self.write(b)
        })
    }

    /// Deletes `key`.
    ///
    /// # Errors
    /// As [`put`](Self::put).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        SCRATCH.with_borrow_mut(|b| {
            b.clear();
            b.delete(key);
            self.write(b)
        })
    }

    /// Applies `batch` atomically, with the engine's default sync setting.
    ///
    /// # Errors
    /// As [`put`](Self::put).
    pub fn write(&self, batch: &mut WriteBatch) -> Result<()> {
        let sync = self.inner.opts.sync;
        self.write_opts(batch, WriteOptions { sync })
    }

    /// Applies `batch` atomically: all its records or none survive a crash. Its sequence
    /// is set here. Writers on other threads at the same time are logged with it in one
    /// record (group commit).
    ///
    /// # Errors
    /// As [`put`](Self::put).
    pub fn write_opts(&self, batch: &mut WriteBatch, wo: WriteOptions) -> Result<()> {
        write::write(&self.inner, Request::Batch(batch, wo.sync))
    }

    /// The value of `key`, or `None` when absent or deleted.
    ///
    /// # Errors
    /// A table cannot be read, or a block fails its checksum: damage is an error, never a
    /// missing key.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut v = Vec::new();
        Ok(self.get_into(key, None, &mut v)?.then_some(v))
    }

    /// The value of `key` as `snapshot` sees it.
    ///
    /// # Errors
    /// As [`get`](Self::get).
    pub fn get_at(&self, key: &[u8], snapshot: &Snapshot) -> Result<Option<Vec<u8>>> {
        let mut v = Vec::new();
        Ok(self.get_into(key, Some(snapshot), &mut v)?.then_some(v))
    }

    /// Looks `key` up (at `snapshot`, or now) into a reused buffer: whether it was found.
    ///
    /// # Errors
    /// As [`get`](Self::get).
    pub fn get_into(
        &self,
        key: &[u8],
        snapshot: Option<&Snapshot>,
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        let (mem, imm, version, seq) = {
            let st = self.inner.lock();
            let seq = snapshot.map_or(st.last_sequence, |s| s.sequence);
            (st.mem.clone(), st.imm.clone(), st.version.clone(), seq)
        };
        let in_mem = PROBE.with_borrow_mut(|probe| {
            for m in std::iter::once(&mem).chain(imm.as_ref()) {
                match m.get(key, seq, value, probe) {
                    MemGet::Found => return Some(true),
                    MemGet::Deleted => return Some(false),
                    MemGet::Absent => {}
                }
            }
            None
        });
        if let Some(found) = in_mem {
            return Ok(found);
        }
        let mut charge = None;
        let inner = &*self.inner;
        let found = version.get(&inner.tables, key, seq, inner.read, value, &mut charge)?;
        if let Some((level, t)) = charge.filter(|(_, t)| t.charge_seek()) {
            // Too many lookups go through this table to a deeper one: compact it.
            let mut st = inner.lock();
            if st.file_to_compact.is_none() && st.version.contains(t.meta.number) {
                st.file_to_compact = Some((level, t));
                inner.cv.notify_all();
            }
        }
        Ok(matches!(found, TableGet::Found))
    }

    /// A snapshot of the database as it is now.
    pub fn snapshot(&self) -> Snapshot {
        let mut st = self.inner.lock();
        let sequence = st.last_sequence;
        *st.snapshots.entry(sequence).or_insert(0) += 1;
        Snapshot {
            sequence,
            inner: self.inner.clone(),
        }
    }

    fn sources(&self, snapshot: Option<&Snapshot>) -> (Sources, u64) {
        let st = self.inner.lock();
        let seq = snapshot.map_or(st.last_sequence, |s| s.sequence);
        let src = Sources {
            mem: st.mem.clone(),
            imm: st.imm.clone(),
            version: st.version.clone(),
            tables: self.inner.tables.clone(),
            read: self.inner.read,
        };
        (src, seq)
    }

    /// Live keys in `[from, to)` (either end open when `None`) in key order, as `snapshot`
    /// (or the database now) sees them: positioned on the first.
    ///
    /// # Errors
    /// The first key cannot be read (a damaged or missing table).
    pub fn iter(
        &self,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
        snapshot: Option<&Snapshot>,
    ) -> Result<DbIter> {
        let (src, seq) = self.sources(snapshot);
        let mut it = DbIter::new(src, seq, from, to, false);
        it.seek_to_first();
        it.status()?;
        Ok(it)
    }

    /// The same keys from the last to the first: positioned on the last; as an `Iterator`
    /// it walks backward.
    ///
    /// # Errors
    /// As [`iter`](Self::iter).
    pub fn iter_rev(
        &self,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
        snapshot: Option<&Snapshot>,
    ) -> Result<DbIter> {
        let (src, seq) = self.sources(snapshot);
        let mut it = DbIter::new(src, seq, from, to, true);
        it.seek_to_last();
        it.status()?;
        Ok(it)
    }

    /// Writes the memtable to a table now and waits until it is live.
    ///
    /// # Errors
    /// The flush failed, or an earlier failure stopped writes.
    pub fn flush(&self) -> Result<()> {
        write::write(&self.inner, Request::SwitchMemtable)?;
        let inner = &*self.inner;
        let mut st = inner.lock();
        while st.imm.is_some() && st.bg_error.is_none() {
            st = inner.wait(st);
        }
        st.check()
    }

    /// Compacts the keys in `[begin, end]` (user keys, either end open when `None`) down to
    /// the deepest level that holds any of them (LevelDB's `CompactRange`): the memtable is
    /// flushed, then each level's tables in the range are merged into the next, so that
    /// deleted and overwritten versions no snapshot needs are gone.
    ///
    /// # Errors
    /// A flush or a compaction failed.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        let max_level = {
            let st = self.inner.lock();
            (1..st.version.levels.len())
                .filter(|&l| !st.version.overlapping(l, begin, end).is_empty())
                .max()
                .unwrap_or(1)
        };
        self.flush()?;
        let inner = &*self.inner;
        for level in 0..max_level {
            let mut st = inner.lock();
            while st.manual.is_some() && st.bg_error.is_none() {
                st = inner.wait(st);
            }
            st.check()?;
            st.manual = Some(Manual {
                level,
                begin: begin.map(<[u8]>::to_vec),
                end: end.map(<[u8]>::to_vec),
                done: false,
            });
            inner.cv.notify_all();
            while st.manual.as_ref().is_some_and(|m| !m.done) && st.bg_error.is_none() {
                st = inner.wait(st);
            }
            st.manual = None;
            inner.cv.notify_all();
            st.check()?;
        }
        Ok(())
    }

    /// Waits until no flush or compaction is pending (LevelDB's size and file-count rules
    /// all satisfied).
    ///
    /// # Errors
    /// A background job failed.
    pub fn wait_for_compactions(&self) -> Result<()> {
        let inner = &*self.inner;
        let mut st = inner.lock();
        while st.bg_error.is_none()
            && (st.flushing
                || st.compacting
                || st.imm.is_some()
                || needs_compaction(&st, &inner.opts))
        {
            st = inner.wait(st);
        }
        st.check()
    }

    /// Tables per level.
    pub fn tables_per_level(&self) -> Vec<usize> {
        let st = self.inner.lock();
        st.version.levels.iter().map(Vec::len).collect()
    }

    /// Tables the table cache holds open now (at most `max_open_files - 10`, besides
    /// tables a read or compaction in progress holds).
    pub fn open_tables(&self) -> usize {
        self.inner.tables.len()
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        self.inner.lock().shutting_down = true;
        self.inner.cv.notify_all();
        for h in self.bg.drain(..) {
            let _ = h.join();
        }
    }
}
