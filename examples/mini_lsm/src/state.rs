//! What the engine's threads share: the directory, the options, the open tables, the log
//! (the writing leader's alone), and the state behind the engine's mutex: memtables, the
//! current version, file numbers, snapshots, the writers' queue, background jobs.
//!
//! ```text
//! Inner ─┬─ state: Mutex<State>   memtables, Version, MANIFEST, counters, queue, jobs
//!        ├─ log:   Mutex<LogFile>  NNNNNN.log (only the writing leader appends)
//!        ├─ manifest: Mutex<Manifest>  (lock order: manifest, then state)
//!        ├─ tables: TableCache     open tables, bounded
//!        └─ cv (background work), writers_cv (the queue)
//! install(edit): MANIFEST append + sync (state unlocked) ─► new Version
//! delete_obsolete: files no version names, deleted with the state unlocked
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};

use leveldb_table::db::engine::DirLock;
use leveldb_table::db::files::{FileKind, LogWriter, VersionEdit, WriteBatch};
use leveldb_table::{BlockCache, OpenOptions, Options as TableOptions, ReadOptions};

use crate::error::{Error, Result};
use crate::manifest::Manifest;
use crate::memtable::MemTable;
use crate::options::{Event, Options};
use crate::table_cache::TableCache;
use crate::version::{FileInfo, Version, NUM_LEVELS};

/// Files the engine keeps open besides tables (LevelDB's `kNumNonTableCacheFiles`).
const NON_TABLE_FILES: usize = 10;

/// The log being written.
pub struct LogFile {
    /// Its path.
    pub path: PathBuf,
    /// The writer (one `write()` per record).
    pub writer: LogWriter<BufWriter<File>>,
}

impl LogFile {
    /// Creates log `number` in `dir`.
    pub fn create(dir: &Path, number: u64) -> Result<LogFile> {
        let path = dir.join(leveldb_table::db::files::log_file_name(number));
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        Ok(LogFile {
            path,
            writer: LogWriter::new(BufWriter::with_capacity(64 << 10, file)),
        })
    }

    /// Appends one record (one `write()`), synced when `sync`.
    pub fn add(&mut self, record: &[u8], sync: bool) -> Result<()> {
        self.writer
            .add_record(record)
            .and_then(|()| self.writer.flush())
            .and_then(|()| match sync {
                true => self.writer.get_ref().get_ref().sync_data(),
                false => Ok(()),
            })
            .map_err(|e| Error::io(&self.path, e))
    }
}

/// A writer waiting in the queue for a leader to write its batch (or to lead).
pub struct Queued {
    /// Its ticket: its result is filed under it in [`State::done`].
    pub ticket: u64,
    /// Its batch (`None`: a request to switch to a new memtable, from `flush`).
    pub batch: Option<WriteBatch>,
    /// Whether it asked for a synced write.
    pub sync: bool,
}

/// A compaction asked for by `compact_range`: one level, a range of user keys.
#[derive(Clone, Debug)]
pub struct Manual {
    /// The level whose tables are merged into the next.
    pub level: usize,
    /// Where the next step starts (user key; `None`: the start).
    pub begin: Option<Vec<u8>>,
    /// Where the range ends (user key, inclusive; `None`: the end).
    pub end: Option<Vec<u8>>,
    /// No table of the level is left in the range.
    pub done: bool,
}

/// What the engine's mutex guards.
pub struct State {
    /// The memtable being written.
    pub mem: Arc<MemTable>,
    /// The memtable being flushed, if any.
    pub imm: Option<Arc<MemTable>>,
    /// The live tables.
    pub version: Arc<Version>,
    /// Every version made so far that a reader, an iterator or a compaction may still
    /// hold (LevelDB's version list): their tables are not deleted.
    pub versions: Vec<Weak<Version>>,
    /// The log number the MANIFEST records: older logs are obsolete.
    pub logged_log: u64,
    /// The number of the log being written (what a flush records once its memtable is in a
    /// table).
    pub log_number: u64,
    /// The MANIFEST's file number.
    pub manifest_number: u64,
    /// The next file number.
    pub next_file: u64,
    /// The sequence of the last write readers may see.
    pub last_sequence: u64,
    /// Live snapshots: sequence -> how many.
    pub snapshots: BTreeMap<u64, usize>,
    /// Tables being written (not obsolete although no version names them yet).
    pub pending: BTreeSet<u64>,
    /// Per level, where the next compaction of the level starts (an internal key).
    pub compact_pointers: [Vec<u8>; NUM_LEVELS],
    /// A table lookups keep probing in vain (seek-triggered compaction), with its level.
    pub file_to_compact: Option<(usize, Arc<FileInfo>)>,
    /// A compaction `compact_range` waits for.
    pub manual: Option<Manual>,
    /// Writers waiting, oldest first.
    pub queue: VecDeque<Queued>,
    /// Results for writers whose batch a leader wrote, by ticket.
    pub done: HashMap<u64, Result<()>>,
    /// The next writer's ticket.
    pub next_ticket: u64,
    /// A writer is leading (writing a group): others queue.
    pub leading: bool,
    /// The first failed write or background job: every later write fails with it.
    pub bg_error: Option<Error>,
    /// A flush is running.
    pub flushing: bool,
    /// A compaction is running.
    pub compacting: bool,
    /// The engine is being dropped.
    pub shutting_down: bool,
    /// Version edits being written to the MANIFEST (counted from the moment an installer
    /// decided on its edit, under the lock).
    pub installing: usize,
}

impl State {
    /// Takes the next file number.
    pub fn new_file_number(&mut self) -> u64 {
        self.next_file += 1;
        self.next_file - 1
    }

    /// The oldest sequence a reader may read at.
    pub fn smallest_snapshot(&self) -> u64 {
        self.snapshots
            .keys()
            .next()
            .copied()
            .unwrap_or(self.last_sequence)
    }

    /// The sticky error, as the error a write returns.
    pub fn check(&self) -> Result<()> {
        match &self.bg_error {
            Some(e) => Err(Error::Stopped(Arc::new(e.clone()))),
            None => Ok(()),
        }
    }
}

/// The engine's shared parts.
pub struct Inner {
    /// The directory.
    pub dir: PathBuf,
    /// The options it was opened with.
    pub opts: Options,
    /// How tables are read (checksums always verified).
    pub read: ReadOptions,
    /// The open tables.
    pub tables: Arc<TableCache>,
    /// The state.
    pub state: Mutex<State>,
    /// The log (only the leader, or `make_room` under the state lock, touches it).
    pub log: Mutex<LogFile>,
    /// The MANIFEST (taken before the state lock by whoever installs a version).
    pub manifest: Mutex<Manifest>,
    /// Signalled when background work is queued or done.
    pub cv: Condvar,
    /// Signalled when a leader is done with a group.
    pub writers_cv: Condvar,
    /// The directory's LOCK, held while the engine is open.
    pub _lock: DirLock,
}

impl Inner {
    /// Locks the state (a thread that panicked holding it left it consistent: every
    /// change under the lock is a single assignment or append).
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for background work.
    pub fn wait<'a>(&self, g: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
        self.cv.wait(g).unwrap_or_else(|p| p.into_inner())
    }

    /// The log.
    pub fn log(&self) -> MutexGuard<'_, LogFile> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells the listener, if any.
    pub fn emit(&self, e: Event) {
        if let Some(l) = &self.opts.listener {
            l(&e);
        }
    }

    /// Writes `edit` (with the engine's counters) to the MANIFEST and installs the version
    /// it makes. The state lock is released while the MANIFEST is written and synced (as
    /// LevelDB's `LogAndApply` does), so writers go on; installs take turns on the
    /// MANIFEST's lock, and no compaction is picked meanwhile (`installing`), so none is
    /// picked from a version about to change.
    pub fn install<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        mut edit: VersionEdit,
    ) -> (MutexGuard<'a, State>, Result<()>) {
        st.installing += 1;
        drop(st);
        let mut manifest = self.manifest.lock().unwrap_or_else(|p| p.into_inner());
        let st = self.lock();
        edit.next_file_number = Some(st.next_file);
        edit.last_sequence = Some(st.last_sequence);
        drop(st);
        let written = manifest.append(&edit);
        let mut st = self.lock();
        st.installing -= 1;
        self.cv.notify_all();
        if let Err(e) = written {
            return (st, Err(e));
        }
        if let Some(n) = edit.log_number {
            st.logged_log = n;
        }
        st.version = Arc::new(st.version.apply(&edit));
        let weak = Arc::downgrade(&st.version);
        st.versions.push(weak);
        if let Some((level, t)) = &st.file_to_compact {
            if !st.version.levels[*level].iter().any(|x| Arc::ptr_eq(x, t)) {
                st.file_to_compact = None;
            }
        }
        (st, Ok(()))
    }

    /// Deletes logs older than the MANIFEST's, other MANIFESTs, and tables that no version
    /// still held names and no job is writing (LevelDB's `RemoveObsoleteFiles`), with the
    /// state lock released but for a look at what is live.
    pub fn delete_obsolete(&self) {
        // Listed first: a file made after the look below is not in the listing, and a file
        // in the listing that the look finds neither live nor pending never will be.
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let files: Vec<_> = dir
            .flatten()
            .filter_map(|e| {
                let kind = e.file_name().to_str().and_then(FileKind::parse)?;
                Some((kind, e.path()))
            })
            .collect();
        let (versions, pending, logged_log, manifest) = {
            let mut st = self.lock();
            st.versions.retain(|v| v.strong_count() > 0);
            let held: Vec<Arc<Version>> = st.versions.iter().filter_map(Weak::upgrade).collect();
            (held, st.pending.clone(), st.logged_log, st.manifest_number)
        };
        let live = |n: u64| versions.iter().any(|v| v.contains(n)) || pending.contains(&n);
        for (kind, path) in files {
            let obsolete = match kind {
                FileKind::Log(n) => n < logged_log,
                FileKind::Manifest(n) => n != manifest,
                FileKind::Table(n) => !live(n),
                FileKind::Temp(_) => true,
                _ => false,
            };
            if obsolete {
                if let FileKind::Table(n) = kind {
                    self.tables.evict(n);
                }
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The table-reader options for `opts`: internal keys, the block cache, checksums always
/// verified.
pub fn reader_options(opts: &Options) -> OpenOptions {
    OpenOptions::default()
        .keys(leveldb_table::table::KeyFormat::Internal)
        .block_cache(Some(Arc::new(BlockCache::new(opts.block_cache_bytes))))
        .verify_checksums(true)
}

/// The open-table cache for `opts`.
pub fn table_cache(dir: &Path, opts: &Options) -> TableCache {
    let capacity = opts.max_open_files.saturating_sub(NON_TABLE_FILES).max(1);
    TableCache::new(dir, reader_options(opts), capacity, opts.mmap_reads)
}

/// The table options of new tables.
pub fn table_options(opts: &Options) -> TableOptions {
    let t = TableOptions::default();
    match opts.bloom_bits_per_key {
        0 => t.filter_policy(None),
        n => t.bloom(n),
    }
}
