//! A small LSM engine built only from `leveldb_table`'s public pieces, writing a real LevelDB
//! directory: C++ LevelDB opens what it writes, and it opens what LevelDB wrote.
//!
//! ```text
//! put/delete -> WriteBatch -> write-ahead log (db::log_writer)  -> memtable (BTreeMap)
//! memtable full -> level-0 table (TableFileBuilder, internal keys) + VersionEdit in the
//!                  MANIFEST (new file, new log number); a new log
//! 4 level-0 tables -> compaction: level 0 + level 1 merged (db::merging) and rewritten by
//!                  db::compaction into level 1; VersionEdit (deleted inputs, new outputs)
//! reads -> db::Db over the directory (read-only: memtable writes are in the log, flushed)
//! open  -> CURRENT, MANIFEST replay (db::version), live logs replayed into the memtable,
//!          then a new MANIFEST with the whole state and a new log, as LevelDB does
//! ```
//!
//! It is an example, not a database: one writer, no background threads, no table cache
//! limits, no snapshots held across compactions.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use leveldb_table::db::compaction::{write_compaction_output, CompactionOptions};
use leveldb_table::db::cursor::{Cursor, TableCursor, TableFile};
use leveldb_table::db::filename::{self, FileKind};
use leveldb_table::db::log_reader::{LogItem, LogReader};
use leveldb_table::db::log_writer::LogWriter;
use leveldb_table::db::merging::MergingCursor;
use leveldb_table::db::version::{FileMeta, ManifestState};
use leveldb_table::db::version_edit::{NewFile, VersionEdit};
use leveldb_table::db::write_batch::{WriteBatch, WriteBatchReader};
use leveldb_table::db::{Db, DbOptions};
use leveldb_table::raw::internal_key::internal_key;
use leveldb_table::{
    write_atomically, BytewiseComparator, InternalKeyComparator, KeyFormat, Options, ReaderOptions,
    Result, TableFileBuilder, TableReader, ValueType,
};

const MEMTABLE_BYTES: usize = 64 << 10;

/// The memtable: (user key, sequence newest first) -> (kind, value). A `BTreeMap` (std's
/// well-kept ordered map) in internal-key order for bytewise user keys.
type Mem = BTreeMap<(Vec<u8>, std::cmp::Reverse<u64>), (ValueType, Vec<u8>)>;
const L0_TRIGGER: usize = 4;

/// The engine.
pub struct MiniLsm {
    dir: PathBuf,
    /// (user key, sequence) -> (kind, value); iterated newest version first per key below.
    mem: Mem,
    mem_bytes: usize,
    log: LogWriter<BufWriter<File>>,
    log_number: u64,
    manifest: LogWriter<BufWriter<File>>,
    levels: [Vec<FileMeta>; 2],
    next_file: u64,
    last_sequence: u64,
    /// LevelDB wrote tables at levels 2-6 (kept as they are; this engine writes levels 0
    /// and 1): a compaction into level 1 is then not the bottommost data.
    deeper: bool,
}

fn options() -> Options {
    Options::default().bloom(10)
}

impl MiniLsm {
    /// Opens (or creates) the directory.
    pub fn open(dir: impl AsRef<Path>) -> Result<MiniLsm> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir)?;
        let mut state = ManifestState::default();
        let mut mem: Mem = BTreeMap::new();
        let mut last_sequence = 0;
        let mut next_file = 2;
        let mut levels: [Vec<FileMeta>; 2] = [Vec::new(), Vec::new()];
        if dir.join("CURRENT").exists() {
            let (name, _) = filename::read_current(&dir)?;
            state = ManifestState::replay(&std::fs::read(dir.join(&name))?, false)?;
            last_sequence = state.last_sequence;
            next_file = state.next_file_number;
            levels = [state.levels[0].clone(), state.levels[1].clone()];
            let mut logs: Vec<u64> = std::fs::read_dir(&dir)?
                .filter_map(|e| e.ok())
                .filter_map(
                    |e| match FileKind::parse(&e.file_name().to_string_lossy()) {
                        Some(FileKind::Log(n)) if state.log_is_live(n) => Some(n),
                        _ => None,
                    },
                )
                .collect();
            logs.sort_unstable();
            for n in logs {
                let bytes = std::fs::read(dir.join(filename::log_file_name(n)))?;
                for item in LogReader::new(&bytes) {
                    let LogItem::Record { data, .. } = item else {
                        continue; // a torn tail: the write was never acknowledged
                    };
                    for r in WriteBatchReader::new(&data)?.collect()? {
                        last_sequence = last_sequence.max(r.sequence);
                        mem.insert(
                            (r.key.to_vec(), std::cmp::Reverse(r.sequence)),
                            (r.kind, r.value.to_vec()),
                        );
                    }
                }
                next_file = next_file.max(n + 1);
            }
        }
        let old_logs: Vec<u64> = if dir.join("CURRENT").exists() {
            std::fs::read_dir(&dir)?
                .filter_map(|e| e.ok())
                .filter_map(
                    |e| match FileKind::parse(&e.file_name().to_string_lossy()) {
                        Some(FileKind::Log(n)) => Some(n),
                        _ => None,
                    },
                )
                .collect()
        } else {
            Vec::new()
        };
        // What the live logs held goes to a level-0 table first, so that the new MANIFEST
        // (whose log number makes the old logs obsolete) already lists it.
        let mut recovered = None;
        if !mem.is_empty() {
            let number = next_file;
            next_file += 1;
            recovered = Some(write_table(&dir, number, &mem)?);
        }
        // A new MANIFEST with the whole state, and a new log, as LevelDB does on open.
        let manifest_number = next_file;
        let log_number = next_file + 1;
        next_file += 2;
        let mut edit = VersionEdit {
            comparator: Some(BytewiseComparator.name_string()),
            log_number: Some(log_number),
            prev_log_number: Some(0),
            next_file_number: Some(next_file),
            last_sequence: Some(last_sequence),
            ..VersionEdit::default()
        };
        let deeper = state.levels.iter().skip(2).any(|l| !l.is_empty());
        for (level, files) in state.levels.iter().enumerate() {
            for f in files {
                edit.new_files.push(new_file(level as u32, f));
            }
        }
        if let Some(f) = recovered {
            edit.new_files.push(new_file(0, &f));
            levels[0].push(f);
        }
        let mut manifest = LogWriter::new(BufWriter::new(File::create(
            dir.join(filename::manifest_file_name(manifest_number)),
        )?));
        let mut rec = Vec::new();
        edit.encode(&mut rec);
        manifest.add_record(&rec)?;
        sync(&mut manifest)?;
        let log = LogWriter::new(BufWriter::new(
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join(filename::log_file_name(log_number)))?,
        ));
        write_atomically(
            dir.join("CURRENT"),
            format!("{}\n", filename::manifest_file_name(manifest_number)).as_bytes(),
        )?;
        for n in old_logs {
            let _ = std::fs::remove_file(dir.join(filename::log_file_name(n)));
        }
        let mut db = MiniLsm {
            dir,
            mem: BTreeMap::new(),
            mem_bytes: 0,
            log,
            log_number,
            manifest,
            levels,
            next_file,
            last_sequence,
            deeper,
        };
        if db.levels[0].len() >= L0_TRIGGER {
            db.compact()?;
        }
        Ok(db)
    }

    /// Writes a put.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.write(key, Some(value))
    }

    /// Writes a deletion.
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.write(key, None)
    }

    fn write(&mut self, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        let seq = self.last_sequence + 1;
        let mut b = WriteBatch::new();
        match value {
            Some(v) => b.put(key, v),
            None => b.delete(key),
        }
        b.set_sequence(seq);
        self.log.add_record(b.as_bytes())?;
        self.log.flush()?;
        self.last_sequence = seq;
        let (kind, v) = match value {
            Some(v) => (ValueType::Value, v.to_vec()),
            None => (ValueType::Deletion, Vec::new()),
        };
        self.mem_bytes += key.len() + v.len() + 16;
        self.mem
            .insert((key.to_vec(), std::cmp::Reverse(seq)), (kind, v));
        if self.mem_bytes >= MEMTABLE_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the memtable as a level-0 table and starts a new log.
    pub fn flush(&mut self) -> Result<()> {
        if self.mem.is_empty() {
            return Ok(());
        }
        let number = self.take_number();
        let file = write_table(&self.dir, number, &self.mem)?;
        let old_log = self.log_number;
        self.log_number = self.take_number();
        self.log = LogWriter::new(BufWriter::new(File::create(
            self.dir.join(filename::log_file_name(self.log_number)),
        )?));
        self.apply(VersionEdit {
            log_number: Some(self.log_number),
            new_files: vec![new_file(0, &file)],
            ..VersionEdit::default()
        })?;
        self.levels[0].push(file);
        self.mem.clear();
        self.mem_bytes = 0;
        let _ = std::fs::remove_file(self.dir.join(filename::log_file_name(old_log)));
        if self.levels[0].len() >= L0_TRIGGER {
            self.compact()?;
        }
        Ok(())
    }

    /// Merges level 0 and level 1 into new level-1 tables.
    pub fn compact(&mut self) -> Result<()> {
        let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
        let inputs: Vec<(u32, FileMeta)> = self.levels[0]
            .iter()
            .map(|f| (0, f.clone()))
            .chain(self.levels[1].iter().map(|f| (1, f.clone())))
            .collect();
        let tables: Vec<TableReader<TableFile>> = inputs
            .iter()
            .map(|(_, f)| {
                let src: TableFile = Box::new(File::open(
                    self.dir.join(filename::table_file_name(f.number)),
                )?);
                TableReader::open(src, ReaderOptions::default().keys(KeyFormat::Internal))
            })
            .collect::<Result<_>>()?;
        let children: Vec<Box<dyn Cursor + '_>> = tables
            .iter()
            .map(|t| Box::new(TableCursor::new(t, Default::default())) as Box<dyn Cursor>)
            .collect();
        let mut merged = MergingCursor::new(children, icmp);
        merged.seek_to_first();
        let opts = CompactionOptions {
            table: options(),
            target_file_size: 2 << 20,
            smallest_snapshot: self.last_sequence,
            // Nothing older below level 1, unless LevelDB left tables deeper.
            bottommost: !self.deeper,
            level: 1,
        };
        let mut next = self.next_file;
        let stats = write_compaction_output(&mut merged, &self.dir, &opts, || {
            next += 1;
            next - 1
        })?;
        self.next_file = next;
        drop(merged);
        drop(tables);
        self.apply(VersionEdit {
            deleted_files: inputs.iter().map(|(l, f)| (*l, f.number)).collect(),
            new_files: stats.files.clone(),
            ..VersionEdit::default()
        })?;
        for (_, f) in &inputs {
            let _ = std::fs::remove_file(self.dir.join(filename::table_file_name(f.number)));
        }
        self.levels[0].clear();
        self.levels[1] = stats
            .files
            .iter()
            .map(|f| FileMeta {
                number: f.number,
                size: f.size,
                smallest: f.smallest.clone(),
                largest: f.largest.clone(),
            })
            .collect();
        Ok(())
    }

    fn take_number(&mut self) -> u64 {
        self.next_file += 1;
        self.next_file - 1
    }

    fn apply(&mut self, mut edit: VersionEdit) -> Result<()> {
        edit.next_file_number = Some(self.next_file);
        edit.last_sequence = Some(self.last_sequence);
        let mut rec = Vec::new();
        edit.encode(&mut rec);
        self.manifest.add_record(&rec)?;
        sync(&mut self.manifest)
    }

    /// A read-only view of the directory as it is now (the log is flushed on every write).
    pub fn reader(&self) -> Result<Db> {
        Db::open(&self.dir, DbOptions::default())
    }

    /// Tables per level (0 and 1).
    pub fn table_counts(&self) -> (usize, usize) {
        (self.levels[0].len(), self.levels[1].len())
    }
}

/// The memtable as table `number` (internal keys, newest version of a key first).
fn write_table(dir: &Path, number: u64, mem: &Mem) -> Result<FileMeta> {
    let path = dir.join(filename::table_file_name(number));
    let mut b = TableFileBuilder::create(&path, &options().internal_keys())?;
    let mut first = None;
    let mut last = Vec::new();
    for ((k, std::cmp::Reverse(seq)), (kind, v)) in mem {
        let ik = internal_key(k, *seq, *kind);
        b.add(&ik, v)?;
        first.get_or_insert_with(|| ik.clone());
        last = ik;
    }
    let stats = b.finish()?;
    Ok(FileMeta {
        number,
        size: stats.file_size,
        smallest: first.unwrap_or_default(),
        largest: last,
    })
}

fn new_file(level: u32, f: &FileMeta) -> NewFile {
    NewFile {
        level,
        number: f.number,
        size: f.size,
        smallest: f.smallest.clone(),
        largest: f.largest.clone(),
    }
}

fn sync(w: &mut LogWriter<BufWriter<File>>) -> Result<()> {
    w.flush()?;
    w.get_ref().get_ref().sync_data()?;
    Ok(())
}

/// The comparator's name as LevelDB writes it.
trait NameString {
    fn name_string(&self) -> String;
}

impl NameString for BytewiseComparator {
    fn name_string(&self) -> String {
        use leveldb_table::Comparator;
        self.name().to_string()
    }
}
