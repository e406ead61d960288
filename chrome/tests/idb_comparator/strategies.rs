//! Key generators: IndexedDB keys and whole database keys as Chromium encodes them, and mangled ones.

use super::*;

pub(crate) fn idb_key() -> impl Strategy<Value = IdbKey> {
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

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn put_name(out: &mut Vec<u8>, units: &[u16]) {
    put_varint(out, units.len() as u64);
    units
        .iter()
        .for_each(|u| out.extend_from_slice(&u.to_be_bytes()));
}

/// A whole database key, encoded.
pub(crate) fn db_key() -> impl Strategy<Value = Vec<u8>> {
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
pub(crate) fn any_key() -> impl Strategy<Value = Vec<u8>> {
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
