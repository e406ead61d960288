//! A small LSM engine built only from `leveldb_table`'s public pieces. Its directory is a
//! LevelDB directory at every moment (C++ LevelDB opens it, crashed or not), and it opens
//! the directories LevelDB writes.
//!
//! ```text
//!  put/delete/write ─► WriteBatch ─► log (NNNNNN.log, sync optional) ─► memtable
//!                                                                           │ full
//!  get/iter ◄─ memtable + immutable memtable + Version (tables)             ▼
//!                       ▲                              immutable memtable ──► background
//!                       │ new Version, VersionEdit in MANIFEST                thread:
//!                       └──────────── flush: level-0 table (or deeper if no overlap)
//!                                      compaction: level L + overlapping L+1 ─► L+1
//! open: LOCK, CURRENT ─► MANIFEST replay, live logs replayed ─► level-0 table,
//!       new log + new MANIFEST (whole state) + CURRENT, obsolete files deleted
//! ```
//!
//! Files: `options.rs` (options and events), `memtable.rs` (the ordered in-memory
//! writes), `version.rs` (live tables and the MANIFEST), `recovery.rs` (open),
//! `background.rs` (flush and compaction), `iter.rs` (ordered iteration over a snapshot).

mod background;
pub mod cli;
mod iter;
mod memtable;
mod options;
mod recovery;
mod version;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use leveldb_table::db::engine::DirLock;
use leveldb_table::db::files::LogWriter;
use leveldb_table::{db::files::WriteBatch, db::files::WriteBatchReader};
use leveldb_table::{
    raw::internal_key::ValueType, BlockCache, Error, ReadOptions, ReaderOptions, Result,
};

pub use iter::DbIter;
use memtable::{MemGet, MemTable};
pub use options::{Event, Options, WriteOptions};
use version::{Manifest, TableGet, Version};

/// What the engine's mutex guards.
struct State {
    mem: Arc<MemTable>,
    imm: Option<Arc<MemTable>>,
    version: Arc<Version>,
    log: LogWriter<BufWriter<File>>,
    log_number: u64,
    /// The log number the MANIFEST records: older logs are obsolete.
    logged_log: u64,
    manifest: Manifest,
    next_file: u64,
    last_sequence: u64,
    /// Live snapshots: sequence -> how many.
    snapshots: BTreeMap<u64, usize>,
    /// Tables being written (not obsolete although no version names them yet).
    pending: BTreeSet<u64>,
    compact_pointers: [Vec<u8>; version::NUM_LEVELS],
    /// A table lookups keep probing in vain (seek-triggered compaction), with its level.
    file_to_compact: Option<(usize, Arc<version::Table>)>,
    /// The batch buffer of `put` and `delete`.
    scratch: WriteBatch,
    /// The first background or log error: every later write fails with it.
    bg_error: Option<String>,
    /// A flush or a compaction is running.
    flushing: bool,
    compacting: bool,
    shutting_down: bool,
}

impl State {
    fn new_file_number(&mut self) -> u64 {
        self.next_file += 1;
        self.next_file - 1
    }
    fn smallest_snapshot(&self) -> u64 {
        self.snapshots
            .keys()
            .next()
            .copied()
            .unwrap_or(self.last_sequence)
    }
}

struct Inner {
    dir: PathBuf,
    opts: Options,
    reader_opts: ReaderOptions,
    read: ReadOptions,
    state: Mutex<State>,
    /// Signalled when background work is queued or done.
    cv: Condvar,
    _lock: DirLock,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cv.wait(g).unwrap_or_else(|p| p.into_inner())
    }
    fn emit(&self, e: Event) {
        if let Some(l) = &self.opts.listener {
            l(&e);
        }
    }
}

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

/// The engine: one open database directory. Shareable between threads (`&self` methods).
pub struct Db {
    inner: Arc<Inner>,
    bg: Vec<JoinHandle<()>>,
}

impl Db {
    /// Opens the database in `dir`, creating it if missing; see `recovery.rs`.
    ///
    /// # Errors
    /// The directory is locked by another process or handle, its MANIFEST or a log is
    /// damaged, a table it names is missing, its comparator is not bytewise, or I/O fails.
    pub fn open(dir: impl AsRef<Path>, opts: Options) -> Result<Db> {
        recovery::open(dir.as_ref(), opts)
    }

    /// Writes `value` under `key`.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write_one(key, Some(value))
    }

    /// Deletes `key`.
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.write_one(key, None)
    }

    /// One put or deletion, through a batch buffer the engine reuses (no allocation per
    /// write but the memtable entry's).
    fn write_one(&self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        let inner = &*self.inner;
        let mut st = self.make_room(inner.lock(), false)?;
        let seq = st.last_sequence + 1;
        let mut b = std::mem::take(&mut st.scratch);
        b.clear();
        match value {
            Some(v) => b.put(key, v),
            None => b.delete(key),
        }
        b.set_sequence(seq);
        let logged = log(&mut st, &b, inner.opts.sync);
        st.scratch = b;
        logged?;
        match value {
            Some(v) => st.mem.add(seq, ValueType::Value, key, v),
            None => st.mem.add(seq, ValueType::Deletion, key, &[]),
        }
        st.last_sequence = seq;
        Ok(())
    }

    /// Applies `batch` atomically, with the engine's default sync setting.
    pub fn write(&self, batch: &mut WriteBatch) -> Result<()> {
        let sync = self.inner.opts.sync;
        self.write_opts(batch, WriteOptions { sync })
    }

    /// Applies `batch` atomically: all its records or none survive a crash. Its sequence
    /// is set here.
    pub fn write_opts(&self, batch: &mut WriteBatch, wo: WriteOptions) -> Result<()> {
        let inner = &*self.inner;
        let mut st = self.make_room(inner.lock(), false)?;
        batch.set_sequence(st.last_sequence + 1);
        log(&mut st, batch, wo.sync)?;
        let mut last = st.last_sequence;
        for r in WriteBatchReader::new(batch.as_bytes())?.records() {
            let r = r?;
            st.mem.add(r.sequence, r.kind, r.key, r.value);
            last = r.sequence;
        }
        st.last_sequence = last;
        Ok(())
    }

    /// LevelDB's `MakeRoomForWrite`: waits while the immutable memtable is being flushed or
    /// level 0 is at its stop trigger, slows writes at its slowdown trigger, and swaps a
    /// full memtable (or any, with `force`) for a new one with a new log.
    fn make_room<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        mut force: bool,
    ) -> Result<MutexGuard<'a, State>> {
        let inner = &*self.inner;
        let mut allow_delay = !force;
        loop {
            if let Some(e) = &st.bg_error {
                return Err(Error::InvalidArgument(format!("background error: {e}")));
            }
            let l0 = st.version.levels[0].len();
            if allow_delay && l0 >= inner.opts.l0_slowdown_trigger {
                drop(st);
                std::thread::sleep(Duration::from_millis(1));
                allow_delay = false;
                st = inner.lock();
            } else if !force && st.mem.approximate_bytes() <= inner.opts.write_buffer_size {
                return Ok(st);
            } else if st.imm.is_some() || l0 >= inner.opts.l0_stop_trigger {
                st = inner.wait(st);
            } else {
                let number = st.new_file_number();
                let path = inner
                    .dir
                    .join(leveldb_table::db::files::log_file_name(number));
                let file = File::create(path)?;
                st.log = LogWriter::new(BufWriter::with_capacity(64 << 10, file));
                st.log_number = number;
                let full = std::mem::take(&mut st.mem);
                st.imm = Some(full);
                force = false;
                inner.cv.notify_all();
            }
        }
    }

    /// The value of `key`, or `None` when absent or deleted.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut v = Vec::new();
        Ok(self.get_into(key, None, &mut v)?.then_some(v))
    }

    /// The value of `key` as `snapshot` sees it.
    pub fn get_at(&self, key: &[u8], snapshot: &Snapshot) -> Result<Option<Vec<u8>>> {
        let mut v = Vec::new();
        Ok(self.get_into(key, Some(snapshot), &mut v)?.then_some(v))
    }

    /// Looks `key` up (at `snapshot`, or now) into a reused buffer: whether it was found.
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
        for m in std::iter::once(&mem).chain(imm.as_ref()) {
            match m.get(key, seq, value) {
                MemGet::Found => return Ok(true),
                MemGet::Deleted => return Ok(false),
                MemGet::Absent => {}
            }
        }
        let mut charge = None;
        let found = version.get(key, seq, self.inner.read, value, &mut charge)?;
        if let Some((level, t)) = charge.filter(|(_, t)| t.charge_seek()) {
            // Too many lookups go through this table to a deeper one: compact it.
            let mut st = self.inner.lock();
            if st.file_to_compact.is_none() && st.version.contains(t.meta.number) {
                st.file_to_compact = Some((level, t));
                self.inner.cv.notify_all();
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

    /// Live keys in `[from, to)` (either end open when `None`) in key order, as `snapshot`
    /// (or the database now) sees them.
    pub fn iter(
        &self,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
        snapshot: Option<&Snapshot>,
    ) -> Result<DbIter> {
        let (mem, imm, version, seq) = {
            let st = self.inner.lock();
            let seq = snapshot.map_or(st.last_sequence, |s| s.sequence);
            (st.mem.clone(), st.imm.clone(), st.version.clone(), seq)
        };
        DbIter::new(
            iter::Sources {
                mem,
                imm,
                version,
                read: self.inner.read.fill_cache(true),
            },
            seq,
            from,
            to,
        )
    }

    /// Writes the memtable to a table now and waits until it is live.
    pub fn flush(&self) -> Result<()> {
        let inner = &*self.inner;
        let mut st = inner.lock();
        if !st.mem.is_empty() {
            st = self.make_room(st, true)?;
        }
        while st.imm.is_some() && st.bg_error.is_none() {
            st = inner.wait(st);
        }
        match &st.bg_error {
            Some(e) => Err(Error::InvalidArgument(format!("background error: {e}"))),
            None => Ok(()),
        }
    }

    /// Waits until no flush or compaction is pending (LevelDB's size and file-count rules
    /// all satisfied).
    pub fn wait_for_compactions(&self) -> Result<()> {
        let inner = &*self.inner;
        let mut st = inner.lock();
        while st.bg_error.is_none()
            && (st.flushing
                || st.compacting
                || st.imm.is_some()
                || background::pick_compaction(&st, &inner.opts).is_some())
        {
            st = inner.wait(st);
        }
        match &st.bg_error {
            Some(e) => Err(Error::InvalidArgument(format!("background error: {e}"))),
            None => Ok(()),
        }
    }

    /// Tables per level.
    pub fn tables_per_level(&self) -> Vec<usize> {
        let st = self.inner.lock();
        st.version.levels.iter().map(Vec::len).collect()
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

/// Appends `batch` to the log (one `write()`; `fdatasync` too when `sync`). A failure is
/// sticky: the log may hold part of the record, so no later write may follow it.
fn log(st: &mut State, batch: &WriteBatch, sync: bool) -> Result<()> {
    let logged = st
        .log
        .add_record(batch.as_bytes())
        .and_then(|()| st.log.flush());
    let logged = logged.and_then(|()| match sync {
        true => st.log.get_ref().get_ref().sync_data(),
        false => Ok(()),
    });
    logged.map_err(|e| {
        let e = Error::from(e);
        st.bg_error = Some(format!("log write failed: {e}"));
        e
    })
}

/// The block cache and table-reader options for `opts`.
fn reader_options(opts: &Options) -> ReaderOptions {
    ReaderOptions::default()
        .keys(leveldb_table::table::KeyFormat::Internal)
        .block_cache(Some(Arc::new(BlockCache::new(opts.block_cache_bytes))))
        .verify_checksums(opts.verify_checksums)
}
