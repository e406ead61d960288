//! Opening a directory its owner is writing: one consistent state, whatever the owner does
//! meanwhile, without a lock and without writing.
//!
//! LevelDB (and so a browser) never changes a table once written; it appends to the live log
//! and to the MANIFEST, writes new tables, and deletes a table only after the MANIFEST edit
//! that a compaction replaced it by, a log only after the edit that moved the log number
//! past it (its contents flushed to a table). Opening is an attempt, checked:
//!
//! ```text
//! attempt:  CURRENT -> MANIFEST: version V (tables per level, log number N, last sequence)
//!           list the directory; read every log numbered >= N, whole batches (a torn last
//!           record is a write in progress); open every table of V and hold it open
//! settled:  CURRENT still names the same MANIFEST, and
//!           - no file of V vanished before it was held (or, if one did, the MANIFEST has not
//!             changed since: then it is missing, not deleted by a compaction), and
//!           - the logs read join up (each one's first sequence follows the previous one's
//!             last), and
//!           - log N itself was read, or the MANIFEST's log number has not moved (only a
//!             flush that moved it could have deleted a log of V before it was listed)
//!           => the state: V's tables + the logs' batches, at the last sequence read (S)
//! not settled (the owner changed the directory during the attempt): again, up to
//! MAX_ATTEMPTS in all, then Error::OwnerRewriting
//! ```
//!
//! Why that state is whole: V's tables hold exactly what logs numbered below N held
//! (compactions only rewrite it); logs N, N+1, ... hold every write since, in sequence
//! order, and a log the owner rotated away from is complete, so what was read is a prefix of
//! the owner's writes. Once opened the state cannot change: the tables are held open (on
//! Unix a deleted file stays readable through a descriptor that holds it; nothing is
//! mapped that LevelDB ever truncates) and the logs were read into memory, so every scan
//! and lookup of the `Db` reads sequence S, no row lost or repeated, however long it takes
//! and whatever the owner compacts meanwhile. Re-reading the MANIFEST in the middle of a
//! scan and going on at S would not do: a compaction keeps of each key only the newest
//! version as of the owner's oldest snapshot, which is not ours, so the versions S needs
//! can be gone from the new tables (and a deletion with everything it deleted).

use std::path::Path;

use super::{Db, DbOptions};
use crate::db::files;
use crate::db::files::ManifestState;
use crate::error::{Error, Result};

/// Attempts at one consistent state before giving up.
pub(super) const MAX_ATTEMPTS: u32 = 20;

/// The points of an attempt between which the owner may change the directory (the tests
/// change it there: `live_tests.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// The directory listed, its tables and logs held.
    Listed,
    /// CURRENT and the MANIFEST read.
    ManifestRead,
    /// The version's tables held.
    TablesHeld,
    /// The directory listed again (the logs new since held).
    Relisted,
}

/// What a test does at each step of an attempt.
#[cfg(test)]
pub(super) type StepHook = Box<dyn FnMut(Step)>;

#[cfg(test)]
thread_local! {
    /// What a test does at each step of an attempt on this thread.
    pub(super) static AT_STEP: std::cell::RefCell<Option<StepHook>> =
        const { std::cell::RefCell::new(None) };
}

/// An attempt is at `step` (a test may change the directory here).
#[inline]
pub(super) fn step(step: Step) {
    #[cfg(test)]
    AT_STEP.with(|h| {
        if let Some(f) = h.borrow_mut().as_mut() {
            f(step);
        }
    });
    #[cfg(not(test))]
    let _ = step;
}

/// What one attempt at opening saw of the directory, to tell whether the owner changed it
/// meanwhile.
#[derive(Debug, Default)]
pub(super) struct Observed {
    /// The MANIFEST CURRENT named.
    current: Option<String>,
    /// The MANIFEST's length as read (`None`: not there), and its log number as replayed.
    manifest_len: Option<u64>,
    log_number: u64,
    /// Files the attempt needed that were gone when it came to them.
    vanished: Vec<String>,
    /// Whether log N (the MANIFEST's log number) was among the logs read.
    read_log_number: bool,
    /// Each log read that holds batches: (first sequence, the sequence after its last).
    logs: Vec<(u64, u64)>,
}

impl Observed {
    /// CURRENT named `name`.
    pub(super) fn current(&mut self, name: &str) {
        self.current = Some(name.to_string());
    }

    /// The MANIFEST read was `len` bytes long (`None`: it was not there).
    pub(super) fn manifest_len(&mut self, len: Option<u64>) {
        self.manifest_len = len;
    }

    /// The MANIFEST replayed to `state`.
    pub(super) fn manifest(&mut self, state: &ManifestState) {
        self.log_number = state.log_number;
    }

    /// `file` was gone when the attempt came to it.
    pub(super) fn vanished(&mut self, file: &str) {
        self.vanished.push(file.to_string());
    }

    /// Log `number` was read: the sequences of its batches, (first, after the last), when
    /// it holds any.
    pub(super) fn log(&mut self, number: u64, sequences: Option<(u64, u64)>) {
        self.read_log_number |= number == self.log_number;
        self.logs.extend(sequences);
    }

    /// Whether the attempt read one state of the directory (see the module's diagram).
    fn settled(&self, dir: &Path) -> bool {
        let now = files::read_current(dir).ok().map(|(name, _)| name);
        if now != self.current {
            return false;
        }
        let Some(manifest) = &self.current else {
            return true; // no CURRENT, then and now: nothing is changing it
        };
        let unchanged =
            || std::fs::metadata(dir.join(manifest)).ok().map(|m| m.len()) == self.manifest_len;
        let joined = self.logs.windows(2).all(|w| w[0].1 == w[1].0);
        if !self.vanished.is_empty() || !joined {
            return unchanged();
        }
        self.read_log_number
            || unchanged()
            || std::fs::read(dir.join(manifest))
                .ok()
                .and_then(|bytes| ManifestState::replay(&bytes, false).ok())
                .is_some_and(|st| st.log_number == self.log_number)
    }
}

impl Db {
    /// Opens `dir` at one consistent state: attempts until one is settled (see the module).
    pub(super) fn open_settled(dir: &Path, opts: DbOptions, mmap: bool) -> Result<Db> {
        let mut last = Vec::new();
        for attempt in 1..=MAX_ATTEMPTS {
            let mut seen = Observed::default();
            let opened = Db::open_with(dir, opts.clone(), mmap, &mut seen);
            if seen.settled(dir) {
                return opened.map(|mut db| {
                    db.attempts = attempt;
                    db
                });
            }
            last = seen.vanished;
        }
        Err(Error::OwnerRewriting {
            reason: format!(
                "{MAX_ATTEMPTS} attempts to open one consistent state of the directory each \
                 found it changed before they were done{}",
                if last.is_empty() {
                    String::new()
                } else {
                    format!(" (the last one: {} deleted under it)", last.join(", "))
                }
            ),
        })
    }
}
