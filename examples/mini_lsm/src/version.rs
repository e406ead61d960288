//! The live tables (a `Version`, immutable, shared by readers through an `Arc`) and the
//! MANIFEST that records every change to them (LevelDB's `db/version_set.cc`).
//!
//! ```text
//! Version: level 0  tables newest first (key ranges may overlap)
//!          level 1-6 tables sorted by key, not overlapping; level L holds up to
//!                    10^L MiB (level 1: 10 MiB), level 0 up to 4 files, before compaction
//! MANIFEST: VersionEdit (whole state, written on open), VersionEdit (one change), ...
//! ```

use std::cmp::Ordering;
use std::collections::HashMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering as AtomicOrdering};
use std::sync::Arc;

use leveldb_table::db::files::table_file_name;
use leveldb_table::db::files::FileMeta;
use leveldb_table::db::files::LogWriter;
use leveldb_table::raw::internal_key::user_key;
use leveldb_table::{db::engine::TableFile, db::engine::TableSource};
use leveldb_table::{db::files::NewFile, db::files::VersionEdit};
use leveldb_table::{
    raw::internal_key::InternalKeyComparator, BytewiseComparator, Lookup, ReadOptions,
    ReaderOptions, Result, TableReader,
};

pub use leveldb_table::db::files::NUM_LEVELS;

/// A live table and its open reader (kept open while any version names it).
pub struct Table {
    /// Number, size, key range.
    pub meta: FileMeta,
    /// The reader.
    pub reader: TableReader<TableFile>,
    /// Lookups that may still probe this table before a deeper one before it is compacted
    /// (LevelDB's `allowed_seeks`: one per 16 KiB, at least 100).
    allowed_seeks: AtomicI64,
}

impl Table {
    /// Opens table `meta.number` of `dir`.
    pub fn open(dir: &Path, meta: FileMeta, opts: &ReaderOptions) -> Result<Arc<Table>> {
        let mut name = table_file_name(meta.number);
        if !dir.join(&name).exists() {
            // LevelDB before 1.14 named tables NNNNNN.sst.
            let sst = format!("{:06}.sst", meta.number);
            if dir.join(&sst).exists() {
                name = sst;
            }
        }
        let file = File::open(dir.join(&name)).map_err(|e| leveldb_table::Error::InFile {
            file: name.clone(),
            source: Box::new(e.into()),
        })?;
        let reader = TableReader::open(Box::new(file) as TableFile, opts.clone()).map_err(|e| {
            leveldb_table::Error::InFile {
                file: name,
                source: Box::new(e),
            }
        })?;
        let allowed_seeks = AtomicI64::new((meta.size / 16384).max(100) as i64);
        Ok(Arc::new(Table {
            meta,
            reader,
            allowed_seeks,
        }))
    }

    fn smallest_user(&self) -> &[u8] {
        user_key(&self.meta.smallest)
    }
    fn largest_user(&self) -> &[u8] {
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
    pub levels: [Vec<Arc<Table>>; NUM_LEVELS],
    /// The same tables' metadata per level (what a `LevelCursor` walks).
    pub metas: [Vec<FileMeta>; NUM_LEVELS],
    by_number: HashMap<u64, Arc<Table>>,
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
    /// This version with `edit` applied; `added` holds the opened new tables.
    pub fn apply(&self, edit: &VersionEdit, added: &[Arc<Table>]) -> Version {
        let mut levels = self.levels.clone();
        for &(level, number) in &edit.deleted_files {
            if let Some(l) = levels.get_mut(level as usize) {
                l.retain(|t| t.meta.number != number);
            }
        }
        for (f, t) in edit.new_files.iter().zip(added) {
            if let Some(l) = levels.get_mut(f.level as usize) {
                l.push(t.clone());
            }
        }
        Version::from_levels(levels)
    }

    /// A version of these tables (sorted here).
    pub fn from_levels(mut levels: [Vec<Arc<Table>>; NUM_LEVELS]) -> Version {
        let cmp = icmp();
        levels[0].sort_by_key(|t| std::cmp::Reverse(t.meta.number));
        for l in levels.iter_mut().skip(1) {
            l.sort_by(|a, b| cmp.compare_keys(&a.meta.smallest, &b.meta.smallest));
        }
        let metas = levels
            .clone()
            .map(|l| l.iter().map(|t| t.meta.clone()).collect());
        let by_number = levels
            .iter()
            .flatten()
            .map(|t| (t.meta.number, t.clone()))
            .collect();
        Version {
            levels,
            metas,
            by_number,
        }
    }

    /// Whether table `number` is live.
    pub fn contains(&self, number: u64) -> bool {
        self.by_number.contains_key(&number)
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

    /// The tables of `level` whose user-key range meets `[lo, hi]`; at level 0 the range
    /// grows with each overlapping table until it is closed (LevelDB's
    /// `GetOverlappingInputs`).
    pub fn overlapping(&self, level: usize, lo: &[u8], hi: &[u8]) -> Vec<Arc<Table>> {
        let (mut lo, mut hi) = (lo.to_vec(), hi.to_vec());
        'again: loop {
            let mut out = Vec::new();
            for t in &self.levels[level] {
                if !t.overlaps(&lo, &hi) {
                    continue;
                }
                if level == 0 {
                    if t.smallest_user() < lo.as_slice() {
                        lo = t.smallest_user().to_vec();
                        continue 'again;
                    }
                    if t.largest_user() > hi.as_slice() {
                        hi = t.largest_user().to_vec();
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
    pub fn get(
        &self,
        key: &[u8],
        snapshot: u64,
        opts: ReadOptions,
        value: &mut Vec<u8>,
        charge: &mut Option<(usize, Arc<Table>)>,
    ) -> Result<TableGet> {
        let mut first: Option<(usize, &Arc<Table>)> = None;
        for (level, tables) in self.levels.iter().enumerate() {
            let candidates: &[Arc<Table>] = if level == 0 {
                tables
            } else {
                let i = tables.partition_point(|t| t.largest_user() < key);
                tables.get(i..(i + 1).min(tables.len())).unwrap_or(&[])
            };
            for t in candidates {
                if !t.overlaps(key, key) {
                    continue;
                }
                match first {
                    None => first = Some((level, t)),
                    Some((l, f)) if charge.is_none() => *charge = Some((l, f.clone())),
                    Some(_) => {}
                }
                match t
                    .reader
                    .get_into(key, &opts.snapshot(Some(snapshot)), value)?
                {
                    Lookup::Found { .. } => return Ok(TableGet::Found),
                    Lookup::Deleted { .. } => return Ok(TableGet::Deleted),
                    Lookup::NotFound => {}
                }
            }
        }
        Ok(TableGet::Absent)
    }
}

impl TableSource for Version {
    fn table(&self, number: u64) -> Result<&TableReader<TableFile>> {
        self.by_number
            .get(&number)
            .map(|t| &t.reader)
            .ok_or_else(|| leveldb_table::Error::MissingFile {
                file: table_file_name(number),
            })
    }
}

/// Ordering helper: `InternalKeyComparator::compare` through the `Comparator` trait.
trait CompareKeys {
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering;
}

impl CompareKeys for InternalKeyComparator {
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        use leveldb_table::Comparator;
        self.compare(a, b)
    }
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

/// The MANIFEST being appended to.
pub struct Manifest {
    /// Its file number.
    pub number: u64,
    log: LogWriter<BufWriter<File>>,
}

impl Manifest {
    /// Creates `MANIFEST-number` holding `edit` (the whole state), synced. CURRENT is not
    /// changed here.
    pub fn create(dir: &Path, number: u64, edit: &VersionEdit) -> Result<Manifest> {
        let path = dir.join(leveldb_table::db::files::manifest_file_name(number));
        let mut m = Manifest {
            number,
            log: LogWriter::new(BufWriter::new(File::create(path)?)),
        };
        m.append(edit)?;
        Ok(m)
    }

    /// Appends `edit` and syncs: once this returns, the change survives a crash.
    pub fn append(&mut self, edit: &VersionEdit) -> Result<()> {
        let mut rec = Vec::new();
        edit.encode(&mut rec);
        self.log.add_record(&rec)?;
        self.log.flush()?;
        self.log.get_ref().get_ref().sync_data()?;
        Ok(())
    }
}
