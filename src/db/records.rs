//! Every record of every file of a database directory, with where it lives and what became
//! of it: the forensic listing (what dfindexeddb calls recovered records).
//!
//! ```text
//! record: user key, value, sequence, kind (value | deletion),
//!         file (NNNNNN.ldb: offset = its data block's; NNNNNN.log: offset = its batch's),
//!         status: live          the newest version of a key, a value
//!                 shadowed      an older version of a key whose newest version is a value
//!                 deleted       a deletion, or any version of a key whose newest is one
//!                 obsolete_file in a table or log the MANIFEST no longer lists
//! ```

use std::cmp::Ordering;
use std::fs::File;

use crate::db::cursor::{in_table, TableFile, TableSource};
use crate::db::filename::{self, FileKind};
use crate::db::log_reader::{LogItem, LogReader};
use crate::db::reader::Db;
use crate::db::write_batch::WriteBatchReader;
use crate::error::{Error, Result};
use crate::internal_key::{self, ValueType};
use crate::options::{KeyFormat, ReadOptions, ReaderOptions};
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
    /// What became of it.
    pub status: RecordStatus,
}

fn table_records(
    t: &TableReader<TableFile>,
    file: &str,
    status: Option<RecordStatus>,
    out: &mut Vec<DbRecord>,
) -> Result<()> {
    let mut it = t.iter(ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        if let Some(p) = internal_key::parse_internal_key(it.key()) {
            out.push(DbRecord {
                key: p.user_key.to_vec(),
                value: it.value().to_vec(),
                sequence: p.sequence,
                kind: p.value_type,
                file: file.to_string(),
                offset: it.block_handle().map_or(0, |h| h.offset),
                status: status.unwrap_or(RecordStatus::Live),
            });
        }
        it.next();
    }
    match it.take_error() {
        Some(e) => Err(Error::InFile {
            file: file.to_string(),
            source: Box::new(e),
        }),
        None => Ok(()),
    }
}

fn log_records(bytes: &[u8], file: &str, status: Option<RecordStatus>, out: &mut Vec<DbRecord>) {
    for item in LogReader::new(bytes) {
        let LogItem::Record { offset, data } = item else {
            continue;
        };
        let Ok(b) = WriteBatchReader::new(&data) else {
            continue;
        };
        for r in b.records().map_while(Result::ok) {
            out.push(DbRecord {
                key: r.key.to_vec(),
                value: r.value.to_vec(),
                sequence: r.sequence,
                kind: r.kind,
                file: file.to_string(),
                offset,
                status: status.unwrap_or(RecordStatus::Live),
            });
        }
    }
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
    let mut live = Vec::new();
    let mut live_tables = Vec::new();
    for level in 0..7 {
        for f in db.level_files(level) {
            let t = db.table(f.number)?;
            let name = db.table_name(f.number).unwrap_or_default().to_string();
            table_records(t, &name, None, &mut live).map_err(|e| in_table(f.number, e))?;
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
                file: filename::log_file_name(origin.log),
                offset: origin.offset,
                status: RecordStatus::Live,
            });
        }
    }
    let ucmp = db.internal_comparator().user_comparator().clone();
    live.sort_by(|a, b| match ucmp.compare(&a.key, &b.key) {
        Ordering::Equal => b.sequence.cmp(&a.sequence),
        o => o,
    });
    // Status: by the newest version of each key.
    let mut i = 0;
    while i < live.len() {
        let mut j = i + 1;
        while j < live.len() && ucmp.compare(&live[j].key, &live[i].key) == Ordering::Equal {
            j += 1;
        }
        let newest_deleted = live[i].kind == ValueType::Deletion;
        for (n, r) in live[i..j].iter_mut().enumerate() {
            r.status = match (newest_deleted, n) {
                (true, _) => RecordStatus::Deleted,
                (false, 0) => RecordStatus::Live,
                (false, _) => RecordStatus::Shadowed,
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
        match FileKind::parse(&name) {
            Some(FileKind::Table(n)) if !live_tables.contains(&n) => {
                let opts = ReaderOptions::default().keys(KeyFormat::Internal);
                let source: TableFile = Box::new(File::open(&path)?);
                let t = TableReader::open(source, opts).map_err(|e| Error::InFile {
                    file: name.clone(),
                    source: Box::new(e),
                })?;
                table_records(&t, &name, Some(RecordStatus::ObsoleteFile), &mut obsolete)?;
            }
            Some(FileKind::Log(n)) if !replayed.contains(&n) => {
                let bytes = std::fs::read(&path)?;
                log_records(
                    &bytes,
                    &name,
                    Some(RecordStatus::ObsoleteFile),
                    &mut obsolete,
                );
            }
            _ => {}
        }
    }
    live.extend(obsolete);
    Ok(live)
}
