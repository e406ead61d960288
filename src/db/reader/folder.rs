//! What a folder holds when it is not a LevelDB database, in one sentence for the error
//! that refuses it ([`Error::NotADatabase`](crate::Error::NotADatabase)): empty; the parent
//! of databases (one per subfolder, as a browser's folder of per-origin databases); SQLite
//! databases; or other files (a cache, a folder of blobs).
//!
//! ```text
//! LevelDB database: CURRENT, or (a damaged one) a table, a log or a MANIFEST
//! parent:           subfolders holding CURRENT          -> their names
//! SQLite:           files starting "SQLite format 3\0"  -> their names
//! ```

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The first bytes of every SQLite 3 database file.
const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// Names shown in a sentence, at most.
const SHOWN: usize = 5;

/// Whether the file at `path` starts as a SQLite 3 database does.
fn is_sqlite(path: &Path) -> bool {
    let mut head = [0u8; 16];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head == SQLITE_MAGIC)
}

/// `names` joined, at most [`SHOWN`] of them, then `...`.
fn some(names: &[String]) -> String {
    let mut s = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(", ...");
    }
    s
}

/// What the folder `dir` holds, whose entries are `names` (none of them a LevelDB file):
/// one sentence, starting lower-case.
pub(crate) fn describe(dir: &Path, names: &[String]) -> String {
    if names.is_empty() {
        return "the folder is empty".into();
    }
    let mut databases = Vec::new();
    let mut sqlite = Vec::new();
    let (mut files, mut folders) = (0, 0);
    for name in names {
        let path = dir.join(name);
        if path.is_dir() {
            folders += 1;
            if path.join("CURRENT").is_file() {
                databases.push(name.clone());
            }
        } else {
            files += 1;
            if is_sqlite(&path) {
                sqlite.push(name.clone());
            }
        }
    }
    if !databases.is_empty() {
        return format!(
            "it holds {} LevelDB database(s), one per folder: {} (open one of them)",
            databases.len(),
            some(&databases)
        );
    }
    if !sqlite.is_empty() {
        return format!(
            "it holds SQLite database(s), not LevelDB: {}",
            some(&sqlite)
        );
    }
    format!(
        "it holds no CURRENT, table, log or MANIFEST among its {files} file(s) and {folders} \
         folder(s) ({})",
        some(names)
    )
}
