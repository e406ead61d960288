//! A localStorage or sessionStorage directory read through a [`Db`]: which of the two it
//! holds, and sessionStorage's maps (which namespaces and origin each map of items belongs
//! to).

use std::collections::BTreeMap;

use leveldb_table::{Db, Lookup, ReadOptions};

use super::session::{decode_session_storage, SessionStorageEntry};
use super::{detect, StorageKind};
use crate::error::{Error, Result};
use leveldb_table::Cursor;

/// localStorage or sessionStorage, when the first keys of `db` are all keys one of them
/// writes ([`detect`]) and its schema version key is there (Chrome writes it first of all:
/// a database whose first keys merely look alike is neither).
///
/// # Errors
/// The keys or the version key cannot be read ([`Error::Db`]): never "neither" for a
/// directory that could not be read.
pub fn detect_storage(db: &Db) -> Result<Option<StorageKind>> {
    let mut view = db.iter(&ReadOptions::default());
    view.seek_to_first();
    let mut keys = Vec::new();
    while view.valid() && keys.len() < 64 {
        keys.push(view.key().to_vec());
        view.next();
    }
    if let Err(e) = view.status() {
        return Err(Error::Db(e));
    }
    let has = |k: &[u8]| -> Result<bool> {
        Ok(matches!(
            db.get(k, &ReadOptions::default())?,
            Lookup::Found { .. }
        ))
    };
    Ok(match detect(keys.iter().map(Vec::as_slice)) {
        Some(StorageKind::Local) if has(b"VERSION")? => Some(StorageKind::Local),
        Some(StorageKind::Session) if has(b"version")? => Some(StorageKind::Session),
        _ => None,
    })
}

/// The namespaces (tabs' sessions) and origin of each map of a sessionStorage database.
///
/// # Errors
/// The namespace records cannot be read ([`Error::Db`]): never fewer maps in silence.
pub fn session_maps(db: &Db) -> Result<BTreeMap<i64, (Vec<String>, String)>> {
    let mut maps: BTreeMap<i64, (Vec<String>, String)> = BTreeMap::new();
    let mut view = db.iter(&ReadOptions::default());
    view.seek(b"namespace-");
    while view.valid() && view.key().starts_with(b"namespace-") {
        if let Some(SessionStorageEntry::Namespace {
            namespace,
            origin,
            map: Some(map),
        }) = decode_session_storage(view.key(), view.value())
        {
            let e = maps.entry(map).or_default();
            e.0.push(String::from_utf8_lossy(namespace).into_owned());
            e.1 = String::from_utf8_lossy(origin).into_owned();
        }
        view.next();
    }
    if let Err(e) = view.status() {
        return Err(Error::Db(e));
    }
    Ok(maps)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn session_storage_maps_and_detection() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/idb/values");
        let opts = crate::db_options;
        let s = Db::open(root.join("session_storage"), opts()).unwrap();
        assert_eq!(detect_storage(&s).unwrap(), Some(StorageKind::Session));
        let maps = session_maps(&s).unwrap();
        assert!(!maps.is_empty());
        assert!(maps
            .values()
            .all(|(ns, origin)| !ns.is_empty() && origin.contains("127.0.0.1")));
        let l = Db::open(root.join("local_storage"), opts()).unwrap();
        assert_eq!(detect_storage(&l).unwrap(), Some(StorageKind::Local));
        let idb = Db::open(
            root.join("IndexedDB/http_127.0.0.1_55229.indexeddb.leveldb"),
            opts(),
        )
        .unwrap();
        assert_eq!(detect_storage(&idb).unwrap(), None);
    }
}
