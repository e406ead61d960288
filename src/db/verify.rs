//! Verifying a whole database directory (RocksDB's `ldb checkconsistency` and
//! `sst_dump --command=verify` together, LevelDB's `paranoid_checks` and more): the
//! directory as one consistent state (as [`Db::open`] reads it, whatever its owner does
//! meanwhile), then every part of it checked, each problem named by file and offset.
//!
//! ```text
//! unusable (an Err):  no CURRENT, a bad CURRENT, a MANIFEST missing or damaged, an order
//!                     the reader does not have: LevelDB would not open the directory
//! damage:             a table the MANIFEST lists that is missing, or of another size than
//!                     it says; in each live table: footer, index, metaindex, filter and data
//!                     blocks (checksums, decompression, entries), key order within and across
//!                     blocks and against the index, every key passing the filter, the first
//!                     and last keys the MANIFEST records; tables of a level above 0
//!                     overlapping; in each live log: damaged records, batches that do not
//!                     decode
//! notes:              a torn last record of a log or the MANIFEST (a write in progress, or a
//!                     crash: LevelDB ignores it), tables and logs the MANIFEST no longer
//!                     lists (left for deletion, or being written), older MANIFESTs
//! ```

use std::cmp::Ordering;

use crate::cursor::Cursor;
use crate::db::engine::TableSource;
use crate::db::files::FileKind;
use crate::db::reader::{Db, DbOptions};
use crate::error::{Error, Result};
use crate::internal_key;
use crate::options::ReadOptions;
use crate::util::comparator::Comparator;

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Something LevelDB writes but a reader may meet in a healthy directory (a torn tail
    /// of a write in progress, a file left for deletion): reported, not damage.
    Note,
    /// Damage: what a read would fail on (or, under salvage, skip).
    Damage,
}

impl Severity {
    /// `note` or `damage`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Damage => "damage",
        }
    }
}

/// One problem: in which file, where, how bad, what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The file, relative to the directory (`000005.ldb`, `MANIFEST-000002`).
    pub file: String,
    /// The file offset it is at, when it is at one.
    pub offset: Option<u64>,
    /// Damage or a note.
    pub severity: Severity,
    /// What is wrong.
    pub what: String,
}

/// What [`verify`] found.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Problems, by file (in the order the files were checked).
    pub problems: Vec<Problem>,
    /// Live tables checked.
    pub tables: u64,
    /// Their data blocks and entries.
    pub data_blocks: u64,
    /// Entries of the live tables.
    pub entries: u64,
    /// Live tables whose keys were checked against a filter.
    pub filtered_tables: u64,
    /// Live logs read, and their batches.
    pub logs: u64,
    /// Batches of the live logs.
    pub batches: u64,
    /// The MANIFEST read.
    pub manifest: String,
    /// The sequence the directory was read at.
    pub last_sequence: u64,
}

impl VerifyReport {
    /// How many problems are damage.
    pub fn damage_count(&self) -> usize {
        self.problems
            .iter()
            .filter(|p| p.severity == Severity::Damage)
            .count()
    }

    /// True when nothing is damaged (notes aside).
    pub fn is_intact(&self) -> bool {
        self.damage_count() == 0
    }

    fn push(&mut self, file: &str, offset: Option<u64>, severity: Severity, what: String) {
        self.problems.push(Problem {
            file: file.to_string(),
            offset,
            severity,
            what,
        });
    }
}

/// Verifies the database in `dir` whole (see the module): every live table read block by
/// block with checksums verified (the cache bypassed), the live logs and the MANIFEST
/// checked against the files present. `opts` supplies comparators and the order as for
/// [`Db::open`]; salvage and checksum verification are always on here.
///
/// # Errors
/// The directory is unusable as a database (LevelDB would not open it): no CURRENT, a bad
/// CURRENT, a MANIFEST missing or damaged, a comparator the options do not supply, an I/O
/// error listing it; or its owner rewrote it under every attempt to read one state.
pub fn verify(dir: impl AsRef<std::path::Path>, opts: DbOptions) -> Result<VerifyReport> {
    let dir = dir.as_ref();
    let opts = opts.salvage(true).verify_checksums(true);
    let db = Db::open(dir, opts.clone())?;
    if db.is_repair_view() {
        // No usable MANIFEST: the error opening without salvage names it.
        return Err(Db::open(dir, opts.salvage(false))
            .err()
            .unwrap_or(Error::BadCurrent {
                reason: "the MANIFEST changed while it was read".into(),
            }));
    }
    let manifest = db.manifest_name().unwrap_or_default().to_string();
    let mut r = VerifyReport {
        manifest: manifest.clone(),
        last_sequence: db.last_sequence(),
        ..VerifyReport::default()
    };
    if let Some((offset, len)) = db.manifest_torn_tail() {
        r.push(&manifest, Some(offset), Severity::Note, torn(len));
    }
    // What opening met: damaged log records and batches, tables the MANIFEST lists that
    // are missing (at no offset).
    for d in db.damage() {
        let missing = matches!(FileKind::parse(&d.file), Some(FileKind::Table(n)) if db.table_name(n).is_none());
        let offset = Some(d.offset).filter(|_| !missing);
        r.push(&d.file, offset, Severity::Damage, d.what.clone());
    }
    for l in db.logs() {
        r.logs += 1;
        r.batches += l.batches;
        if let Some((offset, len)) = l.torn_tail {
            let name = crate::db::files::log_file_name(l.number);
            r.push(&name, Some(offset), Severity::Note, torn(len));
        }
    }
    tables(&db, &mut r);
    levels(&db, &mut r);
    others(&db, dir, &mut r)?;
    Ok(r)
}

fn torn(len: u64) -> String {
    format!(
        "the last record ({len} bytes) is incomplete: a write in progress, or a crash; \
         ignored, as LevelDB does"
    )
}

/// Every live table: its size against the MANIFEST's, every block, its first and last keys
/// against the MANIFEST's.
fn tables(db: &Db, r: &mut VerifyReport) {
    let ucmp = db.internal_comparator().clone();
    for level in 0..crate::db::files::NUM_LEVELS {
        for f in db.level_files(level) {
            let Some(name) = db.table_name(f.number).map(str::to_string) else {
                continue; // missing: among what opening met
            };
            r.tables += 1;
            if let Some(len) = db.table_file_len(f.number) {
                if len != f.size {
                    r.push(
                        &name,
                        None,
                        Severity::Damage,
                        format!(
                            "{len} bytes, but the MANIFEST says {} (level {level})",
                            f.size
                        ),
                    );
                }
            }
            let t = match db.table(f.number) {
                Ok(t) => t,
                Err(e) => {
                    r.push(&name, e.offset(), Severity::Damage, inner(&e));
                    continue;
                }
            };
            let v = t.verify();
            r.data_blocks += v.data_blocks;
            r.entries += v.entries;
            r.filtered_tables += u64::from(v.filter_checked);
            for e in &v.problems {
                r.push(&name, e.offset(), Severity::Damage, e.to_string());
            }
            if v.problem_count > v.problems.len() as u64 {
                r.push(
                    &name,
                    None,
                    Severity::Damage,
                    format!(
                        "and {} more problems",
                        v.problem_count - v.problems.len() as u64
                    ),
                );
            }
            // The key range the MANIFEST records (level-0 reads and level searches rely on it).
            let mut it = t.iter(&ReadOptions::default().fill_cache(false));
            for (first, want) in [(true, &f.smallest), (false, &f.largest)] {
                if first {
                    it.seek_to_first();
                } else {
                    it.seek_to_last();
                }
                if it.valid() && ucmp.compare(it.key(), want) != Ordering::Equal {
                    r.push(
                        &name,
                        None,
                        Severity::Damage,
                        format!(
                            "its {} key is {}, but the MANIFEST says {}",
                            if first { "first" } else { "last" },
                            key_text(it.key()),
                            key_text(want)
                        ),
                    );
                }
            }
        }
    }
}

/// Tables of a level above 0 must not overlap (a lookup reads one table per level).
fn levels(db: &Db, r: &mut VerifyReport) {
    let ucmp = db.internal_comparator().user_comparator().clone();
    for level in 1..crate::db::files::NUM_LEVELS {
        for w in db.level_files(level).windows(2) {
            let (a, b) = (&w[0], &w[1]);
            if ucmp.compare(
                internal_key::user_key(&a.largest),
                internal_key::user_key(&b.smallest),
            ) != Ordering::Less
            {
                r.push(
                    &r.manifest.clone(),
                    None,
                    Severity::Damage,
                    format!(
                        "level {level}: tables {} and {} overlap ({} >= {})",
                        db.table_name(a.number).unwrap_or("?"),
                        db.table_name(b.number).unwrap_or("?"),
                        key_text(&a.largest),
                        key_text(&b.smallest)
                    ),
                );
            }
        }
    }
}

/// The directory's other LevelDB files against the MANIFEST.
fn others(db: &Db, dir: &std::path::Path, r: &mut VerifyReport) -> Result<()> {
    let next = db.manifest().next_file_number;
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    for name in names {
        let (number, what) = match FileKind::parse(&name) {
            Some(FileKind::Table(n)) if db.table_name(n).is_none() => (n, "a table"),
            Some(FileKind::Log(n)) if !db.logs().iter().any(|l| l.number == n) => (n, "a log"),
            Some(FileKind::Manifest(n)) if db.manifest_name() != Some(name.as_str()) => {
                (n, "a MANIFEST")
            }
            _ => continue,
        };
        let why = if number >= next {
            "newer than the MANIFEST: being written by a flush or a compaction in progress"
        } else {
            "left over: LevelDB deletes it when it next opens the database (`sst db records` \
             lists what it holds)"
        };
        r.push(
            &name,
            None,
            Severity::Note,
            format!("{what} the MANIFEST does not list; {why}"),
        );
    }
    Ok(())
}

/// `e` without the file name it carries (the problem names the file).
fn inner(e: &Error) -> String {
    match e {
        Error::InFile { source, .. } => source.to_string(),
        e => e.to_string(),
    }
}

/// An internal key as text: the user key (escaped), `@` sequence.
fn key_text(k: &[u8]) -> String {
    match internal_key::parse_internal_key(k) {
        Some(p) => format!("{:?} @ {}", String::from_utf8_lossy(p.user_key), p.sequence),
        None => format!("{:?}", String::from_utf8_lossy(k)),
    }
}
