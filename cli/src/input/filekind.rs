//! What a file is, so that a command given a file of another kind says so in one line (and
//! which command reads it) instead of reporting the file's bytes as damage.
//!
//! The bytes decide where they can: a table ends in a table magic; a write-ahead log and a
//! MANIFEST share the log format (32 KiB blocks of checksummed records) and differ in their
//! first intact records, a WriteBatch (8-byte sequence, 4-byte count, tagged puts and
//! deletions) or a VersionEdit (tagged fields); CURRENT holds `MANIFEST-NNNNNN\n`. Where the
//! bytes say nothing (an empty file, a log whose first records are damaged), the name
//! LevelDB gives the file decides; a file neither names is read as asked, and its reader
//! reports what is wrong with it.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use leveldb_table::db::files::FileKind;
use leveldb_table::db::files::VersionEdit;
use leveldb_table::db::files::WriteBatchReader;
use leveldb_table::raw::format::{
    ROCKSDB_BLOCK_BASED_MAGIC, ROCKSDB_CUCKOO_MAGIC, ROCKSDB_LEGACY_PLAIN_MAGIC,
    ROCKSDB_PLAIN_MAGIC, TABLE_MAGIC,
};
use leveldb_table::{db::files::LogItem, db::files::LogReader};

/// How much of a file the log-format check reads: enough for the first records of any
/// log or MANIFEST LevelDB writes (a MANIFEST's first record is small; a log's first batch
/// may be larger, and then the name decides).
pub const SNIFF_BYTES: u64 = 256 << 10;

/// Records looked at before the log-format check gives up.
const SNIFF_RECORDS: usize = 4;

/// What a file is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// A directory; `leveldb` when it holds a CURRENT file.
    Directory {
        /// It holds CURRENT: a LevelDB database.
        leveldb: bool,
    },
    /// A LevelDB table (`.ldb` / `.sst`).
    Table,
    /// A RocksDB table.
    RocksDbTable,
    /// A write-ahead log (`NNNNNN.log`).
    Log,
    /// A MANIFEST.
    Manifest,
    /// CURRENT.
    Current,
    /// LOCK.
    Lock,
    /// LevelDB's informational text log (`LOG`, `LOG.old`).
    InfoLog,
    /// None of these, or the bytes do not say and the name is none of LevelDB's.
    Unknown,
}

impl Kind {
    /// What the file is and the command that reads it, for a message about `path`:
    /// `"a write-ahead log of a LevelDB database; read it with `sst log PATH`"`.
    pub fn describe(&self, path: &Path) -> String {
        let p = path.display();
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .display();
        match self {
            Kind::Directory { leveldb: true } => format!(
                "a directory (a LevelDB database: it has CURRENT); read it with `sst db info|scan|get|records {p}`"
            ),
            Kind::Directory { leveldb: false } => "a directory (without CURRENT: not a LevelDB \
                 database); read a database directory with `sst db info|scan|get|records DIR`, \
                 a table with `sst scan FILE`"
                .to_string(),
            Kind::Table => format!(
                "a LevelDB table; read it with `sst scan {p}` (or get, verify, stats, blocks)"
            ),
            Kind::RocksDbTable => "a RocksDB table (sst reads LevelDB's)".to_string(),
            Kind::Log => {
                format!("a write-ahead log of a LevelDB database; read it with `sst log {p}`")
            }
            Kind::Manifest => format!(
                "a MANIFEST of a LevelDB database (its list of live tables); read it with `sst manifest {p}`"
            ),
            Kind::Current => format!(
                "the CURRENT file of a LevelDB database (it names the MANIFEST); read its directory with `sst db info {dir}`"
            ),
            Kind::Lock => format!(
                "the LOCK file of a LevelDB database (empty); read its directory with `sst db info {dir}`"
            ),
            Kind::InfoLog => "LevelDB's informational text log (not data: read it as text)".to_string(),
            Kind::Unknown => "not a file of a LevelDB database".to_string(),
        }
    }
}

/// What the file at `path` is: from its bytes where they say, else from its name.
/// A file that cannot be read is `Unknown` (its reader then reports the I/O error).
pub fn of_path(path: &Path) -> Kind {
    if path.is_dir() {
        return Kind::Directory {
            leveldb: path.join("CURRENT").is_file(),
        };
    }
    let Ok(mut f) = File::open(path) else {
        return Kind::Unknown;
    };
    if let Some(k) = by_magic(&mut f) {
        return k;
    }
    let mut head = Vec::new();
    if f.seek(SeekFrom::Start(0)).is_err()
        || (&mut f).take(SNIFF_BYTES).read_to_end(&mut head).is_err()
    {
        return Kind::Unknown;
    }
    of_bytes_after_magic(&head).unwrap_or_else(|| by_name(path, head.is_empty()))
}

/// What `bytes` (a whole file, or its start) are, if they say; `None` if they do not.
fn of_bytes(bytes: &[u8]) -> Option<Kind> {
    magic_kind(bytes).or_else(|| of_bytes_after_magic(bytes))
}

/// [`of_bytes`] for the whole file at `path` (already read), falling back on its name.
pub fn of_file(path: &Path, bytes: &[u8]) -> Kind {
    of_bytes(bytes).unwrap_or_else(|| by_name(path, bytes.is_empty()))
}

fn of_bytes_after_magic(bytes: &[u8]) -> Option<Kind> {
    if is_current(bytes) {
        return Some(Kind::Current);
    }
    log_format_kind(bytes)
}

/// The table magic in the last 8 bytes.
fn by_magic(f: &mut File) -> Option<Kind> {
    let len = f.metadata().ok()?.len();
    if len < 8 {
        return None;
    }
    f.seek(SeekFrom::Start(len - 8)).ok()?;
    let mut tail = [0u8; 8];
    f.read_exact(&mut tail).ok()?;
    magic_kind(&tail)
}

fn magic_kind(bytes: &[u8]) -> Option<Kind> {
    let tail: [u8; 8] = bytes.get(bytes.len().checked_sub(8)?..)?.try_into().ok()?;
    match u64::from_le_bytes(tail) {
        TABLE_MAGIC => Some(Kind::Table),
        ROCKSDB_BLOCK_BASED_MAGIC
        | ROCKSDB_PLAIN_MAGIC
        | ROCKSDB_LEGACY_PLAIN_MAGIC
        | ROCKSDB_CUCKOO_MAGIC => Some(Kind::RocksDbTable),
        _ => None,
    }
}

/// `MANIFEST-` digits and a newline, as LevelDB writes CURRENT.
fn is_current(bytes: &[u8]) -> bool {
    let Some(rest) = bytes.strip_prefix(b"MANIFEST-") else {
        return false;
    };
    let Some(digits) = rest.strip_suffix(b"\n") else {
        return false;
    };
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

/// A log or a MANIFEST, by the first intact records that decode as exactly one of a
/// WriteBatch and a VersionEdit.
fn log_format_kind(bytes: &[u8]) -> Option<Kind> {
    let records = LogReader::new(bytes).filter_map(|item| match item {
        LogItem::Record { data, .. } => Some(data),
        LogItem::Damage(_) | LogItem::TornTail { .. } => None,
    });
    for data in records.take(SNIFF_RECORDS) {
        let batch = WriteBatchReader::new(&data)
            .is_ok_and(|b| b.count() > 0 && b.records().all(|r| r.is_ok()));
        let edit = VersionEdit::decode(&data).is_ok();
        match (batch, edit) {
            (true, false) => return Some(Kind::Log),
            (false, true) => return Some(Kind::Manifest),
            _ => {}
        }
    }
    None
}

/// Whether the first [`SNIFF_BYTES`] of `bytes` hold an intact record of the log format (a
/// write-ahead log or a MANIFEST, damaged later perhaps).
pub fn has_log_record(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(SNIFF_BYTES as usize)];
    LogReader::new(head).any(|item| matches!(item, LogItem::Record { .. }))
}

/// The kind LevelDB's name for the file says (the bytes having said nothing).
fn by_name(path: &Path, empty: bool) -> Kind {
    match FileKind::of_path(path) {
        Some(FileKind::Table(_)) => Kind::Table,
        Some(FileKind::Log(_)) => Kind::Log,
        Some(FileKind::Manifest(_)) => Kind::Manifest,
        Some(FileKind::Current) => Kind::Current,
        Some(FileKind::Lock) if empty => Kind::Lock,
        Some(FileKind::InfoLog) => Kind::InfoLog,
        Some(FileKind::Lock | FileKind::Temp(_)) | None => Kind::Unknown,
    }
}

/// Refuses a file of another kind than `want` in one line: `"PATH: not a MANIFEST: it is a
/// write-ahead log ...; read it with `sst log PATH`"` (`wanted` names what was wanted).
/// `Ok` for a file of a wanted kind, and for one of no kind known (its reader says what is
/// wrong with it).
pub fn expect(path: &Path, kind: &Kind, want: &[Kind], wanted: &str) -> Result<(), String> {
    if *kind == Kind::Unknown || want.contains(kind) {
        return Ok(());
    }
    Err(format!(
        "{}: not {wanted}: it is {}",
        path.display(),
        kind.describe(path)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_is_recognised_exactly() {
        assert!(is_current(b"MANIFEST-000002\n"));
        assert!(!is_current(b"MANIFEST-000002"));
        assert!(!is_current(b"MANIFEST-\n"));
        assert!(!is_current(b"MANIFEST-00a002\n"));
    }

    #[test]
    fn magic_at_the_end() {
        let mut t = vec![0u8; 40];
        t.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        assert_eq!(of_bytes(&t), Some(Kind::Table));
        assert_eq!(of_bytes(&t[..47]), None);
        assert_eq!(of_bytes(b""), None);
    }
}
