//! Byte vectors written from V8's `ValueSerializer` and Blink's serializer (each commented
//! with what writes it), decoded and checked field by field.

use super::*;

/// Chrome 156's envelope: Blink 21 with an empty trailer offset, V8 16.
const ENV: &[u8] = b"\xff\x15\xfe\0\0\0\0\0\0\0\0\0\0\0\0\xff\x10";

fn with_env(body: &[u8]) -> Vec<u8> {
    [ENV, body].concat()
}

fn root(bytes: &[u8]) -> Decoded<'_> {
    decode(bytes).unwrap_or_else(|e| panic!("{e}: {bytes:02x?}"))
}

fn obj<'a, 'b>(d: &'b Decoded<'a>, v: &Value<'a>) -> &'b Object<'a> {
    match v {
        Value::Object(id) => d.object(*id).unwrap(),
        other => panic!("not an object: {other:?}"),
    }
}

fn latin1(s: &str) -> Value<'_> {
    Value::String(JsStr::Latin1(s.as_bytes()))
}

#[test]
fn primitives() {
    let cases: Vec<(&[u8], Value<'_>)> = vec![
        (b"_", Value::Undefined),
        (b"0", Value::Null),
        (b"T", Value::Bool(true)),
        (b"F", Value::Bool(false)),
        (b"I\x02", Value::Number(1.0)),  // WriteSmi: zigzag(1) = 2
        (b"I\x03", Value::Number(-2.0)), // zigzag(-2) = 3
        (b"U\x80\x01", Value::Number(128.0)),
        (b"N\0\0\0\0\0\0\xf8\x7f", Value::Number(f64::NAN)),
        (b"N\0\0\0\0\0\0\0\x80", Value::Number(-0.0)),
        (b"\"\x02hi", latin1("hi")),
        (
            b"S\x03\xc3\xa9!",
            Value::String(JsStr::Utf8("é!".as_bytes())),
        ),
        // WriteString pads two-byte strings to an even offset: tag at an odd offset here.
        (
            b"\0c\x02\xe5\x65",
            Value::String(JsStr::Utf16Le(&[0xe5, 0x65])),
        ),
        (b"?\x05T", Value::Bool(true)), // an object count to ignore, then the value
    ];
    for (body, want) in cases {
        let bytes = with_env(body);
        let d = root(&bytes);
        match (&d.root, &want) {
            (Value::Number(a), Value::Number(b)) if a.is_nan() => assert!(b.is_nan()),
            (Value::Number(a), Value::Number(b)) => {
                assert_eq!(a.to_bits(), b.to_bits(), "{body:02x?}")
            }
            (got, want) => assert_eq!(got, want, "{body:02x?}"),
        }
        assert_eq!((d.blink_version, d.v8_version), (Some(21), 16));
    }
}

#[test]
fn bigints_keep_sign_and_digits() {
    // WriteBigIntContents: bitfield = sign | byte length << 1, then 64-bit digits LE.
    let bytes = with_env(b"Z\x11\x2a\0\0\0\0\0\0\0");
    let Value::BigInt(b) = root(&bytes).root else {
        panic!()
    };
    assert!(b.negative);
    assert_eq!(bigint_to_decimal(b.negative, b.magnitude), "-42");
    // Zero with the sign bit set is 0n.
    let bytes = with_env(b"Z\x01");
    let Value::BigInt(b) = root(&bytes).root else {
        panic!()
    };
    assert!(!b.negative && b.magnitude.is_empty());
}

#[test]
fn objects_keep_order_and_integer_keys() {
    // {1: "x", b: null}: integer keys are written as numbers (kKeepNumbers) and first.
    let bytes = with_env(b"oI\x02\"\x01x\"\x01b0{\x02");
    let d = root(&bytes);
    let Object::Plain(props) = obj(&d, &d.root) else {
        panic!()
    };
    assert_eq!(props[0], (PropertyKey::Index(1), latin1("x")));
    assert_eq!(
        props[1],
        (PropertyKey::String(JsStr::Latin1(b"b")), Value::Null)
    );
    // A canonical index written as a string is the same kind of key; "01" is not.
    let bytes = with_env(b"o\"\x017T\"\x0201F{\x02");
    let d = root(&bytes);
    let Object::Plain(props) = obj(&d, &d.root) else {
        panic!()
    };
    assert_eq!(props[0].0, PropertyKey::Index(7));
    assert_eq!(props[1].0, PropertyKey::String(JsStr::Latin1(b"01")));
}

#[test]
fn cycles_and_shared_objects_refer_by_id() {
    // a = {}; a.self = a; [a, a]: the array is object 0, a is 1, then `^1` twice.
    let bytes = with_env(b"A\x02o\"\x04self^\x01{\x01^\x01$\0\x02");
    let d = root(&bytes);
    let Object::Array {
        length,
        elements,
        properties,
    } = obj(&d, &d.root)
    else {
        panic!()
    };
    assert_eq!((*length, properties.len()), (2, 0));
    assert_eq!(elements[0], (0, Value::Object(ObjectId(1))));
    assert_eq!(elements[1], (1, Value::Object(ObjectId(1))));
    let Object::Plain(props) = &d.objects[1] else {
        panic!()
    };
    assert_eq!(props[0].1, Value::Object(ObjectId(1)));
}

#[test]
fn arrays_dense_sparse_and_holes() {
    // [1, <hole>, 3] with a property: dense (holey arrays of packed kind stay dense when
    // written element by element) with `-` for the hole, then "p": true.
    let bytes = with_env(b"A\x03I\x02-I\x06\"\x01pT$\x01\x03");
    let d = root(&bytes);
    let Object::Array {
        length,
        elements,
        properties,
    } = obj(&d, &d.root)
    else {
        panic!()
    };
    assert_eq!(*length, 3);
    assert_eq!(elements.iter().map(|e| e.0).collect::<Vec<_>>(), vec![0, 2]);
    assert_eq!(properties.len(), 1);
    // Sparse: length 10, elements 9 and 2 (in the order written; kept ascending).
    let bytes = with_env(b"a\x0aI\x12TI\x04F@\x02\x0a");
    let d = root(&bytes);
    let Object::Array {
        length, elements, ..
    } = obj(&d, &d.root)
    else {
        panic!()
    };
    assert_eq!(*length, 10);
    assert_eq!(elements.iter().map(|e| e.0).collect::<Vec<_>>(), vec![2, 9]);
    // An element past the stated length lengthens the array, as defining it does in V8.
    let bytes = with_env(b"a\x01I\x08T@\x01\x01");
    let d = root(&bytes);
    let Object::Array { length, .. } = obj(&d, &d.root) else {
        panic!()
    };
    assert_eq!(*length, 5);
}

#[test]
fn dates_boxes_regexps_maps_sets() {
    let ms = 1_700_000_000_000f64.to_le_bytes();
    let mut body = b"A\x06D".to_vec();
    body.extend_from_slice(&ms);
    // new Number(2.5), new String("s"), /a+/gi (flags g=1|i=2), Map {1 => 2}, Set {"x"}
    body.extend_from_slice(b"n");
    body.extend_from_slice(&2.5f64.to_le_bytes());
    body.extend_from_slice(b"s\"\x01sR\"\x02a+\x03;I\x02I\x04:\x02'\"\x01x,\x01$\0\x06");
    let bytes = with_env(&body);
    let d = root(&bytes);
    let Object::Array { elements, .. } = obj(&d, &d.root) else {
        panic!()
    };
    let kinds: Vec<&str> = elements
        .iter()
        .map(|(_, v)| obj(&d, v).type_name())
        .collect();
    assert_eq!(kinds, ["Date", "Number", "String", "RegExp", "Map", "Set"]);
    assert_eq!(*obj(&d, &elements[0].1), Object::Date(1_700_000_000_000.0));
    let Object::RegExp { source, flags } = obj(&d, &elements[3].1) else {
        panic!()
    };
    assert_eq!(
        (
            source.to_string_lossy().as_ref(),
            regexp_flags(*flags).as_str()
        ),
        ("a+", "gi")
    );
    let Object::Map(entries) = obj(&d, &elements[4].1) else {
        panic!()
    };
    assert_eq!(entries[0], (Value::Number(1.0), Value::Number(2.0)));
    // Ids in the order objects start: array 0, then the six in order.
    assert_eq!(elements[5].1, Value::Object(ObjectId(6)));
}

#[test]
fn buffers_and_views() {
    // new Uint16Array([1, 2]).subarray(1): the buffer (id 0, 4 bytes) then `V` with type W,
    // offset 2, length 2, flags 0 (id 1).
    let bytes = with_env(b"B\x04\x01\0\x02\0VW\x02\x02\0");
    let d = root(&bytes);
    let Object::View {
        kind,
        buffer,
        byte_offset,
        byte_length,
        ..
    } = obj(&d, &d.root)
    else {
        panic!()
    };
    assert_eq!(
        (*kind, *buffer, *byte_offset, *byte_length),
        ("Uint16Array", ObjectId(0), 2, 2)
    );
    // A second view of the same buffer refers to it: `^0 V ...`.
    let bytes = with_env(b"A\x02B\x02\x07\x08VB\0\x01\0^\x01V?\x01\x01\0$\0\x02");
    let d = root(&bytes);
    let Object::Array { elements, .. } = obj(&d, &d.root) else {
        panic!()
    };
    assert_eq!(obj(&d, &elements[1].1).type_name(), "DataView");
    // A view past its buffer, or misaligned, is refused.
    assert!(decode(&with_env(b"B\x02\0\0VB\x01\x02\0")).is_err());
    assert!(decode(&with_env(b"B\x04\0\0\0\0VW\x01\x02\0")).is_err());
    // Resizable buffer with a length-tracking view: the view spans what the buffer has.
    let bytes = with_env(b"~\x02\x08\xaa\xbbVB\0\0\x03");
    let d = root(&bytes);
    let Object::View {
        byte_length, flags, ..
    } = obj(&d, &d.root)
    else {
        panic!()
    };
    assert_eq!((*byte_length, *flags), (2, 3));
}

#[test]
fn errors_with_message_stack_and_cause() {
    // new TypeError("bad", {cause: 5}): r, T, m "bad", c I\x0a, s "st", .
    let bytes = with_env(b"rTm\"\x03badcI\x0as\"\x02st.");
    let d = root(&bytes);
    let Object::Error {
        name,
        message,
        stack,
        cause,
    } = obj(&d, &d.root)
    else {
        panic!()
    };
    assert_eq!(name.0, "TypeError");
    assert_eq!(message.unwrap().to_string_lossy(), "bad");
    assert_eq!(stack.unwrap().to_string_lossy(), "st");
    assert_eq!(*cause, Some(Value::Number(5.0)));
    // An error whose cause refers to the error: V8 has not registered it yet.
    let e = decode(&with_env(b"rc^\0.")).unwrap_err();
    assert_eq!(e.kind, ValueErrorKind::BadReference(0));
}

#[test]
fn blink_host_objects() {
    // IndexedDB: a Blob (index 0), a File (index 1), a FileList of files 2 and 3.
    let bytes = with_env(b"A\x03\\i\x00\\e\x01\\L\x02\x02\x03$\0\x03");
    let d = root(&bytes);
    let Object::Array { elements, .. } = obj(&d, &d.root) else {
        panic!()
    };
    let hosts: Vec<&HostObject<'_>> = elements
        .iter()
        .map(|(_, v)| match obj(&d, v) {
            Object::Host(h) => h,
            o => panic!("{o:?}"),
        })
        .collect();
    assert_eq!(*hosts[0], HostObject::BlobIndex(0));
    assert_eq!(*hosts[1], HostObject::FileIndex(1));
    assert_eq!(*hosts[2], HostObject::FileListIndex(vec![2, 3]));
    // DOMPoint(1, 2, 3, 4).
    let mut body = b"\\Q".to_vec();
    for x in [1.0f64, 2.0, 3.0, 4.0] {
        body.extend_from_slice(&x.to_le_bytes());
    }
    let bytes = with_env(&body);
    let d = root(&bytes);
    let Object::Host(HostObject::Other { name, fields }) = obj(&d, &d.root) else {
        panic!()
    };
    assert_eq!(
        (*name, fields[3].clone()),
        ("DOMPoint", ("w", HostField::Number(4.0)))
    );
    // An AES-GCM key, 128 bits, extractable, encrypt+decrypt, 16 key bytes.
    let mut body = b"\\K\x01\x09\x10\x07\x10".to_vec();
    body.extend_from_slice(&[0xab; 16]);
    let bytes = with_env(&body);
    let d = root(&bytes);
    let Object::Host(HostObject::Other { name, fields }) = obj(&d, &d.root) else {
        panic!()
    };
    assert_eq!(*name, "CryptoKey");
    assert!(fields.contains(&("algorithm", HostField::Name("AES-GCM"))));
    assert!(fields.contains(&("usages", HostField::Names(vec!["encrypt", "decrypt"]))));
    // A MessagePort is never stored; an unknown Blink tag is named.
    let e = decode(&with_env(b"\\M\0")).unwrap_err();
    assert_eq!(e.kind, ValueErrorKind::Transferred("MessagePort"));
    let e = decode(&with_env(b"\\~")).unwrap_err();
    assert_eq!(
        (e.kind, e.offset),
        (ValueErrorKind::UnknownHostTag(b'~'), ENV.len() + 1)
    );
}

#[test]
fn envelopes_of_every_era() {
    // Blink 17-20: FF vv FF ww, no trailer tag.
    let d = root(b"\xff\x11\xff\x0dT");
    assert_eq!(
        (d.blink_version, d.v8_version, d.root.clone()),
        (Some(17), 13, Value::Bool(true))
    );
    // Before 16: one envelope, Blink's version is V8's.
    let d = root(b"\xff\x0dF");
    assert_eq!((d.blink_version, d.v8_version), (None, 13));
    // A trailer after the value is not part of it; its interfaces are kept.
    let mut bytes = b"\xff\x15\xfe\0\0\0\0\0\0\0\x12\0\0\0\x03\xff\x10T".to_vec();
    bytes.extend_from_slice(b"\xa0\x01i");
    assert_eq!(bytes.len(), 0x12 + 3);
    let d = root(&bytes);
    assert_eq!(
        (d.root.clone(), d.required_interfaces.clone()),
        (Value::Bool(true), b"i".to_vec())
    );
    // Versions from the future are refused, naming the version.
    let e = decode(b"\xff\x15\xfe\0\0\0\0\0\0\0\0\0\0\0\0\xff\x11T").unwrap_err();
    assert_eq!(e.kind, ValueErrorKind::UnsupportedV8Version(17));
    let e = decode(b"\xff\x16\xfe").unwrap_err();
    assert_eq!(e.kind, ValueErrorKind::UnsupportedBlinkVersion(22));
}

#[test]
fn old_versions_read_as_v8_reads_them() {
    // Version 10: undefined in a dense array is the hole.
    let d = root(b"\xff\x0aA\x02_T$\0\x02");
    let Object::Array { elements, .. } = obj(&d, &d.root) else {
        panic!()
    };
    assert_eq!(elements.len(), 1);
    // Version 11: RegExp source is raw UTF-8 (no tag).
    let d = root(b"\xff\x0bR\x02ab\x00");
    let Object::RegExp { source, .. } = obj(&d, &d.root) else {
        panic!()
    };
    assert_eq!(*source, JsStr::Utf8(b"ab"));
    // Version 12: an unknown tag is Blink's (here 'i', a blob index at Blink version 12).
    let d = root(b"\xff\x0ci\x04");
    assert_eq!(*obj(&d, &d.root), Object::Host(HostObject::BlobIndex(4)));
    // Version 13 data whose views carry flags anyway (V8's compatibility retry).
    let d = root(b"\xff\x0dB\x01\x05VB\0\x01\0");
    assert_eq!(obj(&d, &d.root).type_name(), "Uint8Array");
    // Lengths are 32-bit varints before version 16 (five bytes at most, the fifth's high bit
    // ignored), 64-bit from 16: the same bytes give different buffers.
    // (`decode_v8`: with `decode`, a leading FF 10 is Blink's version 16 envelope.)
    let buffer = |bytes: &'static [u8]| match decode_v8(bytes).unwrap() {
        Decoded {
            root: Value::Object(id),
            objects,
            ..
        } => match &objects[id.0 as usize] {
            Object::ArrayBuffer { bytes, .. } => bytes.to_vec(),
            o => panic!("{o:?}"),
        },
        d => panic!("{d:?}"),
    };
    assert_eq!(buffer(b"\xff\x0fB\x81\x80\x80\x80\x80\x00\xaa"), vec![0x00]);
    assert_eq!(buffer(b"\xff\x10B\x81\x80\x80\x80\x80\x00\xaa"), vec![0xaa]);
}

#[test]
fn failures_say_what_and_where() {
    let e = decode(&with_env(b"o\"\x01a")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("the bytes end inside a tag at offset {}", ENV.len() + 4)
    );
    let e = decode(&with_env(b"oI\x02T{\x02")).unwrap_err();
    assert!(
        matches!(
            e.kind,
            ValueErrorKind::CountMismatch {
                stated: 2,
                found: 1,
                ..
            }
        ),
        "{e}"
    );
    let e = decode(&with_env(b"o\"\x01aT\"\x01aF{\x02")).unwrap_err();
    assert_eq!(e.kind, ValueErrorKind::DuplicateKey);
    let e = decode(&with_env(b"^\x05")).unwrap_err();
    assert_eq!(
        (e.kind, e.offset),
        (ValueErrorKind::BadReference(5), ENV.len())
    );
    let e = decode(&with_env(b"oo{\0T{\x01")).unwrap_err();
    assert_eq!(e.kind, ValueErrorKind::BadKey);
    let e = decode(&with_env(b"c\x03abc")).unwrap_err();
    assert!(matches!(e.kind, ValueErrorKind::Invalid(_)));
    let e = decode(&with_env(b"!")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("unknown V8 tag '!' (0x21) at offset {}", ENV.len())
    );
    let e = decode(&with_env(b"A\x10T")).unwrap_err();
    assert!(e.to_string().contains("dense array longer"), "{e}");
    // "length" is an array's own property already.
    let e = decode(&with_env(b"a\0\"\x06lengthI\x02@\x01\0")).unwrap_err();
    assert_eq!(e.kind, ValueErrorKind::DuplicateKey);
}

#[test]
fn deep_nesting_costs_no_thread_stack() {
    // 200,000 nested one-element arrays: [[[...]]].
    let n = 200_000;
    let mut body = Vec::new();
    for _ in 0..n {
        body.extend_from_slice(b"A\x01");
    }
    body.push(b'0');
    for _ in 0..n {
        body.extend_from_slice(b"$\0\x01");
    }
    let bytes = with_env(&body);
    let d = root(&bytes);
    assert_eq!(d.objects.len(), n);
}
