//! IndexedDB keys in their JSON form (`idb::parse_key_json`, `IdbKey`'s `Display`): every
//! key a page can store prints as JSON that reads back as the same key, lone surrogates
//! and -0 included; the documented forms read as documented; what is not a key is refused
//! with its offset, and no text makes the reader panic or recurse without bound.

use proptest::prelude::*;
use sst_chrome::idb::{parse_key_json, IdbKey};

fn units(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

/// Keys a page can store: numbers (no NaN), valid dates, any UTF-16, any bytes, arrays.
fn stored_key() -> impl Strategy<Value = IdbKey> {
    let number = prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(5e-324),
        Just(1e21),
        any::<f64>().prop_filter("a key is never NaN", |x| !x.is_nan()),
    ];
    let date = (-8_640_000_000_000_000i64..=8_640_000_000_000_000).prop_map(|ms| ms as f64);
    let leaf = prop_oneof![
        number.prop_map(IdbKey::Number),
        date.prop_map(IdbKey::Date),
        prop::collection::vec(
            prop_oneof![0u16..0x20, 0x20u16..0x7f, 0xd800u16..0xe000, any::<u16>()],
            0..6
        )
        .prop_map(IdbKey::String),
        prop::collection::vec(any::<u8>(), 0..5).prop_map(IdbKey::Binary),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop::collection::vec(inner, 0..4).prop_map(IdbKey::Array)
    })
}

/// Equal as keys and in their bytes (-0 is not 0 here: it is encoded apart).
fn same(a: &IdbKey, b: &IdbKey) -> bool {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    a.encode_into(&mut x);
    b.encode_into(&mut y);
    x == y
}

proptest! {
    #[test]
    fn every_stored_key_prints_as_json_that_reads_back_as_itself(k in stored_key()) {
        let text = k.to_string();
        let back = parse_key_json(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert!(same(&k, &back), "{text} read back as {back}");
        // And it is JSON (serde_json reads it, lone surrogates aside).
        if !text.contains("\\ud") {
            prop_assert!(serde_json::from_str::<serde_json::Value>(&text).is_ok(), "{text}");
        }
    }

    #[test]
    fn no_text_panics(s in "[\\[\\]{}\":,0-9a-z$\\\\ .eE+-]{0,40}") {
        let _ = parse_key_json(&s);
    }
}

#[test]
fn the_documented_forms() {
    let cases: Vec<(&str, IdbKey)> = vec![
        ("7", IdbKey::Number(7.0)),
        ("-1.5", IdbKey::Number(-1.5)),
        ("1e+21", IdbKey::Number(1e21)),
        ("1E21", IdbKey::Number(1e21)),
        ("5e-324", IdbKey::Number(5e-324)),
        (
            r#"{"$type":"number","value":"Infinity"}"#,
            IdbKey::Number(f64::INFINITY),
        ),
        (
            r#"{"value":"-Infinity","$type":"number"}"#,
            IdbKey::Number(f64::NEG_INFINITY),
        ),
        (r#"{"$type":"number","value":"-0"}"#, IdbKey::Number(-0.0)),
        (r#""k7""#, IdbKey::String(units("k7"))),
        (r#""a\ud800b""#, IdbKey::String(vec![0x61, 0xd800, 0x62])),
        (r#""\ud83d\ude00""#, IdbKey::String(units("😀"))),
        (r#""😀""#, IdbKey::String(units("😀"))),
        (
            r#""q\"\\\/\b\f\n\r\t\u0001""#,
            IdbKey::String(units("q\"\\/\u{8}\u{c}\n\r\t\u{1}")),
        ),
        (
            r#"{"$type":"date","value":1700000000123}"#,
            IdbKey::Date(1.7e12 + 123.0),
        ),
        (
            r#"{"$type":"date","value":{"$type":"number","value":"-0"}}"#,
            IdbKey::Date(0.0),
        ),
        (
            r#"{"$type":"ArrayBuffer","hex":"00fF"}"#,
            IdbKey::Binary(vec![0, 255]),
        ),
        (r#"{"$type":"Uint8Array","hex":""}"#, IdbKey::Binary(vec![])),
        (
            r#" [ 1 , "a" , [ ] ] "#,
            IdbKey::Array(vec![
                IdbKey::Number(1.0),
                IdbKey::String(units("a")),
                IdbKey::Array(vec![]),
            ]),
        ),
    ];
    for (text, want) in cases {
        let got = parse_key_json(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert!(same(&got, &want), "{text}: {got}");
    }
    // How keys print.
    let printed = [
        (IdbKey::Number(1.0), "1"),
        (IdbKey::Number(1e21), "1e+21"),
        (IdbKey::Number(-0.0), r#"{"$type":"number","value":"-0"}"#),
        (
            IdbKey::Number(f64::NEG_INFINITY),
            r#"{"$type":"number","value":"-Infinity"}"#,
        ),
        (IdbKey::Date(0.0), r#"{"$type":"date","value":0}"#),
        (
            IdbKey::String(vec![0x22, 0xdc00, 0x1f, 0xe9]),
            r#""\"\udc00\u001fé""#,
        ),
        (
            IdbKey::Binary(vec![0, 255]),
            r#"{"$type":"ArrayBuffer","hex":"00ff"}"#,
        ),
        (
            IdbKey::Array(vec![IdbKey::Number(1.0), IdbKey::String(units("a"))]),
            r#"[1,"a"]"#,
        ),
        (IdbKey::Min, r#"{"$type":"min"}"#),
        (IdbKey::Null, r#"{"$type":"invalid"}"#),
    ];
    for (k, want) in printed {
        assert_eq!(k.to_string(), want);
    }
}

#[test]
fn what_is_not_a_key_is_refused_with_its_offset() {
    let cases = [
        ("", 0),
        ("true", 0),
        ("null", 0),
        ("[1,]", 3),
        ("[1 2]", 3),
        ("7 8", 2),
        ("01", 1),
        ("1.", 2),
        ("1e999", 5),
        ("\"abc", 0),
        ("\"a\\x\"", 2),
        ("\"\\ud8\"", 3),
        ("\"tab\there\"", 4),
        ("{}", 0),
        (r#"{"a":1}"#, 0),
        (r#"{"$type":"date","value":1,"value":2}"#, 26),
        (r#"{"$type":"date","value":"1"}"#, 0),
        (r#"{"$type":"date","value":1,"x":2}"#, 0),
        (r#"{"$type":"number","value":"NaN"}"#, 0),
        (r#"{"$type":"ArrayBuffer","hex":"0"}"#, 0),
        (r#"{"$type":"ArrayBuffer","hex":"zz"}"#, 0),
        (r#"{"$type":"min"}"#, 0),
        (r#"{"$type":"set","values":[]}"#, 24),
        (r#"{"$type":"set","values":1}"#, 0),
        (
            r#"[{"$type":"date","value":{"$type":"date","value":1}}]"#,
            25,
        ),
        (
            r#"{"$type":"date","value":{"$type":"number","value":{"a":1}}}"#,
            50,
        ),
    ];
    let mut wrong = Vec::new();
    for (text, at) in cases {
        match parse_key_json(text) {
            Ok(k) => wrong.push(format!("{text} read as {k}")),
            Err(sst_chrome::Error::KeyJson { offset, what }) if offset != at => {
                wrong.push(format!("{text}: at {offset}, not {at}: {what}"))
            }
            Err(sst_chrome::Error::KeyJson { .. }) => {}
            Err(e) => wrong.push(format!("{text}: {e}")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // Chromium's depth limit, without recursing without bound past it.
    let deep = "[".repeat(2001) + &"]".repeat(2001);
    assert!(parse_key_json(&deep).is_err());
    let ok = "[".repeat(2000) + &"]".repeat(2000);
    assert!(parse_key_json(&ok).is_ok());
    let deeper = "[".repeat(1_000_000);
    assert!(parse_key_json(&deeper).is_err());
}
