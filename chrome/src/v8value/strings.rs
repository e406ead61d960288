//! JavaScript strings as V8 wrote them, borrowed from the serialized bytes.
//!
//! A JavaScript string is a sequence of UTF-16 code units that need not be valid UTF-16
//! (lone surrogates are allowed). V8 writes a string whose units all fit in a byte as
//! Latin-1, any other as UTF-16LE; older data and Blink's own strings use UTF-8.

use std::borrow::Cow;

/// A string in the encoding it was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsStr<'a> {
    /// One byte per code unit (`kOneByteString`).
    Latin1(&'a [u8]),
    /// Two bytes per code unit, little-endian (`kTwoByteString`); an even length.
    Utf16Le(&'a [u8]),
    /// UTF-8 (`kUtf8String`, Blink's strings); invalid sequences read as U+FFFD, as V8 and
    /// Blink read them.
    Utf8(&'a [u8]),
}

impl<'a> JsStr<'a> {
    /// The UTF-16 code units.
    pub fn units(&self) -> Units<'a> {
        match *self {
            JsStr::Latin1(b) => Units::Latin1(b.iter()),
            JsStr::Utf16Le(b) => Units::Utf16(b.chunks_exact(2)),
            JsStr::Utf8(b) => Units::Utf8 {
                chars: String::from_utf8_lossy(b)
                    .encode_utf16()
                    .collect::<Vec<_>>(),
                at: 0,
            },
        }
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        match self {
            JsStr::Latin1(b) | JsStr::Utf16Le(b) | JsStr::Utf8(b) => b.is_empty(),
        }
    }

    /// The string as Rust text; lone surrogates become U+FFFD.
    pub fn to_string_lossy(&self) -> Cow<'a, str> {
        match *self {
            JsStr::Latin1(b) if b.is_ascii() => match std::str::from_utf8(b) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => Cow::Owned(b.iter().map(|&c| c as char).collect()),
            },
            JsStr::Latin1(b) => Cow::Owned(b.iter().map(|&c| c as char).collect()),
            JsStr::Utf8(b) => String::from_utf8_lossy(b),
            JsStr::Utf16Le(_) => Cow::Owned(
                char::decode_utf16(self.units())
                    .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
                    .collect(),
            ),
        }
    }

    /// Whether both hold the same code units, whatever their encodings.
    pub fn same_units(&self, other: &JsStr<'_>) -> bool {
        match (self, other) {
            (JsStr::Latin1(a), JsStr::Latin1(b)) | (JsStr::Utf16Le(a), JsStr::Utf16Le(b)) => a == b,
            _ => self.units().eq(other.units()),
        }
    }

    /// The array index this string names (`"0"`, `"17"`; not `"01"` or `"4294967295"`).
    pub fn as_array_index(&self) -> Option<u32> {
        let mut n: u64 = 0;
        let mut len = 0;
        for u in self.units() {
            let d = u.checked_sub(u16::from(b'0')).filter(|&d| d <= 9)?;
            if len > 0 && n == 0 {
                return None; // a leading zero
            }
            n = n * 10 + u64::from(d);
            len += 1;
            if len > 10 {
                return None;
            }
        }
        (len > 0 && n <= u64::from(u32::MAX - 1)).then_some(n as u32)
    }
}

/// The code units of a [`JsStr`].
#[derive(Debug, Clone)]
pub enum Units<'a> {
    /// Of a Latin-1 string.
    Latin1(std::slice::Iter<'a, u8>),
    /// Of a UTF-16LE string.
    Utf16(std::slice::ChunksExact<'a, u8>),
    /// Of a UTF-8 string (converted up front).
    Utf8 {
        /// The units.
        chars: Vec<u16>,
        /// The next one.
        at: usize,
    },
}

impl Iterator for Units<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        match self {
            Units::Latin1(it) => it.next().map(|&b| u16::from(b)),
            Units::Utf16(it) => it.next().map(|c| u16::from_le_bytes([c[0], c[1]])),
            Units::Utf8 { chars, at } => {
                let u = chars.get(*at).copied();
                *at += 1;
                u
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_give_code_units() {
        assert_eq!(JsStr::Latin1(b"\xe9t\xe9").to_string_lossy(), "été");
        let s = JsStr::Utf16Le(&[0x3d, 0xd8, 0x00, 0xde]); // U+1F600 as a surrogate pair
        assert_eq!(s.units().collect::<Vec<_>>(), vec![0xd83d, 0xde00]);
        assert_eq!(s.to_string_lossy(), "😀");
        // A lone surrogate stays a unit, and is shown as U+FFFD.
        let lone = JsStr::Utf16Le(&[0x00, 0xd8]);
        assert_eq!(lone.units().collect::<Vec<_>>(), vec![0xd800]);
        assert_eq!(lone.to_string_lossy(), "\u{fffd}");
        // Invalid UTF-8 reads as U+FFFD.
        assert_eq!(JsStr::Utf8(b"a\xffb").to_string_lossy(), "a\u{fffd}b");
        assert!(JsStr::Latin1(b"ab").same_units(&JsStr::Utf16Le(b"a\0b\0")));
        assert!(!JsStr::Latin1(b"ab").same_units(&JsStr::Utf16Le(b"a\0")));
    }

    #[test]
    fn array_indexes_are_canonical() {
        let idx = |s: &str| JsStr::Latin1(s.as_bytes()).as_array_index();
        assert_eq!(idx("0"), Some(0));
        assert_eq!(idx("17"), Some(17));
        assert_eq!(idx("4294967294"), Some(u32::MAX - 1));
        assert_eq!(idx("4294967295"), None);
        assert_eq!(idx("01"), None);
        assert_eq!(idx(""), None);
        assert_eq!(idx("1a"), None);
        assert_eq!(idx("-1"), None);
        assert_eq!(idx("99999999999"), None);
    }
}
