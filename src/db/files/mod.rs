//! The directory's files, one format each: log records (LevelDB's `log_format.h`) as laid
//! out and as read back, the write batches the write-ahead log carries, the MANIFEST's
//! version edits and the live tables they add up to, file names and CURRENT, and the
//! constants of those formats.
//!
//! Layers, each importing only those above it: `format` (constants) -> `log_physical` (a
//! log's records as laid out) -> `log_reader`, `log_writer`, `write_batch`, `version_edit`,
//! `filename` -> `manifest_state` (the live tables from the MANIFEST).

mod filename;
mod format;
mod log_physical;
mod log_reader;
mod log_writer;
mod manifest_state;
mod version_edit;
mod write_batch;

pub use filename::{log_file_name, manifest_file_name, read_current, table_file_name, FileKind};
pub use format::{
    max_bytes_for_level, BYTEWISE_COMPARATOR_NAME, L0_COMPACTION_TRIGGER, LOG_BLOCK_SIZE,
    LOG_FIRST, LOG_FULL, LOG_HEADER_SIZE, LOG_LAST, LOG_MIDDLE, LOG_ZERO_TYPE, NUM_LEVELS,
    TAG_COMPACT_POINTER, TAG_COMPARATOR, TAG_DELETED_FILE, TAG_LAST_SEQUENCE, TAG_LOG_NUMBER,
    TAG_NEW_FILE, TAG_NEXT_FILE_NUMBER, TAG_PREV_LOG_NUMBER, TAG_RETIRED_LARGE_VALUE_REF,
    TARGET_FILE_SIZE, WRITE_BATCH_HEADER,
};
pub use log_physical::{type_name, GapKind, Physical, PhysicalReader};
pub use log_reader::{LogItem, LogReader};
pub use log_writer::LogWriter;
pub use manifest_state::{FileMeta, ManifestState};
pub use version_edit::{NewFile, VersionEdit};
pub use write_batch::{BatchRecord, BatchRecords, WriteBatch, WriteBatchReader};
