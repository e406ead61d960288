//! Writing a LevelDB directory from a history of writes, with the library's writers:
//! tables of internal keys (`TableBuilder`), a MANIFEST record (`VersionEdit` through
//! `LogWriter`), live logs of `WriteBatch`es.
//!
//! ```text
//! DirWriter: history of writes, sequence 1.. in order
//!   table(level, writes)  one NNNNNN.ldb, every version kept, internal-key order
//!   level(level, writes)  tables of disjoint key ranges
//!   log(batches)          one NNNNNN.log, a WriteBatch per record (after the tables' writes)
//!   finish                MANIFEST-N (comparator, log number, next file, last sequence =
//!                         the last table's, the tables) and CURRENT
//! model: the writes applied in sequence order = the expected live view
//! ```

use leveldb_table::table::KeyFormat;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use leveldb_table::db::files::{LogWriter, NewFile, VersionEdit, WriteBatch};
use leveldb_table::raw::internal_key::{internal_key, ValueType};
use leveldb_table::Options;

use super::tables::build;
use crate::error::{Error, Result};
use crate::protocol::Entry;

/// One write: a key and its new value, or its deletion.
pub(super) type Op = (Vec<u8>, Option<Vec<u8>>);

/// A directory being written, with the live view its writes add up to.
pub(super) struct DirWriter {
    dir: PathBuf,
    opts: Options,
    next_file: u64,
    seq: u64,
    /// The last sequence the MANIFEST records: that of the last table written (a flush
    /// records what it flushed; the live logs' batches come after it), or every write's.
    manifest_seq: u64,
    manifest_covers_logs: bool,
    files: Vec<NewFile>,
    logs: Vec<PathBuf>,
    model: BTreeMap<Vec<u8>, Vec<u8>>,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

impl DirWriter {
    pub(super) fn new(dir: &Path, opts: Options) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        Ok(DirWriter {
            dir: dir.to_path_buf(),
            opts: opts.keys(KeyFormat::Internal),
            next_file: 2,
            seq: 0,
            manifest_seq: 0,
            manifest_covers_logs: false,
            files: Vec::new(),
            logs: Vec::new(),
            model: BTreeMap::new(),
        })
    }

    fn apply(&mut self, (k, v): &Op) {
        match v {
            Some(v) => self.model.insert(k.clone(), v.clone()),
            None => self.model.remove(k),
        };
    }

    /// Writes `ops` (the next writes, in order) as one table at `level`.
    pub(super) fn table(&mut self, level: u32, ops: &[Op]) -> Result<()> {
        let mut entries: Vec<(Vec<u8>, u64, Entry)> = Vec::with_capacity(ops.len());
        for op in ops {
            self.seq += 1;
            let (t, v) = match &op.1 {
                Some(v) => (ValueType::Value, v.clone()),
                None => (ValueType::Deletion, Vec::new()),
            };
            entries.push((
                op.0.clone(),
                self.seq,
                (internal_key(&op.0, self.seq, t), v),
            ));
            self.apply(op);
        }
        // Internal-key order: user key ascending, then the newest version first.
        entries.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let entries: Vec<Entry> = entries.into_iter().map(|e| e.2).collect();
        let number = self.next_file;
        self.next_file += 1;
        let name = format!("{number:06}");
        let bytes = build(&self.dir, &name, &entries, &self.opts)?;
        self.files.push(NewFile {
            level,
            number,
            size: bytes.len() as u64,
            smallest: entries.first().map(|e| e.0.clone()).unwrap_or_default(),
            largest: entries.last().map(|e| e.0.clone()).unwrap_or_default(),
        });
        self.manifest_seq = self.seq;
        Ok(())
    }

    /// Writes `ops` as tables at `level` in `n` files of disjoint key ranges (a level
    /// above 0 holds no overlapping files).
    pub(super) fn level(&mut self, level: u32, ops: &[Op], n: usize) -> Result<()> {
        let mut keys: Vec<&[u8]> = ops.iter().map(|o| o.0.as_slice()).collect();
        keys.sort();
        keys.dedup();
        let per = keys.len().div_ceil(n.max(1)).max(1);
        let bounds: Vec<Vec<u8>> = keys.chunks(per).skip(1).map(|c| c[0].to_vec()).collect();
        let mut parts: Vec<Vec<Op>> = vec![Vec::new(); bounds.len() + 1];
        for op in ops {
            let i = bounds.partition_point(|b| b.as_slice() <= op.0.as_slice());
            parts[i].push(op.clone());
        }
        for p in parts.iter().filter(|p| !p.is_empty()) {
            self.table(level, p)?;
        }
        Ok(())
    }

    /// Makes the MANIFEST's last sequence cover the live logs' batches too, as when writes
    /// go on while a memtable is flushed (LevelDB records the last sequence at the time of
    /// the flush's MANIFEST write).
    pub(super) fn manifest_covers_logs(&mut self) {
        self.manifest_covers_logs = true;
    }

    /// The tables written so far.
    pub(super) fn files(&self) -> &[NewFile] {
        &self.files
    }

    /// Writes `batches` (the next writes) as one log file, a record per batch.
    pub(super) fn log(&mut self, batches: &[Vec<Op>]) -> Result<PathBuf> {
        let number = self.next_file;
        self.next_file += 1;
        let path = self.dir.join(format!("{number:06}.log"));
        let file = File::create(&path).map_err(io(&path))?;
        let mut w = LogWriter::new(BufWriter::new(file));
        for batch in batches {
            let mut b = WriteBatch::new();
            b.set_sequence(self.seq + 1);
            for op in batch {
                match &op.1 {
                    Some(v) => b.put(&op.0, v),
                    None => b.delete(&op.0),
                }
                self.seq += 1;
                self.apply(op);
            }
            w.add_record(b.as_bytes()).map_err(io(&path))?;
        }
        w.flush().map_err(io(&path))?;
        self.logs.push(path.clone());
        Ok(path)
    }

    /// Writes `batches` as one log file, then the record of `torn` cut in half, as a
    /// writer that died in the middle of it leaves it (`torn` is not part of the view).
    pub(super) fn log_with_torn_tail(
        &mut self,
        batches: &[Vec<Op>],
        torn: &[Op],
    ) -> Result<PathBuf> {
        let path = self.log(batches)?;
        let len = std::fs::metadata(&path).map_err(io(&path))?.len();
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(io(&path))?;
        let mut w = LogWriter::appending(BufWriter::new(file), len);
        let mut b = WriteBatch::new();
        b.set_sequence(self.seq + 1);
        for (k, v) in torn {
            match v {
                Some(v) => b.put(k, v),
                None => b.delete(k),
            }
        }
        w.add_record(b.as_bytes()).map_err(io(&path))?;
        w.flush().map_err(io(&path))?;
        let file = w
            .into_inner()
            .into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?;
        let full = file.metadata().map_err(io(&path))?.len();
        file.set_len(len + (full - len) / 2).map_err(io(&path))?;
        Ok(path)
    }

    /// Writes the MANIFEST and CURRENT: the first log written is the oldest live one.
    /// Returns the live view and the MANIFEST's path.
    pub(super) fn finish(mut self) -> Result<(Vec<Entry>, PathBuf)> {
        let manifest = self.next_file;
        self.next_file += 1;
        let log_number = match self.logs.first() {
            Some(p) => log_number_of(p),
            None => {
                // A log number with no file, as after a bulk build.
                self.next_file += 1;
                manifest + 1
            }
        };
        let last_sequence = match self.manifest_covers_logs {
            true => self.seq,
            false => self.manifest_seq,
        };
        let edit = VersionEdit {
            comparator: Some(crate::protocol::DEFAULT_COMPARATOR.to_string()),
            log_number: Some(log_number),
            prev_log_number: Some(0),
            next_file_number: Some(self.next_file),
            last_sequence: Some(last_sequence),
            new_files: self.files.clone(),
            ..VersionEdit::default()
        };
        let mut record = Vec::new();
        edit.encode(&mut record);
        let path = self.dir.join(format!("MANIFEST-{manifest:06}"));
        let file = File::create(&path).map_err(io(&path))?;
        let mut w = LogWriter::new(BufWriter::new(file));
        w.add_record(&record).map_err(io(&path))?;
        w.flush().map_err(io(&path))?;
        let current = self.dir.join("CURRENT");
        let mut c = File::create(&current).map_err(io(&current))?;
        c.write_all(format!("MANIFEST-{manifest:06}\n").as_bytes())
            .map_err(io(&current))?;
        Ok((self.model.into_iter().collect(), path))
    }
}

fn log_number_of(path: &Path) -> u64 {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("0");
    stem.parse().unwrap_or(0)
}
