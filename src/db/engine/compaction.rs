//! Compaction output: a sorted stream of internal keys (any [`Cursor`], e.g. the merging
//! cursor over the inputs of a compaction) written as tables of about a target size, with
//! the versions no reader can see any more dropped, as LevelDB's `DoCompactionWork` does.
//!
//! ```text
//! input (internal-key order):  a@9 a@7 a@3 b@8(del) b@2 c@5 ...
//! smallest snapshot S = 6:     a@9 a@7 kept (a@7 is what S sees), a@3 dropped (hidden from
//!                              every reader by a@7 <= S); b@8 kept (S sees b@2 under it)
//! bottommost:                  a deletion <= S with no older data below is dropped too
//! output: | 000012.ldb (~target) | 000013.ldb | ...   a user key's versions never straddle
//!                                                      two files
//! ```
//!
//! Rule (LevelDB `db_impl.cc`): for each entry, `last` is the sequence of the previous entry
//! of the same user key (`MAX` for the first). Drop the entry if `last <= S` (a newer
//! version visible to every snapshot hides it), or if it is a deletion with sequence <= S
//! and the output is the bottommost data for its key (nothing older it could hide).

use std::path::Path;

use crate::cursor::Cursor;
use crate::db::files::table_file_name;
use crate::db::files::{NewFile, TARGET_FILE_SIZE};
use crate::error::{Error, Result};
use crate::format::MAX_SEQUENCE;
use crate::internal_key::{self, ValueType};
use crate::options::{KeyFormat, Options};
use crate::table_builder::file::TableFileBuilder;

/// How compaction output is written; set with setters named as the fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CompactionOptions {
    /// Table options, with the user comparator and filter (keys are written as internal
    /// keys: [`Options::keys`] is set to [`KeyFormat::Internal`] here).
    pub table: Options,
    /// A table is closed at the first user-key boundary after it reaches this many bytes.
    pub target_file_size: u64,
    /// The oldest sequence a reader may still read at (the smallest live snapshot, or the
    /// last sequence when there is none).
    pub smallest_snapshot: u64,
    /// The output is the bottommost data for every key it holds (no older level below
    /// overlaps): deletions that no snapshot needs can be dropped.
    pub bottommost: bool,
    /// The level the files are for (recorded in their [`NewFile`]s).
    pub level: u32,
}

impl Default for CompactionOptions {
    /// LevelDB's table options, 2 MiB tables, no snapshot below the newest entry, not
    /// bottommost, level 0.
    fn default() -> Self {
        CompactionOptions {
            table: Options::default(),
            target_file_size: TARGET_FILE_SIZE,
            smallest_snapshot: MAX_SEQUENCE,
            bottommost: false,
            level: 0,
        }
    }
}

impl CompactionOptions {
    /// Sets [`table`](Self::table).
    pub fn table(mut self, table: Options) -> Self {
        self.table = table;
        self
    }

    /// Sets [`target_file_size`](Self::target_file_size).
    pub fn target_file_size(mut self, target_file_size: u64) -> Self {
        self.target_file_size = target_file_size;
        self
    }

    /// Sets [`smallest_snapshot`](Self::smallest_snapshot).
    pub fn smallest_snapshot(mut self, smallest_snapshot: u64) -> Self {
        self.smallest_snapshot = smallest_snapshot;
        self
    }

    /// Sets [`bottommost`](Self::bottommost).
    pub fn bottommost(mut self, bottommost: bool) -> Self {
        self.bottommost = bottommost;
        self
    }

    /// Sets [`level`](Self::level).
    pub fn level(mut self, level: u32) -> Self {
        self.level = level;
        self
    }
}

/// What a compaction wrote.
#[derive(Debug, Clone, Default)]
pub struct CompactionStats {
    /// The tables written, for a VersionEdit.
    pub files: Vec<NewFile>,
    /// Entries read.
    pub read: u64,
    /// Entries written.
    pub written: u64,
}

/// Writes the entries of `input` (from its current position to its end) into new tables in
/// `dir`, numbered by `next_number` (called once per table). Each table is written
/// atomically (temporary file, fsync, rename).
///
/// # Errors
/// An input error, a key that is not an internal key, or an I/O error; tables finished
/// before the error stay in `dir` (the caller's VersionEdit does not name them, so they are
/// obsolete files, as LevelDB leaves them).
pub fn write_compaction_output(
    input: &mut dyn Cursor,
    dir: &Path,
    opts: &CompactionOptions,
    mut next_number: impl FnMut() -> u64,
) -> Result<CompactionStats> {
    let table_opts = opts.table.clone().keys(KeyFormat::Internal);
    let ucmp = opts.table.comparator.clone();
    let mut stats = CompactionStats::default();
    let mut current: Option<(TableFileBuilder, u64, Vec<u8>)> = None;
    let mut last_key: Vec<u8> = Vec::new(); // the last internal key written
    let mut user: Vec<u8> = Vec::new(); // the user key of the previous entry read
    let mut have_user = false;
    let mut last_seq = MAX_SEQUENCE;
    while input.valid() {
        let key = input.key();
        let p = internal_key::parse_internal_key(key).ok_or_else(|| Error::Corruption {
            file: None,
            offset: None,
            what: format!(
                "compaction input: a key of {} bytes is not an internal key",
                key.len()
            ),
        })?;
        stats.read += 1;
        let new_user = !have_user || ucmp.compare(p.user_key, &user) != std::cmp::Ordering::Equal;
        if new_user {
            user.clear();
            user.extend_from_slice(p.user_key);
            have_user = true;
            last_seq = MAX_SEQUENCE;
            // A user-key boundary: close a full table here, never between versions.
            if let Some((b, _, _)) = &current {
                if b.builder().file_size() >= opts.target_file_size {
                    finish(&mut current, &last_key, opts.level, &mut stats)?;
                }
            }
        }
        let drop = last_seq <= opts.smallest_snapshot
            || (p.value_type == ValueType::Deletion
                && p.sequence <= opts.smallest_snapshot
                && opts.bottommost);
        last_seq = p.sequence;
        if !drop {
            if current.is_none() {
                let number = next_number();
                let b = TableFileBuilder::create(dir.join(table_file_name(number)), &table_opts)?;
                current = Some((b, number, key.to_vec()));
            }
            if let Some((b, _, _)) = current.as_mut() {
                b.add(key, input.value())?;
            }
            last_key.clear();
            last_key.extend_from_slice(key);
            stats.written += 1;
        }
        input.next();
    }
    // An input that stopped on an error: the output would miss what follows.
    input.status()?;
    finish(&mut current, &last_key, opts.level, &mut stats)?;
    Ok(stats)
}

fn finish(
    current: &mut Option<(TableFileBuilder, u64, Vec<u8>)>,
    largest: &[u8],
    level: u32,
    stats: &mut CompactionStats,
) -> Result<()> {
    if let Some((b, number, smallest)) = current.take() {
        let t = b.finish()?;
        stats.files.push(NewFile {
            level,
            number,
            size: t.file_size,
            smallest,
            largest: largest.to_vec(),
        });
    }
    Ok(())
}
