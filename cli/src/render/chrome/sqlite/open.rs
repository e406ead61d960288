//! Finding and reading the SQLite databases of a path, and `--database` / `--store`.

use std::path::Path;

use sst_chrome::idb::sqlite::{database_files, is_sqlite_file, open_folder, SqliteDatabase};

use crate::exit::Failure;
use crate::render::chrome::DecodeArgs;

/// Whether `path` is a SQLite file, or a folder of SQLite files with no LevelDB `CURRENT`.
pub fn is_sqlite_target(path: &Path) -> bool {
    if path.is_file() {
        return is_sqlite_file(path);
    }
    path.is_dir()
        && !path.join("CURRENT").exists()
        && database_files(path).is_ok_and(|f| !f.is_empty())
}

/// The databases of `path`, sorted by name.
pub fn open(path: &Path) -> Result<Vec<SqliteDatabase>, Failure> {
    open_folder(path).map_err(|e| Failure::error(format!("{}: {e}", path.display())))
}

/// The (database, store ids) `--database` / `--store` keep: every store when neither is
/// given; an error naming what there is when a name matches nothing.
pub fn selected<'d>(
    dbs: &'d [SqliteDatabase],
    path: &Path,
    a: &DecodeArgs,
) -> Result<Vec<(&'d SqliteDatabase, Vec<i64>)>, Failure> {
    let mut out = Vec::new();
    for db in dbs {
        if a.database
            .as_ref()
            .is_some_and(|n| db.info.name.as_ref() != Some(n))
        {
            continue;
        }
        let stores: Vec<i64> = db
            .info
            .stores
            .iter()
            .filter(|(_, s)| a.store.as_ref().is_none_or(|n| s.name.as_ref() == Some(n)))
            .map(|(id, _)| *id)
            .collect();
        if a.store.is_none() || !stores.is_empty() {
            out.push((db, stores));
        }
    }
    if out.is_empty() && (a.database.is_some() || a.store.is_some()) {
        let list: Vec<String> = dbs
            .iter()
            .map(|d| {
                let stores: Vec<&str> = d
                    .info
                    .stores
                    .values()
                    .filter_map(|s| s.name.as_deref())
                    .collect();
                format!(
                    "{:?} ({})",
                    d.info.name.as_deref().unwrap_or(""),
                    stores.join(", ")
                )
            })
            .collect();
        return Err(Failure::error(format!(
            "{}: no {} named {:?}; the databases (and stores) are: {}",
            path.display(),
            if a.store.is_some() {
                "object store"
            } else {
                "database"
            },
            a.store
                .as_ref()
                .or(a.database.as_ref())
                .map_or("", |s| s.as_str()),
            list.join("; ")
        )));
    }
    Ok(out)
}
