//! IndexedDB keys as JSON: the one form keys are printed in (`idb.key`, the text rows) and
//! read in (`sst db get DIR --database D --store S KEY`), the same form a key takes as a
//! value in `data` (a key is a JavaScript value; a binary key reads back as an ArrayBuffer).
//!
//! ```text
//! number        7   -1.5   1e+21          as JavaScript prints it
//!   ±Infinity   {"$type":"number","value":"Infinity"}   ("-Infinity", "-0", "NaN" alike)
//! string        "k7"   "a\ud800b"        JSON, lone surrogates as \uXXXX escapes
//! date          {"$type":"date","value":1700000000123}   milliseconds since 1970
//! binary        {"$type":"ArrayBuffer","hex":"00ff"}
//! array         [1,"a",[]]
//! Chromium's bounds (never a stored key): {"$type":"min"}, {"$type":"invalid"}
//! ```
//!
//! [`parse_key_json`] reads the forms a page can store a record under (on input a binary
//! key may also be named by a typed array's or DataView's `$type`, meaning its bytes); it
//! is strict JSON otherwise, with no whitespace or field rules beyond JSON's.

use std::fmt;

use super::format::MAX_KEY_DEPTH;
use super::key::IdbKey;
use crate::error::{Error, Result};
use crate::v8value::write_js_number;

impl fmt::Display for IdbKey {
    /// The key's JSON form (above).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IdbKey::Min => f.write_str("{\"$type\":\"min\"}"),
            IdbKey::Null => f.write_str("{\"$type\":\"invalid\"}"),
            IdbKey::Number(x) => write_number(f, *x),
            IdbKey::Date(ms) => {
                f.write_str("{\"$type\":\"date\",\"value\":")?;
                write_number(f, *ms)?;
                f.write_str("}")
            }
            IdbKey::String(units) => write_json_string(f, units.iter().copied()),
            IdbKey::Binary(b) => {
                f.write_str("{\"$type\":\"ArrayBuffer\",\"hex\":\"")?;
                b.iter().try_for_each(|x| write!(f, "{x:02x}"))?;
                f.write_str("\"}")
            }
            IdbKey::Array(items) => {
                // Decoded keys nest at most MAX_KEY_DEPTH deep: the recursion is bounded.
                f.write_str("[")?;
                for (i, k) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{k}")?;
                }
                f.write_str("]")
            }
        }
    }
}

/// A number as JavaScript prints it; the values JSON has no number for (±Infinity, NaN,
/// -0) as `{"$type":"number","value":"Infinity"}`.
fn write_number(f: &mut fmt::Formatter<'_>, x: f64) -> fmt::Result {
    let special = if x.is_nan() {
        "NaN"
    } else if x.is_infinite() {
        if x > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        }
    } else if x == 0.0 && x.is_sign_negative() {
        "-0"
    } else {
        let mut s = String::new();
        write_js_number(&mut s, x);
        return f.write_str(&s);
    };
    write!(f, "{{\"$type\":\"number\",\"value\":\"{special}\"}}")
}

/// UTF-16 code units as a JSON string, as `JSON.stringify` writes it: `\"`, `\\`,
/// `\b \f \n \r \t`, other control characters and lone surrogates as lowercase `\uXXXX`,
/// everything else as itself.
pub fn write_json_string(w: &mut impl fmt::Write, units: impl Iterator<Item = u16>) -> fmt::Result {
    w.write_char('"')?;
    let mut units = units.peekable();
    while let Some(u) = units.next() {
        let c = match u {
            0xd800..=0xdbff => match units.peek() {
                Some(&lo) if (0xdc00..=0xdfff).contains(&lo) => {
                    units.next();
                    char::from_u32(
                        0x10000 + ((u32::from(u) - 0xd800) << 10) + (u32::from(lo) - 0xdc00),
                    )
                }
                _ => None,
            },
            0xdc00..=0xdfff => None,
            _ => char::from_u32(u.into()),
        };
        match c {
            Some('"') => w.write_str("\\\"")?,
            Some('\\') => w.write_str("\\\\")?,
            Some('\u{8}') => w.write_str("\\b")?,
            Some('\u{c}') => w.write_str("\\f")?,
            Some('\n') => w.write_str("\\n")?,
            Some('\r') => w.write_str("\\r")?,
            Some('\t') => w.write_str("\\t")?,
            Some(c) if (c as u32) >= 0x20 => w.write_char(c)?,
            _ => write!(w, "\\u{u:04x}")?,
        }
    }
    w.write_char('"')
}

/// Reads a key in its JSON form (module docs). Refused with the byte offset and what is
/// wrong: anything that is not JSON, values that are not keys (`true`, `null`, NaN, plain
/// objects), unknown `$type`s or fields, Chromium's bounds, arrays nested deeper than
/// Chromium allows.
///
/// # Errors
/// [`Error::KeyJson`].
pub fn parse_key_json(text: &str) -> Result<IdbKey> {
    let mut p = Parser {
        s: text.as_bytes(),
        at: 0,
    };
    p.ws();
    let k = p.key(0)?;
    p.ws();
    if p.at < p.s.len() {
        return Err(p.err("text after the key"));
    }
    Ok(k)
}

/// A JSON value as far as keys need: the `$type` objects are read into their fields.
enum Json {
    Number(f64),
    String(Vec<u16>),
}

struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn err(&self, what: &'static str) -> Error {
        Error::KeyJson {
            offset: self.at,
            what,
        }
    }

    fn ws(&mut self) {
        while self
            .s
            .get(self.at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn expect(&mut self, b: u8, what: &'static str) -> Result<()> {
        self.ws();
        if self.peek() != Some(b) {
            return Err(self.err(what));
        }
        self.at += 1;
        Ok(())
    }

    fn key(&mut self, depth: usize) -> Result<IdbKey> {
        self.ws();
        match self.peek() {
            Some(b'"') => Ok(IdbKey::String(self.string()?)),
            Some(b'[') => {
                if depth >= MAX_KEY_DEPTH {
                    return Err(self.err("arrays nested deeper than Chromium allows"));
                }
                self.at += 1;
                let mut items = Vec::new();
                self.ws();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(IdbKey::Array(items));
                }
                loop {
                    items.push(self.key(depth + 1)?);
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(IdbKey::Array(items));
                        }
                        _ => return Err(self.err("',' or ']' expected in an array")),
                    }
                }
            }
            Some(b'{') => self.typed(false),
            Some(b'-' | b'0'..=b'9') => Ok(IdbKey::Number(self.number()?)),
            Some(b't' | b'f' | b'n') => Err(self.err(
                "true, false and null are not IndexedDB keys (numbers, strings, dates, binary \
                 and arrays are)",
            )),
            None => Err(self.err("a key expected, the text ends")),
            Some(_) => Err(self.err("not JSON")),
        }
    }

    /// `{"$type": ..., ...}`: the fields in any order, each once; `nested` inside another's
    /// field (a date's value as `{"$type":"number",...}`), where no object may nest further.
    fn typed(&mut self, nested: bool) -> Result<IdbKey> {
        let start = self.at;
        self.at += 1;
        let mut fields: Vec<(Vec<u16>, Json)> = Vec::new();
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
        } else {
            loop {
                self.ws();
                if self.peek() != Some(b'"') {
                    return Err(self.err("a field name expected"));
                }
                let name_at = self.at;
                let name = self.string()?;
                if fields.iter().any(|(n, _)| *n == name) {
                    self.at = name_at;
                    return Err(self.err("the same field twice"));
                }
                self.expect(b':', "':' expected after a field name")?;
                self.ws();
                let value_at = self.at;
                let v = match self.peek() {
                    Some(b'"') => Json::String(self.string()?),
                    Some(b'-' | b'0'..=b'9') => Json::Number(self.number()?),
                    Some(b'{') if !nested => match self.typed(true)? {
                        IdbKey::Number(x) => Json::Number(x),
                        _ => {
                            self.at = value_at;
                            return Err(self.err("a number expected"));
                        }
                    },
                    _ => return Err(self.err("a string or a number expected")),
                };
                fields.push((name, v));
                self.ws();
                match self.peek() {
                    Some(b',') => self.at += 1,
                    Some(b'}') => {
                        self.at += 1;
                        break;
                    }
                    _ => return Err(self.err("',' or '}' expected in an object")),
                }
            }
        }
        let end = self.at;
        self.at = start;
        let field = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n.iter().copied().eq(name.encode_utf16()))
                .map(|(_, v)| v)
        };
        let Some(Json::String(t)) = field("$type") else {
            return Err(self.err(
                "an object is a key only in a $type form ({\"$type\":\"date\",\"value\":ms}, \
                 {\"$type\":\"ArrayBuffer\",\"hex\":\"...\"})",
            ));
        };
        let t = String::from_utf16_lossy(t);
        let only = |names: &[&str]| {
            fields.iter().all(|(n, _)| {
                let n = String::from_utf16_lossy(n);
                n == "$type" || names.contains(&n.as_str())
            })
        };
        let key = match t.as_str() {
            "number" if only(&["value"]) => match field("value") {
                Some(Json::String(v)) => match String::from_utf16_lossy(v).as_str() {
                    "Infinity" => IdbKey::Number(f64::INFINITY),
                    "-Infinity" => IdbKey::Number(f64::NEG_INFINITY),
                    "-0" => IdbKey::Number(-0.0),
                    "NaN" => return Err(self.err("NaN is not an IndexedDB key")),
                    _ => return Err(self.err("a number's value is Infinity, -Infinity or -0")),
                },
                Some(Json::Number(x)) => IdbKey::Number(*x),
                None => return Err(self.err("a number without its value")),
            },
            "date" if only(&["value"]) => match field("value") {
                // A Date holds integers only (TimeClip: -0 is 0).
                Some(Json::Number(x)) if x.is_finite() => IdbKey::Date(*x + 0.0),
                Some(Json::Number(_)) => return Err(self.err("an invalid date is not a key")),
                _ => return Err(self.err("a date's value is its milliseconds since 1970")),
            },
            "min" | "invalid" => {
                return Err(self.err("a bound Chromium uses, never the key of a record"))
            }
            t if BINARY_TYPES.contains(&t) && only(&["hex"]) => match field("hex") {
                Some(Json::String(h)) => {
                    IdbKey::Binary(unhex(h).ok_or_else(|| self.err("hex digits expected"))?)
                }
                _ => return Err(self.err("binary keys are written as hex")),
            },
            "number" | "date" => return Err(self.err("fields other than value")),
            t if BINARY_TYPES.contains(&t) => return Err(self.err("fields other than hex")),
            _ => return Err(self.err("not a key's $type (number, date, ArrayBuffer)")),
        };
        self.at = end;
        Ok(key)
    }

    /// A JSON string as UTF-16 code units (`\uXXXX` may be a lone surrogate).
    fn string(&mut self) -> Result<Vec<u16>> {
        let start = self.at;
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let rest = &self.s[self.at..];
            // The run up to the next quote, backslash or control character, as UTF-8.
            let run = rest
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or(Error::KeyJson {
                    offset: start,
                    what: "the string is not closed",
                })?;
            let text = std::str::from_utf8(&rest[..run]).map_err(|_| self.err("invalid UTF-8"))?;
            out.extend(text.encode_utf16());
            self.at += run;
            match self.s[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => {
                    let escape_at = self.at;
                    self.at += 1;
                    let e = self.peek().ok_or_else(|| self.err("a cut escape"))?;
                    self.at += 1;
                    out.push(match e {
                        b'"' => 0x22,
                        b'\\' => 0x5c,
                        b'/' => 0x2f,
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => 10,
                        b'r' => 13,
                        b't' => 9,
                        b'u' => {
                            let h = self
                                .s
                                .get(self.at..self.at + 4)
                                .and_then(|h| std::str::from_utf8(h).ok())
                                .and_then(|h| u16::from_str_radix(h, 16).ok())
                                .ok_or_else(|| self.err("four hex digits expected after \\u"))?;
                            self.at += 4;
                            h
                        }
                        _ => {
                            self.at = escape_at;
                            return Err(self.err("an unknown escape"));
                        }
                    });
                }
                _ => return Err(self.err("a control character inside a string")),
            }
        }
    }

    /// A JSON number.
    fn number(&mut self) -> Result<f64> {
        let start = self.at;
        let digits = |p: &mut Self| {
            let from = p.at;
            while p.peek().is_some_and(|b| b.is_ascii_digit()) {
                p.at += 1;
            }
            p.at > from
        };
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        if self.peek() == Some(b'0') {
            self.at += 1;
        } else if !digits(self) {
            return Err(self.err("digits expected"));
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if !digits(self) {
                return Err(self.err("digits expected after '.'"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            if !digits(self) {
                return Err(self.err("digits expected in the exponent"));
            }
        }
        let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
        let x: f64 = text.parse().map_err(|_| self.err("not a number"))?;
        if x.is_infinite() {
            // 1e999: JSON allows it, JavaScript reads Infinity; say it as Infinity.
            return Err(
                self.err("a number too large for a double (write Infinity as its $type form)")
            );
        }
        Ok(x)
    }
}

/// The `$type`s whose `hex` is a binary key's bytes: an ArrayBuffer (how a binary key
/// reads back), or any view (its bytes).
const BINARY_TYPES: [&str; 14] = [
    "ArrayBuffer",
    "DataView",
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "Float16Array",
    "Float32Array",
    "Float64Array",
    "BigInt64Array",
    "BigUint64Array",
];

fn unhex(units: &[u16]) -> Option<Vec<u8>> {
    if units.len() % 2 != 0 {
        return None;
    }
    let digit = |u: u16| char::from_u32(u.into())?.to_digit(16);
    units
        .chunks_exact(2)
        .map(|p| Some((digit(p[0])? * 16 + digit(p[1])?) as u8))
        .collect()
}
