//! Format constants of a LevelDB database directory: the log (write-ahead log and MANIFEST
//! records), WriteBatch, VersionEdit and file names. Table-format constants live in
//! `crate::format`; these are the database level's.
//!
//! ```text
//! log file:   | block 0 (32768 bytes) | block 1 | ... |      (the last block may be short)
//! block:      | record | record | ... | zero padding (< 7 bytes) |
//! record:     | masked crc32c (4, LE) | length (2, LE) | type (1) | payload (length) |
//!              crc covers type + payload; type: 1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST
//!              (0 is reserved for preallocated, zero-filled space)
//! WriteBatch: | sequence (8, LE) | count (4, LE) | count × record |
//!              record: 1 (value) varstring key varstring value | 0 (deletion) varstring key
//! ```
//!
//! Sources: LevelDB `db/log_format.h` (kBlockSize, kHeaderSize, RecordType),
//! `db/write_batch.cc` (kHeader = 12), `db/version_edit.cc` (Tag), `db/dbformat.h`
//! (kNumLevels, kL0_CompactionTrigger), `db/version_set.cc` (MaxBytesForLevel,
//! kTargetFileSize = options.max_file_size = 2 MiB), `util/comparator.cc` (the bytewise
//! comparator's name).

/// Size of a log block.
pub const LOG_BLOCK_SIZE: usize = 32768;
/// Size of a log record header: checksum (4), length (2), type (1).
pub const LOG_HEADER_SIZE: usize = 7;
/// Record type reserved for preallocated (zero) space.
pub const LOG_ZERO_TYPE: u8 = 0;
/// A whole record in one fragment.
pub const LOG_FULL: u8 = 1;
/// The first fragment of a record.
pub const LOG_FIRST: u8 = 2;
/// A middle fragment.
pub const LOG_MIDDLE: u8 = 3;
/// The last fragment.
pub const LOG_LAST: u8 = 4;

/// Size of a WriteBatch header: sequence (8) + count (4).
pub const WRITE_BATCH_HEADER: usize = 12;

/// VersionEdit tag: the comparator's name.
pub const TAG_COMPARATOR: u32 = 1;
/// VersionEdit tag: the log number.
pub const TAG_LOG_NUMBER: u32 = 2;
/// VersionEdit tag: the next file number.
pub const TAG_NEXT_FILE_NUMBER: u32 = 3;
/// VersionEdit tag: the last sequence number.
pub const TAG_LAST_SEQUENCE: u32 = 4;
/// VersionEdit tag: a compaction pointer (level, internal key).
pub const TAG_COMPACT_POINTER: u32 = 5;
/// VersionEdit tag: a deleted file (level, number).
pub const TAG_DELETED_FILE: u32 = 6;
/// VersionEdit tag: a new file (level, number, size, smallest, largest).
pub const TAG_NEW_FILE: u32 = 7;
/// VersionEdit tag 8 was used for large value references, retired before LevelDB 1.0.
pub const TAG_RETIRED_LARGE_VALUE_REF: u32 = 8;
/// VersionEdit tag: the previous log number.
pub const TAG_PREV_LOG_NUMBER: u32 = 9;

/// Number of levels.
pub const NUM_LEVELS: usize = 7;
/// Level-0 file count at which LevelDB starts a compaction.
pub const L0_COMPACTION_TRIGGER: usize = 4;
/// LevelDB's target table size (`Options::max_file_size`, 2 MiB).
pub const TARGET_FILE_SIZE: u64 = 2 << 20;

/// Name LevelDB's bytewise comparator writes into the MANIFEST.
pub const BYTEWISE_COMPARATOR_NAME: &str = "leveldb.BytewiseComparator";

/// Bytes a level >= 1 may hold before LevelDB compacts it: 10 MiB for level 1, ten times
/// more for each level below (`VersionSet::MaxBytesForLevel`; level 0 is counted in files).
pub fn max_bytes_for_level(level: usize) -> f64 {
    let mut result = 10.0 * 1048576.0;
    let mut l = level;
    while l > 1 {
        result *= 10.0;
        l -= 1;
    }
    result
}
