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

use super::image::SQLITE_MAGIC;

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
