//! Chrome's storage read through a [`Db`]: what a reader needs beyond one record's bytes.
//! IndexedDB's names (the metadata records, gathered into a [`Catalog`]), the `.blob`
//! folder beside the directory, and a record's serialized value made ready to decode
//! (unwrapped from snappy, or read from the blob file it was moved to); sessionStorage's
//! maps (which namespaces and origin each map of items belongs to).
//!
//! ```text
//! <origin>.indexeddb.leveldb/   the directory: metadata (database 0, then each database's
//!                               store 0) -> names; records -> version | envelope
//! <origin>.indexeddb.blob/D/NN/N  a value moved out of LevelDB (and Blobs, Files)
//! record value: version varint | Blink envelope (plain, snappy-wrapped, or "in blob N"
//!               of the record's blob entry) -> V8 serialization -> v8value::decode
//! ```

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::db::reader::Db;
use crate::dom_storage::{self, SessionStorageEntry, StorageKind};
use crate::idb::{
    blob_dir_name, blob_entry_key, blob_file_path, decode_external_objects, decode_key,
    decode_record_value, key_prefix, unwrap_value, Catalog, ExternalObject, KeyPrefix, Unwrapped,
};
use crate::v8value::{decode, Decoded, ValueError};

/// The names of an IndexedDB directory's databases, object stores and indexes: the global
/// metadata (database 0), then each database's own (store 0).
pub fn idb_catalog(db: &Db) -> Catalog {
    let mut c = Catalog::default();
    let Ok(mut view) = db.view() else {
        return c;
    };
    view.seek_to_first();
    while view.valid() && key_prefix(view.key()).is_some_and(|p| p.database == 0) {
        c.observe(view.key(), view.value());
        view.next();
    }
    let ids: Vec<i64> = c.databases.keys().copied().collect();
    for id in ids {
        view.seek(&prefix_key(id, 0, 0, Some(0)));
        while view.valid()
            && key_prefix(view.key()).is_some_and(|p| p.database == id && p.store == 0)
        {
            c.observe(view.key(), view.value());
            view.next();
        }
    }
    c
}

/// A key made of a prefix and an optional type byte (a bare database prefix is not a key
/// Chromium writes, and its order puts such keys last: seeks start at well-formed keys).
pub fn prefix_key(database: i64, store: i64, index: i64, type_byte: Option<u8>) -> Vec<u8> {
    let mut k = Vec::new();
    KeyPrefix {
        database,
        store,
        index,
    }
    .encode_into(&mut k);
    k.extend(type_byte);
    k
}

/// `<origin>.indexeddb.blob` beside a directory named `<origin>.indexeddb.leveldb`.
pub fn idb_blob_dir(dir: &Path) -> Option<PathBuf> {
    let name = dir.file_name()?.to_str()?;
    Some(dir.with_file_name(blob_dir_name(name)?))
}

/// The blob list of the record with key `record_key` (its blob entry, looked up in `db`).
///
/// # Errors
/// What is missing or undecodable, said in words.
pub fn idb_blob_list(db: &Db, record_key: &[u8]) -> Result<Vec<ExternalObject>, String> {
    let k = blob_entry_key(record_key).ok_or("not a record key")?;
    match db.get(&k) {
        Ok(Some((v, _))) => decode_external_objects(&v).map_err(|e| e.to_string()),
        Ok(None) => Err("the record has no blob entry".into()),
        Err(e) => Err(format!("its blob entry cannot be read: {e}")),
    }
}

/// Where a record's serialized value was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValueSource {
    /// In the row's value, from this offset on.
    Row(usize),
    /// Snappy-compressed in the row's value (offsets count in the decompressed bytes).
    Snappy,
    /// In this blob file.
    BlobFile(PathBuf),
}

/// A record's V8-serialized value, ready to [`decode`](IdbValue::decode).
#[derive(Debug, Clone)]
pub struct IdbValue<'a> {
    /// The record's version.
    pub version: i64,
    /// The serialized value (Blink's envelope first).
    pub bytes: Cow<'a, [u8]>,
    /// Where it was found.
    pub source: ValueSource,
    /// The record's blob list, when it was read to find the value.
    pub blobs: Option<Vec<ExternalObject>>,
}

impl IdbValue<'_> {
    /// The decoded value.
    ///
    /// # Errors
    /// What stops it from decoding and where (an offset in the row's value, in the
    /// decompressed value, or in the blob file named).
    pub fn decode(&self) -> Result<Decoded<'_>, String> {
        decode(&self.bytes).map_err(|e| self.place(e))
    }

    fn place(&self, mut e: ValueError) -> String {
        match &self.source {
            ValueSource::Row(shift) => {
                e.offset += shift;
                e.to_string()
            }
            ValueSource::Snappy => format!("{e} of the snappy-decompressed value"),
            ValueSource::BlobFile(p) => format!("{e} of the blob file {}", p.display()),
        }
    }
}

/// The serialized value of the IndexedDB record (`key`, `value`) of `db`, unwrapped: from
/// the row, from its snappy compression, or from the blob file in `blob_dir` it was moved
/// to (Chrome moves values over 64 KiB out of LevelDB).
///
/// # Errors
/// What stops the value from being read, and where, in words.
pub fn idb_value<'a>(
    db: &Db,
    blob_dir: Option<&Path>,
    key: &[u8],
    value: &'a [u8],
) -> Result<IdbValue<'a>, String> {
    let rv = decode_record_value(value).ok_or("the value has no version varint")?;
    let shift = value.len() - rv.payload.len();
    let database = decode_key(key).map_or(0, |d| d.prefix.database);
    let placed = |mut e: ValueError| {
        e.offset += shift;
        e.to_string()
    };
    let (bytes, source, blobs) = match unwrap_value(rv.payload).map_err(placed)? {
        Unwrapped::Value(Cow::Borrowed(b)) => (Cow::Borrowed(b), ValueSource::Row(shift), None),
        Unwrapped::Value(b) => (Cow::Owned(b.into_owned()), ValueSource::Snappy, None),
        Unwrapped::InBlob { size, index } => {
            let list = idb_blob_list(db, key)?;
            let e = list.get(index as usize).ok_or_else(|| {
                format!("the value was moved to blob {index} of the record, which its blob entry does not list")
            })?;
            let rel = blob_file_path(database, e.blob_number);
            let dir = blob_dir.ok_or_else(|| {
                format!("the value was moved to blob file {rel} of the .blob folder, which is not known for this directory")
            })?;
            let path = dir.join(&rel);
            let file = std::fs::read(&path).map_err(|err| {
                format!("the value was moved to blob file {} ({size} bytes), which cannot be read: {err}", path.display())
            })?;
            if file.len() as u64 != size {
                return Err(format!(
                    "the value was moved to blob file {}, which has {} bytes where the record says {size}",
                    path.display(),
                    file.len()
                ));
            }
            let inner = match unwrap_value(&file) {
                Ok(Unwrapped::Value(b)) => b.into_owned(),
                Ok(Unwrapped::InBlob { .. }) => {
                    return Err(format!(
                        "blob file {} holds another blob reference",
                        path.display()
                    ))
                }
                Err(e) => return Err(format!("{e} in blob file {}", path.display())),
            };
            (Cow::Owned(inner), ValueSource::BlobFile(path), Some(list))
        }
    };
    Ok(IdbValue {
        version: rv.version,
        bytes,
        source,
        blobs,
    })
}

/// localStorage or sessionStorage, when the first keys of `db` are all keys one of them
/// writes ([`dom_storage::detect`]) and its schema version key is there (Chrome writes it
/// first of all: a database whose first keys merely look alike is neither).
pub fn detect_storage(db: &Db) -> Option<StorageKind> {
    let mut view = db.view().ok()?;
    view.seek_to_first();
    let mut keys = Vec::new();
    while view.valid() && keys.len() < 64 {
        keys.push(view.key().to_vec());
        view.next();
    }
    let has = |k: &[u8]| matches!(db.get(k), Ok(Some(_)));
    match dom_storage::detect(keys.iter().map(Vec::as_slice))? {
        StorageKind::Local if has(b"VERSION") => Some(StorageKind::Local),
        StorageKind::Session if has(b"version") => Some(StorageKind::Session),
        _ => None,
    }
}

/// The namespaces (tabs' sessions) and origin of each map of a sessionStorage database.
pub fn session_maps(db: &Db) -> BTreeMap<i64, (Vec<String>, String)> {
    let mut maps: BTreeMap<i64, (Vec<String>, String)> = BTreeMap::new();
    let Ok(mut view) = db.view() else {
        return maps;
    };
    view.seek(b"namespace-");
    while view.valid() && view.key().starts_with(b"namespace-") {
        if let Some(SessionStorageEntry::Namespace {
            namespace,
            origin,
            map: Some(map),
        }) = dom_storage::decode_session_storage(view.key(), view.value())
        {
            let e = maps.entry(map).or_default();
            e.0.push(String::from_utf8_lossy(namespace).into_owned());
            e.1 = String::from_utf8_lossy(origin).into_owned();
        }
        view.next();
    }
    maps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::DbOptions;
    use crate::idb::KeyBody;

    fn values_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/idb/values/IndexedDB/http_127.0.0.1_55229.indexeddb.leveldb")
    }

    /// The fixture Chromium wrote: its two databases and their stores by name, and every
    /// object-store record's value read (from the row, snappy, or a blob file) and decoded.
    #[test]
    fn chromium_fixture_names_and_values() {
        let dir = values_dir();
        let db = Db::open(&dir, DbOptions::default()).unwrap();
        let c = idb_catalog(&db);
        let mut names: Vec<(String, Vec<String>)> = c
            .databases
            .values()
            .map(|d| {
                let stores = d.stores.values().filter_map(|s| s.name.clone()).collect();
                (d.name.clone().unwrap_or_default(), stores)
            })
            .collect();
        names.sort();
        assert_eq!(names[0].0, "corpusdb");
        assert!(names[0].1.contains(&"records".to_string()));
        assert_eq!(names[1].0, "second");
        let blob_dir = idb_blob_dir(&dir).unwrap();
        assert!(blob_dir.is_dir());
        let mut view = db.view().unwrap();
        view.seek_to_first();
        let (mut records, mut from_blob, mut snappy) = (0, 0, 0);
        while view.valid() {
            if let Some(KeyBody::Record(_)) = decode_key(view.key()).map(|d| d.body) {
                let v = idb_value(&db, Some(&blob_dir), view.key(), view.value()).unwrap();
                v.decode().unwrap();
                records += 1;
                from_blob += usize::from(matches!(v.source, ValueSource::BlobFile(_)));
                snappy += usize::from(v.source == ValueSource::Snappy);
            }
            view.next();
        }
        assert_eq!(records, 31);
        assert!(from_blob >= 2 && snappy >= 1, "{from_blob} {snappy}");
        // Without the blob folder, a value moved there is an error that says so.
        let mut view = db.view().unwrap();
        view.seek_to_first();
        let mut said = 0;
        while view.valid() {
            let record = matches!(
                decode_key(view.key()).map(|d| d.body),
                Some(KeyBody::Record(_))
            );
            if let (true, Err(e)) = (record, idb_value(&db, None, view.key(), view.value())) {
                assert!(e.contains("not known for this directory"), "{e}");
                said += 1;
            }
            view.next();
        }
        assert_eq!(said, from_blob);
    }

    #[test]
    fn session_storage_maps_and_detection() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/idb/values");
        let s = Db::open(root.join("session_storage"), DbOptions::default()).unwrap();
        assert_eq!(detect_storage(&s), Some(StorageKind::Session));
        let maps = session_maps(&s);
        assert!(!maps.is_empty());
        assert!(maps
            .values()
            .all(|(ns, origin)| !ns.is_empty() && origin.contains("127.0.0.1")));
        let l = Db::open(root.join("local_storage"), DbOptions::default()).unwrap();
        assert_eq!(detect_storage(&l), Some(StorageKind::Local));
        let idb = Db::open(values_dir(), DbOptions::default()).unwrap();
        assert_eq!(detect_storage(&idb), None);
    }
}
