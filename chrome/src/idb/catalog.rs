//! Names: databases, object stores and indexes, read from IndexedDB's metadata records.
//!
//! ```text
//! key (prefix | body)                                  value
//! (0,0,0) 201 | origin, name (varint n + UTF-16BE)     database id: EncodeInt (1-8 bytes
//!                                                      little-endian, as few as needed)
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
//! `ObjectStoreMetaDataKey`, `IndexMetaDataKey`, `EncodeIDBKeyPath`; the values as
//! `backing_store.cc` writes them: `PutInt` for the database id, `PutVarInt` for the
//! version.) Feed every live record to [`Catalog::observe`]; metadata sorts before the data
//! it names, so a scan in order can name each record as it comes. Names that only deleted or
//! superseded metadata still holds (a deleted object store or database, its records still in
//! the files) are added by [`Catalog::add_deleted`], marked `deleted`.

use std::collections::BTreeMap;

use super::coding::{decode_int, read_byte, read_string, read_varint};
use super::key::{decode_key, KeyBody, MetaField};
use crate::error::{Error, Result};

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
    /// Named only by deleted or superseded metadata ([`Catalog::add_deleted`]).
    pub deleted: bool,
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
    /// Named only by deleted or superseded metadata: the store (or its database) was
    /// deleted ([`Catalog::add_deleted`]).
    pub deleted: bool,
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
    /// Named only by deleted or superseded metadata: the database was deleted (its name
    /// record is gone) ([`Catalog::add_deleted`]).
    pub deleted: bool,
}

/// What a selection by name keeps: (database id, object store id), the store `None` for all
/// of the database's stores ([`Catalog::select`]).
pub type Selection = Vec<(i64, Option<i64>)>;

/// Every database, store and index named by the metadata seen so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    /// Databases by id.
    pub databases: BTreeMap<i64, DatabaseInfo>,
    /// Why names may be missing: the metadata was read past damage (salvage), so a name in
    /// a damaged block is not here. `None` when every metadata record was read.
    pub partial: Option<String>,
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
            // Database ids start at 1 (0 is the global metadata's prefix).
            let Some(id) = decode_int(value).filter(|&id| id > 0) else {
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

    /// Adds the names only deleted or superseded metadata gives: `metadata` is every
    /// version of the metadata records that is not live (deleted, shadowed, in an obsolete
    /// file), as (key, value, sequence). The newest version of each wins; a database, store
    /// or index the live metadata does not name gets that name, marked `deleted` (Chromium
    /// never reuses ids: a database or store id names one database or store for good).
    pub fn add_deleted<'a>(
        &mut self,
        metadata: impl IntoIterator<Item = (&'a [u8], &'a [u8], u64)>,
    ) {
        let mut old: Vec<(&[u8], &[u8], u64)> = metadata.into_iter().collect();
        old.sort_by_key(|r| r.2);
        let mut then = Catalog::default();
        for (k, v, _) in old {
            then.observe(k, v);
        }
        for (id, was) in then.databases {
            let now = self.databases.entry(id).or_insert_with(|| DatabaseInfo {
                deleted: true,
                ..DatabaseInfo::default()
            });
            if now.name.is_none() && was.name.is_some() {
                now.name = was.name;
                now.origin = now.origin.take().or(was.origin);
                now.deleted = true;
            }
            now.version = now.version.or(was.version);
            let db_deleted = now.deleted;
            for (sid, was_store) in was.stores {
                let store = now.stores.entry(sid).or_insert_with(|| StoreInfo {
                    deleted: true,
                    ..StoreInfo::default()
                });
                store.deleted |= db_deleted;
                if store.name.is_none() && was_store.name.is_some() {
                    store.name = was_store.name;
                    store.deleted = true;
                }
                store.key_path = store.key_path.take().or(was_store.key_path);
                store.auto_increment = store.auto_increment.or(was_store.auto_increment);
                let store_deleted = store.deleted;
                for (iid, was_index) in was_store.indexes {
                    let ix = store.indexes.entry(iid).or_insert_with(|| IndexInfo {
                        deleted: true,
                        ..IndexInfo::default()
                    });
                    ix.deleted |= store_deleted;
                    if ix.name.is_none() && was_index.name.is_some() {
                        ix.name = was_index.name;
                        ix.deleted = true;
                    }
                    ix.key_path = ix.key_path.take().or(was_index.key_path);
                    ix.unique = ix.unique.or(was_index.unique);
                    ix.multi_entry = ix.multi_entry.or(was_index.multi_entry);
                }
            }
        }
    }

    /// The database with this id.
    pub fn database(&self, id: i64) -> Option<&DatabaseInfo> {
        self.databases.get(&id)
    }

    /// The object store `store` of database `db`.
    pub fn store(&self, db: i64, store: i64) -> Option<&StoreInfo> {
        self.databases.get(&db)?.stores.get(&store)
    }

    /// The (database, store) pairs a selection by name keeps, store `None` meaning all of a
    /// database's stores: the databases named `database` (every database when `None`), and of
    /// them the stores named `store` (all when `None`). `Ok(None)` when neither is given.
    ///
    /// # Errors
    /// A name that matches nothing ([`Error::NoSuchName`], listing the names there are).
    pub fn select(&self, database: Option<&str>, store: Option<&str>) -> Result<Option<Selection>> {
        if database.is_none() && store.is_none() {
            return Ok(None);
        }
        let mut kept = Vec::new();
        for (id, d) in &self.databases {
            if database.is_some_and(|n| d.name.as_deref() != Some(n)) {
                continue;
            }
            match store {
                None => kept.push((*id, None)),
                Some(s) => kept.extend(
                    d.stores
                        .iter()
                        .filter(|(_, st)| st.name.as_deref() == Some(s))
                        .map(|(sid, _)| (*id, Some(*sid))),
                ),
            }
        }
        if !kept.is_empty() {
            return Ok(Some(kept));
        }
        let known: Vec<String> = self
            .databases
            .values()
            .map(|d| {
                let stores: Vec<&str> = d
                    .stores
                    .values()
                    .filter_map(|s| s.name.as_deref())
                    .collect();
                format!(
                    "{} ({})",
                    d.name.as_deref().unwrap_or("?"),
                    stores.join(", ")
                )
            })
            .collect();
        let (what, name) = match store {
            Some(s) => ("object store", s),
            None => ("database", database.unwrap_or_default()),
        };
        Err(Error::NoSuchName {
            what,
            name: name.to_string(),
            known: known.join("; "),
        })
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
