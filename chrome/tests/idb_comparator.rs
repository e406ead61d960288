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

#[path = "idb_comparator/model.rs"]
mod model;
#[path = "idb_comparator/strategies.rs"]
mod strategies;

use model::*;
use strategies::*;

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
