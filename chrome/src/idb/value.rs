//! The envelope of an IndexedDB record's value, where it is plain.
//!
//! ```text
//! record value = varint version | serialized value
//! serialized value (Blink):
//!   FF vv [FE o8 s4] [FF ww] V8 data
//!                                  vv = Blink wrapper version (varint); from version 21 a
//!                                  trailer tag FE with an 8-byte offset and a 4-byte size;
//!                                  ww = V8's serialization version (varint)
//!   FF 11 01 varint size varint i  the value lives in blob i of the record (size bytes)
//!   FF 11 02 snappy data           the serialized value, snappy-compressed
//!
//! exists entry = version as a little-endian integer of 1 to 8 bytes (not a varint)
//! index entry value = varint version | encoded primary key
//! ```
//!
//! The V8 data itself (objects, strings...) is not decoded here.

use super::coding::{decode_int, read_byte, read_varint};
use super::format::*;

/// What the envelope of a record's value says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordValue<'a> {
    /// The record's version (Chromium bumps it on every write of the key).
    pub version: i64,
    /// How the serialized value is held.
    pub envelope: Envelope,
    /// The serialized value (after the version varint).
    pub payload: &'a [u8],
}

/// How a record's serialized value is held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Envelope {
    /// A plain serialized value: Blink's wrapper version and, when present, V8's.
    Plain {
        /// Blink's wrapper version.
        blink: i64,
        /// V8's serialization version.
        v8: Option<i64>,
    },
    /// The value was too large and lives in one of the record's blobs.
    InBlob {
        /// The serialized value's size.
        size: i64,
        /// Which of the record's blobs holds it.
        index: i64,
    },
    /// The serialized value is snappy-compressed.
    Snappy,
    /// Something this decoder does not recognise.
    Unknown,
}

/// Reads the envelope of a record value (index id 1); `None` if it has no version varint.
pub fn decode_record_value(value: &[u8]) -> Option<RecordValue<'_>> {
    let mut s = value;
    let version = read_varint(&mut s)?;
    let payload = s;
    let envelope = envelope(s).unwrap_or(Envelope::Unknown);
    Some(RecordValue {
        version,
        envelope,
        payload,
    })
}

/// The envelope of a serialized value with no version varint before it (the SQLite
/// backend's values, after decompression).
pub fn decode_envelope(serialized: &[u8]) -> Envelope {
    envelope(serialized).unwrap_or(Envelope::Unknown)
}

fn envelope(mut s: &[u8]) -> Option<Envelope> {
    if read_byte(&mut s)? != SSV_VERSION_TAG {
        return None;
    }
    if s.first() == Some(&SSV_PSEUDO_VERSION) && s.get(1) != Some(&SSV_VERSION_TAG) {
        s = &s[1..];
        return match read_byte(&mut s)? {
            SSV_WRAPPED_IN_BLOB => Some(Envelope::InBlob {
                size: read_varint(&mut s)?,
                index: read_varint(&mut s)?,
            }),
            SSV_SNAPPY => Some(Envelope::Snappy),
            _ => None,
        };
    }
    let blink = read_varint(&mut s)?;
    if s.first() == Some(&SSV_TRAILER_TAG) && s.len() >= SSV_TRAILER_LEN {
        s = &s[SSV_TRAILER_LEN..];
    }
    let v8 = if s.first() == Some(&SSV_VERSION_TAG) {
        s = &s[1..];
        Some(read_varint(&mut s)?)
    } else {
        None
    };
    Some(Envelope::Plain { blink, v8 })
}

/// The record version an exists entry's value holds (Chromium's `EncodeInt`: little-endian,
/// 1 to 8 bytes); `None` for an empty or longer value.
pub fn decode_exists_value(value: &[u8]) -> Option<i64> {
    decode_int(value)
}
