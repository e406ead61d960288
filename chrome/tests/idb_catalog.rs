//! The catalog's reading of IndexedDB's metadata, byte by byte: ids past one byte as
//! Chromium writes them (a `global / database name` value is EncodeInt, a key's prefix holds
//! ids the same way, a store or index id inside a metadata key is a varint), and names that
//! only deleted metadata still holds.

use sst_chrome::idb::Catalog;

fn be(s: &str) -> Vec<u8> {
    s.encode_utf16().flat_map(|u| u.to_be_bytes()).collect()
}

/// `global / database name / "o" / name`.
fn name_key(name: &str) -> Vec<u8> {
    let mut k = vec![0, 0, 0, 0, 201, 1];
    k.extend(be("o"));
    k.push(name.encode_utf16().count() as u8);
    k.extend(be(name));
    k
}

/// Ids past one byte, with their exact encodings: the database id of a `global /
/// database name` record is Chromium's EncodeInt (little-endian, as few bytes as
/// needed), not a varint; a key's prefix holds ids the same way; a store or index id in
/// a metadata key is a varint.
#[test]
fn ids_past_one_byte_read_as_chromium_writes_them() {
    // id, EncodeInt(id), the prefix (id, 0, 0), EncodeVarInt(id)
    type Case = (i64, &'static [u8], &'static [u8], &'static [u8]);
    let cases: [Case; 7] = [
        (127, &[0x7f], &[0x00, 0x7f, 0, 0], &[0x7f]),
        (128, &[0x80], &[0x00, 0x80, 0, 0], &[0x80, 0x01]),
        (255, &[0xff], &[0x00, 0xff, 0, 0], &[0xff, 0x01]),
        (256, &[0x00, 0x01], &[0x20, 0x00, 0x01, 0, 0], &[0x80, 0x02]),
        (300, &[0x2c, 0x01], &[0x20, 0x2c, 0x01, 0, 0], &[0xac, 0x02]),
        (
            65_535,
            &[0xff, 0xff],
            &[0x20, 0xff, 0xff, 0, 0],
            &[0xff, 0xff, 0x03],
        ),
        (
            65_536,
            &[0, 0, 0x01],
            &[0x40, 0, 0, 0x01, 0, 0],
            &[0x80, 0x80, 0x04],
        ),
    ];
    for (id, int, prefix, varint) in cases {
        let mut encoded = Vec::new();
        sst_chrome::idb::KeyPrefix {
            database: id,
            store: 0,
            index: 0,
        }
        .encode_into(&mut encoded);
        assert_eq!(encoded, prefix, "prefix of database {id}");
        let mut c = Catalog::default();
        assert!(c.observe(&name_key("db"), int));
        assert_eq!(c.databases_named("db"), vec![id], "EncodeInt {int:02x?}");
        // Its own metadata: object store `id` (a varint in the key) named "s".
        let mut k = prefix.to_vec();
        k.push(50);
        k.extend_from_slice(varint);
        k.push(0);
        assert!(c.observe(&k, &be("s")));
        // index `id` of that store (varints), named "i".
        let mut k = prefix.to_vec();
        k.push(100);
        k.extend_from_slice(varint);
        k.extend_from_slice(varint);
        k.push(0);
        assert!(c.observe(&k, &be("i")));
        let s = c
            .store(id, id)
            .unwrap_or_else(|| panic!("store {id}: {c:?}"));
        assert_eq!(s.name.as_deref(), Some("s"));
        assert_eq!(s.indexes[&id].name.as_deref(), Some("i"));
        let d = c.database(id).unwrap();
        assert_eq!((d.name.as_deref(), d.deleted), (Some("db"), false));
    }
    // A record of database 65,536, store 300: prefix lengths 3, 2 and 1 packed as
    // (3-1) << 5 | (2-1) << 2 | (1-1); then the number key 1.
    let mut rec = vec![0x44, 0, 0, 0x01, 0x2c, 0x01, 0x01, 3];
    rec.extend(1f64.to_le_bytes());
    let d = sst_chrome::idb::decode_key(&rec).unwrap();
    assert_eq!(
        (d.prefix.database, d.prefix.store, d.prefix.index),
        (65_536, 300, 1)
    );
    assert_eq!(
        sst_chrome::idb::IdbKey::Number(1.0).record_key(65_536, 300),
        rec,
        "and back"
    );
    // The varint reading of EncodeInt(256) = 00 01 would be id 0, the global metadata.
    let mut c = Catalog::default();
    assert!(c.observe(&name_key("db255"), &[0x00, 0x01]));
    assert!(c.database(0).is_none() && c.database(256).is_some());
    // Neither an empty value, 0, nor one of more than 8 bytes is an id.
    assert!(!c.observe(&name_key("x"), &[]));
    assert!(!c.observe(&name_key("x"), &[0]));
    assert!(!c.observe(&name_key("x"), &[1; 9]));
}

#[test]
fn deleted_metadata_names_what_the_live_metadata_does_not() {
    let mut c = Catalog::default();
    // Live: database 1 "live" with store 1 "kept".
    assert!(c.observe(&name_key("live"), &[1]));
    assert!(c.observe(&[0, 1, 0, 0, 50, 1, 0], &be("kept")));
    // Deleted: database 1's store 2 "gone", database 2 "dropped" (its store 1 "s"),
    // and an older name of store 1 (renamed since), at sequences 5..9.
    let (k_gone, k_dropped, k_s, k_old) = (
        [0, 1, 0, 0, 50, 2, 0],
        name_key("dropped"),
        [0, 2, 0, 0, 50, 1, 0],
        [0, 1, 0, 0, 50, 1, 0],
    );
    let (v_gone, v_s, v_old) = (be("gone"), be("s"), be("old name"));
    c.add_deleted([
        (&k_gone[..], &v_gone[..], 5),
        (&k_dropped[..], &[2][..], 6),
        (&k_s[..], &v_s[..], 7),
        (&k_old[..], &v_old[..], 4),
    ]);
    let kept = c.store(1, 1).unwrap();
    assert_eq!((kept.name.as_deref(), kept.deleted), (Some("kept"), false));
    let gone = c.store(1, 2).unwrap();
    assert_eq!((gone.name.as_deref(), gone.deleted), (Some("gone"), true));
    let d = c.database(2).unwrap();
    assert_eq!((d.name.as_deref(), d.deleted), (Some("dropped"), true));
    assert_eq!(
        c.store(2, 1).map(|s| (s.name.as_deref(), s.deleted)),
        Some((Some("s"), true))
    );
    assert!(!c.database(1).unwrap().deleted);
}
