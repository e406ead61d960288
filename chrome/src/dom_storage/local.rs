//! localStorage: one LevelDB database for every origin of a profile.
//!
//! ```text
//! key                                   value
//! "VERSION"                             "1"
//! "META:" origin                        LocalStorageAreaWriteMetaData (protobuf:
//!                                       1 last_modified, 2 size_bytes)
//! "METAACCESS:" origin                  LocalStorageAreaAccessMetaData (1 last_accessed)
//! "_" origin 00 | script key            script value
//! script key / value = format byte | text
//!   format 0: UTF-16LE code units       format 1: Latin-1, one byte per unit
//!   (an empty string is stored as no bytes at all)
//! times: microseconds since 1601-01-01 (base::Time's internal value)
//! ```
//! (Chromium's `components/services/storage/dom_storage/local_storage_leveldb.h` for the
//! keys, Blink's `CachedStorageArea::StringToUint8Vector` for the text.) The origin is the
//! storage key serialized (`https://example.com`, with a `^` suffix for partitioned keys).

use super::varint_fields;
use crate::v8value::JsStr;

/// Microseconds from 1601-01-01 to 1970-01-01.
const UNIX_EPOCH_FROM_WINDOWS_US: i64 = 11_644_473_600 * 1_000_000;

/// Text as Chrome's storage areas keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageText<'a> {
    /// The text.
    Text(JsStr<'a>),
    /// Bytes Chrome reads as corrupt (an unknown format byte, an odd UTF-16 length; Chrome
    /// then shows an empty string).
    Corrupt(&'a [u8]),
}

/// One record of a localStorage database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LocalStorageEntry<'a> {
    /// The schema version (`VERSION`).
    Version(&'a [u8]),
    /// An origin's write metadata (`META:`).
    WriteMeta {
        /// The origin.
        origin: &'a [u8],
        /// Last write, milliseconds since 1970.
        last_modified_ms: Option<i64>,
        /// Bytes the origin's items take.
        size_bytes: Option<u64>,
    },
    /// An origin's access metadata (`METAACCESS:`).
    AccessMeta {
        /// The origin.
        origin: &'a [u8],
        /// Last access, milliseconds since 1970.
        last_accessed_ms: Option<i64>,
    },
    /// A stored item.
    Item {
        /// The origin (storage key).
        origin: &'a [u8],
        /// `localStorage` key.
        key: StorageText<'a>,
        /// Its value.
        value: StorageText<'a>,
    },
}

/// What a localStorage record is; `None` for a key this database does not write.
pub fn decode_local_storage<'a>(key: &'a [u8], value: &'a [u8]) -> Option<LocalStorageEntry<'a>> {
    if key == b"VERSION" {
        return Some(LocalStorageEntry::Version(value));
    }
    if let Some(origin) = key.strip_prefix(b"METAACCESS:") {
        let fields = varint_fields(value)?;
        return Some(LocalStorageEntry::AccessMeta {
            origin,
            last_accessed_ms: field(&fields, 1).map(unix_ms),
        });
    }
    if let Some(origin) = key.strip_prefix(b"META:") {
        let fields = varint_fields(value)?;
        return Some(LocalStorageEntry::WriteMeta {
            origin,
            last_modified_ms: field(&fields, 1).map(unix_ms),
            size_bytes: field(&fields, 2),
        });
    }
    let rest = key.strip_prefix(b"_")?;
    let sep = rest.iter().position(|&b| b == 0)?;
    Some(LocalStorageEntry::Item {
        origin: &rest[..sep],
        key: text(&rest[sep + 1..]),
        value: text(value),
    })
}

fn field(fields: &[(u64, u64)], n: u64) -> Option<u64> {
    fields.iter().rev().find(|(f, _)| *f == n).map(|(_, v)| *v)
}

fn unix_ms(windows_us: u64) -> i64 {
    (windows_us as i64 - UNIX_EPOCH_FROM_WINDOWS_US).div_euclid(1000)
}

/// Blink's `Uint8VectorToString` with `kLocalStorageDetectFormat`.
pub fn text(b: &[u8]) -> StorageText<'_> {
    match b.split_first() {
        None => StorageText::Text(JsStr::Latin1(b)),
        Some((0, rest)) if rest.len() % 2 == 0 => StorageText::Text(JsStr::Utf16Le(rest)),
        Some((1, rest)) => StorageText::Text(JsStr::Latin1(rest)),
        _ => StorageText::Corrupt(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_in_both_formats() {
        let e = decode_local_storage(b"_https://a.test\0\x01k\xe9", b"\x00h\0\x3d\xd8").unwrap();
        let LocalStorageEntry::Item { origin, key, value } = e else {
            panic!()
        };
        assert_eq!(origin, b"https://a.test");
        assert_eq!(key, StorageText::Text(JsStr::Latin1(b"k\xe9")));
        // "h" then a lone high surrogate: kept as units.
        assert_eq!(value, StorageText::Text(JsStr::Utf16Le(b"h\0\x3d\xd8")));
        let StorageText::Text(v) = value else {
            panic!()
        };
        assert_eq!(v.units().collect::<Vec<_>>(), vec![0x68, 0xd83d]);
        // Empty, odd-length UTF-16 and unknown formats.
        assert_eq!(text(b""), StorageText::Text(JsStr::Latin1(b"")));
        assert_eq!(text(b"\x00a"), StorageText::Corrupt(b"\x00a"));
        assert_eq!(text(b"\x07a"), StorageText::Corrupt(b"\x07a"));
    }

    #[test]
    fn metadata_records() {
        assert_eq!(
            decode_local_storage(b"VERSION", b"1"),
            Some(LocalStorageEntry::Version(b"1"))
        );
        // last_modified = the Unix epoch + 1.5 s, size 42.
        let us = (UNIX_EPOCH_FROM_WINDOWS_US + 1_500_000) as u64;
        let mut v = vec![0x08];
        let mut x = us;
        while x >= 0x80 {
            v.push((x as u8) | 0x80);
            x >>= 7;
        }
        v.push(x as u8);
        v.extend([0x10, 42]);
        let e = decode_local_storage(b"META:https://a.test", &v).unwrap();
        assert_eq!(
            e,
            LocalStorageEntry::WriteMeta {
                origin: b"https://a.test",
                last_modified_ms: Some(1500),
                size_bytes: Some(42)
            }
        );
        assert!(matches!(
            decode_local_storage(b"METAACCESS:o", &[0x08, 0x01]),
            Some(LocalStorageEntry::AccessMeta { .. })
        ));
        assert_eq!(decode_local_storage(b"_no separator", b""), None);
        assert_eq!(decode_local_storage(b"other", b""), None);
    }
}
