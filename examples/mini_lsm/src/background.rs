//! The background threads: one flushes the immutable memtable, one compacts, each one job
//! at a time, by LevelDB's rules (`db_impl.cc` `BackgroundCompaction`,
//! `CompactMemTable`, `version_set.cc` `PickLevelForMemTableOutput`).
//!
//! ```text
//! flush thread:      imm ─► table (build.rs) ─► level 0, or 1-2 when nothing overlaps it
//!                    ─► VersionEdit (new table, log number) ─► MANIFEST ─► imm dropped
//! compaction thread: a manual request (compact_range), else the level over its limit,
//!                    else a table lookups probe in vain ─► compaction.rs
//! ```
//!
//! Two threads, so that a long compaction never keeps a full memtable (and so the writer)
//! waiting; LevelDB gets the same by flushing from inside its compaction loop.

use std::sync::{Arc, MutexGuard};

use leveldb_table::db::files::VersionEdit;
use leveldb_table::raw::internal_key::user_key;

use crate::build::build_table;
use crate::compaction::{compact, pick_compaction};
use crate::error::Result;
use crate::options::{Event, Options};
use crate::state::{table_options, Inner, State};
use crate::version::{new_file, Version, NUM_LEVELS};

/// A flushed table may go down to this level when nothing overlaps it (LevelDB's
/// `kMaxMemCompactLevel`).
const MAX_MEM_COMPACT_LEVEL: usize = 2;

/// The two background threads.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
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
                    drop(g);
                    inner.delete_obsolete();
                    st = inner.lock();
                    st.flushing = false;
                    done = Some(r);
                }
                Worker::Compaction => {
                    let manual_pending = st.manual.as_ref().is_some_and(|m| !m.done);
                    let picked = pick_compaction(&mut st, &inner.opts);
                    if manual_pending && st.manual.as_ref().is_some_and(|m| m.done) {
                        // Nothing (more) in the requested range: `compact_range` is done.
                        inner.cv.notify_all();
                    }
                    if let Some(c) = picked {
                        st.compacting = true;
                        let last = c.finishes_manual();
                        let (g, r) = compact(&inner, st, c);
                        drop(g);
                        inner.delete_obsolete();
                        st = inner.lock();
                        st.compacting = false;
                        if let Some(m) = st.manual.as_mut().filter(|_| last) {
                            m.done = true;
                        }
                        done = Some(r);
                    }
                }
                Worker::Flush => {}
            }
        }
        if let Some(r) = done {
            if let Err(e) = r {
                st.bg_error = Some(e);
                if let Some(m) = st.manual.as_mut() {
                    m.done = true;
                }
            }
            inner.cv.notify_all();
            continue;
        }
        st = inner.wait(st);
    }
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
    // The memtable's writes are all in logs up to the one being written now.
    let log_number = st.log_number;
    st.pending.insert(number);
    drop(st);
    inner.emit(Event::FlushStarted { table: number });
    let built = build_table(&inner.dir, &table_options(&inner.opts), number, &imm)
        // Opened (footer and index checked) before the MANIFEST names it.
        .and_then(|meta| Ok(inner.tables.get(number).map(|_| meta)?));
    let mut st = inner.lock();
    let meta = match built {
        Ok(m) => m,
        Err(e) => {
            st.pending.remove(&number);
            return (st, Err(e));
        }
    };
    // While a compaction runs, its outputs may land anywhere in its range at its output
    // level: a flushed table then stays at level 0, where overlaps are allowed.
    let level = match st.compacting {
        true => 0,
        false => level_for_flush(&st.version, &meta, &inner.opts),
    };
    let edit = VersionEdit {
        log_number: Some(log_number),
        prev_log_number: Some(0),
        new_files: vec![new_file(level, &meta)],
        ..VersionEdit::default()
    };
    let (mut st, installed) = inner.install(st, edit);
    // Pending until installed: never obsolete before a version names it.
    st.pending.remove(&number);
    if let Err(e) = installed {
        return (st, Err(e));
    }
    // Freed with the lock released (a memtable's entries take a while to free).
    let flushed = st.imm.take();
    drop(st);
    drop(flushed);
    inner.emit(Event::FlushFinished {
        table: number,
        level,
    });
    (inner.lock(), Ok(()))
}

/// LevelDB's `PickLevelForMemTableOutput`: as deep as level 2 while nothing at the next
/// level overlaps and not too much of the level after it does.
fn level_for_flush(v: &Version, t: &leveldb_table::db::files::FileMeta, opts: &Options) -> usize {
    let (lo, hi) = (Some(user_key(&t.smallest)), Some(user_key(&t.largest)));
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
