//! Every record of every file of a database directory, with where it lives and what became
//! of it: the forensic listing (what forensic tools call recovered records).
//!
//! ```text
//! record: user key, value, sequence, kind (value | deletion),
//!         file and offset (NNNNNN.ldb: its data block's offset; NNNNNN.log: its batch's),
//!         location: table: data block (offset, size), offset of the entry in the
//!                          decompressed block
//!                   log:   the batch's first fragment's offset, offset of the record in
//!                          the batch
//!         status: live          the newest version of a key, a value
//!                 shadowed      an older version of a key whose newest version is a value
//!                               (or a version above the last sequence, which no read sees)
//!                 deleted       a deletion, or any version of a key whose newest is one
//!                 obsolete_file in a table or log the MANIFEST no longer lists
//! ```
//!
//! The live files are read as the database reads them (under salvage, past the same damaged
//! blocks), so the keys marked `live` are exactly those a scan shows and a lookup finds.

use std::cmp::Ordering;
use std::fs::File;

use super::open_table::Walk;
use crate::cursor::Cursor;
use crate::db::engine::{in_table, TableFile};
use crate::db::files::WriteBatchReader;
use crate::db::files::{self, FileKind};
use crate::db::files::{LogItem, LogReader};
use crate::db::reader::{in_file, Db};
use crate::db::salvage::Damage;
use crate::db::salvage::{EntryPosition, FoundTable, SkipIter};
use crate::error::{Error, Result};
use crate::internal_key::{self, ValueType};
use crate::options::{KeyFormat, OpenOptions, ReadOptions};
use crate::table::TableReader;

/// What became of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RecordStatus {
    /// The newest version of its key, a value: what a read returns.
    Live,
    /// An older version of a key whose newest version is a value.
    Shadowed,
    /// A deletion, or a version of a key whose newest version is a deletion.
    Deleted,
    /// In a file the MANIFEST no longer lists (left behind by a compaction or a flush).
    ObsoleteFile,
}

impl RecordStatus {
    /// The status as `sst db records` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordStatus::Live => "live",
            RecordStatus::Shadowed => "shadowed",
            RecordStatus::Deleted => "deleted",
            RecordStatus::ObsoleteFile => "obsolete_file",
        }
    }
}

/// Where a record is in its file, to the byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// In a table: its data block, and the entry's offset in the decompressed block.
    Table {
        /// The data block's offset in the file.
        block_offset: u64,
        /// The data block's stored size (without its 5-byte trailer).
        block_size: u64,
        /// The entry's byte offset in the decompressed block.
        offset_in_block: u64,
    },
    /// In a log: its WriteBatch's first physical record, and the record's offset in the
    /// batch (its tag byte; the batch's 12-byte header comes first).
    Log {
        /// File offset of the batch's first physical record.
        batch_offset: u64,
        /// Offset of the record in the batch.
        offset_in_batch: u64,
    },
}

/// One record of the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbRecord {
    /// The user key.
    pub key: Vec<u8>,
    /// The value (empty for a deletion).
    pub value: Vec<u8>,
    /// Its sequence number.
    pub sequence: u64,
    /// Value or deletion.
    pub kind: ValueType,
    /// The file it is in.
    pub file: String,
    /// Its data block's offset (tables) or its batch's offset (logs).
    pub offset: u64,
    /// Where it is, to the byte.
    pub location: Location,
    /// What became of it.
    pub status: RecordStatus,
}

/// The records of one table walked one of three ways.
fn walk_records(
    w: Walk<'_>,
    file: &str,
    status: RecordStatus,
    out: &mut Vec<DbRecord>,
) -> Result<()> {
    match w {
        Walk::Table(c) => table_records(c, file, status, out),
        Walk::Skip(c) => table_records(c, file, status, out),
        Walk::Found(c) => table_records(c, file, status, out),
    }
}

/// The records of one table, walked by `c` (positioned here).
fn table_records(
    mut c: impl Cursor + EntryPosition,
    file: &str,
    status: RecordStatus,
    out: &mut Vec<DbRecord>,
) -> Result<()> {
    c.seek_to_first();
    while c.valid() {
        if let (Some(p), Some(pos)) = (internal_key::parse_internal_key(c.key()), c.position()) {
            out.push(DbRecord {
                key: p.user_key.to_vec(),
                value: c.value().to_vec(),
                sequence: p.sequence,
                kind: p.value_type,
                file: file.to_string(),
                offset: pos.block.offset,
                location: Location::Table {
                    block_offset: pos.block.offset,
                    block_size: pos.block.size,
                    offset_in_block: pos.offset_in_block as u64,
                },
                status,
            });
        }
        c.next();
    }
    c.status().map_err(|e| in_file(file, e))
}

/// The records of an obsolete log; damage is recorded (salvage) or an error.
fn log_records(bytes: &[u8], file: &str, db: &Db, out: &mut Vec<DbRecord>) -> Result<()> {
    let damaged = |offset: u64, len: Option<u64>, e: Error| -> Result<()> {
        let e = in_file(file, e);
        match db.damage_log() {
            Some(log) => {
                log.record(Damage::new(file, offset, len, &e));
                Ok(())
            }
            None => Err(e),
        }
    };
    for item in LogReader::new(bytes) {
        let (offset, data) = match item {
            LogItem::Record { offset, data } => (offset, data),
            LogItem::Damage(e) => {
                let len = match e {
                    Error::BadLogRecord { dropped, .. } => Some(dropped),
                    _ => None,
                };
                damaged(e.offset().unwrap_or(0), len, e)?;
                continue;
            }
            LogItem::TornTail { .. } => continue,
        };
        let batch = WriteBatchReader::new(&data).and_then(|b| b.collect());
        let rs = match batch {
            Ok(rs) => rs,
            Err(e) => {
                damaged(offset, None, e)?;
                continue;
            }
        };
        for r in rs {
            out.push(DbRecord {
                key: r.key.to_vec(),
                value: r.value.to_vec(),
                sequence: r.sequence,
                kind: r.kind,
                file: file.to_string(),
                offset,
                location: Location::Log {
                    batch_offset: offset,
                    offset_in_batch: r.offset,
                },
                status: RecordStatus::ObsoleteFile,
            });
        }
    }
    Ok(())
}

/// Every record of every table and log in the database's directory, live files first in
/// key order (user key ascending, newest version first), then the records of obsolete
/// files. Exactly one `live` record per key a read would find.
///
/// Damaged log records are left out here (the database's open reported them); a table that
/// cannot be read is an error naming it.
///
/// # Errors
/// I/O errors and damaged tables, naming the file.
pub fn records(db: &Db) -> Result<Vec<DbRecord>> {
    let read = ReadOptions::default().fill_cache(false);
    let mut live = Vec::new();
    let mut live_tables = Vec::new();
    for level in 0..7 {
        for f in db.level_files(level) {
            let name = db.table_name(f.number).unwrap_or_default().to_string();
            let w = db.walk(f.number, read)?;
            walk_records(w, &name, RecordStatus::Live, &mut live)
                .map_err(|e| in_table(f.number, e))?;
            live_tables.push(f.number);
        }
    }
    for (k, v, origin) in db.memtable().entries() {
        if let Some(p) = internal_key::parse_internal_key(k) {
            live.push(DbRecord {
                key: p.user_key.to_vec(),
                value: v.clone(),
                sequence: p.sequence,
                kind: p.value_type,
                file: files::log_file_name(origin.log),
                offset: origin.offset,
                location: Location::Log {
                    batch_offset: origin.offset,
                    offset_in_batch: origin.offset_in_batch,
                },
                status: RecordStatus::Live,
            });
        }
    }
    // The internal-key order, as the merged view reads: user key ascending, then sequence
    // descending, a value before a deletion of the same sequence.
    let ucmp = db.internal_comparator().user_comparator().clone();
    live.sort_by(|a, b| {
        ucmp.compare(&a.key, &b.key)
            .then(b.sequence.cmp(&a.sequence))
            .then((b.kind as u8).cmp(&(a.kind as u8)))
    });
    // Status: by the newest version of each key a read can see.
    let last = db.last_sequence();
    let mut i = 0;
    while i < live.len() {
        let mut j = i + 1;
        while j < live.len() && ucmp.compare(&live[j].key, &live[i].key) == Ordering::Equal {
            j += 1;
        }
        let newest = live[i..j].iter().position(|r| r.sequence <= last);
        let newest_deleted = newest.is_some_and(|n| live[i + n].kind == ValueType::Deletion);
        for (n, r) in live[i..j].iter_mut().enumerate() {
            r.status = match newest {
                Some(m) if n < m => RecordStatus::Shadowed,
                _ if newest_deleted => RecordStatus::Deleted,
                Some(m) if n == m => RecordStatus::Live,
                _ => RecordStatus::Shadowed,
            };
        }
        i = j;
    }

    // Files the MANIFEST does not list.
    let replayed: Vec<u64> = db.logs().iter().map(|l| l.number).collect();
    let mut obsolete = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(db.dir())?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    for name in names {
        let path = db.dir().join(&name);
        let r = match FileKind::parse(&name) {
            Some(FileKind::Table(n)) if !live_tables.contains(&n) => {
                obsolete_table(db, &path, &name, read, &mut obsolete)
            }
            Some(FileKind::Log(n)) if !replayed.contains(&n) => std::fs::read(&path)
                .map_err(|e| in_file(&name, e.into()))
                .and_then(|bytes| log_records(&bytes, &name, db, &mut obsolete)),
            _ => Ok(()),
        };
        match r {
            // An obsolete file the owner deleted meanwhile (it was waiting for that).
            Err(e) if not_there(&e) => {}
            r => r?,
        }
    }
    live.extend(obsolete);
    Ok(live)
}

/// Whether `e` says a file is not there.
fn not_there(e: &Error) -> bool {
    match e {
        Error::InFile { source, .. } => not_there(source),
        Error::Io { source, .. } => source.kind() == std::io::ErrorKind::NotFound,
        _ => false,
    }
}

/// The records of a table the MANIFEST does not list (read past damage under salvage).
fn obsolete_table(
    db: &Db,
    path: &std::path::Path,
    name: &str,
    read: ReadOptions,
    out: &mut Vec<DbRecord>,
) -> Result<()> {
    let opts = OpenOptions::default()
        .keys(KeyFormat::Internal)
        .verify_checksums(db.verifies_checksums());
    let profile = opts.compression_profile;
    let source: TableFile = Box::new(File::open(path).map_err(|e| in_file(name, e.into()))?);
    match (TableReader::open(source, opts), db.damage_log()) {
        (Ok(t), log) => {
            let c = SkipIter::new(&t, name, log, read);
            table_records(c, name, RecordStatus::ObsoleteFile, out)
        }
        (Err(e), Some(log)) if e.is_corruption() => {
            let bytes = std::fs::read(path).map_err(|e| in_file(name, e.into()))?;
            let f = FoundTable::salvage(&bytes, name, &e, profile, db.internal_comparator(), log);
            let c = f.cursor(db.internal_comparator().clone());
            table_records(c, name, RecordStatus::ObsoleteFile, out)
        }
        (Err(e), _) => Err(in_file(name, e)),
    }
}
