//! Pieces of the `"idb"` object written straight into the row, with the text `serde_json`
//! gives the same values (`super::idb::key_json` through `serde_json`: keys of an object
//! in alphabetical order, floats as `ryu` spells them, strings escaped alike), without
//! building a `serde_json::Value` per row.

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

fn push_f64(out: &mut Vec<u8>, x: f64) {
    if x.is_finite() {
        let _ = serde_json::to_writer(&mut *out, &x);
    } else if x > 0.0 {
        out.extend_from_slice(b"\"Infinity\"");
    } else {
        out.extend_from_slice(b"\"-Infinity\"");
    }
}

/// A typed key, as `super::idb::key_json` gives it through `serde_json`.
pub fn push_key(out: &mut Vec<u8>, k: &IdbKey) {
    match k {
        IdbKey::Min => out.extend_from_slice(b"{\"type\":\"min\"}"),
        IdbKey::Null => out.extend_from_slice(b"{\"type\":\"null\"}"),
        IdbKey::Number(x) => {
            out.extend_from_slice(b"{\"type\":\"number\",\"value\":");
            push_f64(out, *x);
            out.push(b'}');
        }
        IdbKey::Date(ms) => {
            out.extend_from_slice(b"{\"ms\":");
            push_f64(out, *ms);
            out.extend_from_slice(b",\"type\":\"date\"}");
        }
        IdbKey::String(units) => match String::from_utf16(units) {
            Ok(s) => {
                out.extend_from_slice(b"{\"type\":\"string\",\"value\":");
                let _ = serde_json::to_writer(&mut *out, &s);
                out.push(b'}');
            }
            // Lone surrogates: the code units too, as `key_json` writes them.
            Err(_) => {
                out.extend_from_slice(b"{\"type\":\"string\",\"utf16\":");
                let _ = serde_json::to_writer(&mut *out, units);
                out.extend_from_slice(b",\"value\":");
                let _ = serde_json::to_writer(&mut *out, &String::from_utf16_lossy(units));
                out.push(b'}');
            }
        },
        IdbKey::Binary(b) => {
            out.extend_from_slice(b"{\"hex\":\"");
            crate::common::push_hex(out, b);
            out.extend_from_slice(b"\",\"type\":\"binary\"}");
        }
        IdbKey::Array(items) => {
            out.extend_from_slice(b"{\"type\":\"array\",\"value\":[");
            // Arrays nest at most 2,000 deep (Chromium's limit, kept by the key decoder).
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                push_key(out, item);
            }
            out.extend_from_slice(b"]}");
        }
    }
}
