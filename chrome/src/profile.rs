//! A whole Chrome or Electron profile (or user-data folder) surveyed: every storage area
//! found, what it holds and how many live records.
//!
//! ```text
//! <dir>/**/IndexedDB/<origin>.indexeddb.leveldb/  IndexedDB on LevelDB    one area
//! <dir>/**/IndexedDB/<origin>/                    IndexedDB on SQLite     one area (all
//!                                                 its database files)
//! <dir>/**/Local Storage/leveldb/                 localStorage            one area per origin
//! <dir>/**/Session Storage/                       sessionStorage          one area per origin
//! any other folder with a LevelDB CURRENT file    leveldb (extension settings, service
//!                                                 workers, sync data...)  one area
//! origin folder names: scheme_host_port (port 0: the scheme's default) -> scheme://host:port
//! ```
//! Electron apps (Slack, Teams, Discord, VS Code) keep the same folders at the top of their
//! user-data folder, Chrome under `Default/`, `Profile N/`. Folders are walked without
//! following symbolic links; every LevelDB folder is read as `sst db` reads one (salvaging,
//! nothing written), every SQLite one as [`crate::idb::sqlite`] reads it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leveldb_table::db::reader::Db;
use leveldb_table::ReadOptions;

use crate::dom_storage::{
    decode_local_storage, decode_session_storage, LocalStorageEntry, SessionStorageEntry,
};
use crate::error::{Error, Result};
use crate::idb::{decode_key, KeyBody};
use leveldb_table::Cursor;

/// What kind of storage an area is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AreaKind {
    /// An origin's IndexedDB.
    IndexedDb,
    /// An origin's localStorage items.
    LocalStorage,
    /// An origin's sessionStorage items.
    SessionStorage,
    /// Another LevelDB database of the profile.
    LevelDb,
}

impl AreaKind {
    /// `indexeddb`, `local_storage`, `session_storage`, `leveldb`.
    pub fn as_str(self) -> &'static str {
        match self {
            AreaKind::IndexedDb => "indexeddb",
            AreaKind::LocalStorage => "local_storage",
            AreaKind::SessionStorage => "session_storage",
            AreaKind::LevelDb => "leveldb",
        }
    }
}

/// Where an IndexedDB area's data is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Backend {
    /// A LevelDB folder (`<origin>.indexeddb.leveldb`).
    LevelDb,
    /// SQLite files, one per database (`<origin>/`).
    Sqlite,
}

impl Backend {
    /// `leveldb`, `sqlite`.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::LevelDb => "leveldb",
            Backend::Sqlite => "sqlite",
        }
    }
}

/// One storage area of a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Area {
    /// What it is.
    pub kind: AreaKind,
    /// The origin (`http://host:port`), where the area has one.
    pub origin: Option<String>,
    /// IndexedDB's backend.
    pub backend: Option<Backend>,
    /// The folder, relative to the surveyed one.
    pub path: PathBuf,
    /// Live records: IndexedDB object-store records, storage items, LevelDB keys.
    pub records: u64,
    /// IndexedDB: how many databases.
    pub databases: Option<u64>,
    /// What reading met that is damaged or unreadable (each with its file and place).
    pub damage: Vec<String>,
}

/// Chromium's origin identifier (`https_example.com_0`, `http_127.0.0.1_8080`) as an
/// origin (`https://example.com`, `http://127.0.0.1:8080`); `None` if it is not one.
pub fn origin_of_identifier(id: &str) -> Option<String> {
    let (scheme, rest) = id.split_once('_')?;
    let (host, port) = rest.rsplit_once('_')?;
    let port: u32 = port.parse().ok()?;
    if scheme.is_empty()
        || !scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
    {
        return None;
    }
    Some(match port {
        0 => format!("{scheme}://{host}"),
        p => format!("{scheme}://{host}:{p}"),
    })
}

/// The origin of a storage key as localStorage and sessionStorage keep it
/// (`https://example.com/` -> `https://example.com`; a partitioned key's `^...` dropped).
fn origin_of_storage_key(key: &[u8]) -> String {
    let s = String::from_utf8_lossy(key);
    let s = s.split('^').next().unwrap_or("");
    s.trim_end_matches('/').to_string()
}

fn open_leveldb(dir: &Path) -> Result<Db> {
    let opts = crate::db_options().salvage(true);
    Ok(Db::open(dir, opts)?)
}

fn damage_of(db: &Db, dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = db
        .damage()
        .iter()
        .map(|d| format!("{}: {d}", dir.display()))
        .collect();
    if db.is_repair_view() {
        out.push(format!(
            "{}: no usable MANIFEST; every table and log read",
            dir.display()
        ));
    }
    out
}

/// Calls `f` with each live key and value of `db`; the view's error, if any, after.
fn each_live(db: &Db, mut f: impl FnMut(&[u8], &[u8])) -> Result<()> {
    let mut view = db.iter(&ReadOptions::default());
    view.seek_to_first();
    while view.valid() {
        f(view.key(), view.value());
        view.next();
    }
    view.status().map_err(Error::Db)
}

fn relative(dir: &Path, root: &Path) -> PathBuf {
    dir.strip_prefix(root).unwrap_or(dir).to_path_buf()
}

/// Surveys the profile or user-data folder `root`: every area, in path order (per-origin
/// areas of one database by origin).
///
/// # Errors
/// `root` cannot be listed. An area that cannot be read is listed with its damage.
pub fn survey(root: &Path) -> Result<Vec<Area>> {
    std::fs::read_dir(root).map_err(|source| Error::Io {
        path: root.to_path_buf(),
        source,
    })?;
    let mut areas = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    let mut dirs = Vec::new();
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut children: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect();
        children.sort();
        todo.extend(children.into_iter().rev());
        dirs.push(d);
    }
    dirs.sort();
    for d in dirs {
        let name = d
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let parent = d
            .parent()
            .and_then(|p| p.file_name())
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        if d.join("CURRENT").is_file() {
            if let Some(id) = name.strip_suffix(".indexeddb.leveldb") {
                areas.push(leveldb_idb(&d, root, origin_of_identifier(id)));
            } else if name == "leveldb" && parent == "Local Storage" {
                areas.extend(local_storage(&d, root));
            } else if name == "Session Storage" {
                areas.extend(session_storage(&d, root));
            } else {
                areas.push(other_leveldb(&d, root));
            }
        } else if crate::idb::sqlite::database_files(&d).is_ok_and(|f| !f.is_empty()) {
            let origin = origin_of_identifier(&name);
            if parent == "IndexedDB" || origin.is_some() {
                areas.push(sqlite_idb(&d, root, origin));
            }
        }
    }
    Ok(areas)
}

fn area(kind: AreaKind, dir: &Path, root: &Path) -> Area {
    Area {
        kind,
        origin: None,
        backend: None,
        path: relative(dir, root),
        records: 0,
        databases: None,
        damage: Vec::new(),
    }
}

fn leveldb_idb(dir: &Path, root: &Path, origin: Option<String>) -> Area {
    let mut a = area(AreaKind::IndexedDb, dir, root);
    a.origin = origin;
    a.backend = Some(Backend::LevelDb);
    match open_leveldb(dir) {
        Err(e) => a.damage.push(format!("{}: {e}", dir.display())),
        Ok(db) => {
            let r = each_live(&db, |k, _| {
                if matches!(decode_key(k).map(|d| d.body), Some(KeyBody::Record(_))) {
                    a.records += 1;
                }
            });
            if let Ok(c) = crate::idb::idb_catalog(&db) {
                a.databases = Some(c.databases.len() as u64);
            }
            if let Err(e) = r {
                a.damage.push(format!("{}: {e}", dir.display()));
            }
            a.damage.extend(damage_of(&db, dir));
        }
    }
    a
}

fn sqlite_idb(dir: &Path, root: &Path, origin: Option<String>) -> Area {
    let mut a = area(AreaKind::IndexedDb, dir, root);
    a.origin = origin;
    a.backend = Some(Backend::Sqlite);
    let files = crate::idb::sqlite::database_files(dir).unwrap_or_default();
    a.databases = Some(files.len() as u64);
    for f in files {
        match crate::idb::sqlite::SqliteDatabase::open(&f).and_then(|db| db.record_count()) {
            Ok(n) => a.records += n,
            Err(e) => a.damage.push(e.to_string()),
        }
    }
    a
}

fn other_leveldb(dir: &Path, root: &Path) -> Area {
    let mut a = area(AreaKind::LevelDb, dir, root);
    match open_leveldb(dir) {
        Err(e) => a.damage.push(format!("{}: {e}", dir.display())),
        Ok(db) => {
            if let Err(e) = each_live(&db, |_, _| a.records += 1) {
                a.damage.push(format!("{}: {e}", dir.display()));
            }
            a.damage.extend(damage_of(&db, dir));
        }
    }
    a
}

/// Per-origin areas of one database (`counts`: origin -> records), or one area with the
/// damage when it cannot be read.
fn per_origin(
    kind: AreaKind,
    dir: &Path,
    root: &Path,
    counts: Result<BTreeMap<String, u64>>,
    damage: Vec<String>,
) -> Vec<Area> {
    match counts {
        Err(e) => {
            let mut a = area(kind, dir, root);
            a.damage.push(format!("{}: {e}", dir.display()));
            a.damage.extend(damage);
            vec![a]
        }
        Ok(counts) => counts
            .into_iter()
            .map(|(origin, n)| {
                let mut a = area(kind, dir, root);
                a.origin = Some(origin);
                a.records = n;
                a.damage = damage.clone();
                a
            })
            .collect(),
    }
}

fn local_storage(dir: &Path, root: &Path) -> Vec<Area> {
    let (counts, damage) = match open_leveldb(dir) {
        Err(e) => (Err(e), Vec::new()),
        Ok(db) => {
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            let r = each_live(&db, |k, v| {
                if let Some(LocalStorageEntry::Item { origin, .. }) = decode_local_storage(k, v) {
                    *counts.entry(origin_of_storage_key(origin)).or_default() += 1;
                }
            });
            (r.map(|_| counts), damage_of(&db, dir))
        }
    };
    per_origin(AreaKind::LocalStorage, dir, root, counts, damage)
}

fn session_storage(dir: &Path, root: &Path) -> Vec<Area> {
    let (counts, damage) = match open_leveldb(dir) {
        Err(e) => (Err(e), Vec::new()),
        Ok(db) => {
            let mut map_origin: BTreeMap<i64, String> = BTreeMap::new();
            let mut items: BTreeMap<i64, u64> = BTreeMap::new();
            let r = each_live(&db, |k, v| match decode_session_storage(k, v) {
                Some(SessionStorageEntry::Namespace {
                    origin,
                    map: Some(m),
                    ..
                }) => {
                    map_origin.insert(m, origin_of_storage_key(origin));
                }
                Some(SessionStorageEntry::Item { map, .. }) => *items.entry(map).or_default() += 1,
                _ => {}
            });
            let counts = r.map(|_| {
                let mut counts: BTreeMap<String, u64> = BTreeMap::new();
                for (map, origin) in &map_origin {
                    *counts.entry(origin.clone()).or_default() +=
                        items.get(map).copied().unwrap_or(0);
                }
                counts
            });
            (counts, damage_of(&db, dir))
        }
    };
    per_origin(AreaKind::SessionStorage, dir, root, counts, damage)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        assert_eq!(
            origin_of_identifier("https_example.com_0").as_deref(),
            Some("https://example.com")
        );
        assert_eq!(
            origin_of_identifier("http_127.0.0.1_8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            origin_of_identifier("chrome-extension_abc_0").as_deref(),
            Some("chrome-extension://abc")
        );
        assert_eq!(origin_of_identifier("file__0").as_deref(), Some("file://"));
        assert_eq!(origin_of_identifier("leveldb"), None);
        assert_eq!(origin_of_storage_key(b"https://a.com/^31"), "https://a.com");
    }
}
