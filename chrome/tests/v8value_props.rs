//! Property tests of the Chrome value decoders: values written by a model of V8's
//! `ValueSerializer` (its writing rules, read from V8's `value-serializer.cc`) decode back
//! to themselves, shared objects and cycles included; and no bytes make any decoder of
//! Chrome's storage panic.

use proptest::prelude::*;
use sst_chrome::dom_storage::{decode_local_storage, decode_session_storage};
use sst_chrome::idb::{decode_external_objects, identify_sqlite, unwrap_value, Catalog};
use sst_chrome::v8value::{decode, decode_v8, JsStr, Object, ObjectId, PropertyKey, Value};

/// Chrome 156's envelope: Blink 21, empty trailer offset, V8 16.
const ENV: &[u8] = b"\xff\x15\xfe\0\0\0\0\0\0\0\0\0\0\0\0\xff\x10";

/// A JavaScript value to write.
#[derive(Debug, Clone)]
enum M {
    Undefined,
    Null,
    Bool(bool),
    Int(i32),
    Double(f64),
    Str(Vec<u16>),
    Date(f64),
    Object(Vec<(String, M)>),
    Array(Vec<Option<M>>),
    Map(Vec<(M, M)>),
    Set(Vec<M>),
    Buffer(Vec<u8>),
    /// The object written `n` objects before this point (modulo how many there are).
    Ref(usize),
}

/// What decoding must give: leaves, and objects with the id the writer gave them.
#[derive(Debug)]
enum Want {
    Leaf(M),
    Ref(u32),
    Object(u32, Vec<(String, Want)>),
    Array(u32, Vec<Option<Want>>),
    Map(u32, Vec<(Want, Want)>),
    Set(u32, Vec<Want>),
    Date(u32, f64),
    Buffer(u32, Vec<u8>),
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `WriteString`: Latin-1 when every unit fits a byte, else UTF-16LE, padded so that the
/// two-byte tag ends up on an even offset after its length.
fn write_string(out: &mut Vec<u8>, units: &[u16]) {
    if units.iter().all(|&u| u < 256) {
        out.push(b'"');
        varint(out, units.len() as u64);
        out.extend(units.iter().map(|&u| u as u8));
    } else {
        let n = units.len() as u64 * 2;
        let mut len = Vec::new();
        varint(&mut len, n);
        if (out.len() + 1 + len.len()) & 1 == 1 {
            out.push(0);
        }
        out.push(b'c');
        out.extend(len);
        out.extend(units.iter().flat_map(|u| u.to_le_bytes()));
    }
}

/// Writes `m` as V8 does, numbering objects in the order they start.
fn write(m: &M, out: &mut Vec<u8>, next: &mut u32) -> Want {
    match m {
        M::Undefined => out.push(b'_'),
        M::Null => out.push(b'0'),
        M::Bool(b) => out.push(if *b { b'T' } else { b'F' }),
        M::Int(i) => {
            out.push(b'I');
            varint(out, ((*i << 1) ^ (*i >> 31)) as u32 as u64);
        }
        M::Double(x) => {
            out.push(b'N');
            out.extend(x.to_le_bytes());
        }
        M::Str(u) => write_string(out, u),
        M::Date(ms) => {
            out.push(b'D');
            out.extend(ms.to_le_bytes());
            *next += 1;
            return Want::Date(*next - 1, *ms);
        }
        M::Ref(back) if *next > 0 => {
            let id = (*next - 1) - (*back as u32 % *next);
            out.push(b'^');
            varint(out, id.into());
            return Want::Ref(id);
        }
        M::Ref(_) => out.push(b'0'),
        M::Buffer(b) => {
            let id = *next;
            *next += 1;
            out.push(b'B');
            varint(out, b.len() as u64);
            out.extend(b);
            return Want::Buffer(id, b.clone());
        }
        M::Object(props) => {
            let id = *next;
            *next += 1;
            out.push(b'o');
            let mut want = Vec::new();
            for (k, v) in props {
                write_string(out, &k.encode_utf16().collect::<Vec<_>>());
                want.push((k.clone(), write(v, out, next)));
            }
            out.push(b'{');
            varint(out, props.len() as u64);
            return Want::Object(id, want);
        }
        M::Array(items) => {
            let id = *next;
            *next += 1;
            out.push(b'A');
            varint(out, items.len() as u64);
            let mut want = Vec::new();
            for it in items {
                match it {
                    None => {
                        out.push(b'-');
                        want.push(None);
                    }
                    Some(v) => want.push(Some(write(v, out, next))),
                }
            }
            out.push(b'$');
            varint(out, 0);
            varint(out, items.len() as u64);
            return Want::Array(id, want);
        }
        M::Map(entries) => {
            let id = *next;
            *next += 1;
            out.push(b';');
            let mut want = Vec::new();
            for (k, v) in entries {
                let k = write(k, out, next);
                want.push((k, write(v, out, next)));
            }
            out.push(b':');
            varint(out, entries.len() as u64 * 2);
            return Want::Map(id, want);
        }
        M::Set(values) => {
            let id = *next;
            *next += 1;
            out.push(b'\'');
            let want = values.iter().map(|v| write(v, out, next)).collect();
            out.push(b',');
            varint(out, values.len() as u64);
            return Want::Set(id, want);
        }
    }
    Want::Leaf(m.clone())
}

fn check(objects: &[Object<'_>], v: &Value<'_>, want: &Want) {
    let object = |id: &u32| {
        assert_eq!(*v, Value::Object(ObjectId(*id)));
        &objects[*id as usize]
    };
    match want {
        Want::Leaf(m) => match (m, v) {
            (M::Undefined, Value::Undefined)
            | (M::Null, Value::Null)
            | (M::Ref(_), Value::Null) => {}
            (M::Bool(a), Value::Bool(b)) => assert_eq!(a, b),
            (M::Int(a), Value::Number(b)) => assert_eq!(f64::from(*a), *b),
            (M::Double(a), Value::Number(b)) => assert!(a == b || (a.is_nan() && b.is_nan())),
            (M::Str(a), Value::String(b)) => assert_eq!(*a, b.units().collect::<Vec<_>>()),
            other => panic!("{other:?}"),
        },
        Want::Ref(id) => assert_eq!(*v, Value::Object(ObjectId(*id))),
        Want::Date(id, ms) => match object(id) {
            Object::Date(x) => assert!(x == ms || (x.is_nan() && ms.is_nan())),
            o => panic!("{o:?}"),
        },
        Want::Buffer(id, b) => match object(id) {
            Object::ArrayBuffer { bytes, .. } => assert_eq!(bytes, b),
            o => panic!("{o:?}"),
        },
        Want::Object(id, props) => {
            let Object::Plain(got) = object(id) else {
                panic!()
            };
            assert_eq!(got.len(), props.len());
            for ((gk, gv), (k, w)) in got.iter().zip(props) {
                let name = match gk {
                    PropertyKey::String(s) => s.to_string_lossy().into_owned(),
                    PropertyKey::Index(i) => i.to_string(),
                    PropertyKey::Number(_) => panic!("number key"),
                };
                assert_eq!(&name, k);
                check(objects, gv, w);
            }
        }
        Want::Array(id, items) => {
            let Object::Array {
                length,
                elements,
                properties,
            } = object(id)
            else {
                panic!()
            };
            assert_eq!((*length as usize, properties.len()), (items.len(), 0));
            let present: Vec<(u32, &Want)> = items
                .iter()
                .enumerate()
                .filter_map(|(i, w)| w.as_ref().map(|w| (i as u32, w)))
                .collect();
            assert_eq!(elements.len(), present.len());
            for ((gi, gv), (i, w)) in elements.iter().zip(present) {
                assert_eq!(*gi, i);
                check(objects, gv, w);
            }
        }
        Want::Map(id, entries) => {
            let Object::Map(got) = object(id) else {
                panic!()
            };
            assert_eq!(got.len(), entries.len());
            for ((gk, gv), (k, w)) in got.iter().zip(entries) {
                check(objects, gk, k);
                check(objects, gv, w);
            }
        }
        Want::Set(id, values) => {
            let Object::Set(got) = object(id) else {
                panic!()
            };
            assert_eq!(got.len(), values.len());
            for (g, w) in got.iter().zip(values) {
                check(objects, g, w);
            }
        }
    }
}

fn model() -> impl Strategy<Value = M> {
    let leaf = prop_oneof![
        Just(M::Undefined),
        Just(M::Null),
        any::<bool>().prop_map(M::Bool),
        any::<i32>().prop_map(M::Int),
        any::<f64>().prop_map(M::Double),
        prop::collection::vec(any::<u16>(), 0..12).prop_map(M::Str),
        prop::collection::vec(0u16..256, 0..12).prop_map(M::Str),
        any::<f64>().prop_map(M::Date),
        prop::collection::vec(any::<u8>(), 0..16).prop_map(M::Buffer),
        (0usize..8).prop_map(M::Ref),
    ];
    leaf.prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            // Distinct keys that are not array indexes (those are written as numbers).
            prop::collection::btree_map("[a-z_][a-z0-9]{0,5}", inner.clone(), 0..6)
                .prop_map(|m| M::Object(m.into_iter().collect())),
            prop::collection::vec(prop::option::weighted(0.8, inner.clone()), 0..6)
                .prop_map(M::Array),
            prop::collection::vec((inner.clone(), inner.clone()), 0..4).prop_map(M::Map),
            prop::collection::vec(inner, 0..5).prop_map(M::Set),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn written_values_decode_to_themselves(m in model()) {
        let mut bytes = ENV.to_vec();
        let mut next = 0;
        let want = write(&m, &mut bytes, &mut next);
        let d = decode(&bytes).unwrap_or_else(|e| panic!("{e}: {m:?}"));
        prop_assert_eq!(d.objects.len(), next as usize);
        check(&d.objects, &d.root, &want);
    }

    #[test]
    fn no_bytes_panic_the_decoders(body in prop::collection::vec(any::<u8>(), 0..256), cut in 0usize..300) {
        let with_env = [ENV, &body].concat();
        let _ = decode(&body);
        let _ = decode(&with_env);
        let _ = decode_v8(&body);
        let _ = unwrap_value(&body);
        let _ = decode_external_objects(&body);
        let (k, v) = body.split_at(cut.min(body.len()));
        let _ = decode_local_storage(k, v);
        let _ = decode_session_storage(k, v);
        let _ = identify_sqlite(&body);
        let mut catalog = Catalog::default();
        catalog.observe(k, v);
        if let Ok(d) = decode(&with_env) {
            // Every object reference of a decoded value names an object of its table.
            let check_ref = |v: &Value<'_>| {
                if let Value::Object(id) = v {
                    assert!(d.object(*id).is_some());
                }
            };
            check_ref(&d.root);
            for o in &d.objects {
                if let Object::Plain(p) = o {
                    p.iter().for_each(|(_, v)| check_ref(v));
                }
            }
        }
    }

    #[test]
    fn damaged_values_fail_or_decode_but_never_panic(
        m in model(),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 1..4),
        cut in any::<usize>(),
    ) {
        let mut bytes = ENV.to_vec();
        write(&m, &mut bytes, &mut 0);
        for (at, b) in flips {
            let i = ENV.len() + at % (bytes.len() - ENV.len());
            bytes[i] = b;
        }
        bytes.truncate(ENV.len() + cut % (bytes.len() - ENV.len() + 1));
        if let Err(e) = decode(&bytes) {
            prop_assert!(e.offset <= bytes.len(), "{} past {}", e, bytes.len());
        }
    }
}

#[test]
fn js_strings_compare_across_encodings() {
    assert!(JsStr::Latin1(b"k").same_units(&JsStr::Utf8(b"k")));
}
