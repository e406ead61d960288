//! Pieces of the `"idb"` object written straight into the row (fields in alphabetical
//! order, as `serde_json` writes an object; strings escaped alike), without building a
//! `serde_json::Value` per row.

use std::fmt;

use sst_chrome::idb::IdbKey;

/// Writes what is formatted into it as the inside of a JSON string (as `serde_json`
/// escapes: `\"`, `\\`, `\b \f \n \r \t`, other control characters as `\u00xx`).
pub struct JsonEscaped<'a>(pub &'a mut Vec<u8>);

impl fmt::Write for JsonEscaped<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            match b {
                b'"' => self.0.extend_from_slice(b"\\\""),
                b'\\' => self.0.extend_from_slice(b"\\\\"),
                b'\n' => self.0.extend_from_slice(b"\\n"),
                b'\r' => self.0.extend_from_slice(b"\\r"),
                b'\t' => self.0.extend_from_slice(b"\\t"),
                0x08 => self.0.extend_from_slice(b"\\b"),
                0x0c => self.0.extend_from_slice(b"\\f"),
                0..=0x1f => {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    self.0.extend_from_slice(b"\\u00");
                    self.0.push(HEX[(b >> 4) as usize]);
                    self.0.push(HEX[(b & 15) as usize]);
                }
                _ => self.0.push(b),
            }
        }
        Ok(())
    }
}

/// `"` + the value's `Display` escaped + `"`.
pub fn push_display(out: &mut Vec<u8>, v: &dyn fmt::Display) {
    out.push(b'"');
    let _ = fmt::write(&mut JsonEscaped(out), format_args!("{v}"));
    out.push(b'"');
}

/// A key in the contract's JSON form (`IdbKey`'s `Display`, `sst_chrome::idb::key_json`):
/// the one form keys take in rows, in text and on `sst db get --store`'s command line.
pub fn push_key(out: &mut Vec<u8>, k: &IdbKey) {
    use std::io::Write;
    let _ = write!(out, "{k}");
}
