//! Names: databases, object stores and indexes, read from IndexedDB's metadata records.
//!
//! ```text
//! key (prefix | body)                                  value
//! (0,0,0) 201 | origin, name (varint n + UTF-16BE)     varint database id
//! (d,0,0) 0 origin / 1 name                            UTF-16BE (no length)
//! (d,0,0) 4 version                                    varint
//! (d,0,0) 50 | varint store | type: 0 name             UTF-16BE
//!                                   1 key path         key path (below)
//!                                   2 autoIncrement    bool byte
//! (d,0,0) 100 | varint store | varint index | type: 0 name, 1 unique, 2 key path,
//!                                                   3 multiEntry
//! key path = 00 00 type [string | varint n, n strings]   type 0 none, 1 string, 2 array;
//!            strings as varint n + UTF-16BE; anything else is an old untyped string
//! ```
//! (Chromium's `indexed_db_leveldb_coding.cc`: `DatabaseNameKey`, `DatabaseMetaDataKey`,
//! `ObjectStoreMetaDataKey`, `IndexMetaDataKey`, `EncodeIDBKeyPath`.) Feed every record to
//! [`Catalog::observe`]; metadata sorts before the data it names, so a scan in order can
//! name each record as it comes.

use std::collections::BTreeMap;

use super::coding::{read_byte, read_string, read_varint};
use super::key::{decode_key, KeyBody, MetaField};

/// An object store's or index's key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPath {
    /// No key path (out-of-line keys).
    None,
    /// One path (`"id"`, `"a.b"`).
    String(String),
    /// Several paths (a compound key).
    Array(Vec<String>),
}

/// An index of an object store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexInfo {
    /// Its name.
    pub name: Option<String>,
    /// Its key path.
    pub key_path: Option<KeyPath>,
    /// `unique`.
    pub unique: Option<bool>,
    /// `multiEntry`.
    pub multi_entry: Option<bool>,
}

/// An object store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreInfo {
    /// Its name.
    pub name: Option<String>,
    /// Its key path.
    pub key_path: Option<KeyPath>,
    /// `autoIncrement`.
    pub auto_increment: Option<bool>,
    /// Its indexes by id.
    pub indexes: BTreeMap<i64, IndexInfo>,
}

/// A database.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatabaseInfo {
    /// The origin (Chromium's identifier, `https_example.com_0@1`).
    pub origin: Option<String>,
    /// The database's name.
    pub name: Option<String>,
    /// Its version (`IDBDatabase.version`).
    pub version: Option<i64>,
    /// Its object stores by id.
    pub stores: BTreeMap<i64, StoreInfo>,
}

/// Every database, store and index named by the metadata seen so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    /// Databases by id.
    pub databases: BTreeMap<i64, DatabaseInfo>,
}

impl Catalog {
    /// Takes in one record; returns whether it was metadata this catalog reads.
    pub fn observe(&mut self, key: &[u8], value: &[u8]) -> bool {
        let Some(d) = decode_key(key) else {
            return false;
        };
        let KeyBody::Meta { kind, fields, .. } = &d.body else {
            return false;
        };
        let db = d.prefix.database;
        let text = |i: usize| match fields.get(i) {
            Some(MetaField::Text(t)) => Some(t.clone()),
            _ => None,
        };
        let int = |i: usize| match fields.get(i) {
            Some(MetaField::Int(x)) => Some(*x),
            _ => None,
        };
        let byte = |i: usize| match fields.get(i) {
            Some(MetaField::Byte(x)) => Some(*x),
            _ => None,
        };
        if db == 0 {
            // Global: the database name record maps (origin, name) to the id.
            let (Some(origin), Some(name)) = (text(0), text(1)) else {
                return false;
            };
            let Some(id) = read_varint(&mut &value[..]) else {
                return false;
            };
            let info = self.databases.entry(id).or_default();
            info.origin = Some(origin);
            info.name = Some(name);
            return true;
        }
        let info = self.databases.entry(db).or_default();
        match (*kind, fields.len()) {
            (0, _) => info.origin = Some(utf16be(value)),
            (1, _) => info.name = Some(utf16be(value)),
            (4, _) => info.version = read_varint(&mut &value[..]),
            (50, 2) => {
                let (Some(store), Some(t)) = (int(0), byte(1)) else {
                    return false;
                };
                let s = info.stores.entry(store).or_default();
                match t {
                    0 => s.name = Some(utf16be(value)),
                    1 => s.key_path = decode_key_path(value),
                    2 => s.auto_increment = value.first().map(|&b| b != 0),
                    _ => return false,
                }
            }
            (100, 3) => {
                let (Some(store), Some(index), Some(t)) = (int(0), int(1), byte(2)) else {
                    return false;
                };
                let ix = info
                    .stores
                    .entry(store)
                    .or_default()
                    .indexes
                    .entry(index)
                    .or_default();
                match t {
                    0 => ix.name = Some(utf16be(value)),
                    1 => ix.unique = value.first().map(|&b| b != 0),
                    2 => ix.key_path = decode_key_path(value),
                    3 => ix.multi_entry = value.first().map(|&b| b != 0),
                    _ => return false,
                }
            }
            _ => return false,
        }
        true
    }

    /// The database with this id.
    pub fn database(&self, id: i64) -> Option<&DatabaseInfo> {
        self.databases.get(&id)
    }

    /// The object store `store` of database `db`.
    pub fn store(&self, db: i64, store: i64) -> Option<&StoreInfo> {
        self.databases.get(&db)?.stores.get(&store)
    }

    /// The ids of the databases with this name (one per origin at most).
    pub fn databases_named(&self, name: &str) -> Vec<i64> {
        self.databases
            .iter()
            .filter(|(_, d)| d.name.as_deref() == Some(name))
            .map(|(id, _)| *id)
            .collect()
    }
}

/// Decodes a key path (`EncodeIDBKeyPath`, or an old untyped string).
pub fn decode_key_path(value: &[u8]) -> Option<KeyPath> {
    if value.len() < 3 || value[0] != 0 || value[1] != 0 {
        return Some(KeyPath::String(utf16be(value)));
    }
    let mut s = &value[2..];
    match read_byte(&mut s)? {
        0 => Some(KeyPath::None),
        1 => Some(KeyPath::String(utf16be(read_string(&mut s)?))),
        2 => {
            let n = read_varint(&mut s)?;
            let mut paths = Vec::new();
            for _ in 0..n.max(0) {
                paths.push(utf16be(read_string(&mut s)?));
            }
            Some(KeyPath::Array(paths))
        }
        _ => None,
    }
}

fn utf16be(b: &[u8]) -> String {
    let units: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16_lossy(&units)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn be(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(|u| u.to_be_bytes()).collect()
    }

    #[test]
    fn key_paths() {
        assert_eq!(decode_key_path(&[0, 0, 0]), Some(KeyPath::None));
        let mut v = vec![0, 0, 1, 2];
        v.extend(be("id"));
        assert_eq!(decode_key_path(&v), Some(KeyPath::String("id".into())));
        let mut v = vec![0, 0, 2, 2, 1];
        v.extend(be("a"));
        v.push(3);
        v.extend(be("b.c"));
        assert_eq!(
            decode_key_path(&v),
            Some(KeyPath::Array(vec!["a".into(), "b.c".into()]))
        );
        assert_eq!(
            decode_key_path(&be("old")),
            Some(KeyPath::String("old".into()))
        );
        assert_eq!(decode_key_path(&[0, 0, 9]), None);
    }

    #[test]
    fn names_from_metadata_records() {
        let mut c = Catalog::default();
        // global / database name / "o" / "db" => 1
        let mut k = vec![0, 0, 0, 0, 201, 1];
        k.extend(be("o"));
        k.push(2);
        k.extend(be("db"));
        assert!(c.observe(&k, &[1]));
        // db 1 / object store metadata / 2 / name => "people"
        assert!(c.observe(&[0, 1, 0, 0, 50, 2, 0], &be("people")));
        // db 1 / index metadata / 2 / 30 / name => "by_email"; unique => 1
        assert!(c.observe(&[0, 1, 0, 0, 100, 2, 30, 0], &be("by_email")));
        assert!(c.observe(&[0, 1, 0, 0, 100, 2, 30, 1], &[1]));
        // A record is not metadata.
        assert!(!c.observe(&[0, 1, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0], b""));
        let d = c.database(1).unwrap();
        assert_eq!(
            (d.origin.as_deref(), d.name.as_deref()),
            (Some("o"), Some("db"))
        );
        let s = c.store(1, 2).unwrap();
        assert_eq!(s.name.as_deref(), Some("people"));
        assert_eq!(s.indexes[&30].name.as_deref(), Some("by_email"));
        assert_eq!(s.indexes[&30].unique, Some(true));
        assert_eq!(c.databases_named("db"), vec![1]);
    }
}
