//! Removing a database (LevelDB's `DestroyDB`), safely: only the files a LevelDB database
//! is made of, and only when the directory holds nothing else.
//!
//! ```text
//! DIR missing            -> nothing to do
//! DIR holds only CURRENT, LOCK, LOG, LOG.old, MANIFEST-*, *.log, *.ldb, *.sst, *.dbtmp
//!     and interrupted table writes (.sst-*.tmp), each a plain file
//!                        -> LOCK taken (an open database is never removed), the files
//!                           removed, LOCK released and removed; DIR itself is kept
//! anything else in DIR   -> refused (Error::Foreign naming it): nothing is removed
//! ```

use std::path::Path;

use leveldb_table::db::engine::DirLock;
use leveldb_table::db::files::FileKind;

use crate::error::{Error, Result};

/// Whether `name` is a file a LevelDB database (or this engine, mid-write) is made of.
fn is_database_file(name: &str) -> bool {
    FileKind::parse(name).is_some() || (name.starts_with(".sst-") && name.ends_with(".tmp"))
}

/// Removes the database in `dir`: its files, not the directory.
///
/// # Errors
/// [`Error::Foreign`] when `dir` holds anything that is not a database file (a
/// subdirectory, a symbolic link, any other name): nothing is removed then. The database
/// is open (its LOCK is held), or I/O fails.
pub fn destroy(dir: &Path) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let (mut ours, mut foreign) = (Vec::new(), Vec::new());
    for e in entries {
        let e = e.map_err(|e| Error::io(dir, e))?;
        let name = e.file_name();
        let is_file = e.file_type().is_ok_and(|t| t.is_file());
        match name.to_str() {
            Some(n) if is_file && is_database_file(n) => ours.push(n.to_string()),
            _ => foreign.push(name.to_string_lossy().into_owned()),
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        foreign.truncate(10);
        return Err(Error::Foreign {
            dir: dir.to_path_buf(),
            names: foreign,
        });
    }
    let lock = DirLock::acquire(dir)?;
    for name in ours.iter().filter(|n| *n != "LOCK") {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io(&path, e));
            }
            _ => {}
        }
    }
    drop(lock);
    let lock_path = dir.join("LOCK");
    match std::fs::remove_file(&lock_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(&lock_path, e)),
        _ => Ok(()),
    }
}
