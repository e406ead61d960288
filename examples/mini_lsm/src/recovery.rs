//! Opening a directory (LevelDB's `DB::Open` and `DBImpl::Recover`): every step leaves a
//! directory LevelDB opens, whenever the process dies.
//!
//! ```text
//! 1. LOCK (held until the engine is dropped)
//! 2. CURRENT -> MANIFEST-M replayed: live tables (opened), log number, next file, sequence
//!    (no CURRENT and no LevelDB files: a new database)
//! 3. logs numbered >= the log number, oldest first: WriteBatches -> memtable -> level-0
//!    tables (a torn last record is a write that never returned, and is dropped)
//! 4. new empty log L, new MANIFEST-N with the whole state (log number L), synced;
//!    CURRENT -> MANIFEST-N by temp file, fsync, rename   <- the switch
//! 5. obsolete files deleted: older logs and MANIFESTs, tables no MANIFEST names,
//!    temporary files of interrupted table writes
//! ```

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

use leveldb_table::db::engine::DirLock;
use leveldb_table::db::files::LogWriter;
use leveldb_table::db::files::ManifestState;
use leveldb_table::db::files::VersionEdit;
use leveldb_table::db::files::WriteBatchReader;
use leveldb_table::db::files::BYTEWISE_COMPARATOR_NAME;
use leveldb_table::{db::files as filename, db::files::FileKind};
use leveldb_table::{db::files::LogItem, db::files::LogReader};
use leveldb_table::{raw::write_atomically, Error, ReadOptions, Result};

use super::background::{self, build_table, Worker};
use super::memtable::MemTable;
use super::version::{Manifest, Table, Version, NUM_LEVELS};
use super::{reader_options, Db, Inner, Options, State};

fn in_file(file: &str, e: Error) -> Error {
    Error::InFile {
        file: file.to_string(),
        source: Box::new(e),
    }
}

/// Opens or creates the database in `dir`.
pub fn open(dir: &Path, opts: Options) -> Result<Db> {
    std::fs::create_dir_all(dir)?;
    let lock = DirLock::acquire(dir)?;
    let reader_opts = reader_options(&opts);
    let mut listing = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let name = e?.file_name().to_string_lossy().into_owned();
        if name.starts_with(".sst-") && name.ends_with(".tmp") {
            // A table or CURRENT write a crash interrupted (never renamed into place).
            let _ = std::fs::remove_file(dir.join(&name));
        } else if let Some(k) = FileKind::parse(&name) {
            listing.push(k);
        }
    }
    let mut levels: [Vec<Arc<Table>>; NUM_LEVELS] = Default::default();
    let mut compact_pointers: [Vec<u8>; NUM_LEVELS] = Default::default();
    let (mut next_file, mut last_sequence) = (2, 0);
    let mut logs = Vec::new();
    if dir.join("CURRENT").exists() {
        let (name, _) = filename::read_current(dir).map_err(|e| in_file("CURRENT", e))?;
        let bytes = std::fs::read(dir.join(&name)).map_err(|e| in_file(&name, e.into()))?;
        let st = ManifestState::replay(&bytes, false).map_err(|e| in_file(&name, e))?;
        if let Some(c) = st
            .comparator
            .as_deref()
            .filter(|c| *c != BYTEWISE_COMPARATOR_NAME)
        {
            return Err(Error::UnknownComparator { name: c.into() });
        }
        for (level, files) in st.levels.iter().enumerate().take(NUM_LEVELS) {
            for f in files {
                levels[level].push(Table::open(dir, f.clone(), &reader_opts)?);
            }
        }
        for (level, key) in &st.compact_pointers {
            if let Some(p) = compact_pointers.get_mut(*level as usize) {
                p.clone_from(key);
            }
        }
        next_file = st.next_file_number;
        last_sequence = st.last_sequence;
        logs = listing
            .iter()
            .filter_map(|k| match k {
                FileKind::Log(n) if st.log_is_live(*n) => Some(*n),
                _ => None,
            })
            .collect();
        logs.sort_unstable();
    } else if listing.iter().any(|k| match k {
        FileKind::Table(_) => true,
        FileKind::Log(n) => {
            std::fs::metadata(dir.join(filename::log_file_name(*n))).map_or(true, |m| m.len() > 0)
        }
        _ => false,
    }) {
        // Tables or logged writes but no CURRENT: data this open cannot place. (A MANIFEST
        // and an empty log alone are what a crash during the first open leaves: a new
        // database then, as LevelDB's `create_if_missing` makes one.)
        return Err(Error::BadCurrent {
            reason: format!(
                "{} holds tables or logged writes but no CURRENT (a damaged database: repair it first)",
                dir.display()
            ),
        });
    }
    // Never reuse a number a file of the directory has (an orphan of a crash included).
    for k in &listing {
        if let FileKind::Log(n) | FileKind::Table(n) | FileKind::Manifest(n) | FileKind::Temp(n) = k
        {
            next_file = next_file.max(n + 1);
        }
    }

    // The live logs into level-0 tables, a table each time the memtable fills.
    let table_opts = background::table_options(&opts);
    let mut mem = MemTable::default();
    let mut flush_mem = |mem: &mut MemTable, next_file: &mut u64| -> Result<()> {
        if !mem.is_empty() {
            let number = *next_file;
            *next_file += 1;
            levels[0].push(build_table(dir, &table_opts, &reader_opts, number, mem)?);
            *mem = MemTable::default();
        }
        Ok(())
    };
    for n in logs {
        let name = filename::log_file_name(n);
        let bytes = std::fs::read(dir.join(&name)).map_err(|e| in_file(&name, e.into()))?;
        for item in LogReader::new(&bytes) {
            let data = match item {
                LogItem::Record { data, .. } => data,
                LogItem::TornTail { .. } => continue,
                LogItem::Damage(e) => return Err(in_file(&name, e)),
            };
            let batch = WriteBatchReader::new(&data).map_err(|e| in_file(&name, e))?;
            for r in batch.records() {
                let r = r.map_err(|e| in_file(&name, e))?;
                mem.add(r.sequence, r.kind, r.key, r.value);
                last_sequence = last_sequence.max(r.sequence);
            }
            if mem.approximate_bytes() > opts.write_buffer_size {
                flush_mem(&mut mem, &mut next_file)?;
            }
        }
    }
    flush_mem(&mut mem, &mut next_file)?;

    // A new log and a new MANIFEST with the whole state; CURRENT switches to it.
    let log_number = next_file;
    let manifest_number = next_file + 1;
    next_file += 2;
    let log_file = File::create(dir.join(filename::log_file_name(log_number)))?;
    let version = Version::from_levels(levels);
    let edit = VersionEdit {
        comparator: Some(BYTEWISE_COMPARATOR_NAME.into()),
        log_number: Some(log_number),
        prev_log_number: Some(0),
        next_file_number: Some(next_file),
        last_sequence: Some(last_sequence),
        compact_pointers: compact_pointers
            .iter()
            .enumerate()
            .filter(|(_, k)| !k.is_empty())
            .map(|(l, k)| (l as u32, k.clone()))
            .collect(),
        new_files: version.new_files(),
        ..VersionEdit::default()
    };
    let manifest = Manifest::create(dir, manifest_number, &edit)?;
    write_atomically(
        dir.join("CURRENT"),
        format!("{}\n", filename::manifest_file_name(manifest_number)).as_bytes(),
    )?;

    let state = State {
        mem: Arc::default(),
        imm: None,
        version: Arc::new(version),
        log: LogWriter::new(BufWriter::with_capacity(64 << 10, log_file)),
        log_number,
        logged_log: log_number,
        manifest,
        next_file,
        last_sequence,
        snapshots: Default::default(),
        pending: Default::default(),
        compact_pointers,
        file_to_compact: None,
        scratch: Default::default(),
        bg_error: None,
        flushing: false,
        compacting: false,
        shutting_down: false,
    };
    let inner = Arc::new(Inner {
        dir: dir.to_path_buf(),
        read: ReadOptions::default(),
        opts,
        reader_opts,
        state: Mutex::new(state),
        cv: Condvar::new(),
        _lock: lock,
    });
    background::delete_obsolete(&inner, &inner.lock());
    let mut db = Db {
        inner,
        bg: Vec::new(),
    };
    for (name, worker) in [
        ("mini-lsm-flush", Worker::Flush),
        ("mini-lsm-compact", Worker::Compaction),
    ] {
        let inner = db.inner.clone();
        let h = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || background::run(inner, worker))?;
        db.bg.push(h);
    }
    Ok(db)
}
