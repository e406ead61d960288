//! What a path given to `Db(...)` is when it is not a LevelDB database directory, in the one
//! line `sst db` gives: SQLite (a file, or a folder of Chromium's SQLite IndexedDB, as
//! `sst_chrome::idb::sqlite_at` names it), or a file of LevelDB's (a table, a log, a
//! MANIFEST) or of no kind LevelDB writes.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use leveldb_table::db::files::FileKind;
use leveldb_table::raw::format::TABLE_MAGIC;
use sst_chrome::idb::sqlite_at;

/// Why `path` cannot be a database directory, or `None` when it may be one (a directory
/// that is not SQLite, or nothing at all: opening it says what is missing).
pub fn not_a_database(path: &Path) -> Option<String> {
    let p = path.display();
    if let Some(s) = sqlite_at(path) {
        return Some(format!("{p}: {s}"));
    }
    if !path.is_file() {
        return None;
    }
    let what = if ends_in_table_magic(path) {
        "a LevelDB table; read it with leveldb_table.Table(path)".to_string()
    } else {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        match FileKind::parse(name) {
            Some(FileKind::Table(_)) => {
                "named as a LevelDB table, without a table's magic number; read it with \
                 leveldb_table.Table(path)"
                    .to_string()
            }
            Some(FileKind::Log(_)) => "a write-ahead log of a LevelDB database (its \
                 directory is the database)"
                .to_string(),
            Some(FileKind::Manifest(_) | FileKind::Current | FileKind::Lock) => {
                format!("{name} of a LevelDB database (its directory is the database)")
            }
            _ => "a file, of no kind LevelDB writes".to_string(),
        }
    };
    Some(format!("{p}: not a database directory: it is {what}"))
}

/// Whether the file's last 8 bytes are LevelDB's table magic number.
fn ends_in_table_magic(path: &Path) -> bool {
    let read = || -> std::io::Result<u64> {
        let mut f = std::fs::File::open(path)?;
        f.seek(SeekFrom::End(-8))?;
        let mut b = [0u8; 8];
        f.read_exact(&mut b)?;
        Ok(u64::from_le_bytes(b))
    };
    read().is_ok_and(|m| m == TABLE_MAGIC)
}
