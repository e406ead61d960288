//! Opening a directory (LevelDB's `DB::Open` and `DBImpl::Recover`): every step leaves a
//! directory LevelDB opens, whenever the process dies.
//!
//! ```text
//! 1. LOCK (held until the engine is dropped)
//! 2. CURRENT -> MANIFEST-M replayed: live tables, log number, next file, sequence
//!    (no CURRENT and no LevelDB files: a new database)
//! 3. logs numbered >= the log number, oldest first: WriteBatches -> memtable -> level-0
//!    tables (a torn last record is a write that never returned, and is dropped; a damaged
//!    record is dropped and reported, as LevelDB does without paranoid checks, or fails
//!    the open with them)
//! 4. new empty log L, new MANIFEST-N with the whole state (log number L), synced;
//!    CURRENT -> MANIFEST-N by temp file, fsync, rename   <- the switch
//! 5. obsolete files deleted: older logs and MANIFESTs, tables no MANIFEST names,
//!    temporary files of interrupted table writes
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

use leveldb_table::db::engine::DirLock;
use leveldb_table::db::files::{self as filename, FileKind, LogItem, LogReader};
use leveldb_table::db::files::{ManifestState, VersionEdit, WriteBatchReader};
use leveldb_table::db::files::{BYTEWISE_COMPARATOR_NAME, NUM_LEVELS};
use leveldb_table::raw::write_atomically;
use leveldb_table::ReadOptions;

use crate::build::build_table;
use crate::error::{Error, Result};
use crate::manifest::Manifest;
use crate::memtable::MemTable;
use crate::options::{Event, Options};
use crate::state::{table_cache, table_options, Inner, LogFile, State};
use crate::version::{FileInfo, Version};

/// A damaged log record the open dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedRecord {
    /// The log's file name.
    pub log: String,
    /// Where the damage starts in the file.
    pub offset: u64,
    /// Bytes dropped.
    pub bytes: u64,
    /// What was wrong.
    pub reason: String,
}

/// What opening found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovery {
    /// Damaged log records dropped (none unless a log was damaged; with
    /// [`Options::paranoid_checks`] the open fails instead).
    pub dropped: Vec<DroppedRecord>,
    /// Writes replayed from the logs.
    pub replayed: u64,
}

fn in_file(file: &str, e: leveldb_table::Error) -> Error {
    leveldb_table::Error::InFile {
        file: file.to_string(),
        source: Box::new(e),
    }
    .into()
}

/// Opens or creates the database in `dir`: its shared parts, ready for the background
/// threads, and what recovery found.
pub fn open(dir: &Path, opts: Options) -> Result<(Arc<Inner>, Recovery)> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let lock = DirLock::acquire(dir)?;
    let mut listing = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let Some(name) = e.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if name.starts_with(".sst-") && name.ends_with(".tmp") {
            // A table or CURRENT write a crash interrupted (never renamed into place).
            let _ = std::fs::remove_file(dir.join(&name));
        } else if let Some(k) = FileKind::parse(&name) {
            listing.push(k);
        }
    }
    let tables = Arc::new(table_cache(dir, &opts));
    let mut levels: [Vec<Arc<FileInfo>>; NUM_LEVELS] = Default::default();
    let mut compact_pointers: [Vec<u8>; NUM_LEVELS] = Default::default();
    let (mut next_file, mut last_sequence) = (2, 0);
    let mut logs = Vec::new();
    if dir.join("CURRENT").exists() {
        let (name, _) = filename::read_current(dir).map_err(|e| in_file("CURRENT", e))?;
        let path = dir.join(&name);
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let st = ManifestState::replay(&bytes, false).map_err(|e| in_file(&name, e))?;
        if let Some(c) = st
            .comparator
            .as_deref()
            .filter(|c| *c != BYTEWISE_COMPARATOR_NAME)
        {
            return Err(leveldb_table::Error::UnknownComparator { name: c.into() }.into());
        }
        for (level, files) in st.levels.iter().enumerate().take(NUM_LEVELS) {
            for f in files {
                // Every table the MANIFEST names must be there (LevelDB's check of the
                // live files at open); it is opened when first read.
                if !listing.contains(&FileKind::Table(f.number)) {
                    return Err(leveldb_table::Error::MissingFile {
                        file: filename::table_file_name(f.number),
                    }
                    .into());
                }
                levels[level].push(FileInfo::new(f.clone()));
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
        return Err(leveldb_table::Error::BadCurrent {
            reason: format!(
                "{} holds tables or logged writes but no CURRENT (a damaged database: \
                 `mini_lsm DIR repair` rebuilds it)",
                dir.display()
            ),
        }
        .into());
    }
    // Never reuse a number a file of the directory has (an orphan of a crash included).
    for k in &listing {
        if let FileKind::Log(n) | FileKind::Table(n) | FileKind::Manifest(n) | FileKind::Temp(n) = k
        {
            next_file = next_file.max(n + 1);
        }
    }

    // The live logs into level-0 tables, a table each time the memtable fills.
    let mut recovery = Recovery::default();
    let table_opts = table_options(&opts);
    let mut mem = MemTable::default();
    let mut flush_mem = |mem: &mut MemTable, next_file: &mut u64| -> Result<()> {
        if !mem.is_empty() {
            let number = *next_file;
            *next_file += 1;
            let meta = build_table(dir, &table_opts, number, mem)?;
            tables.get(number)?;
            levels[0].push(FileInfo::new(meta));
            *mem = MemTable::default();
        }
        Ok(())
    };
    for n in logs {
        let name = filename::log_file_name(n);
        let path = dir.join(&name);
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
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
                    drop_record(&opts, &mut recovery, &name, offset, bytes, e)?;
                    continue;
                }
            };
            // A batch is applied whole or not at all: checked before any record goes in.
            let records = WriteBatchReader::new(&data).and_then(|b| b.collect());
            let records = match records {
                Ok(r) => r,
                Err(e) => {
                    let bytes = data.len() as u64;
                    drop_record(&opts, &mut recovery, &name, offset, bytes, e)?;
                    continue;
                }
            };
            for r in records {
                mem.add(r.sequence, r.kind, r.key, r.value);
                last_sequence = last_sequence.max(r.sequence);
                recovery.replayed += 1;
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
    let log = LogFile::create(dir, log_number)?;
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

    let version = Arc::new(version);
    let state = State {
        mem: Arc::new(MemTable::with_capacity(opts.write_buffer_size)),
        imm: None,
        versions: vec![Arc::downgrade(&version)],
        version,
        logged_log: log_number,
        log_number,
        manifest_number,
        next_file,
        last_sequence,
        snapshots: BTreeMap::new(),
        pending: BTreeSet::new(),
        compact_pointers,
        file_to_compact: None,
        manual: None,
        queue: VecDeque::new(),
        done: HashMap::new(),
        next_ticket: 0,
        leading: false,
        bg_error: None,
        flushing: false,
        compacting: false,
        shutting_down: false,
        installing: 0,
    };
    let inner = Arc::new(Inner {
        dir: dir.to_path_buf(),
        read: ReadOptions::default(),
        opts,
        tables,
        state: Mutex::new(state),
        log: Mutex::new(log),
        manifest: Mutex::new(manifest),
        cv: Condvar::new(),
        writers_cv: Condvar::new(),
        _lock: lock,
    });
    inner.delete_obsolete();
    Ok((inner, recovery))
}

/// A damaged log record: the open fails under paranoid checks; otherwise the record is
/// dropped, noted in `recovery` and told to the listener.
fn drop_record(
    opts: &Options,
    recovery: &mut Recovery,
    log: &str,
    offset: u64,
    bytes: u64,
    e: leveldb_table::Error,
) -> Result<()> {
    if opts.paranoid_checks {
        return Err(in_file(log, e));
    }
    let d = DroppedRecord {
        log: log.to_string(),
        offset,
        bytes,
        reason: e.to_string(),
    };
    if let Some(l) = &opts.listener {
        l(&Event::LogRecordDropped {
            log: d.log.clone(),
            offset,
            bytes,
            reason: d.reason.clone(),
        });
    }
    recovery.dropped.push(d);
    Ok(())
}
