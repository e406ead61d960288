//! Generated directories (group `directories`), written with the library's own writers
//! (`dir_writer`: tables at every level, MANIFEST, live logs) and its bulk builder.
//!
//! Older writes go deeper (level 6 first, the log last), as compactions leave them, so the
//! newest version of a key is always the one nearest the top.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use leveldb_table::db::engine::{BulkBuilder, BulkOptions};
use leveldb_table::{Compression, Options};

use super::data;
use super::dir_writer::{DirWriter, Op};
use super::{Case, Group, Input};
use crate::error::{Error, Result};
use crate::oracle;
use crate::protocol::Entry;

/// Keys `i` of `users` with `i % step == offset`, written with `value(i)` (a deletion when
/// it returns `None`).
fn every(
    users: &[Vec<u8>],
    step: usize,
    offset: usize,
    value: impl Fn(usize) -> Option<Vec<u8>>,
) -> Vec<Op> {
    (offset..users.len())
        .step_by(step)
        .map(|i| (users[i].clone(), value(i)))
        .collect()
}

fn put(tag: &str) -> impl Fn(usize) -> Option<Vec<u8>> + '_ {
    move |i| Some(format!("{tag}:{i}").into_bytes())
}

/// A directory in every level: 2400 keys at level 6, overwrites and deletions at levels 5
/// to 1 (two versions of a key in one level-1 table), two overlapping level-0 tables, and a
/// live log of four batches (one of 100 KB, over three log blocks) with puts and deletions.
/// Returns the live view, the files and the paths of the log and MANIFEST.
pub(super) fn levels(dir: &Path, opts: Options) -> Result<(Vec<Entry>, DirFiles)> {
    let users: Vec<Vec<u8>> = data::words(2400, 20).into_iter().map(|e| e.0).collect();
    let none = |_| None;
    let mut w = DirWriter::new(dir, opts)?;
    w.level(6, &every(&users, 1, 0, put("v6")), 3)?;
    w.level(5, &every(&users, 3, 1, put("v5")), 2)?;
    w.level(4, &every(&users, 7, 0, none), 1)?;
    let mut l3 = every(&users, 11, 0, put("v3"));
    l3.extend((0..50).map(|i| (format!("new3-{i:03}").into_bytes(), Some(b"n".to_vec()))));
    w.level(3, &l3, 1)?;
    let mut l2 = every(&users, 13, 2, none);
    l2.extend(every(&users, 17, 3, put("v2")));
    w.level(2, &l2, 1)?;
    let mut l1 = every(&users, 5, 4, put("v1a"));
    l1.extend(every(&users, 5, 4, put("v1b")));
    w.level(1, &l1, 2)?;
    let mut l0a: Vec<Op> = users[100..400]
        .iter()
        .map(|k| (k.clone(), Some(b"v0a".to_vec())))
        .collect();
    l0a.extend(every(&users, 19, 0, none));
    w.table(0, &l0a)?;
    let l0b: Vec<Op> = users[300..600]
        .iter()
        .map(|k| (k.clone(), Some(b"v0b".to_vec())))
        .collect();
    w.table(0, &l0b)?;
    let big = vec![(users[1000].clone(), Some(vec![b'x'; 100_000]))];
    let log = w.log(&[
        every(&users, 23, 5, put("log1")),
        every(&users, 29, 6, none),
        big,
        every(&users, 13, 2, put("revived")),
    ])?;
    let files = DirFiles {
        tables: w
            .files()
            .iter()
            .map(|f| (f.level, dir.join(format!("{:06}.ldb", f.number))))
            .collect(),
        log,
        manifest: PathBuf::new(),
    };
    let (view, manifest) = w.finish()?;
    Ok((view, DirFiles { manifest, ..files }))
}

/// The files of a directory [`levels`] wrote.
pub(super) struct DirFiles {
    /// `(level, path)` of each table, in the order written (deepest first).
    pub tables: Vec<(u32, PathBuf)>,
    /// The live log.
    pub log: PathBuf,
    /// The MANIFEST.
    pub manifest: PathBuf,
}

/// A directory case, after checking that this project's reader sees `expected`.
pub(super) fn dir_case(
    name: &str,
    group: Group,
    about: &str,
    dir: &Path,
    expected: Vec<Entry>,
    compressions: Vec<&'static str>,
) -> Result<Case> {
    let mut c = Case::new(
        name,
        group,
        about,
        Input::Dir {
            dir: dir.to_path_buf(),
            expected: Arc::new(expected),
        },
    );
    c.compressions = compressions;
    Ok(c)
}

fn checked(
    name: &str,
    about: &str,
    dir: &Path,
    expected: Vec<Entry>,
    compressions: Vec<&'static str>,
) -> Result<Case> {
    match oracle::db_entries(dir, &[]) {
        Ok(read) if read == expected => {}
        Ok(read) => {
            return Err(Error::SelfCheck {
                case: name.into(),
                reason: format!(
                    "the live view has {} entries, the reader finds {}",
                    expected.len(),
                    read.len()
                ),
            })
        }
        Err(reason) => {
            return Err(Error::SelfCheck {
                case: name.into(),
                reason,
            })
        }
    }
    dir_case(name, Group::Directories, about, dir, expected, compressions)
}

/// Batches of 1000 puts, a batch of 200 KB (over several 32 KiB log blocks), deletions
/// and puts again, and a last small batch.
fn log_only_batches(users: &[Vec<u8>]) -> Vec<Vec<Op>> {
    vec![
        every(&users[..1000], 1, 0, put("a")),
        every(&users[1000..2000], 1, 0, put("b")),
        vec![(users[10].clone(), Some(vec![b'y'; 200_000]))],
        every(users, 3, 0, |_| None),
        every(users, 6, 0, put("c")),
        every(&users[2000..], 2, 1, put("d")),
        every(&users[..50], 1, 0, put("last")),
    ]
}

fn snappy_bloom() -> Options {
    Options::default()
        .compression(Compression::Snappy)
        .bloom(10)
        .block_size(1024)
}

/// The generated directory cases.
pub(super) fn cases(root: &Path) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    let d = root.join("db-levels");
    let (view, _) = levels(&d, snappy_bloom())?;
    out.push(checked("db-levels", "tables at levels 0-6 (two overlapping at 0) with overwrites and deletions, a live log of four batches (one over three log blocks)", &d, view, vec!["snappy"])?);
    let d = root.join("db-levels-none");
    let (view, _) = levels(&d, Options::default().compression(Compression::None))?;
    out.push(checked(
        "db-levels-none",
        "db-levels without compression or filters",
        &d,
        view,
        vec![],
    )?);

    let users: Vec<Vec<u8>> = data::words(3000, 21).into_iter().map(|e| e.0).collect();
    let batches = log_only_batches(&users);
    let d = root.join("db-log-only");
    let mut w = DirWriter::new(&d, snappy_bloom())?;
    w.log(&batches)?;
    let (view, _) = w.finish()?;
    out.push(checked(
        "db-log-only",
        "no tables: a live log of 1000-key batches, a 200 KB batch over several blocks, deletions",
        &d,
        view,
        vec![],
    )?);

    let d = root.join("db-torn-log-tail");
    let mut w = DirWriter::new(&d, snappy_bloom())?;
    let (last, complete) = batches.split_last().expect("log_only_batches is not empty");
    w.log_with_torn_tail(complete, last)?;
    let (view, _) = w.finish()?;
    out.push(checked(
        "db-torn-log-tail",
        "the log's last record cut in half (a write in progress): ignored, as LevelDB does",
        &d,
        view,
        vec![],
    )?);

    let d = root.join("db-two-logs");
    let mut w = DirWriter::new(&d, snappy_bloom())?;
    w.level(6, &every(&users, 1, 0, put("t")), 2)?;
    w.log(&[
        every(&users, 4, 0, put("first-log")),
        every(&users, 9, 1, |_| None),
    ])?;
    w.log(&[
        every(&users, 6, 0, put("second-log")),
        every(&users, 8, 3, |_| None),
    ])?;
    let (view, _) = w.finish()?;
    out.push(checked(
        "db-two-logs",
        "level-6 tables and two live logs (a memtable being flushed), replayed in order",
        &d,
        view,
        vec!["snappy"],
    )?);

    let d = root.join("db-manifest-seq-covers-log");
    let mut w = DirWriter::new(&d, snappy_bloom())?;
    w.level(6, &every(&users, 1, 0, put("t")), 2)?;
    w.log(&[
        every(&users, 4, 1, put("log")),
        every(&users, 10, 2, |_| None),
    ])?;
    w.manifest_covers_logs();
    let (view, _) = w.finish()?;
    out.push(checked(
        "db-manifest-seq-covers-log",
        "the MANIFEST's last sequence covers the live log's batches (writes that went on \
         while a memtable was flushed)",
        &d,
        view,
        vec!["snappy"],
    )?);

    let d = root.join("db-all-deleted");
    let mut w = DirWriter::new(&d, snappy_bloom())?;
    w.level(6, &every(&users[..500], 1, 0, put("t")), 1)?;
    w.log(&[every(&users[..500], 1, 0, |_| None)])?;
    let (view, _) = w.finish()?;
    out.push(checked(
        "db-all-deleted",
        "500 keys in a table, every one deleted in the log: nothing live",
        &d,
        view,
        vec!["snappy"],
    )?);

    let d = root.join("db-empty");
    let mut w = DirWriter::new(&d, snappy_bloom())?;
    w.log(&[])?;
    let (view, _) = w.finish()?;
    out.push(checked(
        "db-empty",
        "no tables, an empty log: nothing live",
        &d,
        view,
        vec![],
    )?);

    let d = root.join("db-bulk");
    let entries = data::words(20_000, 22);
    let mut b = BulkBuilder::create(&d, BulkOptions::default().target_file_size(64 << 10))
        .map_err(|e| Error::SelfCheck {
            case: "db-bulk".into(),
            reason: e.to_string(),
        })?;
    for (k, v) in &entries {
        b.add(k, v).map_err(|e| Error::SelfCheck {
            case: "db-bulk".into(),
            reason: e.to_string(),
        })?;
    }
    b.finish().map_err(|e| Error::SelfCheck {
        case: "db-bulk".into(),
        reason: e.to_string(),
    })?;
    out.push(checked(
        "db-bulk",
        "20000 entries from the library's bulk builder: level-6 tables of 64 KiB, no log",
        &d,
        entries,
        vec!["snappy"],
    )?);
    Ok(out)
}
