//! An IndexedDB directory read through a [`Db`]: what a reader needs beyond one record's
//! bytes. The names (the metadata records, gathered into a [`Catalog`]), the `.blob` folder
//! beside the directory, and a record's serialized value made ready to decode (unwrapped
//! from snappy, or read from the blob file it was moved to).
//!
//! ```text
//! <origin>.indexeddb.leveldb/   the directory: metadata (database 0, then each database's
//!                               store 0) -> names; records -> version | envelope
//! <origin>.indexeddb.blob/D/NN/N  a value moved out of LevelDB (and Blobs, Files)
//! record value: version varint | Blink envelope (plain, snappy-wrapped, or "in blob N"
//!               of the record's blob entry) -> V8 serialization -> v8value::decode
//! ```

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use leveldb_table::db::reader::{DbRecord, RecordStatus};
use leveldb_table::raw::internal_key::ValueType;
use leveldb_table::{Db, Lookup, ReadOptions};

use super::catalog::Catalog;
use super::coding::KeyPrefix;
use super::comparator::{is_well_formed, key_prefix};
use super::external::{
    blob_dir_name, blob_entry_key, blob_file_path, decode_external_objects, ExternalObject,
};
use super::key::decode_key;
use super::value::decode_record_value;
use super::wrapping::{unwrap_value, Unwrapped};
use crate::error::{Error, Result, ValuePlace};
use crate::v8value::{decode, Decoded, ValueError};
use leveldb_table::Cursor;

/// The names of an IndexedDB directory's databases, object stores and indexes: the global
/// metadata (database 0), then each database's own (store 0), for every database that has
/// metadata (named by a global record or not).
///
/// Under salvage, damage skipped (while opening or by this read) may have taken metadata
/// with it: the catalog says so in [`Catalog::partial`].
///
/// # Errors
/// The database's view cannot be read ([`Error::Db`]: a damaged table or log, naming the
/// file and offset); never an empty or partial catalog in silence.
pub fn idb_catalog(db: &Db) -> Result<Catalog> {
    let mut c = Catalog::default();
    let mut view = db.iter(&ReadOptions::default());
    view.seek_to_first();
    while view.valid() && key_prefix(view.key()).is_some_and(|p| p.database == 0) {
        c.observe(view.key(), view.value());
        view.next();
    }
    if let Err(e) = view.status() {
        return Err(Error::Db(e));
    }
    // Every database's own metadata, named by the global records or not (a database whose
    // name record is deleted may keep its metadata and records until Chromium cleans them
    // up): from each database's first key, the next database is one seek away.
    let mut id = 1i64;
    loop {
        view.seek(&prefix_key(id, 0, 0, Some(0)));
        // Keys outside the order sort after every database's: the end.
        let Some(p) = view
            .valid()
            .then(|| key_prefix(view.key()).filter(|_| is_well_formed(view.key())))
            .flatten()
            .filter(|p| p.database >= id)
        else {
            break;
        };
        id = p.database;
        while view.valid()
            && key_prefix(view.key()).is_some_and(|p| p.database == id && p.store == 0)
        {
            c.observe(view.key(), view.value());
            view.next();
        }
        if let Err(e) = view.status() {
            return Err(Error::Db(e));
        }
        let Some(next) = id.checked_add(1) else {
            break;
        };
        id = next;
    }
    if let Err(e) = view.status() {
        return Err(Error::Db(e));
    }
    c.partial = partial(db);
    Ok(c)
}

/// Why a catalog read from `db` may miss names: damage skipped under salvage.
fn partial(db: &Db) -> Option<String> {
    let damage = db.damage();
    let skipped = db
        .notes()
        .iter()
        .filter(|n| n.ends_with("(skipped)"))
        .count();
    (!damage.is_empty() || skipped > 0).then(|| {
        let first = damage
            .first()
            .map(|d| d.to_string())
            .or_else(|| {
                db.notes()
                    .iter()
                    .find(|n| n.ends_with("(skipped)"))
                    .cloned()
            })
            .unwrap_or_default();
        format!(
            "the directory was read past damage ({} skipped, the first: {first}); names held \
             there are missing",
            damage.len().max(skipped)
        )
    })
}

/// [`idb_catalog`] with the names only deleted or superseded metadata gives
/// ([`Catalog::add_deleted`]), taken from `records` (every record of every file, as
/// `leveldb_table::db::records` lists them): the names of deleted object stores and
/// databases whose records are still in the files.
///
/// # Errors
/// As [`idb_catalog`].
pub fn idb_catalog_with_deleted(db: &Db, records: &[DbRecord]) -> Result<Catalog> {
    let mut c = idb_catalog(db)?;
    c.add_deleted(
        records
            .iter()
            .filter(|r| r.kind == ValueType::Value && r.status != RecordStatus::Live)
            .filter(|r| key_prefix(&r.key).is_some_and(|p| p.database == 0 || p.store == 0))
            .map(|r| (r.key.as_slice(), r.value.as_slice(), r.sequence)),
    );
    Ok(c)
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
/// The key is no record's ([`Error::NotARecordKey`]), the record has no blob entry
/// ([`Error::NoBlobEntry`]), the entry cannot be read ([`Error::BlobEntry`]) or decoded
/// ([`Error::Value`]).
pub fn idb_blob_list(db: &Db, record_key: &[u8]) -> Result<Vec<ExternalObject>> {
    let k = blob_entry_key(record_key).ok_or(Error::NotARecordKey)?;
    match db.get(&k, &ReadOptions::default()) {
        Ok(Lookup::Found { value, .. }) => {
            decode_external_objects(&value).map_err(|e| Error::value(e, ValuePlace::BlobEntry))
        }
        Ok(_) => Err(Error::NoBlobEntry),
        Err(source) => Err(Error::BlobEntry { source }),
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
    /// What stops it from decoding and where ([`Error::Value`]: an offset in the row's
    /// value, in the decompressed value, or in the blob file named).
    pub fn decode(&self) -> Result<Decoded<'_>> {
        decode(&self.bytes).map_err(|e| self.place(e))
    }

    /// `e` (an offset in [`bytes`](Self::bytes)) placed where the bytes came from.
    pub fn place(&self, mut e: ValueError) -> Error {
        let place = match &self.source {
            ValueSource::Row(shift) => {
                e.offset += shift;
                ValuePlace::Row
            }
            ValueSource::Snappy => ValuePlace::Snappy,
            ValueSource::BlobFile(p) => ValuePlace::BlobFile(p.clone()),
        };
        Error::value(e, place)
    }
}

/// The serialized value of the IndexedDB record (`key`, `value`), unwrapped: from the row,
/// from its snappy compression, or from the blob file in `blob_dir` it was moved to (Chrome
/// moves values over 64 KiB out of LevelDB; `db` is where the record's blob entry is looked
/// up).
///
/// # Errors
/// What stops the value from being read, and where: no version varint, a wrapping that
/// does not decode, a blob the record's blob entry does not list, a blob file that is
/// missing, unreadable or of another size than the record says.
pub fn idb_value<'a>(
    db: Option<&Db>,
    blob_dir: Option<&Path>,
    key: &[u8],
    value: &'a [u8],
) -> Result<IdbValue<'a>> {
    let rv = decode_record_value(value).ok_or(Error::NoVersion)?;
    let shift = value.len() - rv.payload.len();
    let placed = |mut e: ValueError| {
        e.offset += shift;
        Error::value(e, ValuePlace::Row)
    };
    let (bytes, source, blobs) = match unwrap_value(rv.payload).map_err(placed)? {
        Unwrapped::Value(Cow::Borrowed(b)) => (Cow::Borrowed(b), ValueSource::Row(shift), None),
        Unwrapped::Value(b) => (Cow::Owned(b.into_owned()), ValueSource::Snappy, None),
        Unwrapped::InBlob { size, index } => {
            let list = idb_blob_list(db.ok_or(Error::NoDatabase)?, key)?;
            let e = usize::try_from(index)
                .ok()
                .and_then(|i| list.get(i))
                .ok_or(Error::BlobNotListed { index })?;
            let database = decode_key(key).map_or(0, |d| d.prefix.database);
            let file = blob_file_path(database, e.blob_number);
            let dir = blob_dir.ok_or(Error::NoBlobFolder { file: file.clone() })?;
            let path = dir.join(&file);
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                Err(source) => return Err(Error::BlobFile { path, size, source }),
            };
            if bytes.len() as u64 != size {
                return Err(Error::BlobSize {
                    path,
                    found: bytes.len() as u64,
                    expected: size,
                });
            }
            let inner = match unwrap_value(&bytes) {
                Ok(Unwrapped::Value(b)) => b.into_owned(),
                Ok(Unwrapped::InBlob { .. }) => return Err(Error::BlobInBlob { path }),
                Err(e) => return Err(Error::value(e, ValuePlace::BlobFileWrapping(path))),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idb::KeyBody;

    fn values_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../testdata/idb/values/IndexedDB/http_127.0.0.1_55229.indexeddb.leveldb")
    }

    /// The fixture Chromium wrote: its two databases and their stores by name, and every
    /// object-store record's value read (from the row, snappy, or a blob file) and decoded.
    #[test]
    fn chromium_fixture_names_and_values() {
        let dir = values_dir();
        let db = Db::open(&dir, crate::db_options()).unwrap();
        let c = idb_catalog(&db).unwrap();
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
        let mut view = db.iter(&ReadOptions::default());
        view.seek_to_first();
        let (mut records, mut from_blob, mut snappy) = (0, 0, 0);
        while view.valid() {
            if let Some(KeyBody::Record(_)) = decode_key(view.key()).map(|d| d.body) {
                let v = idb_value(Some(&db), Some(&blob_dir), view.key(), view.value()).unwrap();
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
        let mut view = db.iter(&ReadOptions::default());
        view.seek_to_first();
        let mut said = 0;
        while view.valid() {
            let record = matches!(
                decode_key(view.key()).map(|d| d.body),
                Some(KeyBody::Record(_))
            );
            if let (true, Err(e)) = (record, idb_value(Some(&db), None, view.key(), view.value())) {
                assert!(matches!(e, Error::NoBlobFolder { .. }), "{e}");
                assert!(
                    e.to_string().contains("not known for this directory"),
                    "{e}"
                );
                said += 1;
            }
            view.next();
        }
        assert_eq!(said, from_blob);
    }
}
