//! The live tables (a `Version`, immutable, shared by readers through an `Arc`; LevelDB's
//! `db/version_set.cc`).
//!
//! ```text
//! Version: level 0  tables newest first (key ranges may overlap)
//!          level 1-6 tables sorted by key, not overlapping; level L holds up to
//!                    10^L MiB (level 1: 10 MiB), level 0 up to 4 files, before compaction
//! ```
//!
//! A version names tables by number; the [`TableCache`] opens them.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::sync::atomic::{AtomicI64, Ordering as AtomicOrdering};
use std::sync::Arc;

use leveldb_table::db::files::FileMeta;
use leveldb_table::db::files::{NewFile, VersionEdit};
use leveldb_table::raw::internal_key::{user_key, InternalKeyComparator};
use leveldb_table::{BytewiseComparator, Comparator, Lookup, ReadOptions};

use crate::error::Result;
use crate::table_cache::TableCache;

pub use leveldb_table::db::files::NUM_LEVELS;

/// A live table: its metadata, and how many more lookups may pass through it in vain
/// before it is compacted (LevelDB's `allowed_seeks`: one per 16 KiB, at least 100).
pub struct FileInfo {
    /// Number, size, key range.
    pub meta: FileMeta,
    allowed_seeks: AtomicI64,
}

impl FileInfo {
    /// The file `meta` describes, with its full allowance of seeks.
    pub fn new(meta: FileMeta) -> Arc<FileInfo> {
        let allowed_seeks = AtomicI64::new((meta.size / 16384).max(100) as i64);
        Arc::new(FileInfo {
            meta,
            allowed_seeks,
        })
    }

    /// The smallest user key.
    pub fn smallest_user(&self) -> &[u8] {
        user_key(&self.meta.smallest)
    }

    /// The largest user key.
    pub fn largest_user(&self) -> &[u8] {
        user_key(&self.meta.largest)
    }

    /// Charges one wasted probe; true when the table has used up its allowance.
    pub fn charge_seek(&self) -> bool {
        self.allowed_seeks.fetch_sub(1, AtomicOrdering::Relaxed) <= 1
    }

    /// Whether the table's user-key range meets `[lo, hi]`.
    pub fn overlaps(&self, lo: &[u8], hi: &[u8]) -> bool {
        self.largest_user() >= lo && self.smallest_user() <= hi
    }
}

/// The internal-key comparator over bytewise user keys (the only order this engine writes).
pub fn icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(Arc::new(BytewiseComparator))
}

/// The live tables at one moment.
#[derive(Clone, Default)]
pub struct Version {
    /// Per level: level 0 newest first, deeper levels by smallest key.
    pub levels: [Vec<Arc<FileInfo>>; NUM_LEVELS],
    numbers: HashSet<u64>,
}

/// What a lookup in the tables found.
pub enum TableGet {
    /// A value (in the caller's buffer).
    Found,
    /// A deletion.
    Deleted,
    /// Nothing.
    Absent,
}

impl Version {
    /// This version with `edit` applied.
    pub fn apply(&self, edit: &VersionEdit) -> Version {
        let mut levels = self.levels.clone();
        for &(level, number) in &edit.deleted_files {
            if let Some(l) = levels.get_mut(level as usize) {
                l.retain(|t| t.meta.number != number);
            }
        }
        for f in &edit.new_files {
            if let Some(l) = levels.get_mut(f.level as usize) {
                l.push(FileInfo::new(FileMeta {
                    number: f.number,
                    size: f.size,
                    smallest: f.smallest.clone(),
                    largest: f.largest.clone(),
                }));
            }
        }
        Version::from_levels(levels)
    }

    /// A version of these tables (sorted here).
    pub fn from_levels(mut levels: [Vec<Arc<FileInfo>>; NUM_LEVELS]) -> Version {
        let cmp = icmp();
        levels[0].sort_by_key(|t| std::cmp::Reverse(t.meta.number));
        for l in levels.iter_mut().skip(1) {
            l.sort_by(|a, b| cmp.compare(&a.meta.smallest, &b.meta.smallest));
        }
        let numbers = levels.iter().flatten().map(|t| t.meta.number).collect();
        Version { levels, numbers }
    }

    /// Whether table `number` is live.
    pub fn contains(&self, number: u64) -> bool {
        self.numbers.contains(&number)
    }

    /// Every live table, as new-file entries at their levels (the MANIFEST written on open).
    pub fn new_files(&self) -> Vec<NewFile> {
        (0..NUM_LEVELS)
            .flat_map(|level| {
                self.levels[level]
                    .iter()
                    .map(move |t| new_file(level, &t.meta))
            })
            .collect()
    }

    /// Total bytes at `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels[level].iter().map(|t| t.meta.size).sum()
    }

    /// The tables of `level` whose user-key range meets `[lo, hi]` (either end open when
    /// `None`); at level 0 the range grows with each overlapping table until it is closed
    /// (LevelDB's `GetOverlappingInputs`).
    pub fn overlapping(
        &self,
        level: usize,
        lo: Option<&[u8]>,
        hi: Option<&[u8]>,
    ) -> Vec<Arc<FileInfo>> {
        let (mut lo, mut hi) = (lo.map(<[u8]>::to_vec), hi.map(<[u8]>::to_vec));
        'again: loop {
            let mut out = Vec::new();
            for t in &self.levels[level] {
                if lo.as_deref().is_some_and(|lo| t.largest_user() < lo)
                    || hi.as_deref().is_some_and(|hi| t.smallest_user() > hi)
                {
                    continue;
                }
                if level == 0 {
                    if lo.as_deref().is_some_and(|lo| t.smallest_user() < lo) {
                        lo = Some(t.smallest_user().to_vec());
                        continue 'again;
                    }
                    if hi.as_deref().is_some_and(|hi| t.largest_user() > hi) {
                        hi = Some(t.largest_user().to_vec());
                        continue 'again;
                    }
                }
                out.push(t.clone());
            }
            return out;
        }
    }

    /// The newest version of `key` at `snapshot` in the tables: level 0 newest first, then
    /// the one table per deeper level whose range holds the key. When more than one table
    /// was probed, the first (with its level) goes to `charge`: LevelDB's seek statistics.
    ///
    /// # Errors
    /// A table that cannot be opened, or a block that fails its checksum or does not
    /// decode: damage is an error, never a missing key.
    pub fn get(
        &self,
        cache: &TableCache,
        key: &[u8],
        snapshot: u64,
        opts: ReadOptions,
        value: &mut Vec<u8>,
        charge: &mut Option<(usize, Arc<FileInfo>)>,
    ) -> Result<TableGet> {
        let mut first: Option<(usize, &Arc<FileInfo>)> = None;
        let opts = opts.snapshot(Some(snapshot));
        for (level, files) in self.levels.iter().enumerate() {
            let candidates: &[Arc<FileInfo>] = if level == 0 {
                files
            } else {
                let i = files.partition_point(|t| t.largest_user() < key);
                files.get(i..(i + 1).min(files.len())).unwrap_or(&[])
            };
            for f in candidates {
                if !f.overlaps(key, key) {
                    continue;
                }
                match first {
                    None => first = Some((level, f)),
                    Some((l, f)) if charge.is_none() => *charge = Some((l, f.clone())),
                    Some(_) => {}
                }
                let table = cache.get(f.meta.number)?;
                match table.reader.get_into(key, &opts, value).map_err(|e| {
                    leveldb_table::Error::InFile {
                        file: leveldb_table::db::files::table_file_name(f.meta.number),
                        source: Box::new(e),
                    }
                })? {
                    Lookup::Found { .. } => return Ok(TableGet::Found),
                    Lookup::Deleted { .. } => return Ok(TableGet::Deleted),
                    Lookup::NotFound => {}
                }
            }
        }
        Ok(TableGet::Absent)
    }
}

/// Orders two internal keys.
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    icmp().compare(a, b)
}

/// A table's entry in a VersionEdit.
pub fn new_file(level: usize, f: &FileMeta) -> NewFile {
    NewFile {
        level: level as u32,
        number: f.number,
        size: f.size,
        smallest: f.smallest.clone(),
        largest: f.largest.clone(),
    }
}
