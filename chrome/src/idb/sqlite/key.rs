//! IndexedDB keys as Chromium's SQLite backend stores them (`records.key`,
//! `index_references.key` and `record_key`): an encoding whose bytes sort as the keys do, so
//! SQLite compares them with `memcmp`.
//!
//! ```text
//! key    = 10 double | 20 double | 30 string | 40 binary | 50 key* 00
//!          number      date        string      binary      array (ends with 00)
//! double = 8 bytes BE: the IEEE bits with the sign bit set (x >= 0, -0 as 0)
//!          or every bit inverted (x < 0)
//! string = per UTF-16 code unit c:  c < 0x7F:    c + 1                (01..7F)
//!                                   c < 0x4000:  80 | c >> 8, c & FF  (80..BF xx)
//!                                   otherwise:   FF, c >> 8, c & FF
//!          then 00
//! binary = 00 (empty), or per 8-byte chunk 09 + 8 bytes (the last padded with 00),
//!          then the last chunk's length (01..08)
//! ```
//! (Chromium's `EncodeSortableIDBKey` in `content/browser/indexed_db/`, as Chromium 156
//! writes it; the type bytes leave gaps for new types.)

use super::super::key::IdbKey;

/// Type bytes.
const NUMBER: u8 = 0x10;
const DATE: u8 = 0x20;
const STRING: u8 = 0x30;
const BINARY: u8 = 0x40;
const ARRAY: u8 = 0x50;
/// Ends a string, a binary key or an array.
const SENTINEL: u8 = 0x00;
/// Starts a full 8-byte chunk of a binary key.
const CHUNK_MARKER: u8 = 0x09;
const CHUNK: usize = 8;
/// Arrays nested deeper are refused (Chromium's `IndexedDBKey::kMaximumDepth`).
const MAX_DEPTH: usize = 2000;
const SIGN: u64 = 1 << 63;

/// Why a stored key does not decode, and at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError {
    /// Offset in the key's bytes.
    pub offset: usize,
    /// What is wrong there.
    pub what: &'static str,
}

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte {} of the key", self.what, self.offset)
    }
}

/// Decodes a key as Chromium's SQLite backend stores it; every byte must be used.
///
/// # Errors
/// An unknown type byte, a value cut short, bytes after the key, an array nested deeper
/// than 2,000 levels; with the offset.
pub fn decode_sortable_key(bytes: &[u8]) -> Result<IdbKey, KeyError> {
    let mut at = 0usize;
    // Arrays being filled, innermost last.
    let mut open: Vec<Vec<IdbKey>> = Vec::new();
    loop {
        let err = |offset, what| Err(KeyError { offset, what });
        let Some(&tag) = bytes.get(at) else {
            return err(at, "the key is cut short");
        };
        at += 1;
        let key = match tag {
            ARRAY => {
                if open.len() >= MAX_DEPTH {
                    return err(at - 1, "arrays nested too deep");
                }
                open.push(Vec::new());
                continue;
            }
            SENTINEL if !open.is_empty() => IdbKey::Array(open.pop().unwrap_or_default()),
            NUMBER | DATE => {
                let Some(b) = bytes.get(at..at + 8) else {
                    return err(at, "a number cut short");
                };
                at += 8;
                let mut raw = [0u8; 8];
                raw.copy_from_slice(b);
                let x = decode_double(u64::from_be_bytes(raw));
                if tag == NUMBER {
                    IdbKey::Number(x)
                } else {
                    IdbKey::Date(x)
                }
            }
            STRING => IdbKey::String(string(bytes, &mut at)?),
            BINARY => IdbKey::Binary(binary(bytes, &mut at)?),
            _ => return err(at - 1, "an unknown key type byte"),
        };
        match open.last_mut() {
            Some(items) => items.push(key),
            None if at == bytes.len() => return Ok(key),
            None => return err(at, "bytes after the key"),
        }
    }
}

fn decode_double(bits: u64) -> f64 {
    f64::from_bits(if bits & SIGN != 0 { bits ^ SIGN } else { !bits })
}

fn string(bytes: &[u8], at: &mut usize) -> Result<Vec<u16>, KeyError> {
    let mut units = Vec::new();
    loop {
        let start = *at;
        let cut = KeyError {
            offset: start,
            what: "a string cut short",
        };
        let b = *bytes.get(start).ok_or(cut.clone())?;
        let (unit, len) = match b {
            SENTINEL => {
                *at += 1;
                return Ok(units);
            }
            0x01..=0x7f => (u16::from(b) - 1, 1),
            0x80..=0xbf => {
                let lo = *bytes.get(start + 1).ok_or(cut)?;
                (u16::from(b & 0x3f) << 8 | u16::from(lo), 2)
            }
            0xff => {
                let (hi, lo) = (bytes.get(start + 1), bytes.get(start + 2));
                let (Some(&hi), Some(&lo)) = (hi, lo) else {
                    return Err(cut);
                };
                (u16::from(hi) << 8 | u16::from(lo), 3)
            }
            _ => {
                return Err(KeyError {
                    offset: start,
                    what: "a byte no string code unit starts with",
                })
            }
        };
        units.push(unit);
        *at += len;
    }
}

fn binary(bytes: &[u8], at: &mut usize) -> Result<Vec<u8>, KeyError> {
    let mut out = Vec::new();
    loop {
        let start = *at;
        let b = *bytes.get(start).ok_or(KeyError {
            offset: start,
            what: "a binary key cut short",
        })?;
        *at += 1;
        match b {
            SENTINEL if out.is_empty() => return Ok(out),
            CHUNK_MARKER => {
                let chunk = bytes.get(*at..*at + CHUNK).ok_or(KeyError {
                    offset: *at,
                    what: "a binary key cut short",
                })?;
                out.extend_from_slice(chunk);
                *at += CHUNK;
            }
            1..=8 if !out.is_empty() => {
                let pad = CHUNK - usize::from(b);
                let keep = out.len() - pad;
                if out[keep..].iter().any(|&x| x != 0) {
                    return Err(KeyError {
                        offset: start,
                        what: "a binary key's padding is not zero",
                    });
                }
                out.truncate(keep);
                return Ok(out);
            }
            _ => {
                return Err(KeyError {
                    offset: start,
                    what: "a byte no binary key chunk starts with",
                })
            }
        }
    }
}

/// Encodes a key as Chromium's SQLite backend stores it (for lookups); `None` for the
/// keys it never stores (`Min`, `Null`, NaN).
pub fn encode_sortable_key(key: &IdbKey) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    encode_into(key, &mut out, 0)?;
    Some(out)
}

fn encode_into(key: &IdbKey, out: &mut Vec<u8>, depth: usize) -> Option<()> {
    match key {
        IdbKey::Number(x) | IdbKey::Date(x) => {
            if x.is_nan() {
                return None;
            }
            out.push(if matches!(key, IdbKey::Number(_)) {
                NUMBER
            } else {
                DATE
            });
            let x = if *x == 0.0 { 0.0 } else { *x };
            let bits = x.to_bits();
            let bits = if bits & SIGN != 0 { !bits } else { bits | SIGN };
            out.extend_from_slice(&bits.to_be_bytes());
        }
        IdbKey::String(units) => {
            out.push(STRING);
            for &c in units {
                match c {
                    0..=0x7e => out.push(c as u8 + 1),
                    0x7f..=0x3fff => out.extend_from_slice(&[0x80 | (c >> 8) as u8, c as u8]),
                    _ => out.extend_from_slice(&[0xff, (c >> 8) as u8, c as u8]),
                }
            }
            out.push(SENTINEL);
        }
        IdbKey::Binary(b) => {
            out.push(BINARY);
            if b.is_empty() {
                out.push(SENTINEL);
            }
            for chunk in b.chunks(CHUNK) {
                out.push(CHUNK_MARKER);
                out.extend_from_slice(chunk);
                out.resize(out.len() + CHUNK - chunk.len(), 0);
            }
            if let Some(last) = b.chunks(CHUNK).last() {
                out.push(last.len() as u8);
            }
        }
        IdbKey::Array(items) => {
            if depth >= MAX_DEPTH {
                return None;
            }
            out.push(ARRAY);
            for k in items {
                encode_into(k, out, depth + 1)?;
            }
            out.push(SENTINEL);
        }
        IdbKey::Min | IdbKey::Null => return None,
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> IdbKey {
        IdbKey::String(x.encode_utf16().collect())
    }

    /// Bytes Chromium 156 wrote (testdata/idb_sqlite), each with the key the page stored.
    #[test]
    fn chromium_written_keys() {
        let cases: Vec<(&str, IdbKey)> = vec![
            ("10bff0000000000000", IdbKey::Number(1.0)),
            ("103fe3ffffffffffff", IdbKey::Number(-7.0)),
            ("10401fffffffffffff", IdbKey::Number(-0.5)),
            ("108000000000000000", IdbKey::Number(0.0)),
            ("10fff0000000000000", IdbKey::Number(f64::INFINITY)),
            ("10000fffffffffffff", IdbKey::Number(f64::NEG_INFINITY)),
            ("203e6b668fffffffff", IdbKey::Date(-86400000.0)),
            ("3000", s("")),
            ("304200", s("A")),
            ("3080e97580e900", s("\u{e9}t\u{e9}")),
            ("30ff65e5ff672c00", s("\u{65e5}\u{672c}")),
            ("30ffd83dffde0021666e706b6a00", s("\u{1f600} emoji")),
            ("30ffffff00", IdbKey::String(vec![0xffff])),
            ("4000", IdbKey::Binary(vec![])),
            ("4009000000000000000001", IdbKey::Binary(vec![0])),
            ("4009fffe00000000000002", IdbKey::Binary(vec![255, 254])),
            ("5000", IdbKey::Array(vec![])),
            ("50500000", IdbKey::Array(vec![IdbKey::Array(vec![])])),
            ("50300000", IdbKey::Array(vec![s("")])),
            (
                "5020c014000000000000400909000000000000000100",
                IdbKey::Array(vec![IdbKey::Date(5.0), IdbKey::Binary(vec![9])]),
            ),
        ];
        for (hex, key) in cases {
            let bytes: Vec<u8> = (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                .collect();
            assert_eq!(decode_sortable_key(&bytes).unwrap(), key, "{hex}");
            assert_eq!(encode_sortable_key(&key).unwrap(), bytes, "{hex}");
        }
    }

    #[test]
    fn long_binary_and_bad_bytes() {
        let key = IdbKey::Binary((0..20).collect());
        let enc = encode_sortable_key(&key).unwrap();
        assert_eq!(enc.len(), 1 + 3 * 9 + 1);
        assert_eq!(decode_sortable_key(&enc).unwrap(), key);
        for bad in [
            &b""[..],
            b"\x10\x00",
            b"\x60",
            b"\x30\x41",
            b"\x30\xc0\x00\x00",
            b"\x40\x09\x01\x02\x03\x04\x05\x06\x07\x08\x01",
            b"\x50\x10",
            b"\x30\x00\x00",
        ] {
            assert!(decode_sortable_key(bad).is_err(), "{bad:?}");
        }
        let deep = [vec![ARRAY; 3000], vec![SENTINEL; 3000]].concat();
        assert_eq!(decode_sortable_key(&deep).unwrap_err().offset, 2000);
        assert_eq!(encode_sortable_key(&IdbKey::Number(f64::NAN)), None);
    }
}
