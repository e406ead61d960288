//! JavaScript strings and numbers as JSON text, spelled as `JSON.stringify` spells them:
//! the writers every decoded row uses (`"data"`, localStorage and sessionStorage).

use sst_chrome::v8value::{bigint_to_decimal, write_js_number, JsStr, Value};

/// A primitive: strings and finite numbers as themselves, the rest as `$type` objects.
pub fn push_primitive(out: &mut Vec<u8>, v: &Value<'_>) {
    match v {
        Value::Undefined => out.extend_from_slice(b"{\"$type\":\"undefined\"}"),
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(x) => push_number(out, *x),
        Value::BigInt(b) => {
            out.extend_from_slice(b"{\"$type\":\"bigint\",\"value\":\"");
            out.extend_from_slice(bigint_to_decimal(b.negative, b.magnitude).as_bytes());
            out.extend_from_slice(b"\"}");
        }
        Value::String(s) => push_str(out, s),
        Value::Object(_) => out.extend_from_slice(b"null"),
    }
}

/// An integer in decimal.
pub fn push_int(out: &mut Vec<u8>, n: i64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut m = n.unsigned_abs();
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    if n < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}

/// A number: finite and not -0 as JavaScript prints it, else `{"$type":"number",...}`.
pub fn push_number(out: &mut Vec<u8>, x: f64) {
    // Integers below 2^53 print as their digits (most numbers stored are).
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 && (x != 0.0 || x.is_sign_positive()) {
        push_int(out, x as i64);
        return;
    }
    let special = if x.is_nan() {
        "NaN"
    } else if x == f64::INFINITY {
        "Infinity"
    } else if x == f64::NEG_INFINITY {
        "-Infinity"
    } else if x == 0.0 && x.is_sign_negative() {
        "-0"
    } else {
        let mut s = String::new();
        write_js_number(&mut s, x);
        out.extend_from_slice(s.as_bytes());
        return;
    };
    out.extend_from_slice(format!("{{\"$type\":\"number\",\"value\":\"{special}\"}}").as_bytes());
}

/// A JavaScript string as `JSON.stringify` writes it: `\"`, `\\`, `\b \f \n \r \t`, other
/// control characters and lone surrogates as lowercase `\uXXXX`, the rest as UTF-8.
pub fn push_str(out: &mut Vec<u8>, s: &JsStr<'_>) {
    out.push(b'"');
    push_str_inside(out, s);
}

/// A property name of a page's object: as [`push_str`], with one more `$` in front of a
/// name that starts with `$` (names with one `$` are the contract's markers, `$type` and
/// `$ref`; a reader takes one `$` off every page name that starts with `$$`).
pub fn push_property_name(out: &mut Vec<u8>, s: &JsStr<'_>) {
    let dollar = match *s {
        JsStr::Latin1(b) | JsStr::Utf8(b) => b.first() == Some(&b'$'),
        JsStr::Utf16Le(b) => b.starts_with(&[b'$', 0]),
    };
    out.extend_from_slice(if dollar { b"\"$" } else { b"\"" });
    push_str_inside(out, s);
}

/// The string's text and closing quote.
fn push_str_inside(out: &mut Vec<u8>, s: &JsStr<'_>) {
    if let JsStr::Latin1(b) = s {
        if b.iter()
            .all(|&c| (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\')
        {
            out.extend_from_slice(b);
            out.push(b'"');
            return;
        }
    }
    let mut units = s.units().peekable();
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
            Some(c) => push_char(out, c),
            None => out.extend_from_slice(format!("\\u{u:04x}").as_bytes()),
        }
    }
    out.push(b'"');
}

fn push_char(out: &mut Vec<u8>, c: char) {
    match c {
        '"' => out.extend_from_slice(b"\\\""),
        '\\' => out.extend_from_slice(b"\\\\"),
        '\u{8}' => out.extend_from_slice(b"\\b"),
        '\u{c}' => out.extend_from_slice(b"\\f"),
        '\n' => out.extend_from_slice(b"\\n"),
        '\r' => out.extend_from_slice(b"\\r"),
        '\t' => out.extend_from_slice(b"\\t"),
        c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
        c => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// A Rust string as a JSON string (same escapes).
pub fn push_plain(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    s.chars().for_each(|c| push_char(out, c));
    out.push(b'"');
}
