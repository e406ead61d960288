//! The state a MANIFEST describes: replaying its VersionEdits gives the live tables per level,
//! the comparator's name, the log number and the sequence numbers (LevelDB's
//! `VersionSet::Recover`).
//!
//! ```text
//! MANIFEST (a log file) = VersionEdit, VersionEdit, ...
//! state = fold(apply, empty, edits): per edit, deleted files leave their level, new files
//!         join theirs; the last comparator / log / next-file / last-sequence values win
//! ```

use std::collections::BTreeMap;

use crate::db::files::VersionEdit;
use crate::db::files::NUM_LEVELS;
use crate::db::files::{LogItem, LogReader};
use crate::error::{Error, Result};

/// A live table, as the MANIFEST lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// File number (`NNNNNN.ldb`).
    pub number: u64,
    /// Size in bytes.
    pub size: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
}

/// What replaying a MANIFEST gives.
#[derive(Debug, Default)]
pub struct ManifestState {
    /// The comparator's name (LevelDB always writes it in the first record).
    pub comparator: Option<String>,
    /// Logs numbered below this are obsolete (their contents are in tables).
    pub log_number: u64,
    /// A second log still needed (set by LevelDBs before 1.4 during a flush; usually 0).
    pub prev_log_number: u64,
    /// The next file number LevelDB would use.
    pub next_file_number: u64,
    /// The last sequence number written to a table (the logs may hold later ones).
    pub last_sequence: u64,
    /// Live tables per level, by file number (sorted by key when the reader opens them).
    pub levels: Vec<Vec<FileMeta>>,
    /// Compaction pointers (level, internal key), last one per level.
    pub compact_pointers: BTreeMap<u32, Vec<u8>>,
    /// Number of VersionEdits read.
    pub edits: usize,
    /// Damage met on the way (only with `salvage`; otherwise the first one is an error).
    pub damage: Vec<Error>,
    /// A last record cut off by the end of the file (offset, length): LevelDB ignores it.
    pub torn_tail: Option<(u64, u64)>,
}

impl ManifestState {
    /// Replays the MANIFEST `bytes`. Without `salvage`, damage is an error (as LevelDB's
    /// recovery, which fails on any MANIFEST corruption); with it, damaged records are
    /// skipped and listed in `damage`.
    ///
    /// # Errors
    /// [`Error::BadLogRecord`], [`Error::BadVersionEdit`]; or [`Error::BadVersionEdit`] when
    /// the MANIFEST lacks the next-file, log-number or last-sequence entry LevelDB requires.
    pub fn replay(bytes: &[u8], salvage: bool) -> Result<ManifestState> {
        let mut st = ManifestState {
            levels: vec![Vec::new(); NUM_LEVELS],
            ..ManifestState::default()
        };
        let (mut has_next, mut has_log, mut has_last) = (false, false, false);
        let mut live: Vec<BTreeMap<u64, FileMeta>> = vec![BTreeMap::new(); NUM_LEVELS];
        for item in LogReader::new(bytes) {
            let (offset, data) = match item {
                LogItem::Record { offset, data } => (offset, data),
                LogItem::Damage(e) if salvage => {
                    st.damage.push(e);
                    continue;
                }
                LogItem::Damage(e) => return Err(e),
                LogItem::TornTail { offset, len } => {
                    st.torn_tail = Some((offset, len));
                    continue;
                }
            };
            let edit = match VersionEdit::decode(&data) {
                Ok(e) => e,
                Err(Error::BadVersionEdit { offset: o, reason }) => {
                    let e = Error::BadVersionEdit {
                        offset: offset + o,
                        reason: format!("{reason} (in the record at file offset {offset})"),
                    };
                    if salvage {
                        st.damage.push(e);
                        continue;
                    }
                    return Err(e);
                }
                Err(e) => return Err(e),
            };
            st.edits += 1;
            if let Some(c) = edit.comparator {
                st.comparator = Some(c);
            }
            if let Some(n) = edit.log_number {
                st.log_number = n;
                has_log = true;
            }
            if let Some(n) = edit.prev_log_number {
                st.prev_log_number = n;
            }
            if let Some(n) = edit.next_file_number {
                st.next_file_number = n;
                has_next = true;
            }
            if let Some(n) = edit.last_sequence {
                st.last_sequence = n;
                has_last = true;
            }
            for (level, key) in edit.compact_pointers {
                st.compact_pointers.insert(level, key);
            }
            for (level, number) in edit.deleted_files {
                // ok: levels are checked < NUM_LEVELS when decoded.
                live[level as usize].remove(&number);
            }
            for f in edit.new_files {
                live[f.level as usize].insert(
                    f.number,
                    FileMeta {
                        number: f.number,
                        size: f.size,
                        smallest: f.smallest,
                        largest: f.largest,
                    },
                );
            }
        }
        let missing = [
            (has_next, "no next-file-number entry in the MANIFEST"),
            (has_log, "no log-number entry in the MANIFEST"),
            (has_last, "no last-sequence entry in the MANIFEST"),
        ];
        if let Some((_, what)) = missing.iter().find(|(has, _)| !has) {
            let e = Error::BadVersionEdit {
                offset: bytes.len() as u64,
                reason: (*what).into(),
            };
            if !salvage {
                return Err(e);
            }
            st.damage.push(e);
        }
        st.levels = live
            .into_iter()
            .map(|m| m.into_values().collect())
            .collect();
        Ok(st)
    }

    /// Whether log `number` still holds writes that are in no table (LevelDB's rule in
    /// `DBImpl::Recover`: number >= log number, or == the previous log number).
    pub fn log_is_live(&self, number: u64) -> bool {
        number >= self.log_number || (self.prev_log_number != 0 && number == self.prev_log_number)
    }

    /// Whether table `number` is live at some level.
    pub fn table_level(&self, number: u64) -> Option<usize> {
        self.levels
            .iter()
            .position(|l| l.iter().any(|f| f.number == number))
    }
}
