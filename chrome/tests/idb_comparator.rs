//! `idb_cmp1` (issue 16): the comparator is a total order that agrees with Chromium's rules.
//!
//! Keys are generated from their parts and encoded as Chromium encodes them. Each pair is
//! compared three ways: by `IdbComparator`, by a model written here from
//! `leveldb_coding_scheme.md` over the decoded parts (independent of the comparator's
//! in-place reading), and, where Chromium's coding makes the order bytewise, by the bytes.
//! Triples check that the order is total (antisymmetric, transitive), with malformed keys
//! mixed in.

use std::cmp::Ordering;

use leveldb_table::Comparator;
use proptest::prelude::*;
use sst_chrome::idb::{decode_key, is_well_formed, IdbComparator, IdbKey, KeyBody, KeyPrefix};

fn idb_key() -> impl Strategy<Value = IdbKey> {
    let number = prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(-1.5),
        Just(1.0),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        -1e6f64..1e6,
    ];
    let leaf = prop_oneof![
        number.clone().prop_map(IdbKey::Number),
        number.prop_map(IdbKey::Date),
        prop::collection::vec(
            prop_oneof![0u16..4, 0x41u16..0x44, 0xd800u16..0xd802, Just(0xffff)],
            0..4
        )
        .prop_map(IdbKey::String),
        prop::collection::vec(prop_oneof![0u8..3, 0xfeu8..=0xff], 0..4).prop_map(IdbKey::Binary),
    ];
    leaf.prop_recursive(3, 12, 3, |inner| {
        prop::collection::vec(inner, 0..3).prop_map(IdbKey::Array)
    })
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_name(out: &mut Vec<u8>, units: &[u16]) {
    put_varint(out, units.len() as u64);
    units
        .iter()
        .for_each(|u| out.extend_from_slice(&u.to_be_bytes()));
}

/// A whole database key, encoded.
fn db_key() -> impl Strategy<Value = Vec<u8>> {
    let db = prop_oneof![Just(0i64), 1i64..3, Just(300)];
    let store = prop_oneof![Just(0i64), 1i64..3, Just(70_000)];
    let index = prop_oneof![Just(1i64), Just(2), Just(3), Just(30), Just(31)];
    let name = prop::collection::vec(0x61u16..0x63, 0..3);
    // Index entries draw from few keys, so that ties on the index key (and on the primary
    // key) are common and the sequence and primary-key rules are exercised.
    let small = || {
        prop_oneof![
            (0u8..3).prop_map(|x| IdbKey::Number(x.into())),
            Just(IdbKey::String(vec![0x61]))
        ]
    };
    (
        (db, store, index, idb_key(), idb_key(), 0u8..8, 0u64..300),
        (name.clone(), name, any::<u8>(), small(), small()),
    )
        .prop_map(
            |((db, store, index, k1, k2, shape, n), (name1, name2, meta, s1, s2))| {
                let mut out = Vec::new();
                let index = if db == 0 || store == 0 { 0 } else { index };
                KeyPrefix {
                    database: db,
                    store,
                    index,
                }
                .encode_into(&mut out);
                if db == 0 {
                    match shape % 4 {
                        0 => out.push(shape % 7),
                        1 => {
                            out.push(100);
                            put_varint(&mut out, n);
                        }
                        2 => {
                            out.push(201);
                            put_name(&mut out, &name1);
                            put_name(&mut out, &name2);
                        }
                        _ => {
                            out.push(50);
                            out.extend_from_slice(&[meta, shape]);
                        }
                    }
                } else if store == 0 {
                    match shape {
                        0 => out.push(meta % 6),
                        1 => {
                            out.push(50);
                            put_varint(&mut out, n);
                            out.push(meta);
                        }
                        2 => {
                            out.push(100);
                            put_varint(&mut out, n);
                            put_varint(&mut out, n % 7 + 30);
                            out.push(meta);
                        }
                        3 => {
                            out.push(150);
                            put_varint(&mut out, n);
                        }
                        4 => {
                            out.push(151);
                            put_varint(&mut out, n);
                            put_varint(&mut out, n / 3);
                        }
                        5 => {
                            out.push(200);
                            put_name(&mut out, &name1);
                        }
                        _ => {
                            out.push(201);
                            put_varint(&mut out, n);
                            put_name(&mut out, &name1);
                        }
                    }
                } else if index < 30 {
                    if shape != 0 {
                        k1.encode_into(&mut out);
                    }
                } else {
                    // Index entry: key [sequence [primary key]].
                    let (k1, k2, n) = if shape % 2 == 0 {
                        (s1, s2, n % 3)
                    } else {
                        (k1, k2, n)
                    };
                    k1.encode_into(&mut out);
                    if shape >= 2 {
                        put_varint(&mut out, n);
                        if shape >= 4 {
                            k2.encode_into(&mut out);
                        }
                    }
                }
                out
            },
        )
}

/// Any bytes at all, or a well-formed key with a byte changed or cut.
fn any_key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => db_key(),
        1 => prop::collection::vec(any::<u8>(), 0..12),
        1 => (db_key(), any::<prop::sample::Index>(), any::<u8>()).prop_map(|(mut k, i, b)| {
            let at = i.index(k.len());
            k[at] = b;
            k
        }),
        1 => (db_key(), any::<prop::sample::Index>()).prop_map(|(mut k, i)| {
            k.truncate(i.index(k.len()));
            k
        }),
    ]
}

// ---- the model: Chromium's rules over decoded parts ----

fn rank(k: &IdbKey) -> u8 {
    match k {
        IdbKey::Min => 0,
        IdbKey::Number(_) => 1,
        IdbKey::Date(_) => 2,
        IdbKey::String(_) => 3,
        IdbKey::Binary(_) => 4,
        IdbKey::Array(_) => 5,
        IdbKey::Null => 6,
    }
}

fn model_key(a: &IdbKey, b: &IdbKey) -> Ordering {
    match (a, b) {
        (IdbKey::Number(x), IdbKey::Number(y)) | (IdbKey::Date(x), IdbKey::Date(y)) => {
            x.partial_cmp(y).unwrap()
        }
        (IdbKey::String(x), IdbKey::String(y)) => x.cmp(y),
        (IdbKey::Binary(x), IdbKey::Binary(y)) => x.cmp(y),
        (IdbKey::Array(x), IdbKey::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = model_key(p, q);
                if o.is_ne() {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

fn model_opt(a: &Option<IdbKey>, b: &Option<IdbKey>) -> Ordering {
    match (a, b) {
        (Some(x), Some(y)) => model_key(x, y),
        _ => a.is_some().cmp(&b.is_some()),
    }
}

/// Chromium's order on two well-formed keys, from their decoded parts.
fn model(a: &[u8], b: &[u8]) -> Ordering {
    let (x, y) = (decode_key(a).unwrap(), decode_key(b).unwrap());
    let (p, q) = (x.prefix, y.prefix);
    let by_prefix = (p.database, p.store, p.index).cmp(&(q.database, q.store, q.index));
    if by_prefix.is_ne() {
        return by_prefix;
    }
    match (&x.body, &y.body) {
        (
            KeyBody::Meta {
                kind: k1,
                fields: f1,
                ..
            },
            KeyBody::Meta {
                kind: k2,
                fields: f2,
                ..
            },
        ) => {
            if k1 != k2 {
                return k1.cmp(k2);
            }
            let simple = if p.database == 0 { 7 } else { 6 };
            if *k1 < simple {
                return Ordering::Equal;
            }
            if p.database == 0 && *k1 == 50 {
                // Scopes: the bytes after the type byte.
                return a.cmp(b);
            }
            // Typed metadata: the fields in order (ids as integers, names as code units),
            // bytes after them ignored.
            let fields = |f: &[sst_chrome::idb::MetaField]| {
                f.iter()
                    .filter(|x| !matches!(x, sst_chrome::idb::MetaField::Raw(_)))
                    .map(|x| format!("{x:?}"))
                    .collect::<Vec<_>>()
            };
            let (f1, f2) = (fields(f1), fields(f2));
            for (u, v) in f1.iter().zip(&f2) {
                let o = field_cmp(u, v);
                if o.is_ne() {
                    return o;
                }
            }
            Ordering::Equal
        }
        (KeyBody::Record(k1), KeyBody::Record(k2))
        | (KeyBody::Exists(k1), KeyBody::Exists(k2))
        | (KeyBody::Blob(k1), KeyBody::Blob(k2)) => model_opt(k1, k2),
        (
            KeyBody::IndexEntry {
                key: k1,
                sequence: s1,
                primary: p1,
            },
            KeyBody::IndexEntry {
                key: k2,
                sequence: s2,
                primary: p2,
            },
        ) => {
            let by_key = model_opt(k1, k2);
            if by_key.is_ne() || k1.is_none() || k2.is_none() {
                return by_key;
            }
            match (p1, p2) {
                (Some(u), Some(v)) => model_key(u, v).then(s1.cmp(s2)),
                // An entry that stops earlier sorts first; two that stop are equal.
                _ => p1.is_some().cmp(&p2.is_some()),
            }
        }
        _ => unreachable!("same prefix, different body kinds"),
    }
}

/// Compares two `Debug`-printed metadata fields: `Int(n)` numerically, `Byte(b)`
/// numerically, `Text("...")` by UTF-16 code units.
fn field_cmp(u: &str, v: &str) -> Ordering {
    let num = |s: &str| -> Option<i64> {
        let inner = s.strip_prefix("Int(").or_else(|| s.strip_prefix("Byte("))?;
        inner.trim_end_matches(')').parse().ok()
    };
    match (num(u), num(v)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let text = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
            text(u).cmp(&text(v))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    /// Well-formed keys are ordered as the model of Chromium's rules orders them.
    #[test]
    fn agrees_with_the_model(a in db_key(), b in db_key()) {
        prop_assert!(is_well_formed(&a) && is_well_formed(&b));
        prop_assert_eq!(IdbComparator.compare(&a, &b), model(&a, &b), "{:?} vs {:?}", decode_key(&a), decode_key(&b));
    }

    /// Index entries of one index, drawn from few keys so that ties on the index key and the
    /// primary key are common: the primary-key, sequence and "stops early" rules.
    #[test]
    fn index_entries_agree_with_the_model(
        parts in prop::collection::vec((0u8..3, 0u8..3, 0u64..3, 0u8..3), 2..4),
    ) {
        let key = |x: u8| if x == 2 { IdbKey::String(vec![0x61]) } else { IdbKey::Number(x.into()) };
        let entries: Vec<Vec<u8>> = parts
            .iter()
            .map(|&(k, p, seq, shape)| {
                let mut out = Vec::new();
                KeyPrefix { database: 1, store: 1, index: 30 }.encode_into(&mut out);
                key(k).encode_into(&mut out);
                if shape >= 1 {
                    put_varint(&mut out, seq);
                }
                if shape >= 2 {
                    key(p).encode_into(&mut out);
                }
                out
            })
            .collect();
        for a in &entries {
            for b in &entries {
                prop_assert_eq!(IdbComparator.compare(a, b), model(a, b), "{:?} vs {:?}", decode_key(a), decode_key(b));
            }
        }
    }

    /// Reflexive and antisymmetric on any bytes, and transitive over triples.
    #[test]
    fn is_a_total_order(a in any_key(), b in any_key(), c in any_key()) {
        let cmp = |x: &[u8], y: &[u8]| IdbComparator.compare(x, y);
        prop_assert_eq!(cmp(&a, &a), Ordering::Equal);
        prop_assert_eq!(cmp(&a, &b), cmp(&b, &a).reverse());
        let mut v = [a.clone(), b.clone(), c.clone()];
        v.sort_by(|x, y| cmp(x, y));
        prop_assert!(cmp(&v[0], &v[1]).is_le() && cmp(&v[1], &v[2]).is_le());
        prop_assert!(cmp(&v[0], &v[2]).is_le(), "not transitive: {:?}", v);
        if cmp(&v[0], &v[1]).is_eq() && cmp(&v[1], &v[2]).is_eq() {
            prop_assert_eq!(cmp(&v[0], &v[2]), Ordering::Equal);
        }
        // Malformed keys sort after every well-formed one.
        if is_well_formed(&a) && !is_well_formed(&b) {
            prop_assert_eq!(cmp(&a, &b), Ordering::Less);
        }
    }

    /// Where Chromium's coding is bytewise, so is the order: strings of one length (UTF-16BE),
    /// binary keys of one length, scopes keys.
    #[test]
    fn bytewise_where_the_coding_is(
        s1 in prop::collection::vec(any::<u16>(), 3),
        s2 in prop::collection::vec(any::<u16>(), 3),
        b1 in prop::collection::vec(any::<u8>(), 5),
        b2 in prop::collection::vec(any::<u8>(), 5),
        store in 1i64..5,
    ) {
        let (k1, k2) = (IdbKey::String(s1).record_key(1, store), IdbKey::String(s2).record_key(1, store));
        prop_assert_eq!(IdbComparator.compare(&k1, &k2), k1.cmp(&k2));
        let (k1, k2) = (IdbKey::Binary(b1.clone()).record_key(2, store), IdbKey::Binary(b2.clone()).record_key(2, store));
        prop_assert_eq!(IdbComparator.compare(&k1, &k2), k1.cmp(&k2));
        let scopes = |b: &[u8]| [&[0u8, 0, 0, 0, 50][..], b].concat();
        prop_assert_eq!(IdbComparator.compare(&scopes(&b1), &scopes(&b2)), b1.cmp(&b2));
    }

    /// Encoding and decoding agree.
    #[test]
    fn encode_decode_round_trip(k in idb_key(), db in 1i64..1000, store in 1i64..100_000) {
        let bytes = k.record_key(db, store);
        let d = decode_key(&bytes).unwrap();
        prop_assert_eq!((d.prefix.database, d.prefix.store, d.prefix.index), (db, store, 1));
        prop_assert_eq!(d.body, KeyBody::Record(Some(k)));
    }

    /// No input bytes panic the comparator or the decoder.
    #[test]
    fn no_panic_on_any_bytes(a in prop::collection::vec(any::<u8>(), 0..64), b in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = IdbComparator.compare(&a, &b);
        let _ = decode_key(&a);
        let _ = sst_chrome::idb::decode_record_value(&a);
    }
}

/// The type order Chromium documents: min < number < date < string < binary < array < null,
/// with numbers numerically (negative before positive, -0 equal to 0).
#[test]
fn key_types_in_chromium_order() {
    let keys = [
        IdbKey::Min,
        IdbKey::Number(f64::NEG_INFINITY),
        IdbKey::Number(-2.0),
        IdbKey::Number(0.0),
        IdbKey::Number(0.5),
        IdbKey::Number(f64::INFINITY),
        IdbKey::Date(-1.0),
        IdbKey::Date(1.7e12),
        IdbKey::String(vec![]),
        IdbKey::String(vec![0x41]),
        IdbKey::String(vec![0x41, 0]),
        IdbKey::String(vec![0xd83d, 0xde00]), // U+1F600 as a surrogate pair
        IdbKey::String(vec![0xffff]),         // sorts after the pair: code units, not code points
        IdbKey::Binary(vec![]),
        IdbKey::Binary(vec![0]),
        IdbKey::Binary(vec![0xff]),
        IdbKey::Array(vec![]),
        IdbKey::Array(vec![IdbKey::Number(1.0)]),
        IdbKey::Array(vec![IdbKey::Number(1.0), IdbKey::Min]),
        IdbKey::Array(vec![IdbKey::String(vec![])]),
        IdbKey::Array(vec![IdbKey::Array(vec![])]),
        IdbKey::Null,
    ];
    let encoded: Vec<Vec<u8>> = keys.iter().map(|k| k.record_key(1, 1)).collect();
    for (i, a) in encoded.iter().enumerate() {
        for (j, b) in encoded.iter().enumerate() {
            assert_eq!(
                IdbComparator.compare(a, b),
                i.cmp(&j),
                "{} vs {}",
                keys[i],
                keys[j]
            );
        }
    }
    // -0 and 0 are one key to Chromium.
    let zero = IdbKey::Number(0.0).record_key(1, 1);
    let neg_zero = IdbKey::Number(-0.0).record_key(1, 1);
    assert_ne!(zero, neg_zero);
    assert_eq!(IdbComparator.compare(&zero, &neg_zero), Ordering::Equal);
    // Numbers are not bytewise: -1 is stored as bf f0.. after 1's 3f f0.. little-endian.
    let one = IdbKey::Number(1.0).record_key(1, 1);
    let minus_one = IdbKey::Number(-1.0).record_key(1, 1);
    assert_eq!(IdbComparator.compare(&minus_one, &one), Ordering::Less);
}

/// Prefixes compare as integers, not bytes: ids are little-endian, so store 257 (01 01)
/// is bytewise after store 512 (00 02).
#[test]
fn prefix_ids_compare_as_integers() {
    let k = IdbKey::Number(1.0);
    let small = k.record_key(1, 257);
    let big = k.record_key(1, 512);
    assert!(
        small > big,
        "bytewise, little-endian ids put store 512 first"
    );
    assert_eq!(IdbComparator.compare(&small, &big), Ordering::Less);
    // Database metadata (store 0) before the database's stores; global metadata first.
    let mut global = Vec::new();
    KeyPrefix {
        database: 0,
        store: 0,
        index: 0,
    }
    .encode_into(&mut global);
    global.push(1);
    let mut meta = Vec::new();
    KeyPrefix {
        database: 1,
        store: 0,
        index: 0,
    }
    .encode_into(&mut meta);
    meta.push(3);
    assert_eq!(IdbComparator.compare(&global, &meta), Ordering::Less);
    assert_eq!(IdbComparator.compare(&meta, &small), Ordering::Less);
}

/// Arrays nested far deeper than Chromium writes are malformed, not a stack overflow.
#[test]
fn deep_arrays_are_malformed_not_a_crash() {
    let mut k = vec![0u8, 1, 1, 1];
    for _ in 0..100_000 {
        k.extend_from_slice(&[4, 1]);
    }
    k.push(5);
    assert!(!is_well_formed(&k));
    let ok = IdbKey::Number(1.0).record_key(1, 1);
    assert_eq!(IdbComparator.compare(&ok, &k), Ordering::Less);
    assert!(decode_key(&k).is_none());
    // NaN is not a key.
    let nan = IdbKey::Number(f64::NAN).record_key(1, 1);
    assert!(!is_well_formed(&nan));
}

/// Only the bytes Chromium's encoders write are keys of the order: a key with bytes after its
/// last field, a length or id in more bytes than it needs, is outside it (it sorts after every
/// key and equals none of them), so two distinct keys the order calls equal are only those
/// differing in the sign of a zero number or date, and a lookup of one reads past the filter.
#[test]
fn keys_of_the_order_are_chromiums_encodings() {
    let k = IdbKey::String("ab".encode_utf16().collect()).record_key(1, 2);
    assert!(is_well_formed(&k));
    assert!(IdbComparator.equal_keys_identical(&k));
    // The same key plus a byte: Chromium's comparison stops at the key and calls them equal.
    let longer = [&k[..], &[0]].concat();
    assert!(!is_well_formed(&longer));
    assert_eq!(IdbComparator.compare(&k, &longer), Ordering::Less);
    // The string's length 2 as a two-byte varint (82 00), the store id 2 in two bytes.
    let mut wide_len = k[..5].to_vec();
    wide_len.extend([0x82, 0x00]);
    wide_len.extend_from_slice(&k[6..]);
    assert_eq!(
        decode_key(&wide_len).map(|d| d.body),
        decode_key(&k).map(|d| d.body)
    );
    assert!(!is_well_formed(&wide_len));
    let mut wide_id = vec![k[0] | 0x04, k[1], k[2], 0x00];
    wide_id.extend_from_slice(&k[3..]);
    assert_eq!(
        decode_key(&wide_id).map(|d| d.prefix),
        decode_key(&k).map(|d| d.prefix)
    );
    assert!(!is_well_formed(&wide_id));
    // Metadata without fields: its type byte and nothing more.
    assert!(is_well_formed(&[0, 0, 0, 0, 1]));
    assert!(!is_well_formed(&[0, 0, 0, 0, 1, 9]));
    // 0 and -0: both written by Chromium, one key.
    let (zero, minus) = (
        IdbKey::Number(0.0).record_key(1, 1),
        IdbKey::Number(-0.0).record_key(1, 1),
    );
    assert!(is_well_formed(&zero) && is_well_formed(&minus) && zero != minus);
    assert_eq!(IdbComparator.compare(&zero, &minus), Ordering::Equal);
    assert!(!IdbComparator.equal_keys_identical(&zero));
    let in_array = IdbKey::Array(vec![IdbKey::Date(0.0)]).record_key(1, 1);
    assert!(!IdbComparator.equal_keys_identical(&in_array));
    assert!(IdbComparator.equal_keys_identical(&IdbKey::Number(1.0).record_key(1, 1)));
}
