//! The background thread: flushes the immutable memtable and compacts, one job at a time,
//! by LevelDB's rules (`db_impl.cc` `BackgroundCompaction`, `version_set.cc`
//! `PickCompaction`, `PickLevelForMemTableOutput`).
//!
//! ```text
//! score(0) = level-0 files / 4        score(L) = bytes(L) / (10 MiB * 10^(L-1))
//! pick:    the level with the highest score >= 1; at L >= 1 the first table after the
//!          level's compact pointer (round robin), at 0 every table its range meets
//! inputs:  those + the tables of L+1 their user-key range meets
//! move:    one input, nothing in L+1, <= 10 tables' worth of L+2 under it: the file moves
//! merge:   merging cursor over the inputs -> write_compaction_output -> tables at L+1
//!          (versions no snapshot can see dropped; deletions too where nothing lies deeper)
//! install: VersionEdit (deleted inputs, new tables, compact pointer) -> MANIFEST, sync;
//!          new Version; files no version names deleted
//! ```

use std::path::Path;
use std::sync::{Arc, MutexGuard};

use leveldb_table::db::engine::MergingCursor;
use leveldb_table::db::files::FileMeta;
use leveldb_table::db::files::VersionEdit;
use leveldb_table::raw::internal_key::user_key;
use leveldb_table::{db::engine::write_compaction_output, db::engine::CompactionOptions};
use leveldb_table::{db::engine::Cursor, db::engine::LevelCursor, db::engine::TableCursor};
use leveldb_table::{db::files as filename, db::files::FileKind};
use leveldb_table::{
    table::TableFileBuilder, Options as TableOptions, ReadOptions, ReaderOptions, Result,
};

use super::memtable::MemTable;
use super::version::{icmp, new_file, Table, Version, NUM_LEVELS};
use super::{Inner, Options, State};

/// A flushed table may go down to this level when nothing overlaps it (LevelDB's
/// `kMaxMemCompactLevel`).
const MAX_MEM_COMPACT_LEVEL: usize = 2;

/// The table options of new tables.
pub fn table_options(opts: &Options) -> TableOptions {
    let t = TableOptions::default();
    match opts.bloom_bits_per_key {
        0 => t.filter_policy(None),
        n => t.bloom(n),
    }
}

/// The two background threads: one flushes memtables, one compacts, so that a long
/// compaction never keeps a full memtable (and so the writer) waiting (LevelDB gets the
/// same by flushing from inside its compaction loop).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Worker {
    /// Writes the immutable memtable.
    Flush,
    /// Runs compactions.
    Compaction,
}

/// A thread's loop: waits for its kind of work, does one job, repeats until shutdown.
pub fn run(inner: Arc<Inner>, worker: Worker) {
    let mut st = inner.lock();
    loop {
        if st.shutting_down {
            return;
        }
        // The job's result, or None when there is nothing to do.
        let mut done = None;
        if st.bg_error.is_none() {
            match worker {
                Worker::Flush if st.imm.is_some() => {
                    st.flushing = true;
                    let (g, r) = flush(&inner, st);
                    st = g;
                    st.flushing = false;
                    done = Some(r);
                }
                Worker::Compaction => {
                    if let Some(c) = pick_compaction(&st, &inner.opts) {
                        st.compacting = true;
                        let (g, r) = compact(&inner, st, c);
                        st = g;
                        st.compacting = false;
                        done = Some(r);
                    }
                }
                Worker::Flush => {}
            }
        }
        if let Some(r) = done {
            if let Err(e) = r {
                st.bg_error = Some(e.to_string());
            }
            inner.cv.notify_all();
            continue;
        }
        st = inner.wait(st);
    }
}

/// A compaction's inputs: tables of `level` and of `level + 1`.
pub struct Compaction {
    level: usize,
    inputs: [Vec<Arc<Table>>; 2],
    version: Arc<Version>,
}

fn max_bytes(opts: &Options, level: usize) -> f64 {
    opts.level1_max_bytes as f64 * 10f64.powi(level as i32 - 1)
}

/// User-key range of `tables`.
fn range(tables: &[Arc<Table>]) -> (Vec<u8>, Vec<u8>) {
    let lo = tables.iter().map(|t| user_key(&t.meta.smallest)).min();
    let hi = tables.iter().map(|t| user_key(&t.meta.largest)).max();
    (
        lo.unwrap_or_default().to_vec(),
        hi.unwrap_or_default().to_vec(),
    )
}

/// The compaction LevelDB would run next, if any level is over its limit.
pub fn pick_compaction(st: &State, opts: &Options) -> Option<Compaction> {
    let v = &st.version;
    let mut best = (
        0,
        v.levels[0].len() as f64 / opts.l0_compaction_trigger as f64,
    );
    for level in 1..NUM_LEVELS - 1 {
        let score = v.level_bytes(level) as f64 / max_bytes(opts, level);
        if score > best.1 {
            best = (level, score);
        }
    }
    let (level, score) = best;
    let cmp = icmp();
    let (level, first) = if score >= 1.0 {
        let files = &v.levels[level];
        let first = if level == 0 {
            // The oldest level-0 table (LevelDB's files_[0][0]), then all its range meets.
            files.last()?.clone()
        } else {
            let ptr = &st.compact_pointers[level];
            files
                .iter()
                .find(|t| ptr.is_empty() || cmp_gt(&cmp, &t.meta.largest, ptr))
                .or(files.first())?
                .clone()
        };
        (level, first)
    } else {
        // No level over its size: a table that lookups probe in vain, if any.
        let (level, t) = st.file_to_compact.clone()?;
        if level + 1 >= NUM_LEVELS || !v.levels[level].iter().any(|x| Arc::ptr_eq(x, &t)) {
            return None;
        }
        (level, t)
    };
    let mut inputs0 = vec![first];
    if level == 0 {
        let (lo, hi) = range(&inputs0);
        inputs0 = v.overlapping(0, &lo, &hi);
    }
    let (lo, hi) = range(&inputs0);
    let inputs1 = v.overlapping(level + 1, &lo, &hi);
    Some(Compaction {
        level,
        inputs: [inputs0, inputs1],
        version: v.clone(),
    })
}

fn cmp_gt(
    cmp: &leveldb_table::raw::internal_key::InternalKeyComparator,
    a: &[u8],
    b: &[u8],
) -> bool {
    use leveldb_table::Comparator;
    cmp.compare(a, b) == std::cmp::Ordering::Greater
}

/// Writes the immutable memtable as a table, at the level LevelDB would choose.
fn flush<'a>(
    inner: &'a Inner,
    mut st: MutexGuard<'a, State>,
) -> (MutexGuard<'a, State>, Result<()>) {
    let Some(imm) = st.imm.clone() else {
        return (st, Ok(()));
    };
    let number = st.new_file_number();
    st.pending.insert(number);
    drop(st);
    inner.emit(super::Event::FlushStarted { table: number });
    let table_opts = table_options(&inner.opts);
    let built = build_table(&inner.dir, &table_opts, &inner.reader_opts, number, &imm);
    let mut st = inner.lock();
    st.pending.remove(&number);
    let table = match built {
        Ok(t) => t,
        Err(e) => return (st, Err(e)),
    };
    // While a compaction runs, its outputs may land anywhere in its range at its output
    // level: a flushed table then stays at level 0, where overlaps are allowed.
    let level = match st.compacting {
        true => 0,
        false => level_for_flush(&st.version, &table, &inner.opts),
    };
    let edit = VersionEdit {
        log_number: Some(st.log_number),
        prev_log_number: Some(0),
        new_files: vec![new_file(level, &table.meta)],
        ..VersionEdit::default()
    };
    if let Err(e) = install(inner, &mut st, edit, &[table]) {
        return (st, Err(e));
    }
    st.imm = None;
    inner.emit(super::Event::FlushFinished {
        table: number,
        level,
    });
    (st, Ok(()))
}

/// Writes `mem` as table `number` of `dir` (temp file, fsync, rename) and opens it.
pub(super) fn build_table(
    dir: &Path,
    table_opts: &TableOptions,
    reader_opts: &ReaderOptions,
    number: u64,
    mem: &MemTable,
) -> Result<Arc<Table>> {
    let path = dir.join(filename::table_file_name(number));
    let mut b = TableFileBuilder::create(&path, &table_opts.clone().internal_keys(true))?;
    let (mut smallest, mut largest) = (Vec::new(), Vec::new());
    mem.for_each(|k, v| {
        if smallest.is_empty() {
            smallest = k.to_vec();
        }
        largest.clear();
        largest.extend_from_slice(k);
        b.add(k, v)
    })?;
    let stats = b.finish()?;
    let meta = FileMeta {
        number,
        size: stats.file_size,
        smallest,
        largest,
    };
    Table::open(dir, meta, reader_opts)
}

/// LevelDB's `PickLevelForMemTableOutput`: as deep as level 2 while nothing at the next
/// level overlaps and not too much of the level after it does.
fn level_for_flush(v: &Version, t: &Table, opts: &Options) -> usize {
    let (lo, hi) = (user_key(&t.meta.smallest), user_key(&t.meta.largest));
    let mut level = 0;
    if v.overlapping(0, lo, hi).is_empty() {
        while level < MAX_MEM_COMPACT_LEVEL {
            if !v.overlapping(level + 1, lo, hi).is_empty() {
                break;
            }
            if level + 2 < NUM_LEVELS {
                let gp: u64 = v
                    .overlapping(level + 2, lo, hi)
                    .iter()
                    .map(|t| t.meta.size)
                    .sum();
                if gp > 10 * opts.max_file_size {
                    break;
                }
            }
            level += 1;
        }
    }
    level
}

/// Runs compaction `c` (a move or a merge) and installs its result.
fn compact<'a>(
    inner: &'a Inner,
    mut st: MutexGuard<'a, State>,
    c: Compaction,
) -> (MutexGuard<'a, State>, Result<()>) {
    let level = c.level;
    let (lo, hi) = range(&c.inputs.concat());
    let mut edit = VersionEdit::default();
    if let Some(last) = c.inputs[0].iter().map(|t| &t.meta.largest).max_by(|a, b| {
        use leveldb_table::Comparator;
        icmp().compare(a, b)
    }) {
        edit.compact_pointers.push((level as u32, last.clone()));
        st.compact_pointers[level] = last.clone();
    }
    for (i, tables) in c.inputs.iter().enumerate() {
        for t in tables {
            edit.deleted_files.push(((level + i) as u32, t.meta.number));
        }
    }
    let grandparents: u64 = if level + 2 < NUM_LEVELS {
        c.version
            .overlapping(level + 2, &lo, &hi)
            .iter()
            .map(|t| t.meta.size)
            .sum()
    } else {
        0
    };
    if c.inputs[0].len() == 1
        && c.inputs[1].is_empty()
        && grandparents <= 10 * inner.opts.max_file_size
    {
        let t = c.inputs[0][0].clone();
        edit.new_files.push(new_file(level + 1, &t.meta));
        let r = install(inner, &mut st, edit, std::slice::from_ref(&t));
        inner.emit(super::Event::TrivialMove {
            table: t.meta.number,
            level: level + 1,
        });
        return (st, r);
    }
    let opts = CompactionOptions {
        table: table_options(&inner.opts),
        target_file_size: inner.opts.max_file_size,
        smallest_snapshot: st.smallest_snapshot(),
        // Nothing deeper overlaps: deletions no snapshot needs can go.
        bottommost: ((level + 2)..NUM_LEVELS)
            .all(|l| c.version.overlapping(l, &lo, &hi).is_empty()),
        level: (level + 1) as u32,
    };
    drop(st);
    let inputs = c.inputs[0].len() + c.inputs[1].len();
    inner.emit(super::Event::CompactionStarted { level, inputs });
    let mut numbers = Vec::new();
    let written = merge(inner, &c, &opts, &mut numbers);
    let mut st = inner.lock();
    for n in &numbers {
        st.pending.remove(n);
    }
    let result = written.and_then(|files| {
        let tables = files
            .iter()
            .map(|f| {
                let meta = FileMeta {
                    number: f.number,
                    size: f.size,
                    smallest: f.smallest.clone(),
                    largest: f.largest.clone(),
                };
                Table::open(&inner.dir, meta, &inner.reader_opts)
            })
            .collect::<Result<Vec<_>>>()?;
        let outputs = tables.len();
        edit.new_files = files;
        install(inner, &mut st, edit, &tables)?;
        inner.emit(super::Event::CompactionFinished { level, outputs });
        Ok(())
    });
    (st, result)
}

/// The merge of a compaction's inputs into new tables (numbers taken under the lock and
/// kept in `pending` until installed).
fn merge(
    inner: &Inner,
    c: &Compaction,
    opts: &CompactionOptions,
    numbers: &mut Vec<u64>,
) -> Result<Vec<leveldb_table::db::files::NewFile>> {
    let read = ReadOptions::default().fill_cache(false);
    let m0: Vec<FileMeta> = c.inputs[0].iter().map(|t| t.meta.clone()).collect();
    let m1: Vec<FileMeta> = c.inputs[1].iter().map(|t| t.meta.clone()).collect();
    let version: &Version = &c.version;
    let mut children: Vec<Box<dyn Cursor + '_>> = Vec::new();
    if c.level == 0 {
        for t in &c.inputs[0] {
            children.push(Box::new(TableCursor::new(&t.reader, read)));
        }
    } else {
        children.push(Box::new(LevelCursor::new(&m0, version, icmp(), read)));
    }
    children.push(Box::new(LevelCursor::new(&m1, version, icmp(), read)));
    let mut merged = MergingCursor::new(children, icmp());
    merged.seek_to_first();
    let stats = write_compaction_output(&mut merged, &inner.dir, opts, || {
        let mut st = inner.lock();
        let n = st.new_file_number();
        st.pending.insert(n);
        numbers.push(n);
        n
    })?;
    Ok(stats.files)
}

/// Writes `edit` (with the engine's counters) to the MANIFEST, installs the version it
/// makes, and deletes the files no version names any more.
pub(super) fn install(
    inner: &Inner,
    st: &mut State,
    mut edit: VersionEdit,
    added: &[Arc<Table>],
) -> Result<()> {
    edit.next_file_number = Some(st.next_file);
    edit.last_sequence = Some(st.last_sequence);
    st.manifest.append(&edit)?;
    if let Some(n) = edit.log_number {
        st.logged_log = n;
    }
    st.version = Arc::new(st.version.apply(&edit, added));
    if let Some((level, t)) = &st.file_to_compact {
        if !st.version.levels[*level].iter().any(|x| Arc::ptr_eq(x, t)) {
            st.file_to_compact = None;
        }
    }
    delete_obsolete(inner, st);
    Ok(())
}

/// Deletes logs older than the current one, other MANIFESTs, and tables that no version
/// names and no job is writing (LevelDB's `RemoveObsoleteFiles`). A table an older version
/// still reads stays open, so its reader keeps working after the name is gone.
pub(super) fn delete_obsolete(inner: &Inner, st: &State) {
    let Ok(dir) = std::fs::read_dir(&inner.dir) else {
        return;
    };
    for e in dir.flatten() {
        let name = e.file_name();
        let Some(kind) = FileKind::parse(&name.to_string_lossy()) else {
            continue;
        };
        let obsolete = match kind {
            FileKind::Log(n) => n < st.logged_log,
            FileKind::Manifest(n) => n != st.manifest.number,
            FileKind::Table(n) => !st.version.contains(n) && !st.pending.contains(&n),
            FileKind::Temp(_) => true,
            _ => false,
        };
        if obsolete {
            let _ = std::fs::remove_file(e.path());
        }
    }
}
