//! Compactions (LevelDB's `VersionSet::PickCompaction`, `CompactRange` and
//! `DBImpl::DoCompactionWork`).
//!
//! ```text
//! score(0) = level-0 files / 4        score(L) = bytes(L) / (10 MiB * 10^(L-1))
//! pick:    a manual request (compact_range) first; else the level with the highest
//!          score >= 1: at L >= 1 the first table after the level's compact pointer (round
//!          robin), at 0 the oldest table and every table its range meets; else a table
//!          lookups probe in vain (seek-triggered)
//! inputs:  those + the tables of L+1 their user-key range meets
//! move:    one input, nothing in L+1, <= 10 tables' worth of L+2 under it, not manual:
//!          the file moves down a level
//! merge:   merging cursor over the inputs -> write_compaction_output -> tables at L+1
//!          (versions no snapshot can see dropped; deletions too where nothing lies deeper)
//! install: VersionEdit (deleted inputs, new tables, compact pointer) -> MANIFEST, sync;
//!          new Version; files no version names deleted
//! ```

use std::sync::{Arc, MutexGuard};

use leveldb_table::db::engine::MergingCursor;
use leveldb_table::db::engine::{write_compaction_output, CompactionOptions};
use leveldb_table::db::files::{NewFile, VersionEdit};
use leveldb_table::Cursor;
use leveldb_table::ReadOptions;

use crate::cursors::{FilesCursor, OwnedTableCursor};
use crate::error::Result;
use crate::options::{Event, Options};
use crate::state::{table_options, Inner, State};
use crate::version::{compare, icmp, new_file, FileInfo, Version, NUM_LEVELS};

/// A compaction's inputs: tables of `level` and of `level + 1`.
pub struct Compaction {
    level: usize,
    inputs: [Vec<Arc<FileInfo>>; 2],
    version: Arc<Version>,
    manual: bool,
    /// The last step of a manual compaction: once it is installed, the request is done.
    last_step: bool,
}

impl Compaction {
    /// Whether this is the last step of a manual compaction.
    pub fn finishes_manual(&self) -> bool {
        self.last_step
    }
}

fn max_bytes(opts: &Options, level: usize) -> f64 {
    opts.level1_max_bytes as f64 * 10f64.powi(level as i32 - 1)
}

/// User-key range of `tables`.
fn range(tables: &[Arc<FileInfo>]) -> (Vec<u8>, Vec<u8>) {
    let lo = tables.iter().map(|t| t.smallest_user()).min();
    let hi = tables.iter().map(|t| t.largest_user()).max();
    (
        lo.unwrap_or_default().to_vec(),
        hi.unwrap_or_default().to_vec(),
    )
}

/// The compaction to run next, if any: a manual one, or one LevelDB would run.
pub fn pick_compaction(st: &mut State, opts: &Options) -> Option<Compaction> {
    pick_manual(st, opts).or_else(|| pick_automatic(st, opts))
}

/// Whether a compaction is due (without taking a step of a manual one).
pub fn needs_compaction(st: &State, opts: &Options) -> bool {
    st.manual.as_ref().is_some_and(|m| !m.done) || pick_automatic(st, opts).is_some()
}

/// The compaction LevelDB would run next: a level over its limit, or a table lookups
/// probe in vain (none while a version edit is being installed).
fn pick_automatic(st: &State, opts: &Options) -> Option<Compaction> {
    if st.installing > 0 {
        return None;
    }
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
    let (level, first) = if score >= 1.0 {
        let files = &v.levels[level];
        let first = if level == 0 {
            // The oldest level-0 table (LevelDB's files_[0][0]), then all its range meets.
            files.last()?.clone()
        } else {
            let ptr = &st.compact_pointers[level];
            files
                .iter()
                .find(|t| ptr.is_empty() || compare(&t.meta.largest, ptr).is_gt())
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
    Some(with_next_level(v, level, vec![first], false))
}

/// Adds the level-L+1 tables that `inputs0` (of `level`) overlaps; at level 0, first every
/// level-0 table their range meets.
fn with_next_level(
    v: &Arc<Version>,
    level: usize,
    mut inputs0: Vec<Arc<FileInfo>>,
    manual: bool,
) -> Compaction {
    if level == 0 {
        let (lo, hi) = range(&inputs0);
        inputs0 = v.overlapping(0, Some(&lo), Some(&hi));
    }
    let (lo, hi) = range(&inputs0);
    let inputs1 = v.overlapping(level + 1, Some(&lo), Some(&hi));
    Compaction {
        level,
        inputs: [inputs0, inputs1],
        version: v.clone(),
        manual,
        last_step: false,
    }
}

/// The next step of the manual compaction, if one is asked for and not done: the tables of
/// its level in what is left of its range, at most one table size's worth above level 0
/// (LevelDB's `VersionSet::CompactRange`); done when none is left.
fn pick_manual(st: &mut State, opts: &Options) -> Option<Compaction> {
    if st.installing > 0 {
        return None;
    }
    let v = st.version.clone();
    let m = st.manual.as_mut().filter(|m| !m.done)?;
    let mut inputs = v.overlapping(m.level, m.begin.as_deref(), m.end.as_deref());
    if inputs.is_empty() || m.level + 1 >= NUM_LEVELS {
        m.done = true;
        return None;
    }
    if m.level > 0 {
        let mut total = 0;
        if let Some(i) = inputs.iter().position(|t| {
            total += t.meta.size;
            total >= opts.max_file_size
        }) {
            inputs.truncate(i + 1);
        }
    }
    let mut c = with_next_level(&v, m.level, inputs, true);
    // The next step starts after this one's last key; a step that reaches the end of the
    // range is the last.
    let (_, hi) = range(&c.inputs[0]);
    c.last_step = m.end.as_deref().is_some_and(|e| hi.as_slice() >= e);
    let mut next = hi;
    next.push(0);
    m.begin = Some(next);
    Some(c)
}

/// Runs compaction `c` (a move or a merge) and installs its result.
pub fn compact<'a>(
    inner: &'a Inner,
    mut st: MutexGuard<'a, State>,
    c: Compaction,
) -> (MutexGuard<'a, State>, Result<()>) {
    let level = c.level;
    let (lo, hi) = range(&c.inputs.concat());
    let mut edit = VersionEdit::default();
    let cmp = icmp();
    if let Some(last) = c.inputs[0]
        .iter()
        .map(|t| &t.meta.largest)
        .max_by(|a, b| leveldb_table::Comparator::compare(&cmp, a, b))
    {
        edit.compact_pointers.push((level as u32, last.clone()));
        st.compact_pointers[level] = last.clone();
    }
    for (i, tables) in c.inputs.iter().enumerate() {
        for t in tables {
            edit.deleted_files.push(((level + i) as u32, t.meta.number));
        }
    }
    let grandparents: u64 = match level + 2 < NUM_LEVELS {
        true => c
            .version
            .overlapping(level + 2, Some(&lo), Some(&hi))
            .iter()
            .map(|t| t.meta.size)
            .sum(),
        false => 0,
    };
    if !c.manual
        && c.inputs[0].len() == 1
        && c.inputs[1].is_empty()
        && grandparents <= 10 * inner.opts.max_file_size
    {
        let t = c.inputs[0][0].clone();
        edit.new_files.push(new_file(level + 1, &t.meta));
        let (st, r) = inner.install(st, edit);
        inner.emit(Event::TrivialMove {
            table: t.meta.number,
            level: level + 1,
        });
        return (st, r);
    }
    // Nothing deeper overlaps: deletions no snapshot needs can go.
    let bottommost = ((level + 2)..NUM_LEVELS)
        .all(|l| c.version.overlapping(l, Some(&lo), Some(&hi)).is_empty());
    let opts = CompactionOptions::default()
        .table(table_options(&inner.opts))
        .target_file_size(inner.opts.max_file_size)
        .smallest_snapshot(st.smallest_snapshot())
        .bottommost(bottommost)
        .level((level + 1) as u32);
    drop(st);
    let inputs = c.inputs[0].len() + c.inputs[1].len();
    inner.emit(Event::CompactionStarted { level, inputs });
    let mut numbers = Vec::new();
    let written = merge(inner, &c, &opts, &mut numbers);
    let files = match written {
        Ok(f) => f,
        Err(e) => {
            let mut st = inner.lock();
            for n in &numbers {
                st.pending.remove(n);
            }
            return (st, Err(e));
        }
    };
    let outputs = files.len();
    edit.new_files = files;
    let (mut st, installed) = inner.install(inner.lock(), edit);
    // Pending until installed: never obsolete before a version names them.
    for n in &numbers {
        st.pending.remove(n);
    }
    if installed.is_ok() {
        inner.emit(Event::CompactionFinished { level, outputs });
    }
    (st, installed)
}

/// The merge of a compaction's inputs into new tables (numbers taken under the lock and
/// kept in `pending` until installed), each opened once written.
fn merge(
    inner: &Inner,
    c: &Compaction,
    opts: &CompactionOptions,
    numbers: &mut Vec<u64>,
) -> Result<Vec<NewFile>> {
    let read = ReadOptions::default().fill_cache(false);
    let cache = &inner.tables;
    let mut children: Vec<Box<dyn Cursor>> = Vec::new();
    if c.level == 0 {
        for t in &c.inputs[0] {
            children.push(Box::new(OwnedTableCursor::new(
                cache.get(t.meta.number)?,
                read,
            )));
        }
    } else {
        let files = c.inputs[0].clone();
        children.push(Box::new(FilesCursor::new(
            files,
            inner.tables.clone(),
            read,
        )));
    }
    let files = c.inputs[1].clone();
    children.push(Box::new(FilesCursor::new(
        files,
        inner.tables.clone(),
        read,
    )));
    let mut merged = MergingCursor::new(children, icmp());
    merged.seek_to_first();
    let stats = write_compaction_output(&mut merged, &inner.dir, opts, || {
        let mut st = inner.lock();
        let n = st.new_file_number();
        st.pending.insert(n);
        numbers.push(n);
        n
    })?;
    for f in &stats.files {
        cache.get(f.number)?;
    }
    Ok(stats.files)
}
