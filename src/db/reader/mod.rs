//! [`Db`]: a LevelDB database directory opened read-only.
//!
//! Opening reads CURRENT, replays the MANIFEST it names (the live tables per level) and the
//! live write-ahead logs (into an in-memory table), and nothing else: tables are opened on
//! first use. No file is created, renamed, written or locked, so a directory another process
//! holds (LevelDB's LOCK) or a read-only mount reads the same.
//!
//! ```text
//! dir/CURRENT -> MANIFEST-N -> levels 0..6 of NNNNNN.ldb (key ranges, sizes)
//!            \-> log number L: NNNNNN.log with number >= L (and == prev log) -> memtable
//! get(k, S):  memtable, then level-0 tables newest first, then one table per level 1..6
//!             (filter first in each table), the first version with sequence <= S wins
//! ```

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::cache::BlockCache;
use crate::db::cursor::{in_table, Cursor, LevelCursor, MemCursor, TableCursor, TableSource};
use crate::db::filename::{self, FileKind};
use crate::db::format::{BYTEWISE_COMPARATOR_NAME, NUM_LEVELS};
use crate::db::log_reader::{LogItem, LogReader};
use crate::db::memtable::{MemLookup, MemTable, Origin};
use crate::db::merging::{MergingCursor, ViewCursor};
use crate::db::version::{FileMeta, ManifestState};
use crate::db::write_batch::{BatchRecord, WriteBatchReader};
use crate::error::{Error, Result};
use crate::idb::format::IDB_COMPARATOR_NAME;
use crate::idb::IdbComparator;
use crate::internal_key::{self, InternalKeyComparator};
use crate::options::{KeyFormat, ReadOptions, ReaderOptions};
use crate::table::LookupKind;
use crate::util::comparator::{BytewiseComparator, Comparator};

/// How a database is opened.
#[derive(Clone)]
pub struct DbOptions {
    /// Comparators besides the built-in bytewise one, matched by the name in the MANIFEST.
    pub comparators: Vec<Arc<dyn Comparator>>,
    /// Verify block checksums on every read (true).
    pub verify_checksums: bool,
    /// Skip what is damaged instead of failing: damaged log records, missing tables, and a
    /// missing or damaged MANIFEST (then every table and log of the directory is read, as
    /// LevelDB's repair would). What was skipped is listed in [`Db::notes`].
    pub salvage: bool,
    /// Block cache shared by the tables (8 MiB, LevelDB's default, when `None`).
    pub block_cache: Option<Arc<BlockCache>>,
}

impl Default for DbOptions {
    fn default() -> Self {
        DbOptions {
            comparators: Vec::new(),
            verify_checksums: true,
            salvage: false,
            block_cache: None,
        }
    }
}

/// A write-ahead log that was replayed.
#[derive(Debug, Clone)]
pub struct LogInfo {
    /// Its file number.
    pub number: u64,
    /// WriteBatches read.
    pub batches: u64,
    /// Records (puts and deletions) read.
    pub records: u64,
    /// An incomplete last record (offset, length), ignored as LevelDB does.
    pub torn_tail: Option<(u64, u64)>,
}

/// A LevelDB database directory, opened read-only.
pub struct Db {
    dir: PathBuf,
    manifest: Option<String>,
    state: ManifestState,
    icmp: InternalKeyComparator,
    mem: MemTable,
    logs: Vec<LogInfo>,
    tables: Tables,
    /// Per level (index = level), the search aid of levels >= 1 under a bytewise order.
    search: Vec<Option<LevelSearch>>,
    other_files: Vec<String>,
    last_sequence: u64,
    notes: Vec<String>,
    reader_opts: ReaderOptions,
    read: ReadOptions,
    /// No usable MANIFEST: every table is read, all as if at level 0.
    repair_view: bool,
    mmap: bool,
}

/// The LevelDB files of a directory (name, kind), and its other names.
type Listing = (Vec<(String, FileKind)>, Vec<String>);

/// Lists the directory: (name, kind) for every LevelDB file, other names apart.
fn list(dir: &Path) -> Result<Listing> {
    let mut ours = Vec::new();
    let mut other = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        match FileKind::parse(&name) {
            Some(k) => ours.push((name, k)),
            None => other.push(name),
        }
    }
    ours.sort_by_key(|(_, k)| *k);
    other.sort();
    Ok((ours, other))
}

fn in_file(file: &str, e: Error) -> Error {
    match e {
        e @ Error::InFile { .. } => e,
        e => Error::InFile {
            file: file.to_string(),
            source: Box::new(e),
        },
    }
}

impl Db {
    /// Opens the database in `dir` read-only.
    ///
    /// # Errors
    /// I/O errors; a bad CURRENT or MANIFEST, a damaged log record or a missing table
    /// (unless `opts.salvage`); a comparator the options do not supply
    /// ([`Error::UnknownComparator`]). Every error names its file.
    pub fn open(dir: impl AsRef<Path>, opts: DbOptions) -> Result<Db> {
        Self::open_with(dir.as_ref(), opts, false)
    }

    /// [`open`](Self::open), reading the tables through read-only memory maps as LevelDB
    /// does (no system call or copy per block read). Without the `mmap` feature, the same as
    /// `open`.
    ///
    /// # Safety
    /// As [`crate::map_file`]: no table of the directory may be truncated or rewritten in
    /// place while the `Db` is alive. LevelDB never does either (it writes new tables and
    /// deletes old ones; a deleted file stays readable through its map), but another tool
    /// might.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    #[allow(unsafe_code)]
    pub unsafe fn open_mmap(dir: impl AsRef<Path>, opts: DbOptions) -> Result<Db> {
        Self::open_with(dir.as_ref(), opts, true)
    }

    fn open_with(dir: &Path, opts: DbOptions, mmap: bool) -> Result<Db> {
        let dir = dir.to_path_buf();
        let (files, other_files) = list(&dir)?;
        let mut notes = Vec::new();
        let salvage = opts.salvage;

        // CURRENT and the MANIFEST it names.
        let manifest = filename::read_current(&dir)
            .map_err(|e| in_file("CURRENT", e))
            .and_then(|(name, _)| {
                let bytes = std::fs::read(dir.join(&name)).map_err(|e| in_file(&name, e.into()))?;
                // Any damage fails the replay: a MANIFEST missing an edit would give a wrong set
                // of live tables; salvage then reads every table instead.
                let st = ManifestState::replay(&bytes, false).map_err(|e| in_file(&name, e))?;
                Ok((name, st))
            });
        let (manifest, mut state, repair_view) = match manifest {
            Ok((name, st)) => {
                for d in &st.damage {
                    notes.push(format!("{name}: {d} (skipped)"));
                }
                (Some(name), st, false)
            }
            Err(e) if salvage => {
                notes.push(format!(
                    "{e}; reading every table and log of the directory instead (as LevelDB's repair would)"
                ));
                (None, ManifestState::default(), true)
            }
            Err(e) => return Err(e),
        };

        // The comparator: refuse an order we do not have.
        let name = state
            .comparator
            .clone()
            .unwrap_or_else(|| BYTEWISE_COMPARATOR_NAME.to_string());
        let user: Arc<dyn Comparator> = opts
            .comparators
            .iter()
            .find(|c| c.name() == name)
            .cloned()
            .or_else(|| builtin_comparator(&name))
            .ok_or(Error::UnknownComparator { name })?;
        let icmp = InternalKeyComparator::new(user.clone());

        // Tables on disk by number (with their actual name, .ldb or .sst).
        let on_disk: BTreeMap<u64, String> = files
            .iter()
            .filter_map(|(n, k)| match k {
                FileKind::Table(num) => Some((*num, n.clone())),
                _ => None,
            })
            .collect();
        if repair_view {
            // Every table, as level 0 (sequence numbers order the versions).
            state.levels = vec![Vec::new(); NUM_LEVELS];
            for (&number, name) in &on_disk {
                let size = std::fs::metadata(dir.join(name))
                    .map(|m| m.len())
                    .unwrap_or(0);
                state.levels[0].push(FileMeta {
                    number,
                    size,
                    smallest: Vec::new(),
                    largest: Vec::new(),
                });
            }
        } else {
            for (level, files) in state.levels.iter_mut().enumerate() {
                let mut kept = Vec::with_capacity(files.len());
                for f in files.drain(..) {
                    if on_disk.contains_key(&f.number) {
                        kept.push(f);
                        continue;
                    }
                    let e = Error::MissingFile {
                        file: filename::table_file_name(f.number),
                    };
                    if !salvage {
                        return Err(e);
                    }
                    notes.push(format!("{e} (level {level}; skipped)"));
                }
                *files = kept;
            }
        }
        // Level 0 newest first; other levels by key.
        state.levels[0].sort_by_key(|f| std::cmp::Reverse(f.number));
        for l in state.levels.iter_mut().skip(1) {
            l.sort_by(|a, b| icmp.compare(&a.smallest, &b.smallest));
        }

        // The live logs, oldest first, into the memtable.
        let mut logs = Vec::new();
        let mut batches: Vec<(Origin, Vec<u8>)> = Vec::new();
        for (name, kind) in &files {
            let FileKind::Log(number) = *kind else {
                continue;
            };
            if !repair_view && !state.log_is_live(number) {
                continue;
            }
            let bytes = std::fs::read(dir.join(name)).map_err(|e| in_file(name, e.into()))?;
            let mut info = LogInfo {
                number,
                batches: 0,
                records: 0,
                torn_tail: None,
            };
            for item in LogReader::new(&bytes) {
                match item {
                    LogItem::Record { offset, data } => {
                        let checked = WriteBatchReader::new(&data)
                            .and_then(|b| b.collect().map(|r| r.len() as u64));
                        match checked {
                            Ok(n) => {
                                info.batches += 1;
                                info.records += n;
                                batches.push((
                                    Origin {
                                        log: number,
                                        offset,
                                    },
                                    data.into_owned(),
                                ));
                            }
                            Err(e) => {
                                let e = in_file(name, batch_at(e, offset));
                                if !salvage {
                                    return Err(e);
                                }
                                notes.push(format!("{e} (batch skipped)"));
                            }
                        }
                    }
                    LogItem::Damage(e) => {
                        let e = in_file(name, e);
                        if !salvage {
                            return Err(e);
                        }
                        notes.push(format!("{e} (skipped)"));
                    }
                    LogItem::TornTail { offset, len } => {
                        info.torn_tail = Some((offset, len));
                        notes.push(format!(
                            "{name}: the last record at offset {offset} ({len} bytes) is incomplete \
                             (a write in progress, or a cut file); ignored, as LevelDB does"
                        ));
                    }
                }
            }
            logs.push(info);
        }
        let records = batches.iter().flat_map(|(origin, data)| {
            // ok: every batch kept here decoded whole above.
            WriteBatchReader::new(data)
                .map(|b| {
                    b.records()
                        .filter_map(Result::ok)
                        .collect::<Vec<BatchRecord<'_>>>()
                })
                .unwrap_or_default()
                .into_iter()
                .map(move |r| (r, *origin))
        });
        let mem = MemTable::new(icmp.clone(), records);
        let log_max = mem
            .entries()
            .iter()
            .filter_map(|(k, _, _)| internal_key::parse_internal_key(k).map(|p| p.sequence))
            .max()
            .unwrap_or(0);
        let last_sequence = state.last_sequence.max(log_max);

        let cache = opts
            .block_cache
            .clone()
            .unwrap_or_else(|| Arc::new(BlockCache::new(8 << 20)));
        let mut reader_opts = ReaderOptions::default()
            .keys(KeyFormat::Internal)
            .block_cache(cache)
            .verify_checksums(opts.verify_checksums);
        reader_opts.comparator = user;
        let live: std::collections::BTreeSet<u64> = state
            .levels
            .iter()
            .flat_map(|l| l.iter().map(|f| f.number))
            .collect();
        let tables = Tables::new(
            on_disk
                .iter()
                .filter(|(n, _)| live.contains(n))
                .map(|(&n, name)| (n, name.clone())),
        );
        // The built-in bytewise order (not a user-supplied comparator of that name).
        let bytewise = reader_opts.comparator.name() == BYTEWISE_COMPARATOR_NAME
            && !opts
                .comparators
                .iter()
                .any(|c| c.name() == BYTEWISE_COMPARATOR_NAME);
        let search = state
            .levels
            .iter()
            .enumerate()
            .map(|(level, files)| {
                (level > 0 && bytewise && !repair_view)
                    .then(|| LevelSearch::build(files, |n| tables.slot(n)))
            })
            .collect();
        Ok(Db {
            dir,
            manifest,
            state,
            icmp,
            mem,
            logs,
            tables,
            search,
            other_files,
            last_sequence,
            notes,
            reader_opts,
            read: ReadOptions {
                verify_checksums: opts.verify_checksums,
                fill_cache: true,
            },
            repair_view,
            mmap,
        })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The MANIFEST read (`None` when it was unusable and `salvage` read every table).
    pub fn manifest_name(&self) -> Option<&str> {
        self.manifest.as_deref()
    }

    /// What the MANIFEST says (comparator, log number, next file, levels...).
    pub fn manifest(&self) -> &ManifestState {
        &self.state
    }

    /// The comparator's name.
    pub fn comparator_name(&self) -> &str {
        self.icmp.user_comparator().name()
    }

    /// The newest sequence number: the MANIFEST's, or a later one from the logs.
    pub fn last_sequence(&self) -> u64 {
        self.last_sequence
    }

    /// The live tables of `level` (level 0 newest first, other levels by key).
    pub fn level_files(&self, level: usize) -> &[FileMeta] {
        self.state.levels.get(level).map_or(&[], Vec::as_slice)
    }

    /// The replayed logs.
    pub fn logs(&self) -> &[LogInfo] {
        &self.logs
    }

    /// The writes of the logs, sorted.
    pub fn memtable(&self) -> &MemTable {
        &self.mem
    }

    /// What was skipped or noticed while opening (damage with `salvage`, a torn log tail).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Whether every table was read as level 0 because the MANIFEST was unusable.
    pub fn is_repair_view(&self) -> bool {
        self.repair_view
    }

    /// Names in the directory that are not LevelDB files.
    pub fn other_files(&self) -> &[String] {
        &self.other_files
    }

    /// The internal-key comparator of the database.
    pub fn internal_comparator(&self) -> &InternalKeyComparator {
        &self.icmp
    }

    /// The name of a live table's file.
    pub fn table_name(&self, number: u64) -> Option<&str> {
        self.tables.name(number)
    }

    // Reads: get.rs (point lookups) and the merged cursors.
}

/// A WriteBatch error, with the file offset of its log record.
fn batch_at(e: Error, record_offset: u64) -> Error {
    match e {
        Error::BadWriteBatch { offset, reason } => Error::BadWriteBatch {
            offset: record_offset + offset,
            reason,
        },
        other => other,
    }
}

/// The comparators this crate implements, by the name a MANIFEST records:
/// `leveldb.BytewiseComparator` and Chrome IndexedDB's `idb_cmp1`.
pub fn builtin_comparator(name: &str) -> Option<Arc<dyn Comparator>> {
    if name == BYTEWISE_COMPARATOR_NAME {
        Some(Arc::new(BytewiseComparator))
    } else if name == IDB_COMPARATOR_NAME {
        Some(Arc::new(IdbComparator))
    } else {
        None
    }
}

mod get;
mod level_search;
mod tables;

use level_search::LevelSearch;
use tables::Tables;
