//! Bytes as text: lowercase hex, escaped and quoted keys and values, JSON string literals,
//! and the short key form of the listings.

use leveldb_table::raw::format::MAX_SEQUENCE;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends the lowercase hex of `bytes` to `out`.
pub fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(HEX[(b >> 4) as usize]);
        out.push(HEX[(b & 15) as usize]);
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    let mut v = Vec::with_capacity(bytes.len() * 2);
    push_hex(&mut v, bytes);
    // ok: only ASCII hex digits were pushed.
    String::from_utf8(v).unwrap_or_default()
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Decodes hex (either case, even length) into `out` (cleared first).
pub fn unhex_into(s: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    out.clear();
    if s.len() % 2 != 0 {
        return Err(format!("odd number of hex digits ({})", s.len()));
    }
    for (i, pair) in s.chunks_exact(2).enumerate() {
        match (hex_digit(pair[0]), hex_digit(pair[1])) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => {
                return Err(format!(
                    "not a hex digit at position {}",
                    if hex_digit(pair[0]).is_none() {
                        2 * i
                    } else {
                        2 * i + 1
                    }
                ))
            }
        }
    }
    Ok(())
}

/// Decodes hex.
pub fn unhex(s: &[u8]) -> Result<Vec<u8>, String> {
    let mut v = Vec::new();
    unhex_into(s, &mut v)?;
    Ok(v)
}

/// A byte [`push_escaped`] copies as it is: printable ASCII but the backslash and the quote.
pub fn plain(b: u8) -> bool {
    matches!(b, 0x20..=0x7e) && b != b'\\' && b != b'\''
}

/// Whether [`push_escaped`] copies `bytes` unchanged. Every byte is tested, without an early
/// exit, which the compiler vectorizes.
pub fn all_plain(bytes: &[u8]) -> bool {
    bytes.iter().fold(true, |all, &b| all & plain(b))
}

/// Appends `bytes` with printable ASCII kept and everything else escaped: `\xNN`, and `\\`
/// and `\'` for the backslash and the quote, so the text is unambiguous.
pub fn push_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    // Most keys need no escape: one test, then one copy.
    if all_plain(bytes) {
        out.extend_from_slice(bytes);
        return;
    }
    let mut rest = bytes;
    while !rest.is_empty() {
        // Runs of plain bytes are copied at once.
        let run = rest.iter().position(|&b| !plain(b)).unwrap_or(rest.len());
        out.extend_from_slice(&rest[..run]);
        let Some((&b, tail)) = rest[run..].split_first() else {
            break;
        };
        rest = tail;
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\'' => out.extend_from_slice(b"\\'"),
            _ => {
                out.extend_from_slice(b"\\x");
                out.push(HEX[(b >> 4) as usize]);
                out.push(HEX[(b & 15) as usize]);
            }
        }
    }
}

/// `bytes` escaped as by [`push_escaped`].
pub fn escaped(bytes: &[u8]) -> String {
    let mut v = Vec::with_capacity(bytes.len());
    push_escaped(&mut v, bytes);
    String::from_utf8(v).unwrap_or_default()
}

/// Appends a key or value for text output: hex when `as_hex`, else quoted and escaped.
pub fn push_text(out: &mut Vec<u8>, bytes: &[u8], as_hex: bool) {
    if as_hex {
        push_hex(out, bytes);
    } else {
        out.push(b'\'');
        push_escaped(out, bytes);
        out.push(b'\'');
    }
}

/// Appends `s` as a JSON string literal.
pub fn push_json_str(out: &mut Vec<u8>, s: &str) {
    let lit = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    out.extend_from_slice(lit.as_bytes());
}
/// A key for text listings: escaped, shortened to 40 characters, and shown as
/// `'user_key' @ seq` when the table's keys are internal keys (as `blocks` and `stats` print
/// them).
pub fn key_text(k: &[u8], internal: bool) -> String {
    if internal {
        if let Some(p) = leveldb_table::raw::internal_key::parse_internal_key(k) {
            let tag = match p.sequence {
                MAX_SEQUENCE => "max".to_string(),
                s => s.to_string(),
            };
            return format!("{} @ {tag}", key_text(p.user_key, false));
        }
    }
    let e = escaped(k);
    if e.chars().count() > 40 {
        let short: String = e.chars().take(37).collect();
        format!("'{short}...'")
    } else {
        format!("'{e}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        assert_eq!(hex(b"\x00\xffA"), "00ff41");
        assert_eq!(unhex(b"00FF41").unwrap(), b"\x00\xffA");
        assert!(unhex(b"0").is_err());
        assert!(unhex(b"zz").is_err());
    }

    #[test]
    fn escaping() {
        assert_eq!(escaped(b"a'b\\c\x01\x7f"), "a\\'b\\\\c\\x01\\x7f");
    }
}
