//! IndexedDB's wrapping of large values: snappy compression and values moved into a blob.
//!
//! ```text
//! serialized value as stored (after the record's version varint):
//!   FF 11 02 | snappy data             compressed: the data decompresses to the value
//!   FF 11 01 | varint size | varint i  in a blob: the value is the contents of blob i of
//!                                      the record's blob list (size bytes), which may
//!                                      itself be compressed as above
//!   anything else                      the value itself (Blink's envelope, then V8's)
//! ```
//! FF 11 is Blink's version tag with version 17, whose real encoding always continues with
//! FF (V8's version tag), so the third byte tells them apart (Blink's
//! `idb_value_wrapping.cc`: `kRequiresProcessingSSVPseudoVersion`, `kReplaceWithBlob`,
//! `kCompressedWithSnappy`). Blink compresses values of 64 KiB or more when snappy saves at
//! least 10%, then moves what is still over 64 KiB into a blob.

use std::borrow::Cow;

use super::format::{SSV_PSEUDO_VERSION, SSV_SNAPPY, SSV_VERSION_TAG, SSV_WRAPPED_IN_BLOB};
use crate::v8value::{ValueError, ValueErrorKind};
use leveldb_table::raw::compress::snappy_into;

/// Bytes of the wrapping header (version tag, pseudo version, command).
const HEADER: usize = 3;

/// A serialized value with IndexedDB's wrapping taken off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unwrapped<'a> {
    /// The serialized value (decompressed if it was compressed), for
    /// [`v8value::decode`](crate::v8value::decode).
    Value(Cow<'a, [u8]>),
    /// The value is the contents of a blob of the record: unwrap those again.
    InBlob {
        /// Size of the blob in bytes.
        size: u64,
        /// Index of the blob in the record's blob list (its last one, as Blink writes it).
        index: u64,
    },
}

/// Takes IndexedDB's wrapping off a serialized value (a record's value after its version
/// varint, or the contents of the blob a record's value was moved into).
///
/// # Errors
/// A wrapped value whose header is cut short or whose snappy data does not decompress;
/// offsets count from the start of `bytes`.
pub fn unwrap_value(bytes: &[u8]) -> Result<Unwrapped<'_>, ValueError> {
    if bytes.len() < HEADER || bytes[0] != SSV_VERSION_TAG || bytes[1] != SSV_PSEUDO_VERSION {
        return Ok(Unwrapped::Value(Cow::Borrowed(bytes)));
    }
    match bytes[2] {
        SSV_WRAPPED_IN_BLOB => {
            let mut c = &bytes[HEADER..];
            let truncated = |what| ValueError::new(bytes.len(), ValueErrorKind::Truncated(what));
            let size = blink_varint(&mut c).ok_or_else(|| truncated("a wrapped value's size"))?;
            let index = blink_varint(&mut c).ok_or_else(|| truncated("a wrapped value's blob"))?;
            Ok(Unwrapped::InBlob { size, index })
        }
        SSV_SNAPPY => {
            let mut out = Vec::new();
            snappy_into(&bytes[HEADER..], &mut out)
                .map_err(|_| ValueError::new(HEADER, ValueErrorKind::BadSnappy))?;
            Ok(Unwrapped::Value(Cow::Owned(out)))
        }
        _ => Ok(Unwrapped::Value(Cow::Borrowed(bytes))),
    }
}

/// Blink's `IDBValueUnwrapper::ReadVarInt`: an unsigned varint of at most 32 bits.
fn blink_varint(s: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let (&b, rest) = s.split_first()?;
        if shift >= 32 {
            return None;
        }
        *s = rest;
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Some(value & u64::from(u32::MAX));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_compressed_and_blob_wrapped_values() {
        // An ordinary value (Blink 17 header: FF 11 FF ...) is not wrapped.
        let plain = b"\xff\x11\xff\x0dT";
        assert_eq!(
            unwrap_value(plain).unwrap(),
            Unwrapped::Value(Cow::Borrowed(&plain[..]))
        );
        // FF 11 01, size 70000 (varint f0 a2 04), blob 2.
        assert_eq!(
            unwrap_value(b"\xff\x11\x01\xf0\xa2\x04\x02").unwrap(),
            Unwrapped::InBlob {
                size: 70000,
                index: 2
            }
        );
        assert!(unwrap_value(b"\xff\x11\x01\xf0").is_err());
        // FF 11 02 + snappy(the value).
        let value = [b"\xff\x15".as_slice(), &[b'x'; 1000]].concat();
        let mut wrapped = b"\xff\x11\x02".to_vec();
        wrapped.extend(snap::raw::Encoder::new().compress_vec(&value).unwrap());
        assert_eq!(
            unwrap_value(&wrapped).unwrap(),
            Unwrapped::Value(Cow::Owned(value))
        );
        let e = unwrap_value(b"\xff\x11\x02\xff\xff\xff\xff\x0f").unwrap_err();
        assert_eq!((e.kind, e.offset), (ValueErrorKind::BadSnappy, 3));
    }
}
