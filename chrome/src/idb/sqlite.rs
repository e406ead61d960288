//! Telling a SQLite database by its first page, and Chromium's SQLite IndexedDB among them
//! (newer Chrome keeps some origins' IndexedDB in SQLite, not LevelDB).
//!
//! ```text
//! SQLite header (first 100 bytes of the file):
//!   0  "SQLite format 3\0"     16 page size, u16 BE (1 = 65536)
//!   28 size in pages, u32 BE   56 text encoding, u32 BE (1 UTF-8, 2 UTF-16LE, 3 UTF-16BE)
//!   60 user version, u32 BE
//! page 1 holds the schema (sqlite_schema), whose CREATE statements are plain text; a
//! Chromium IndexedDB database has the tables `object_stores`, `records` and
//! `blob_references` (Chromium's `content/browser/indexed_db/instance/sqlite/`).
//! ```

use std::fmt;
use std::io::Read;
use std::path::Path;

/// The SQLite magic string.
pub const SQLITE_MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What the first page of a SQLite file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteInfo {
    /// Page size in bytes.
    pub page_size: u32,
    /// Size in pages, as the header states it.
    pub pages: u32,
    /// The user version.
    pub user_version: u32,
    /// Tables whose `CREATE TABLE` statement is on the first page, in order.
    pub tables: Vec<String>,
    /// Whether the tables are those of Chromium's SQLite IndexedDB.
    pub chromium_indexeddb: bool,
}

/// Reads a SQLite header and the schema text of the first page; `None` if `first_page`
/// does not start with SQLite's magic. Pass the file's first page (or as much as there is).
pub fn identify_sqlite(first_page: &[u8]) -> Option<SqliteInfo> {
    if first_page.len() < 100 || &first_page[..16] != SQLITE_MAGIC {
        return None;
    }
    let be32 = |at: usize| {
        u32::from_be_bytes([
            first_page[at],
            first_page[at + 1],
            first_page[at + 2],
            first_page[at + 3],
        ])
    };
    let page_size = match u16::from_be_bytes([first_page[16], first_page[17]]) {
        1 => 65536,
        n => u32::from(n),
    };
    let mut tables = Vec::new();
    let marker = b"CREATE TABLE ";
    let mut rest = first_page;
    while let Some(at) = find(rest, marker) {
        rest = &rest[at + marker.len()..];
        let name: Vec<u8> = rest
            .iter()
            .copied()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .collect();
        if !name.is_empty() {
            tables.push(String::from_utf8_lossy(&name).into_owned());
        }
    }
    let has = |t: &str| tables.iter().any(|x| x == t);
    let chromium_indexeddb = has("object_stores") && has("records") && has("blob_references");
    Some(SqliteInfo {
        page_size,
        pages: be32(28),
        user_version: be32(60),
        tables,
        chromium_indexeddb,
    })
}

/// A path that holds SQLite where LevelDB was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlitePath {
    /// A SQLite file.
    File(SqliteInfo),
    /// A folder holding SQLite files and no LevelDB `CURRENT`.
    Folder {
        /// How many of its files are SQLite.
        files: usize,
        /// The first of them by name.
        first: String,
        /// What the first says.
        info: SqliteInfo,
        /// Whether any of them is Chromium's SQLite IndexedDB.
        chromium_indexeddb: bool,
    },
}

/// What `path` is when it is SQLite, not LevelDB: a SQLite file, or a folder holding SQLite
/// files (and no LevelDB `CURRENT`). `None` otherwise (or when it cannot be read).
pub fn sqlite_at(path: &Path) -> Option<SqlitePath> {
    if path.is_file() {
        return sqlite_file(path).map(SqlitePath::File);
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
    let chromium_indexeddb = found.iter().any(|(_, i)| i.chromium_indexeddb);
    let files = found.len();
    let (first, info) = found.into_iter().next()?;
    Some(SqlitePath::Folder {
        files,
        first,
        info,
        chromium_indexeddb,
    })
}

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

impl fmt::Display for SqliteInfo {
    /// `Chromium's SQLite IndexedDB; 4096-byte pages, 16 pages, tables a, b`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.chromium_indexeddb {
            f.write_str("Chromium's SQLite IndexedDB; ")?;
        }
        write!(
            f,
            "{}-byte pages, {} pages, tables ",
            self.page_size, self.pages
        )?;
        match self.tables.is_empty() {
            true => f.write_str("not on the first page"),
            false => f.write_str(&self.tables.join(", ")),
        }
    }
}

impl fmt::Display for SqlitePath {
    /// What the path is, in one line (without the path).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SqlitePath::File(info) => write!(f, "a SQLite 3 database, not LevelDB ({info})"),
            SqlitePath::Folder {
                files,
                first,
                info,
                chromium_indexeddb,
            } => write!(
                f,
                "a folder of {}, not a LevelDB database: {files} SQLite file(s), {first} \
                 ({info}){}",
                match chromium_indexeddb {
                    true => "Chromium's SQLite IndexedDB",
                    false => "SQLite databases",
                },
                if *files > 1 { ", ..." } else { "" }
            ),
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_schemas() {
        let mut page = vec![0u8; 4096];
        page[..16].copy_from_slice(SQLITE_MAGIC);
        page[16..18].copy_from_slice(&4096u16.to_be_bytes());
        page[28..32].copy_from_slice(&7u32.to_be_bytes());
        let schema = b"CREATE TABLE object_stores (id INTEGER)..CREATE TABLE records (row_id)\
                       CREATE TABLE blob_references (x)";
        page[200..200 + schema.len()].copy_from_slice(schema);
        let info = identify_sqlite(&page).unwrap();
        assert_eq!((info.page_size, info.pages), (4096, 7));
        assert_eq!(info.tables, ["object_stores", "records", "blob_references"]);
        assert!(info.chromium_indexeddb);
        page[16..18].copy_from_slice(&1u16.to_be_bytes());
        page[200..220].fill(0);
        let info = identify_sqlite(&page).unwrap();
        assert_eq!(info.page_size, 65536);
        assert!(!info.chromium_indexeddb);
        assert_eq!(identify_sqlite(b"not sqlite"), None);
        assert_eq!(identify_sqlite(&page[..50]), None);
    }
}
