//! [`Db`]: a LevelDB database directory opened read-only.
//!
//! Opening reads CURRENT, replays the MANIFEST it names (the live tables per level) and the
//! live write-ahead logs (into an in-memory table), and opens the live tables' files and
//! holds them (their blocks are read on first use). No file is created, renamed, written or
//! locked, so a directory another process holds (LevelDB's LOCK) or a read-only mount reads
//! the same; and while that process writes and compacts, a `Db` reads one consistent state,
//! at one sequence number, for as long as it lives (`live.rs`).
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
use crate::cursor::{Cursor, Entries};
use crate::db::engine::{in_table, LevelCursor, MemCursor, TableSource};
use crate::db::engine::{DbIter, MergingCursor};
use crate::db::engine::{MemLookup, MemTable, Origin};
use crate::db::files::{self, FileKind};
use crate::db::files::{BatchRecord, WriteBatchReader};
use crate::db::files::{FileMeta, ManifestState};
use crate::db::files::{LogItem, LogReader};
use crate::db::files::{BYTEWISE_COMPARATOR_NAME, NUM_LEVELS};
use crate::db::salvage::{Damage, DamageLog};
use crate::error::{Error, Result};
use crate::internal_key::{self, InternalKeyComparator};
use crate::options::{KeyFormat, OpenOptions, ReadOptions};
use crate::table::{Lookup, LookupKind};
use crate::util::comparator::Comparator;

/// How a database is opened. Options are set with setters named as the fields:
/// `DbOptions::default().salvage(true).table(OpenOptions::default().verify_checksums(false))`.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct DbOptions {
    /// Orders besides the built-in bytewise one (an application's comparators), used when
    /// the MANIFEST names one; under `salvage` without a usable MANIFEST, the candidates the
    /// keys are checked against. A MANIFEST naming an order that is neither bytewise nor
    /// here is refused ([`Error::UnknownComparator`], naming it), never read in another.
    pub comparators: Vec<KnownOrder>,
    /// How the tables are opened: checksums (verified on every read by default), the
    /// block cache they share (an 8 MiB one, LevelDB's default, when `None`), the filter,
    /// extra filter policies, the compression profile. Its `comparator` and `keys` are the
    /// database's own (the order below or the MANIFEST's; internal keys): the values here
    /// are not used.
    pub table: OpenOptions,
    /// Skip what is damaged instead of failing: damaged log records, missing tables, damaged
    /// table blocks (as `sst scan TABLE --salvage`), tables that do not open (their blocks
    /// found by checksum), and a missing or damaged MANIFEST (then every table and log of
    /// the directory is read, as LevelDB's repair would, the last sequence and the order
    /// taken from the keys). What was skipped is listed in [`Db::damage`] (as it is met)
    /// and [`Db::notes`]. Scans, lookups and the `records` listing skip the same. (false)
    pub salvage: bool,
    /// The order to read in when no MANIFEST names one (then, under `salvage` without a
    /// usable MANIFEST, checked against every key of the tables). When a MANIFEST names
    /// another, opening fails ([`Error::UnsettledOrder`]). `None`: the MANIFEST's, else the
    /// order the keys are in (repair view), else bytewise.
    pub order: Option<Arc<dyn Comparator>>,
}

impl std::fmt::Debug for DbOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let comparators: Vec<&str> = self
            .comparators
            .iter()
            .map(|o| o.comparator.name())
            .collect();
        f.debug_struct("DbOptions")
            .field("comparators", &comparators)
            .field("table", &self.table)
            .field("salvage", &self.salvage)
            .field("order", &self.order.as_ref().map(|c| c.name()))
            .finish()
    }
}

impl DbOptions {
    /// Sets [`comparators`](Self::comparators).
    pub fn comparators(mut self, orders: Vec<KnownOrder>) -> Self {
        self.comparators = orders;
        self
    }

    /// Sets [`table`](Self::table).
    pub fn table(mut self, table: OpenOptions) -> Self {
        self.table = table;
        self
    }

    /// Sets [`salvage`](Self::salvage).
    pub fn salvage(mut self, on: bool) -> Self {
        self.salvage = on;
        self
    }

    /// Sets [`order`](Self::order).
    pub fn order(mut self, order: Option<Arc<dyn Comparator>>) -> Self {
        self.order = order;
        self
    }

    /// Sets [`table`](Self::table)'s [`verify_checksums`](OpenOptions::verify_checksums).
    pub fn verify_checksums(mut self, on: bool) -> Self {
        self.table.verify_checksums = on;
        self
    }

    /// Sets [`table`](Self::table)'s [`block_cache`](OpenOptions::block_cache).
    pub fn block_cache(mut self, cache: Option<Arc<BlockCache>>) -> Self {
        self.table.block_cache = cache;
        self
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
    /// The live MANIFEST's last record cut off by its end (offset, length).
    manifest_torn_tail: Option<(u64, u64)>,
    state: ManifestState,
    icmp: InternalKeyComparator,
    order_source: OrderSource,
    mem: MemTable,
    logs: Vec<LogInfo>,
    tables: Tables,
    /// Per level (index = level), the search aid of levels >= 1 under a bytewise order.
    search: Vec<Option<LevelSearch>>,
    other_files: Vec<String>,
    last_sequence: u64,
    notes: Vec<String>,
    /// Damage skipped under salvage, as it is met.
    damage: DamageLog,
    /// How much of it opening met (each also among the notes).
    damage_at_open: usize,
    salvage: bool,
    reader_opts: OpenOptions,
    read: ReadOptions,
    /// No usable MANIFEST: every table is read, all as if at level 0.
    repair_view: bool,
    mmap: bool,
    /// Attempts opening took to read one consistent state (live.rs).
    attempts: u32,
}

/// `e`, naming `file` (unless it names one already).
pub(crate) fn in_file(file: &str, e: Error) -> Error {
    e.in_file(file)
}

impl Db {
    /// Opens the database in `dir` read-only, at one consistent state: while its owner
    /// writes and compacts, opening reads CURRENT, the MANIFEST and the logs again when
    /// they changed under it, and holds every live table's file open, so that every read of
    /// the `Db` sees the directory as of one sequence number ([`last_sequence`](Self::last_sequence)),
    /// whatever the owner deletes meanwhile.
    ///
    /// # Errors
    /// I/O errors; a bad CURRENT or MANIFEST, a damaged log record or a missing table
    /// (unless `opts.salvage`); a comparator the options do not supply
    /// ([`Error::UnknownComparator`]); a directory that changed under every one of 20
    /// attempts ([`Error::OwnerRewriting`]). Every error names its file.
    pub fn open(dir: impl AsRef<Path>, opts: DbOptions) -> Result<Db> {
        Self::open_settled(dir.as_ref(), opts, false)
    }

    /// [`open`](Self::open), reading the tables through read-only memory maps as LevelDB
    /// does (no system call or copy per block read). Without the `mmap` feature, the same as
    /// `open`.
    ///
    /// # Safety
    /// As [`map_file`](crate::raw::map_file): no table of the directory may be truncated or rewritten in
    /// place while the `Db` is alive. LevelDB never does either (it writes new tables and
    /// deletes old ones; a deleted file stays readable through its map), but another tool
    /// might.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    #[allow(unsafe_code)]
    pub unsafe fn open_mmap(dir: impl AsRef<Path>, opts: DbOptions) -> Result<Db> {
        Self::open_settled(dir.as_ref(), opts, true)
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

    /// Where the order came from: the MANIFEST, the caller, the keys (salvage without a
    /// MANIFEST), or the default.
    pub fn order_source(&self) -> OrderSource {
        self.order_source
    }

    /// The live MANIFEST's last record, cut off by the end of the file (offset, length):
    /// ignored, as LevelDB does, and reported.
    pub fn manifest_torn_tail(&self) -> Option<(u64, u64)> {
        self.manifest_torn_tail
    }

    /// What was skipped as damaged under salvage so far (opening, then every scan and
    /// lookup adds what it meets), each range once.
    pub fn damage(&self) -> Vec<Damage> {
        self.damage.all()
    }

    /// The damage log, when the database was opened with `salvage` (else damage is an
    /// error).
    pub(crate) fn damage_log(&self) -> Option<&DamageLog> {
        self.salvage.then_some(&self.damage)
    }

    /// Whether the tables' block checksums are verified ([`OpenOptions::verify_checksums`] in [`DbOptions::table`]).
    pub fn verifies_checksums(&self) -> bool {
        self.reader_opts.verify_checksums
    }

    /// How many of [`damage`](Self::damage)'s entries were met while opening (each is also
    /// among the [`notes`](Self::notes)); later ones were met by reads.
    pub fn damage_at_open(&self) -> usize {
        self.damage_at_open
    }

    /// Whether the database was opened with `salvage`.
    pub fn is_salvage(&self) -> bool {
        self.salvage
    }

    /// The newest sequence number: the MANIFEST's, or a later one from the logs (without a
    /// MANIFEST, the highest in the tables and logs).
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

    /// What was skipped or noticed while opening (damage with `salvage`, a torn log or
    /// MANIFEST tail).
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

    /// How many attempts opening took to read one consistent state of the directory: 1
    /// unless its owner changed it meanwhile (a flush, a compaction, a new MANIFEST), when
    /// it was read again.
    pub fn open_attempts(&self) -> u32 {
        self.attempts
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

mod folder;
mod get;
mod level_search;
mod listing;
mod live;
#[cfg(test)]
mod live_tests;
mod logs;
mod open;
mod open_table;
mod order;
mod records;
mod tables;

use level_search::LevelSearch;
pub use order::{KeyTest, KnownOrder, OrderSource};
pub use records::{records, DbRecord, Location, RecordStatus};
use tables::Tables;
