//! sessionStorage: one LevelDB database for every tab (namespace) of a profile.
//!
//! ```text
//! key                                            value
//! "version"                                      "1"
//! "next-map-id"                                  decimal number
//! "namespace-" guid (36 chars) "-" origin        map number, decimal
//! "map-" map number "-" | script key (UTF-8)     script value (UTF-16LE, no format byte)
//! ```
//! A namespace is a tab's session; each (namespace, origin) points at a map of items,
//! shared between namespaces until one of them writes (Chromium's
//! `components/services/storage/dom_storage/session_storage_metadata.cc`; Blink's
//! `kSessionStorageForceUTF8` keys and `kSessionStorageForceUTF16` values).

use super::local::StorageText;
use crate::v8value::JsStr;

/// Length of a namespace id (a GUID, `kSessionStorageNamespaceIdLength`).
pub const NAMESPACE_ID_LEN: usize = 36;

/// One record of a sessionStorage database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionStorageEntry<'a> {
    /// The schema version (`version`).
    Version(&'a [u8]),
    /// The next map number (`next-map-id`).
    NextMapId(Option<i64>),
    /// A namespace's map for an origin.
    Namespace {
        /// The namespace (a tab's session).
        namespace: &'a [u8],
        /// The origin (storage key).
        origin: &'a [u8],
        /// The map holding its items.
        map: Option<i64>,
    },
    /// A stored item.
    Item {
        /// The map it belongs to.
        map: i64,
        /// `sessionStorage` key.
        key: JsStr<'a>,
        /// Its value.
        value: StorageText<'a>,
    },
}

/// What a sessionStorage record is; `None` for a key this database does not write.
pub fn decode_session_storage<'a>(
    key: &'a [u8],
    value: &'a [u8],
) -> Option<SessionStorageEntry<'a>> {
    if key == b"version" {
        return Some(SessionStorageEntry::Version(value));
    }
    if key == b"next-map-id" {
        return Some(SessionStorageEntry::NextMapId(number(value)));
    }
    if let Some(rest) = key.strip_prefix(b"namespace-") {
        if rest.len() <= NAMESPACE_ID_LEN || rest[NAMESPACE_ID_LEN] != b'-' {
            return None;
        }
        return Some(SessionStorageEntry::Namespace {
            namespace: &rest[..NAMESPACE_ID_LEN],
            origin: &rest[NAMESPACE_ID_LEN + 1..],
            map: number(value),
        });
    }
    let rest = key.strip_prefix(b"map-")?;
    let dash = rest.iter().position(|&b| b == b'-')?;
    let map = number(&rest[..dash])?;
    let value = if value.len() % 2 == 0 {
        StorageText::Text(JsStr::Utf16Le(value))
    } else {
        StorageText::Corrupt(value)
    };
    Some(SessionStorageEntry::Item {
        map,
        key: JsStr::Utf8(&rest[dash + 1..]),
        value,
    })
}

/// A decimal number as Chromium writes one (`base::NumberToString`).
fn number(b: &[u8]) -> Option<i64> {
    std::str::from_utf8(b).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_records() {
        let ns = b"namespace-dabc53e1_8291_4de5_824f_dab8aa69c846-https://example.com/";
        assert_eq!(
            decode_session_storage(ns, b"3"),
            Some(SessionStorageEntry::Namespace {
                namespace: b"dabc53e1_8291_4de5_824f_dab8aa69c846",
                origin: b"https://example.com/",
                map: Some(3)
            })
        );
        let e = decode_session_storage(b"map-3-cl\xc3\xa9", b"v\0").unwrap();
        assert_eq!(
            e,
            SessionStorageEntry::Item {
                map: 3,
                key: JsStr::Utf8("clé".as_bytes()),
                value: StorageText::Text(JsStr::Utf16Le(b"v\0"))
            }
        );
        assert_eq!(
            decode_session_storage(b"next-map-id", b"4"),
            Some(SessionStorageEntry::NextMapId(Some(4)))
        );
        assert_eq!(decode_session_storage(b"map-x-k", b""), None);
        assert_eq!(decode_session_storage(b"namespace-short", b"1"), None);
        assert!(matches!(
            decode_session_storage(b"map-1-k", b"odd"),
            Some(SessionStorageEntry::Item {
                value: StorageText::Corrupt(_),
                ..
            })
        ));
    }
}
