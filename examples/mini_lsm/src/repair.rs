//! Repairing a damaged directory (LevelDB's `RepairDB`), keeping every entry that can be
//! read: the MANIFEST is not trusted; every log and table is read past its damage and
//! everything is merged into new tables under a new MANIFEST.
//!
//! ```text
//! LOCK ─► logs: records replayed (damaged records dropped, reported)
//!       ─► tables that open: walked block by block, damaged blocks skipped (reported)
//!       ─► tables that do not open (footer or index lost): data blocks found by their
//!          checksums (reported)
//!       ─► one merge of all of it (internal keys: newest version of each key first)
//!          ─► new tables at level 1 (sorted, disjoint), shadowed versions and deletions
//!          dropped (nothing older lies below them)
//!       ─► new MANIFEST (temp, fsync, rename) ─► CURRENT switched
//!       ─► files with damage moved to DIR/lost/ (as LevelDB does), the others removed
//! ```
//!
//! Unlike LevelDB's repair, which leaves every table at level 0 (a lookup there trusts file
//! numbers to order versions, which a rebuilt table breaks), the merge settles the order of
//! versions by their sequence numbers.

use std::path::Path;
use std::sync::Arc;

use leveldb_table::db::engine::{
    write_compaction_output, CompactionOptions, DirLock, MergingCursor,
};
use leveldb_table::db::files::BYTEWISE_COMPARATOR_NAME;
use leveldb_table::db::files::{self as filename, FileKind, LogItem, LogReader};
use leveldb_table::db::files::{ManifestState, VersionEdit, WriteBatchReader};
use leveldb_table::db::salvage::{Damage, DamageLog, FoundTable, SkipIter};
use leveldb_table::raw::internal_key::parse_internal_key;
use leveldb_table::raw::write_atomically;
use leveldb_table::Cursor;
use leveldb_table::{ReadOptions, TableReader};

use crate::error::{Error, Result};
use crate::memtable::{MemCursor, MemTable};
use crate::options::Options;
use crate::recovery::DroppedRecord;
use crate::state::{reader_options, table_options};
use crate::table_cache::open_table;
use crate::version::icmp;

/// What a repair did.
#[derive(Debug, Clone, Default)]
pub struct RepairReport {
    /// Logs read.
    pub logs: usize,
    /// Tables read (those that opened and those whose blocks were found by checksum).
    pub tables: usize,
    /// Entries read from logs and tables (every version of every key).
    pub entries_read: u64,
    /// Entries in the new tables.
    pub entries_written: u64,
    /// New tables.
    pub tables_written: usize,
    /// Damaged log records dropped.
    pub dropped_records: Vec<DroppedRecord>,
    /// Damaged table ranges skipped.
    pub damage: Vec<Damage>,
    /// Files moved to `DIR/lost/` (they held damage).
    pub archived: Vec<String>,
}

/// Repairs the database in `dir` (see the module documentation).
///
/// # Errors
/// The directory is locked (the database is open), a MANIFEST names a comparator other
/// than bytewise (its order cannot be rebuilt here), or I/O fails; the directory is then
/// as it was, but for new tables no MANIFEST names (removed by the next open).
pub fn repair(dir: &Path, opts: &Options) -> Result<RepairReport> {
    let lock = DirLock::acquire(dir)?;
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        if let Some(k) = e.file_name().to_str().and_then(FileKind::parse) {
            files.push(k);
        }
    }
    files.sort();
    let mut next_file = 1;
    for k in &files {
        if let FileKind::Log(n) | FileKind::Table(n) | FileKind::Manifest(n) | FileKind::Temp(n) = k
        {
            next_file = next_file.max(n + 1);
        }
    }
    for k in &files {
        if let FileKind::Manifest(n) = k {
            let name = filename::manifest_file_name(*n);
            let bytes = std::fs::read(dir.join(&name)).unwrap_or_default();
            let named = ManifestState::replay(&bytes, true)
                .ok()
                .and_then(|m| m.comparator);
            if let Some(c) = named.filter(|c| c != BYTEWISE_COMPARATOR_NAME) {
                return Err(leveldb_table::Error::UnknownComparator { name: c }.into());
            }
        }
    }

    let mut report = RepairReport::default();
    let mut damaged_files = Vec::new();
    // The logs, each into a memtable.
    let mut mems = Vec::new();
    for k in &files {
        let FileKind::Log(n) = k else { continue };
        let name = filename::log_file_name(*n);
        let path = dir.join(&name);
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let mem = MemTable::default();
        let before = report.dropped_records.len();
        for item in LogReader::new(&bytes) {
            let (offset, data) = match item {
                LogItem::Record { offset, data } => (offset, data),
                LogItem::TornTail { .. } => continue,
                LogItem::Damage(e) => {
                    let (offset, bytes) = match &e {
                        leveldb_table::Error::BadLogRecord {
                            offset, dropped, ..
                        } => (*offset, *dropped),
                        _ => (0, 0),
                    };
                    report
                        .dropped_records
                        .push(dropped(&name, offset, bytes, &e));
                    continue;
                }
            };
            match WriteBatchReader::new(&data).and_then(|b| b.collect()) {
                Ok(records) => {
                    for r in records {
                        mem.add(r.sequence, r.kind, r.key, r.value);
                    }
                }
                Err(e) => {
                    let d = dropped(&name, offset, data.len() as u64, &e);
                    report.dropped_records.push(d);
                }
            }
        }
        if report.dropped_records.len() > before {
            damaged_files.push(name);
        }
        report.logs += 1;
        mems.push(Arc::new(mem));
    }

    // The tables: opened and walked past damaged blocks, or found block by block.
    let damage = DamageLog::default();
    let reader_opts = reader_options(opts);
    let mut readers: Vec<(String, TableReader<_>)> = Vec::new();
    let mut found: Vec<FoundTable> = Vec::new();
    for k in &files {
        let FileKind::Table(n) = k else { continue };
        report.tables += 1;
        // Read with pread: a damaged table may be cut short while mapped by nobody else,
        // but a map gains nothing for one pass.
        match open_table(dir, *n, &reader_opts, false) {
            Ok(t) => readers.push((filename::table_file_name(*n), t.reader)),
            Err(why) => {
                let name = existing_table_name(dir, *n);
                let bytes = std::fs::read(dir.join(&name)).unwrap_or_default();
                let profile = Default::default();
                found.push(FoundTable::salvage(
                    &bytes,
                    &name,
                    &why,
                    profile,
                    &icmp(),
                    &damage,
                ));
            }
        }
    }
    let read = ReadOptions::default().fill_cache(false);
    let mut children: Vec<Box<dyn Cursor + '_>> = Vec::new();
    for m in &mems {
        children.push(Box::new(MemCursor::new(m.clone())));
    }
    for (name, r) in &readers {
        children.push(Box::new(SkipIter::new(r, name, Some(&damage), read)));
    }
    for f in &found {
        children.push(Box::new(f.cursor(icmp())));
    }
    let mut max_sequence = 0;
    let mut merged = Counting {
        inner: MergingCursor::new(children, icmp()),
        read: 0,
        max_sequence: &mut max_sequence,
    };
    merged.seek_to_first();
    let first_new = next_file;
    let copts = CompactionOptions::default()
        .table(table_options(opts))
        .target_file_size(opts.max_file_size)
        // Above every sequence (but below the "no version seen yet" mark, the largest
        // sequence): only a key's newest version is kept.
        .smallest_snapshot((u64::MAX >> 8) - 1)
        .bottommost(true)
        .level(1);
    let stats = write_compaction_output(&mut merged, dir, &copts, || {
        next_file += 1;
        next_file - 1
    })?;
    report.entries_read = merged.read;
    drop(merged);
    report.entries_written = stats.written;
    report.tables_written = stats.files.len();
    report.damage = damage.all();
    for d in &report.damage {
        if !damaged_files.contains(&d.file) {
            damaged_files.push(d.file.clone());
        }
    }

    // The new MANIFEST, then CURRENT.
    let manifest_number = next_file;
    next_file += 1;
    let edit = VersionEdit {
        comparator: Some(BYTEWISE_COMPARATOR_NAME.into()),
        log_number: Some(0),
        prev_log_number: Some(0),
        next_file_number: Some(next_file),
        last_sequence: Some(max_sequence),
        new_files: stats.files.clone(),
        ..VersionEdit::default()
    };
    let mut record = Vec::new();
    edit.encode(&mut record);
    let mut log = leveldb_table::db::files::LogWriter::new(Vec::new());
    log.add_record(&record).map_err(|e| Error::io(dir, e))?;
    let manifest = filename::manifest_file_name(manifest_number);
    write_atomically(dir.join(&manifest), &log.into_inner())?;
    write_atomically(dir.join("CURRENT"), format!("{manifest}\n").as_bytes())?;

    // The old files: damaged ones to lost/, the rest removed (their entries are in the new
    // tables).
    let new_tables: Vec<u64> = stats.files.iter().map(|f| f.number).collect();
    for k in &files {
        let name = match k {
            FileKind::Log(n) => filename::log_file_name(*n),
            FileKind::Table(n) if !new_tables.contains(n) && *n < first_new => {
                existing_table_name(dir, *n)
            }
            FileKind::Manifest(n) if *n != manifest_number => filename::manifest_file_name(*n),
            FileKind::Temp(n) => format!("{n:06}.dbtmp"),
            _ => continue,
        };
        let path = dir.join(&name);
        if damaged_files.contains(&name) {
            let lost = dir.join("lost");
            std::fs::create_dir_all(&lost).map_err(|e| Error::io(&lost, e))?;
            std::fs::rename(&path, lost.join(&name)).map_err(|e| Error::io(&path, e))?;
            report.archived.push(name);
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
    drop(lock);
    Ok(report)
}

fn dropped(log: &str, offset: u64, bytes: u64, e: &leveldb_table::Error) -> DroppedRecord {
    DroppedRecord {
        log: log.to_string(),
        offset,
        bytes,
        reason: e.to_string(),
    }
}

/// The name table `n` has in `dir` (`.ldb`, or `.sst` as LevelDB before 1.14 named tables).
fn existing_table_name(dir: &Path, n: u64) -> String {
    let ldb = filename::table_file_name(n);
    let sst = format!("{n:06}.sst");
    match !dir.join(&ldb).exists() && dir.join(&sst).exists() {
        true => sst,
        false => ldb,
    }
}

/// A cursor that counts the entries it passes and the largest sequence among them.
struct Counting<'a, 'm> {
    inner: MergingCursor<'a>,
    read: u64,
    max_sequence: &'m mut u64,
}

impl Counting<'_, '_> {
    fn note(&mut self) {
        if self.inner.valid() {
            self.read += 1;
            if let Some(p) = parse_internal_key(self.inner.key()) {
                *self.max_sequence = (*self.max_sequence).max(p.sequence);
            }
        }
    }
}

impl Cursor for Counting<'_, '_> {
    fn valid(&self) -> bool {
        self.inner.valid()
    }
    fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.note();
    }
    fn seek(&mut self, target: &[u8]) {
        self.inner.seek(target);
        self.note();
    }
    fn next(&mut self) {
        self.inner.next();
        self.note();
    }
    fn key(&self) -> &[u8] {
        self.inner.key()
    }
    fn value(&self) -> &[u8] {
        self.inner.value()
    }
    fn status(&self) -> leveldb_table::Result<()> {
        self.inner.status()
    }
    fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
        self.note();
    }
    fn prev(&mut self) {
        self.inner.prev();
        self.note();
    }
}
