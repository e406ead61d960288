//! Values Chrome serialized: V8's `ValueSerializer` format inside Blink's envelope, as
//! IndexedDB stores them (and `postMessage`, `history.state`... carry them).
//!
//! [`decode`] reads the bytes into a [`Decoded`]: a root [`Value`] and a table of
//! [`Object`]s by id, so objects met twice and cycles are kept as V8 wrote them. Nothing is
//! copied: strings and buffers borrow from the input. Every failure says what and at which
//! byte ([`ValueError`]); no input makes the decoder panic or recurse (nesting lives on a
//! heap stack).
//!
//! Objects Blink serializes itself are [`HostObject`]s: Blob, File and FileList (in
//! IndexedDB, indexes into the record's blob list, which `idb` resolves), and the others
//! (DOMPoint, DOMMatrix, CryptoKey, ImageData...) by name and fields.
//!
//! The byte layouts are in [`format`](mod@format) (and `docs/indexeddb.md`); every tag and rule is
//! V8's `src/objects/value-serializer.cc` or Blink's `v8_script_value_deserializer.cc`,
//! read and written anew here.
//!
//! ```
//! use sst_chrome::v8value::{decode, Object, Value};
//!
//! # fn main() -> Result<(), sst_chrome::v8value::ValueError> {
//! // {"a": 1} as Chrome 156 stores it: Blink 21 (trailer offset 0), V8 16.
//! let bytes = b"\xff\x15\xfe\0\0\0\0\0\0\0\0\0\0\0\0\xff\x10o\"\x01aI\x02{\x01";
//! let d = decode(bytes)?;
//! let one = |o: Option<&Object>| matches!(o, Some(Object::Plain(p)) if p[0].1 == Value::Number(1.0));
//! assert!(matches!(d.root, Value::Object(id) if one(d.object(id))));
//! # Ok(())
//! # }
//! ```

mod close;
mod cursor;
mod decode;
mod error;
pub mod format;
mod frame;
mod host;
mod host_media;
mod host_read;
mod keys;
mod leaf;
mod number;
mod ssv;
mod strings;
mod value;

pub use error::{ValueError, ValueErrorKind};
pub use host::{FileInfo, HostField, HostObject};
pub use number::{bigint_to_decimal, js_number_to_string, write_js_number};
pub use ssv::{decode, decode_v8};
pub use strings::{JsStr, Units};
pub use value::{BigInt, Decoded, ErrorName, Object, ObjectId, PropertyKey, Value};

/// A RegExp's flags as JavaScript's `flags` property spells them (`"gi"`, `"dgimsuvy"`).
pub fn regexp_flags(bits: u32) -> String {
    format::REGEXP_FLAGS
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, c)| *c)
        .collect()
}

#[cfg(test)]
mod tests;
