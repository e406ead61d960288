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

/// `"` + `s` escaped + `"`, without the formatting machinery (names and origins, on every
/// row).
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.extend_from_slice(s.as_bytes());
    } else {
        let _ = fmt::Write::write_str(&mut JsonEscaped(out), s);
    }
    out.push(b'"');
}

/// `"` + the value's `Display` escaped + `"`.
pub fn push_display(out: &mut Vec<u8>, v: &dyn fmt::Display) {
    out.push(b'"');
    let _ = fmt::write(&mut JsonEscaped(out), format_args!("{v}"));
    out.push(b'"');
}

/// A key in the contract's JSON form (`IdbKey`'s `Display`, `sst_chrome::idb::key_json`):
/// the one form keys take in rows, in text and on `sst db get --store`'s command line.
///
/// The keys most rows hold are written without the formatting machinery: integral numbers
/// below 2^53 (JavaScript prints them as their digits) and strings of printable ASCII with
/// nothing to escape; any other key through `Display`, the one definition of the form.
pub fn push_key(out: &mut Vec<u8>, k: &IdbKey) {
    use std::io::Write;
    match k {
        IdbKey::Number(x)
            if x.fract() == 0.0
                && x.abs() < 9_007_199_254_740_992.0
                && !(*x == 0.0 && x.is_sign_negative()) =>
        {
            let _ = write!(out, "{}", *x as i64);
        }
        IdbKey::String(units)
            if units.iter().all(|&u| {
                (0x20..0x7f).contains(&u) && u != u16::from(b'"') && u != u16::from(b'\\')
            }) =>
        {
            out.push(b'"');
            out.extend(units.iter().map(|&u| u as u8));
            out.push(b'"');
        }
        _ => {
            let _ = write!(out, "{k}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast paths write exactly what `Display` (the form's one definition) writes.
    #[test]
    fn push_key_writes_the_display_form() {
        let s = |t: &str| IdbKey::String(t.encode_utf16().collect());
        let keys = [
            IdbKey::Number(0.0),
            IdbKey::Number(-0.0),
            IdbKey::Number(7.0),
            IdbKey::Number(-123_456.0),
            IdbKey::Number(1.5),
            IdbKey::Number(9_007_199_254_740_991.0),
            IdbKey::Number(9_007_199_254_740_992.0),
            IdbKey::Number(1e21),
            IdbKey::Number(f64::INFINITY),
            IdbKey::Number(f64::NAN),
            s("c0"),
            s(""),
            s("a\"b"),
            s("a\\b"),
            s("tab\there"),
            s("\u{7f}"),
            s("été"),
            IdbKey::String(vec![0x61, 0xd800, 0x62]),
            IdbKey::Date(5.0),
            IdbKey::Binary(vec![0, 255]),
            IdbKey::Array(vec![IdbKey::Number(1.0), s("a"), IdbKey::Array(vec![])]),
        ];
        for k in &keys {
            let mut out = Vec::new();
            push_key(&mut out, k);
            assert_eq!(String::from_utf8(out).unwrap(), k.to_string(), "{k:?}");
        }
    }

    #[test]
    fn push_str_escapes_as_push_display() {
        for t in [
            "http://127.0.0.1:42011",
            "",
            "q\"uote",
            "back\\slash",
            "nl\n",
            "\u{1}",
            "été",
        ] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            push_str(&mut a, t);
            push_display(&mut b, &t);
            assert_eq!(a, b, "{t:?}");
        }
    }
}
