//! Opening a table for the subcommands that read one: in the order its directory's MANIFEST
//! names (else `--comparator`), and with one line saying what a file is when it is not a
//! table (a directory, another file of a LevelDB database, SQLite).

use std::fs::File;
use std::io;
use std::path::Path;

use leveldb_table::{Error, OpenOptions, TableReader};

use crate::exit::{describe, Failure};
use crate::input::filekind::{self, Kind};
use crate::input::flags::Global;

/// Opens a table; any failure is exit 2 with a message naming the file (and offset).
pub fn open_table(path: &Path, g: &Global) -> Result<TableReader<File>, Failure> {
    open_table_err(path, g).map_err(|e| Failure::error(e.message(path)))
}

/// Why `path` is not a table, when it is SQLite, a directory or another file of a LevelDB
/// database (CURRENT, LOCK, a MANIFEST, a log): one line saying what it is and which
/// command reads it.
pub fn not_a_table(path: &Path) -> Option<String> {
    if let Some(msg) = crate::render::chrome::not_leveldb(path) {
        return Some(msg);
    }
    let kind = filekind::of_path(path);
    filekind::expect(path, &kind, &[Kind::Table, Kind::RocksDbTable], "a table").err()
}

/// Opens a table, keeping the library error (for callers that choose the exit code).
pub fn open_table_err(path: &Path, g: &Global) -> Result<TableReader<File>, OpenError> {
    if let Some(msg) = not_a_table(path) {
        return Err(OpenError::NotATable(msg));
    }
    let opts = table_options(path, g)?;
    let file = File::open(path).map_err(OpenError::Io)?;
    // The library names RocksDB files itself (by magic, or by the metaindex's RocksDB meta
    // blocks, read before the index).
    TableReader::open(file, opts).map_err(OpenError::Table)
}

/// Reader options for the table at `path`: the reading options and the table's order (its
/// directory's MANIFEST, else `--comparator`, else bytewise).
pub fn table_options(path: &Path, g: &Global) -> Result<OpenOptions, OpenError> {
    let (cmp, _) = crate::input::order::comparator_for(path, g).map_err(OpenError::Order)?;
    let mut opts = g.reader_options();
    opts.comparator = cmp;
    Ok(opts)
}

/// Why a table could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The file could not be opened.
    Io(io::Error),
    /// The library refused the table.
    Table(Error),
    /// A directory or another file of a LevelDB database: what it is, which command reads it.
    NotATable(String),
    /// The table's order cannot be settled (an unknown comparator in its MANIFEST, or
    /// `--comparator` contradicting it).
    Order(String),
}

impl OpenError {
    /// The message, naming the file.
    pub fn message(&self, path: &Path) -> String {
        match self {
            OpenError::Io(e) => format!("{}: cannot open: {e}", path.display()),
            OpenError::NotATable(msg) | OpenError::Order(msg) => msg.clone(),
            OpenError::Table(e) => describe(path, e),
        }
    }
}
