//! An origin's folder of Chromium's SQLite IndexedDB: one database file per database.
//!
//! ```text
//! IndexedDB/<origin id>/              e.g. IndexedDB/https_example.com_0/
//!   <base32(sha256(UTF-16LE name))>   52 characters, no padding; "0" for the empty name
//!   <that>-wal                        the write-ahead log (also -shm while open)
//!   <that>_/<blob number, hex>        Blobs and Files moved from LevelDB (legacy files)
//! ```
//! (Chromium's `DatabaseNameToFileName` and `GetSqliteDbDirectory` in
//! `content/browser/indexed_db/file_path_util.cc`.) A file is taken as a database when it
//! starts with SQLite's header; the name's hash is not checked (a renamed copy reads too).

use std::path::{Path, PathBuf};

use super::database::SqliteDatabase;
use super::image::SQLITE_MAGIC;
use crate::error::{Error, Result};

/// Whether the file at `path` starts with SQLite's header.
pub fn is_sqlite_file(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && &head == SQLITE_MAGIC
}

/// The database files of a folder (files starting with SQLite's header, not `-wal`,
/// `-shm` or `-journal` files), sorted by file name; a file given itself.
///
/// # Errors
/// The folder cannot be listed.
pub fn database_files(path: &Path) -> Result<Vec<PathBuf>> {
    if path.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut out: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io)?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let n = p
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned());
            !(n.ends_with("-wal") || n.ends_with("-shm") || n.ends_with("-journal"))
        })
        .filter(|p| is_sqlite_file(p))
        .collect();
    out.sort();
    Ok(out)
}

/// Every database of an origin's folder (or the one file given), sorted by database name.
///
/// # Errors
/// The folder cannot be listed, or a database cannot be read (the error names its file).
pub fn open_folder(path: &Path) -> Result<Vec<SqliteDatabase>> {
    let mut dbs = database_files(path)?
        .iter()
        .map(|p| SqliteDatabase::open(p))
        .collect::<Result<Vec<_>>>()?;
    dbs.sort_by(|a, b| a.info.name.cmp(&b.info.name));
    Ok(dbs)
}
