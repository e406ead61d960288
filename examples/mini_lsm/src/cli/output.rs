//! How `scan` prints an entry, unambiguously whatever its bytes.
//!
//! ```text
//! text:   key<TAB>value<LF>   bytes escaped: TAB \t, LF \n, CR \r, \ \\, other ASCII
//!                             controls and bytes that are not UTF-8 \xHH, Unicode
//!                             control characters \u{HHHH}; the rest as it is
//! jsonl:  {"key":"...","value":"..."}           JSON strings for UTF-8 bytes
//!         {"key_hex":"...","value_hex":"..."}   for bytes that are not (always with --hex)
//! --hex:  text lines of hex
//! ```

use std::fmt::Write as _;
use std::io::{self, Write};

/// The output format of `scan`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Format {
    /// `key<TAB>value` lines, escaped.
    Text,
    /// One JSON object per line.
    Jsonl,
}

/// Lower-case hex.
pub fn to_hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

/// `b` as text that names its bytes exactly (see the module documentation).
pub fn escape(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len());
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\t' => s.push_str("\\t"),
                '\n' => s.push_str("\\n"),
                '\r' => s.push_str("\\r"),
                '\\' => s.push_str("\\\\"),
                c if c.is_ascii_control() => {
                    let _ = write!(s, "\\x{:02x}", c as u32);
                }
                c if c.is_control() => {
                    let _ = write!(s, "\\u{{{:04x}}}", c as u32);
                }
                c => s.push(c),
            }
        }
        for x in chunk.invalid() {
            let _ = write!(s, "\\x{x:02x}");
        }
    }
    s
}

/// `b` as a JSON string literal (it must be UTF-8).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One field of a JSON line: `"name":"text"`, or `"name_hex":"..."` when not UTF-8 or
/// when `hex`.
fn json_field(name: &str, b: &[u8], hex: bool) -> String {
    match std::str::from_utf8(b) {
        Ok(s) if !hex => format!("{}:{}", json_string(name), json_string(s)),
        _ => format!("{}:\"{}\"", json_string(&format!("{name}_hex")), to_hex(b)),
    }
}

/// Prints one entry.
///
/// # Errors
/// The output cannot be written (a closed pipe).
pub fn entry(out: &mut dyn Write, format: Format, hex: bool, k: &[u8], v: &[u8]) -> io::Result<()> {
    let line = match (format, hex) {
        (Format::Jsonl, _) => format!(
            "{{{},{}}}\n",
            json_field("key", k, hex),
            json_field("value", v, hex)
        ),
        (Format::Text, true) => format!("{}\t{}\n", to_hex(k), to_hex(v)),
        (Format::Text, false) => format!("{}\t{}\n", escape(k), escape(v)),
    };
    out.write_all(line.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_text_is_unchanged_and_everything_else_is_escaped() {
        assert_eq!(escape(b"key-01 ok"), "key-01 ok");
        assert_eq!(escape("caf\u{e9}".as_bytes()), "caf\u{e9}");
        assert_eq!(escape(b"a\tb\nc\rd\\e"), "a\\tb\\nc\\rd\\\\e");
        assert_eq!(escape(b"\x00\x7f\xff\xc3"), "\\x00\\x7f\\xff\\xc3");
        assert_eq!(escape("\u{85}".as_bytes()), "\\u{0085}");
    }

    #[test]
    fn json_lines_use_hex_only_for_bytes_that_are_not_utf8() {
        let mut out = Vec::new();
        entry(&mut out, Format::Jsonl, false, b"a\"\n", b"\xff").unwrap();
        assert_eq!(out, b"{\"key\":\"a\\\"\\n\",\"value_hex\":\"ff\"}\n");
    }
}
