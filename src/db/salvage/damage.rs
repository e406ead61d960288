//! What a salvaging read skipped: one entry per damaged range of a file of the directory
//! (a table's data block, a stretch of a table whose index is lost, a log record, a missing
//! table), named by file and offset, collected while the database is read.
//!
//! ```text
//! damage: file (relative to the directory), offset, length (when known), what is wrong
//!         -> each kept once, in the order met
//! ```
//!
//! Reads under `salvage` skip damage instead of stopping; each skip lands here (and the
//! reader's answers are those of the directory without the damaged ranges), so a caller can
//! say exactly what was left out.

use std::collections::BTreeSet;
use std::sync::Mutex;

use crate::error::Error;

/// One damaged range that a salvaging read skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The file, relative to the database directory (`000005.ldb`, `000003.log`).
    pub file: String,
    /// Offset of the damaged range in the file.
    pub offset: u64,
    /// Its length in bytes, when known (a data block's stored size plus its trailer).
    pub len: Option<u64>,
    /// What is wrong (the error, rendered; it names the block when there is one).
    pub what: String,
}

impl Damage {
    /// The damage `error` at `offset` of `file`.
    pub fn new(file: &str, offset: u64, len: Option<u64>, error: &Error) -> Damage {
        // An error already naming its file is rendered without repeating the name.
        let what = match error {
            Error::InFile { file: f, source } if f == file => source.to_string(),
            e => e.to_string(),
        };
        Damage::said(file, offset, len, what)
    }

    /// A damage described by `what`.
    pub fn said(file: &str, offset: u64, len: Option<u64>, what: String) -> Damage {
        Damage {
            file: file.to_string(),
            offset,
            len,
            what,
        }
    }
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: offset {}: {}", self.file, self.offset, self.what)?;
        match self.len {
            Some(n) => write!(f, " ({n} bytes skipped)"),
            None => write!(f, " (skipped)"),
        }
    }
}

/// The damage met so far, each range once; shared by the cursors and lookups of one open
/// database (they may run on several threads).
#[derive(Debug, Default)]
pub struct DamageLog {
    seen: Mutex<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    list: Vec<Damage>,
    at: BTreeSet<(String, u64, String)>,
}

impl DamageLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Seen> {
        // A panic elsewhere while the lock was held leaves a list that is still whole.
        self.seen.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records `d` unless the same damage (file, offset, what) is already recorded.
    pub fn record(&self, d: Damage) {
        let mut seen = self.lock();
        if seen.at.insert((d.file.clone(), d.offset, d.what.clone())) {
            seen.list.push(d);
        }
    }

    /// Everything recorded, in the order met.
    pub fn all(&self) -> Vec<Damage> {
        self.lock().list.clone()
    }

    /// How many damaged ranges were recorded.
    pub fn len(&self) -> usize {
        self.lock().list.len()
    }

    /// Whether anything was recorded.
    pub fn is_empty(&self) -> bool {
        self.lock().list.is_empty()
    }
}
