//! The engine's options, per-write options, and the events of its background work.

use std::sync::Arc;

/// How the engine runs; the defaults are LevelDB's.
#[derive(Clone)]
pub struct Options {
    /// Memtable size that starts a flush (4 MiB).
    pub write_buffer_size: usize,
    /// Size at which a compaction closes an output table (2 MiB).
    pub max_file_size: u64,
    /// Level 1's size limit; each deeper level holds ten times more (10 MiB).
    pub level1_max_bytes: u64,
    /// Level-0 files that start a compaction (4), slow each write by 1 ms (8), stop
    /// writes until the compaction is done (12).
    pub l0_compaction_trigger: usize,
    /// See `l0_compaction_trigger`.
    pub l0_slowdown_trigger: usize,
    /// See `l0_compaction_trigger`.
    pub l0_stop_trigger: usize,
    /// Bloom filter bits per key in new tables (10; 0 for none).
    pub bloom_bits_per_key: usize,
    /// Block cache size (8 MiB). Every block read from a table is checked against its
    /// checksum before it is used or cached (there is no option to skip it: damage is an
    /// error, never a missing key).
    pub block_cache_bytes: u64,
    /// Files the engine may keep open (1000, LevelDB's `max_open_files`): tables beyond
    /// `max_open_files - 10` are closed least recently used first, and opened again when
    /// read (a table a read or compaction is using stays open until it is done).
    pub max_open_files: usize,
    /// Read tables through read-only memory maps (true, as LevelDB's POSIX environment
    /// reads its first 1000 open tables): a block is read without a system call or a copy.
    /// False reads them with `pread`. The engine never changes a table file once it is
    /// named (tables are written under a temporary name and renamed); a mapped table that
    /// another program truncates would fault the process, as in LevelDB.
    pub mmap_reads: bool,
    /// Refuse to open a directory whose live logs hold a damaged record (false, as
    /// LevelDB's `paranoid_checks`: the record is dropped, the open goes on, and the loss
    /// is reported in [`Db::recovery`](crate::Db::recovery) and to the listener).
    pub paranoid_checks: bool,
    /// Sync the log on every write (false: a process crash loses nothing, a machine crash
    /// may lose the last writes).
    pub sync: bool,
    /// Told of flushes and compactions as they start and finish.
    pub listener: Option<Listener>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            write_buffer_size: 4 << 20,
            max_file_size: 2 << 20,
            level1_max_bytes: 10 << 20,
            l0_compaction_trigger: 4,
            l0_slowdown_trigger: 8,
            l0_stop_trigger: 12,
            bloom_bits_per_key: 10,
            block_cache_bytes: 8 << 20,
            max_open_files: 1000,
            mmap_reads: true,
            paranoid_checks: false,
            sync: false,
            listener: None,
        }
    }
}

/// A function told of background work as it happens (called on the background thread).
pub type Listener = Arc<dyn Fn(&Event) + Send + Sync>;

/// Background work, as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// The immutable memtable is being written to a table.
    FlushStarted {
        /// The table's file number.
        table: u64,
    },
    /// The flushed table is live.
    FlushFinished {
        /// The table's file number.
        table: u64,
        /// The level it went to (0, or 1-2 when nothing there overlaps it).
        level: usize,
    },
    /// Tables of `level` and `level + 1` are being merged.
    CompactionStarted {
        /// The upper input level.
        level: usize,
        /// Input tables, both levels.
        inputs: usize,
    },
    /// The merge is live at `level + 1`.
    CompactionFinished {
        /// The upper input level.
        level: usize,
        /// Tables written.
        outputs: usize,
    },
    /// A damaged record of a log was dropped while opening (see
    /// [`Options::paranoid_checks`]).
    LogRecordDropped {
        /// The log's file name.
        log: String,
        /// Where the damage starts in the file.
        offset: u64,
        /// Bytes dropped.
        bytes: u64,
        /// What was wrong.
        reason: String,
    },
    /// A table moved down a level without being rewritten.
    TrivialMove {
        /// The table's file number.
        table: u64,
        /// The level it is at now.
        level: usize,
    },
}

/// Per-write options.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// Sync the log before the write returns.
    pub sync: bool,
}
