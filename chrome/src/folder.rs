//! What a folder or file of a Chrome profile is when a LevelDB database was expected, in
//! one line: a SQLite file, a folder of SQLite databases (Chromium's SQLite IndexedDB among
//! them), a folder of IndexedDB blob files (`*.indexeddb.blob`, beside the database).
//! (Folders of no application's are told apart by the table crate: `Error::NotADatabase`.)

use std::io::Read;
use std::path::Path;

use crate::idb::{identify_sqlite, SqliteInfo};

/// The first page of a file (at most 64 KiB), if it reads as SQLite.
fn sqlite_file(path: &Path) -> Option<SqliteInfo> {
    let mut f = std::fs::File::open(path).ok()?;
    let mut page = vec![0u8; 100];
    f.read_exact(&mut page).ok()?;
    let info = identify_sqlite(&page)?;
    page.resize(info.page_size as usize, 0);
    let n = f.read(&mut page[100..]).ok()?;
    page.truncate(100 + n);
    identify_sqlite(&page)
}

fn describe(info: &SqliteInfo) -> String {
    format!(
        "{}{}-byte pages, {} pages, tables {}",
        if info.chromium_indexeddb {
            "Chromium's SQLite IndexedDB; "
        } else {
            ""
        },
        info.page_size,
        info.pages,
        if info.tables.is_empty() {
            "not on the first page".to_string()
        } else {
            info.tables.join(", ")
        }
    )
}

/// One line naming what `path` is when it is Chrome's but not a LevelDB database: a SQLite
/// file, a folder holding SQLite files (and no LevelDB `CURRENT`), a folder of IndexedDB
/// blob files.
pub fn not_leveldb(path: &Path) -> Option<String> {
    if let Some(db) = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".indexeddb.blob"))
        .filter(|_| path.is_dir())
    {
        return Some(format!(
            "{}: Chrome IndexedDB's blob files (values stored outside the database), not a \
             LevelDB database; the database is {db}.indexeddb.leveldb beside it",
            path.display()
        ));
    }
    if path.is_file() {
        let info = sqlite_file(path)?;
        return Some(format!(
            "{}: a SQLite 3 database, not LevelDB ({})",
            path.display(),
            describe(&info)
        ));
    }
    if path.join("CURRENT").exists() {
        return None;
    }
    let mut found: Vec<(String, SqliteInfo)> = std::fs::read_dir(path)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            Some((
                e.file_name().to_string_lossy().into_owned(),
                sqlite_file(&e.path())?,
            ))
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    let (name, info) = found.first()?;
    let kind = if found.iter().any(|(_, i)| i.chromium_indexeddb) {
        "Chromium's SQLite IndexedDB"
    } else {
        "SQLite databases"
    };
    Some(format!(
        "{}: a folder of {kind}, not a LevelDB database: {} SQLite file(s), {name} ({}){}",
        path.display(),
        found.len(),
        describe(info),
        if found.len() > 1 { ", ..." } else { "" }
    ))
}
