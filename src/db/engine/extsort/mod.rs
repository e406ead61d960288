//! External sort of key/value entries within a memory budget, for bulk builds of unsorted
//! input: entries are copied into an arena of half the budget; a full arena is sorted (an
//! index of 24-byte records, each with the 8 key bytes after the run's common prefix, is
//! what moves) and handed to a helper thread that writes it as a run to a temporary file,
//! while the next arena fills; at the end the runs are merged (a binary heap of run numbers
//! over their current entries), on a helper thread that hands the merged entries over in
//! batches when the machine has a second core. `arena.rs` has the arena, the index and the
//! run file's layout; `merge.rs` the merge.
//!
//! Peak memory: the budget (two arenas and their indexes, grown by doubling only while each
//! fits in half of it) plus, while merging, a 64 KiB read buffer and the current entry per
//! run and up to four 1 MiB batches. No allocation per entry: [`Sorted::next_entry`] lends
//! each entry; the `Iterator` copies. Duplicate keys are an error, found where the merge
//! meets them.

use std::fs::File;

use crate::error::{Error, Result};

mod arena;
mod merge;
#[cfg(test)]
mod tests;

use arena::{write_run, Arena, Rec, REC_BYTES};
pub use merge::Sorted;
use merge::{merge_on_thread, Merger, Source};

/// Collects entries in any order and gives them back sorted by key (bytewise).
pub struct ExternalSorter {
    /// Bytes for one arena: half the budget (the other half is the arena being written).
    budget: usize,
    arena: Arena,
    dir: Option<tempfile::TempDir>,
    runs: Vec<File>,
    /// The run being sorted and written by a helper thread.
    pending: Option<std::thread::JoinHandle<Result<(Arena, File)>>>,
    /// Merge the runs on a helper thread (when the machine has a second core).
    threaded_merge: bool,
}

impl Drop for ExternalSorter {
    fn drop(&mut self) {
        // Let the helper finish before the run directory goes.
        let _ = self.collect_pending();
    }
}

/// Grows `v` to hold `extra` more elements: doubling, but not past `limit` elements unless
/// `extra` alone needs it. Returns false when it could not grow within `limit` (the caller
/// spills first).
fn grow<T>(v: &mut Vec<T>, extra: usize, limit: usize, may_exceed: bool) -> bool {
    let need = v.len() + extra;
    if need <= v.capacity() {
        return true;
    }
    let doubled = (v.capacity() * 2).max(need).max(64);
    let target = doubled.min(limit.max(need));
    if target > limit && !may_exceed {
        return false;
    }
    v.reserve_exact(target - v.len());
    true
}

impl ExternalSorter {
    /// A sorter that holds at most about `budget` bytes of entries in memory.
    pub fn new(budget: usize) -> Self {
        ExternalSorter {
            budget: (budget / 2).max(1),
            arena: Arena::default(),
            dir: None,
            runs: Vec::new(),
            pending: None,
            threaded_merge: true,
        }
    }

    /// Adds an entry.
    ///
    /// # Errors
    /// An I/O error writing a run; a key or value of 4 GiB or more.
    pub fn push(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<()> {
        self.push_slices(&key, &value)
    }

    /// Adds an entry, copying it (no allocation of its own).
    ///
    /// # Errors
    /// As [`push`](Self::push).
    pub fn push_slices(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let too_big = || Error::InvalidArgument("an entry of 4 GiB or more".into());
        let klen = u32::try_from(key.len()).map_err(|_| too_big())?;
        let vlen = u32::try_from(value.len()).map_err(|_| too_big())?;
        let bytes = key.len() + value.len();
        if !self.fits(bytes) {
            self.spill()?;
            // An empty arena takes any entry, even one over the budget alone.
            let a = &mut self.arena;
            grow(&mut a.data, bytes, 0, true);
            grow(&mut a.recs, 1, 0, true);
        }
        let a = &mut self.arena;
        let at = a.data.len();
        a.data.extend_from_slice(key);
        a.data.extend_from_slice(value);
        a.recs.push(Rec {
            at,
            klen,
            vlen,
            prefix: 0,
        });
        Ok(())
    }

    /// Whether an entry of `bytes` fits, growing the arena within the budget if needed.
    fn fits(&mut self, bytes: usize) -> bool {
        let a = &mut self.arena;
        // The limits: what the budget leaves each vector beside the other's allocation.
        let data_limit = self
            .budget
            .saturating_sub(a.recs.capacity().max(a.recs.len() + 1) * REC_BYTES);
        if !grow(&mut a.data, bytes, data_limit, false) {
            return false;
        }
        let recs_limit = self.budget.saturating_sub(a.data.capacity()) / REC_BYTES;
        grow(&mut a.recs, 1, recs_limit, false) && a.charge() <= self.budget
    }

    /// Merges on the calling thread (tests reach both ways this way).
    #[cfg(test)]
    fn one_thread(mut self) -> Self {
        self.threaded_merge = false;
        self
    }

    /// Runs written to disk so far.
    pub fn runs(&self) -> usize {
        self.runs.len() + usize::from(self.pending.is_some())
    }

    /// Sorts the full arena and hands it to a helper thread that writes it as a run, and
    /// goes on with the arena of the previous run (waiting for that one first): filling and
    /// sorting overlap with writing, each arena within half the budget.
    fn spill(&mut self) -> Result<()> {
        if self.arena.recs.is_empty() {
            return Ok(());
        }
        let dir = self.run_dir()?;
        // Sorted here, written there: filling and sorting an arena take about as long as
        // writing one (measured with 4M shuffled entries: sorting on the helper too left
        // this thread waiting for it).
        self.arena.sort();
        let spare = self.collect_pending()?.unwrap_or_default();
        let full = std::mem::replace(&mut self.arena, spare);
        let h = std::thread::Builder::new()
            .name("extsort-run".into())
            .spawn(move || {
                let mut a = full;
                let f = write_run(&mut a, &dir)?;
                a.clear();
                Ok((a, f))
            })?;
        self.pending = Some(h);
        Ok(())
    }

    /// The directory of the run files (created on first use).
    fn run_dir(&mut self) -> Result<std::path::PathBuf> {
        if self.dir.is_none() {
            let tmp = std::env::temp_dir();
            self.dir =
                Some(tempfile::tempdir_in(&tmp).map_err(|e| {
                    Error::from(e).in_file(format!("{} (sort runs)", tmp.display()))
                })?);
        }
        Ok(self
            .dir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default())
    }

    /// Waits for the run being written, if any: its file joins the runs, its (emptied)
    /// arena is returned for reuse.
    fn collect_pending(&mut self) -> Result<Option<Arena>> {
        let Some(h) = self.pending.take() else {
            return Ok(None);
        };
        match h.join() {
            Ok(Ok((a, f))) => {
                self.runs.push(f);
                Ok(Some(a))
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::ThreadFailed {
                task: "writing a sorted run",
            }),
        }
    }

    /// The entries in key order.
    ///
    /// # Errors
    /// I/O errors (a key given twice is reported by the [`Sorted`] where it is met).
    pub fn finish(mut self) -> Result<Sorted> {
        self.collect_pending()?;
        if self.runs.is_empty() {
            self.arena.sort();
            let arena = std::mem::take(&mut self.arena);
            return Ok(Sorted::new(Source::Memory { arena, next: 0 }, None));
        }
        if !self.arena.recs.is_empty() {
            let dir = self.run_dir()?;
            self.arena.sort();
            let f = write_run(&mut self.arena, &dir)?;
            self.runs.push(f);
        }
        self.arena = Arena::default();
        let m = Merger::open(self.runs.drain(..))?;
        // With a second core the merge runs beside the consumer (who builds tables).
        let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        let source = if two_cores && self.threaded_merge {
            Source::Threaded(merge_on_thread(m)?)
        } else {
            Source::Merge(m)
        };
        Ok(Sorted::new(source, self.dir.take()))
    }
}
