//! Naming SQLite where LevelDB was expected: a folder of SQLite databases (Chromium's
//! SQLite IndexedDB among them) or a SQLite file, in one line (`sst_chrome::idb::sqlite_at`
//! says what it is; the Python package says the same).

use std::path::Path;

use sst_chrome::idb::sqlite_at;

/// One line naming what `path` is when it is SQLite, not LevelDB: a SQLite file, or a
/// folder holding SQLite files (and no LevelDB `CURRENT`).
pub fn not_leveldb(path: &Path) -> Option<String> {
    sqlite_at(path).map(|s| format!("{}: {s}", path.display()))
}
