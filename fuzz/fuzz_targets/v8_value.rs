//! Any bytes as a value Chrome stored: IndexedDB's wrapping, Blink's envelope, V8's
//! format, Blink's host objects, a blob entry.
//!
//! The first byte picks how the rest is read: as a whole record value (version varint,
//! wrapping, then the value), behind Chrome 156's envelope (so the bytes reach V8's tags at
//! once), as bare V8 data, or as a blob entry. Checked properties: nothing panics, hangs
//! or overflows the stack (nesting is unbounded); an error's offset lies within the bytes;
//! every object a decoded value refers to is in its table, and walking the whole graph
//! (each object once) with every accessor a renderer uses works.
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use sst_chrome::idb::{decode_external_objects, decode_record_value, unwrap_value, Unwrapped};
use sst_chrome::v8value::{
    bigint_to_decimal, decode, decode_v8, js_number_to_string, regexp_flags, Decoded, HostField,
    HostObject, JsStr, Object, PropertyKey, Value,
};

/// Chrome 156's envelope: Blink 21 (trailer offset 0), V8 16.
const ENV: &[u8] = b"\xff\x15\xfe\0\0\0\0\0\0\0\0\0\0\0\0\xff\x10";

fn text(s: &JsStr<'_>) {
    let n = s.units().count();
    let t = s.to_string_lossy();
    assert!(t.chars().count() <= n);
    let _ = s.as_array_index();
}

fn leaf(v: &Value<'_>, d: &Decoded<'_>, todo: &mut Vec<u32>) {
    match v {
        Value::Number(x) => {
            let _ = js_number_to_string(*x);
        }
        Value::BigInt(b) => {
            let _ = bigint_to_decimal(b.negative, b.magnitude);
        }
        Value::String(s) => text(s),
        Value::Object(id) => {
            assert!(d.object(*id).is_some(), "dangling object {}", id.0);
            todo.push(id.0);
        }
        _ => {}
    }
}

/// Visits every object reachable from the root once.
fn walk(d: &Decoded<'_>) {
    let mut seen = vec![false; d.objects.len()];
    let mut todo = Vec::new();
    leaf(&d.root, d, &mut todo);
    while let Some(id) = todo.pop() {
        if std::mem::replace(&mut seen[id as usize], true) {
            continue;
        }
        let o = &d.objects[id as usize];
        let _ = o.type_name();
        let key = |k: &PropertyKey<'_>| match k {
            PropertyKey::String(s) => text(s),
            PropertyKey::Number(x) => {
                let _ = js_number_to_string(*x);
            }
            PropertyKey::Index(_) => {}
        };
        match o {
            Object::Plain(props) => props.iter().for_each(|(k, v)| {
                key(k);
                leaf(v, d, &mut todo)
            }),
            Object::Array {
                length,
                elements,
                properties,
            } => {
                assert!(
                    elements.windows(2).all(|w| w[0].0 < w[1].0),
                    "elements out of order"
                );
                assert!(elements.last().is_none_or(|(i, _)| i < length));
                elements.iter().for_each(|(_, v)| leaf(v, d, &mut todo));
                properties.iter().for_each(|(k, v)| {
                    key(k);
                    leaf(v, d, &mut todo)
                });
            }
            Object::Map(e) => e.iter().for_each(|(k, v)| {
                leaf(k, d, &mut todo);
                leaf(v, d, &mut todo)
            }),
            Object::Set(vs) => vs.iter().for_each(|v| leaf(v, d, &mut todo)),
            Object::Boxed(v) => leaf(v, d, &mut todo),
            Object::RegExp { source, flags } => {
                text(source);
                let _ = regexp_flags(*flags);
            }
            Object::View {
                buffer,
                byte_offset,
                byte_length,
                ..
            } => match d.object(*buffer) {
                Some(Object::ArrayBuffer { bytes, .. }) => {
                    assert!(
                        byte_offset + byte_length <= bytes.len() as u64,
                        "view outside its buffer"
                    )
                }
                other => panic!("a view of {other:?}"),
            },
            Object::Error {
                message,
                stack,
                cause,
                ..
            } => {
                message.iter().chain(stack.iter()).for_each(text);
                cause.iter().for_each(|v| leaf(v, d, &mut todo));
            }
            Object::Host(HostObject::Other { fields, .. }) => fields.iter().for_each(|(_, f)| {
                if let HostField::Text(s) = f {
                    text(s)
                }
            }),
            Object::Host(_) | Object::Date(_) | Object::ArrayBuffer { .. } => {}
        }
    }
}

fn check(bytes: &[u8], v8_only: bool) {
    let r = if v8_only {
        decode_v8(bytes)
    } else {
        decode(bytes)
    };
    match r {
        Ok(d) => walk(&d),
        Err(e) => {
            assert!(e.offset <= bytes.len(), "{e} past {} bytes", bytes.len());
            let _ = e.to_string();
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 4 {
        0 => {
            if let Some(rv) = decode_record_value(rest) {
                match unwrap_value(rv.payload) {
                    Ok(Unwrapped::Value(Cow::Borrowed(b))) => check(b, false),
                    Ok(Unwrapped::Value(b)) => check(&b, false),
                    Ok(Unwrapped::InBlob { .. }) => {}
                    Err(e) => assert!(e.offset <= rv.payload.len()),
                }
            }
        }
        1 => check(&[ENV, rest].concat(), false),
        2 => check(rest, true),
        _ => {
            if let Err(e) = decode_external_objects(rest) {
                assert!(e.offset <= rest.len());
            }
        }
    }
});
