//! What every `sst db` subcommand that reads a directory shares: its arguments, opening the
//! directory read-only (nothing written, locked or touched), and reporting what a
//! `--salvage` read skipped.

use std::path::{Path, PathBuf};

use leveldb_table::db::reader::Db;

use crate::exit::{self, Failure, EXIT_FAIL, EXIT_OK};
use crate::input::filekind;
use crate::input::flags::Global;

/// Options every `sst db` subcommand that reads a directory shares.
#[derive(clap::Args, Debug)]
pub struct DbArgs {
    /// The database directory.
    pub dir: PathBuf,
    /// Skip damaged log records, damaged table blocks and missing tables, and read every
    /// table and log when the MANIFEST is missing or damaged (the order and the last
    /// sequence then taken from the keys); each skip is reported on stderr (exit 1). Scan,
    /// get and records skip the same damage and agree.
    #[arg(long)]
    pub salvage: bool,
}

/// Opens the directory (`--comparator` is the order when no MANIFEST names one) and warns
/// of what opening noticed or skipped.
pub(crate) fn open(a: &DbArgs, g: &Global) -> Result<Db, Failure> {
    refuse_non_directory(&a.dir)?;
    // Chrome's orders are among those a MANIFEST may name (and salvage may find).
    let opts = sst_chrome::db_options()
        .verify_checksums(g.verify)
        .salvage(a.salvage)
        .order(g.comparator.map(|c| c.comparator()));
    let db = Db::open(&a.dir, opts).map_err(|e| {
        let flag = match (&e, g.comparator) {
            (leveldb_table::Error::UnsettledOrder { .. }, Some(c)) => {
                format!(" (--comparator {})", c.name())
            }
            _ => String::new(),
        };
        Failure::error(format!("{}{flag}", unusable(&a.dir, &e)))
    })?;
    for n in db.notes() {
        exit::warn(&format!("{}: {n}", a.dir.display()));
    }
    Ok(db)
}

/// After a read under `--salvage`: each damaged range skipped since opening (opening's
/// are among its notes), then a summary line when anything was skipped.
pub(crate) fn report_damage(db: &Db, a: &DbArgs) {
    if !a.salvage {
        return;
    }
    let all = db.damage();
    for d in all.iter().skip(db.damage_at_open()) {
        exit::warn(&format!("{}: {d}", a.dir.display()));
    }
    if !all.is_empty() {
        exit::warn(&format!(
            "{}: salvage: {} damaged range(s) skipped; every record printed comes from a block \
             or log record whose checksum matched",
            a.dir.display(),
            all.len()
        ));
    }
}

/// Exit code for a run that read everything asked: 1 if damage was skipped.
pub(crate) fn damage_code(db: &Db, a: &DbArgs) -> i32 {
    report_damage(db, a);
    if a.salvage
        && (!db.damage().is_empty()
            || db.is_repair_view()
            || db.notes().iter().any(|n| n.contains("skipped")))
    {
        EXIT_FAIL
    } else {
        EXIT_OK
    }
}

/// A file given where a database directory is asked for: one line saying what it is.
pub(crate) fn refuse_non_directory(dir: &Path) -> Result<(), Failure> {
    if dir.exists() && !dir.is_dir() {
        return Err(Failure::error(not_a_directory(dir)));
    }
    Ok(())
}

/// The one line for a directory that does not open as a database: what it is when it is
/// something else (SQLite), else the error.
pub(crate) fn unusable(dir: &Path, e: &leveldb_table::Error) -> String {
    crate::render::chrome::not_leveldb(dir).unwrap_or(format!("{}: {e}", dir.display()))
}

pub(crate) fn describe(a: &DbArgs, e: &leveldb_table::Error) -> String {
    format!("{}: {e}", a.dir.display())
}

/// The one line for a file given where a database directory is asked for: what it is
/// (SQLite, a table, a log, ...) and which command reads it.
fn not_a_directory(path: &Path) -> String {
    if let Some(msg) = crate::render::chrome::not_leveldb(path) {
        return msg;
    }
    let kind = filekind::of_path(path);
    match filekind::expect(path, &kind, &[], "a database directory") {
        Err(msg) => msg,
        Ok(()) => format!(
            "{}: not a database directory: it is a file, of no kind LevelDB writes",
            path.display()
        ),
    }
}
