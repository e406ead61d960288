//! Chrome's localStorage and sessionStorage databases (the `Local Storage/leveldb` and
//! `Session Storage` directories of a profile): keys and values as the text a page stored.
//!
//! [`decode_local_storage`] and [`decode_session_storage`] take one record (key and value)
//! and say what it is: a stored item (origin, key, value), or the databases' own metadata.
//! Strings are [`JsStr`](crate::v8value::JsStr)s, so text with lone surrogates keeps its
//! code units. Layouts are in [`local`] and [`session`] (and `docs/indexeddb.md`).
//! [`detect_storage`] tells which of the two a directory holds; [`session_maps`] reads
//! sessionStorage's maps.

mod directory;
pub mod local;
pub mod session;

pub use directory::{detect_storage, session_maps};
pub use local::{decode_local_storage, LocalStorageEntry, StorageText};
pub use session::{decode_session_storage, SessionStorageEntry};

/// Which of the two a directory holds, from keys only these databases write: localStorage
/// has `VERSION`, `META:` and `_` keys; sessionStorage `version`, `next-map-id`,
/// `namespace-` and `map-` keys. `None` when the keys fit neither (or both).
pub fn detect<'k>(keys: impl IntoIterator<Item = &'k [u8]>) -> Option<StorageKind> {
    let (mut local, mut session, mut other) = (0usize, 0usize, 0usize);
    for k in keys {
        if k == b"VERSION" || k.starts_with(b"META") || (k.first() == Some(&b'_') && k.contains(&0))
        {
            local += 1;
        } else if k == b"version"
            || k == b"next-map-id"
            || k.starts_with(b"namespace-")
            || k.starts_with(b"map-")
        {
            session += 1;
        } else {
            other += 1;
        }
    }
    match (local, session, other) {
        (l, 0, 0) if l > 0 => Some(StorageKind::Local),
        (0, s, 0) if s > 0 => Some(StorageKind::Session),
        _ => None,
    }
}

/// localStorage or sessionStorage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageKind {
    /// `Local Storage/leveldb`.
    Local,
    /// `Session Storage`.
    Session,
}

/// Reads a protobuf message of varint fields (as Chrome's small metadata messages are):
/// `(field number, value)` pairs; fields of other wire types are skipped. `None` if the
/// bytes are not a well-formed message.
pub(crate) fn varint_fields(mut b: &[u8]) -> Option<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let tag = varint(&mut b)?;
        match tag & 7 {
            0 => out.push((tag >> 3, varint(&mut b)?)),
            1 => b = b.get(8..)?,
            2 => {
                let n = usize::try_from(varint(&mut b)?).ok()?;
                b = b.get(n..)?;
            }
            5 => b = b.get(4..)?,
            _ => return None,
        }
    }
    Some(out)
}

fn varint(b: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for (i, &x) in b.iter().enumerate().take(10) {
        v |= u64::from(x & 0x7f) << (7 * i);
        if x & 0x80 == 0 {
            *b = &b[i + 1..];
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_keys() {
        let local: [&[u8]; 3] = [
            b"META:https://a.test",
            b"VERSION",
            b"_https://a.test\0\x01k",
        ];
        assert_eq!(detect(local), Some(StorageKind::Local));
        let session: [&[u8]; 3] = [b"map-0-k", b"namespace-x-y", b"version"];
        assert_eq!(detect(session), Some(StorageKind::Session));
        let mixed: [&[u8]; 2] = [b"VERSION", b"version"];
        assert_eq!(detect(mixed), None);
        assert_eq!(detect([b"\x00\x01".as_slice()]), None);
    }

    #[test]
    fn protobuf_varint_fields() {
        // field 1 = 300, field 2 (length-delimited, skipped), field 3 = 1
        assert_eq!(
            varint_fields(&[0x08, 0xac, 0x02, 0x12, 0x01, 0xff, 0x18, 0x01]),
            Some(vec![(1, 300), (3, 1)])
        );
        assert_eq!(varint_fields(&[0x08]), None);
        assert_eq!(varint_fields(&[0x0f]), None);
    }
}
