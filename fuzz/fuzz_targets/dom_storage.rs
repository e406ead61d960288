//! Any bytes as localStorage and sessionStorage records, and as the first page of a SQLite
//! file: a key and a value split from the input at the first 0xfd.
//!
//! Checked properties: nothing panics; an item's origin and key are parts of the record's
//! key and its value part of the record's value; text reads unit by unit; detection over
//! the keys cut from the input settles on one kind or none.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sst_chrome::dom_storage::{
    decode_local_storage, decode_session_storage, detect, LocalStorageEntry, SessionStorageEntry,
    StorageText,
};
use sst_chrome::idb::identify_sqlite;
use sst_chrome::v8value::JsStr;

fn inside(part: &[u8], whole: &[u8]) -> bool {
    let (p, w) = (part.as_ptr() as usize, whole.as_ptr() as usize);
    part.is_empty() || (p >= w && p + part.len() <= w + whole.len())
}

fn units(s: &JsStr<'_>) -> usize {
    let _ = s.to_string_lossy();
    s.units().count()
}

fn storage_text(t: &StorageText<'_>, whole: &[u8]) {
    match t {
        StorageText::Text(s) => {
            units(s);
        }
        StorageText::Corrupt(b) => assert!(inside(b, whole)),
    }
}

fuzz_target!(|data: &[u8]| {
    let (key, value) = match data.iter().position(|&b| b == 0xfd) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    match decode_local_storage(key, value) {
        Some(LocalStorageEntry::Item {
            origin,
            key: k,
            value: v,
        }) => {
            assert!(inside(origin, key));
            storage_text(&k, key);
            storage_text(&v, value);
        }
        Some(
            LocalStorageEntry::WriteMeta { origin, .. }
            | LocalStorageEntry::AccessMeta { origin, .. },
        ) => {
            assert!(inside(origin, key))
        }
        Some(LocalStorageEntry::Version(v)) => assert!(inside(v, value)),
        None => {}
    }
    match decode_session_storage(key, value) {
        Some(SessionStorageEntry::Item {
            key: k, value: v, ..
        }) => {
            units(&k);
            storage_text(&v, value);
        }
        Some(SessionStorageEntry::Namespace {
            namespace, origin, ..
        }) => {
            assert!(inside(namespace, key) && inside(origin, key))
        }
        _ => {}
    }
    let keys: Vec<&[u8]> = data.split(|&b| b == 0xfd).collect();
    let _ = detect(keys.iter().copied());
    if let Some(info) = identify_sqlite(data) {
        assert!(info.page_size >= 1 && info.page_size <= 65536);
    }
});
