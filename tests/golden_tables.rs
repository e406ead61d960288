//! Whole-file golden vectors: the three annotated tables of the format reference (written by
//! LevelDB HEAD with compression off), byte for byte, and read back.

use leveldb_table::raw::internal_key::{internal_key, ValueType};
use leveldb_table::Cursor;
use leveldb_table::{
    table::KeyFormat, Compression, Lookup, OpenOptions, Options, ReadOptions, TableBuilder,
    TableReader,
};

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    hex::decode(s).expect("test vector is hex")
}

fn build(opts: &Options, entries: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut b = TableBuilder::new(Vec::new(), opts).unwrap();
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    b.finish().unwrap().0
}

/// LevelDB's TableBuilder + raw bloom(10), bytewise keys, no compression: 181 bytes.
#[test]
fn apple_banana_table_is_byte_exact() {
    let expected = unhex(
        "0005036170706c6572656400060662616e616e6179656c6c6f77000000000100000000c46e7308
         0240000c8000d00f0600000000090000000b00f4393788
         00220266696c7465722e6c6576656c64622e4275696c74696e426c6f6f6d46696c746572322712000000000100000000699d609e
         00010263002200000000010000000012977475
         3e2f720e",
    );
    let mut expected = expected;
    expected.resize(expected.len() + 36, 0); // footer padding
    expected.extend_from_slice(&unhex("57fb808b247547db"));
    assert_eq!(expected.len(), 181);
    let opts = Options::default().compression(Compression::None).bloom(10);
    let got = build(&opts, &[(b"apple", b"red"), (b"banana", b"yellow")]);
    assert_eq!(hex::encode(&got), hex::encode(&expected));

    let t = TableReader::open(got, OpenOptions::default()).unwrap();
    assert!(!t.is_internal());
    assert_eq!(t.footer().metaindex.offset, 62);
    assert_eq!(t.footer().index.offset, 114);
    assert_eq!(
        t.filter_handle().map(|h| (h.offset, h.size)),
        Some((39, 18))
    );
    assert_eq!(
        t.get(b"apple", &Default::default())
            .map(|l| l.into_value())
            .unwrap(),
        Some(b"red".to_vec())
    );
    assert_eq!(
        t.get(b"banana", &Default::default())
            .map(|l| l.into_value())
            .unwrap(),
        Some(b"yellow".to_vec())
    );
    assert_eq!(
        t.get(b"cherry", &Default::default())
            .map(|l| l.into_value())
            .unwrap(),
        None
    );
    assert_eq!(
        t.get(b"", &Default::default())
            .map(|l| l.into_value())
            .unwrap(),
        None
    );
}

/// An empty table without a filter: metaindex and index are both the empty block.
#[test]
fn empty_table_without_filter_is_74_bytes() {
    let opts = Options::default().compression(Compression::None);
    let got = build(&opts, &[]);
    let mut expected = unhex("0000000001000000 00c0f2a1b0 0000000001000000 00c0f2a1b0 00080d08");
    expected.resize(74 - 8, 0);
    expected.extend_from_slice(&unhex("57fb808b247547db"));
    assert_eq!(hex::encode(&got), hex::encode(&expected));
    let t = TableReader::open(got, OpenOptions::default()).unwrap();
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    assert!(it.status().is_ok());
    assert_eq!(
        t.get(b"x", &Default::default())
            .map(|l| l.into_value())
            .unwrap(),
        None
    );
}

/// An empty table with bloom: 123 bytes, the filter block is `00 00 00 00 0b`.
#[test]
fn empty_table_with_bloom_is_123_bytes() {
    let opts = Options::default().compression(Compression::None).bloom(10);
    let got = build(&opts, &[]);
    assert_eq!(got.len(), 123);
    assert_eq!(&got[..10], &unhex("000000000b 008ae8dad1")[..]);
    let footer = &got[123 - 48..];
    assert_eq!(&footer[..4], &unhex("0a2f3e08")[..]);
    let t = TableReader::open(got, OpenOptions::default()).unwrap();
    assert_eq!(t.filter_handle().map(|h| (h.offset, h.size)), Some((0, 5)));
    assert_eq!(
        t.get(b"x", &Default::default())
            .map(|l| l.into_value())
            .unwrap(),
        None
    );
}

/// The database table `000005.ldb` (203 bytes): Put k1, Put k2, Delete k1, compacted.
#[test]
fn database_table_is_byte_exact() {
    let expected = unhex(
        "000a006b310003000000000000
         0208020101000000000000 7631
         0109023201020000000000007632
         0000000001000000 0034782841
         88ca080801008480 06 00000000 09000000 0b 005d33de78
         002202 66696c7465722e6c6576656c64622e4275696c74696e426c6f6f6d46696c74657232 3512 0000000001000000 00874a6c56
         000902 6c 01ffffffffffffff 0030 0000000001000000 0005fb121a
         4c2f800116 0000000000000000000000000000000000000000000000000000000000000000000000 57fb808b247547db",
    );
    let expected = {
        // The footer is 48 bytes: handles (5 bytes) + padding to 40 + magic.
        let mut e = expected[..expected.len() - 48 + 48].to_vec();
        let tail = e.len() - 8;
        let magic = e.split_off(tail);
        let handles_at = 155;
        e.truncate(handles_at + 5);
        e.resize(handles_at + 40, 0);
        e.extend_from_slice(&magic);
        e
    };
    assert_eq!(expected.len(), 203);
    let opts = Options::default()
        .compression(Compression::None)
        .bloom(10)
        .keys(KeyFormat::Internal);
    let k1_del = internal_key(b"k1", 3, ValueType::Deletion);
    let k1 = internal_key(b"k1", 1, ValueType::Value);
    let k2 = internal_key(b"k2", 2, ValueType::Value);
    let got = build(&opts, &[(&k1_del, b""), (&k1, b"v1"), (&k2, b"v2")]);
    assert_eq!(hex::encode(&got), hex::encode(&expected));

    let t = TableReader::open(got.clone(), OpenOptions::default()).unwrap();
    assert!(t.is_internal(), "database keys are detected");
    let ro = ReadOptions::default();
    assert_eq!(t.get(b"k1", &ro).unwrap(), Lookup::Deleted { sequence: 3 });
    assert_eq!(
        t.get(b"k1", &ro.snapshot(Some(2))).unwrap(),
        Lookup::Found {
            value: b"v1".to_vec(),
            sequence: Some(1)
        }
    );
    assert_eq!(
        t.get(b"k1", &ro.snapshot(Some(0))).unwrap(),
        Lookup::NotFound
    );
    assert_eq!(
        t.get(b"k2", &ro).unwrap(),
        Lookup::Found {
            value: b"v2".to_vec(),
            sequence: Some(2)
        }
    );
    assert_eq!(t.get(b"k3", &ro).unwrap(), Lookup::NotFound);
    assert_eq!(
        t.get(b"k1", &Default::default())
            .map(|l| l.into_value())
            .unwrap(),
        None
    );
    assert_eq!(
        t.get(b"k2", &Default::default())
            .map(|l| l.into_value())
            .unwrap(),
        Some(b"v2".to_vec())
    );

    // Read as plain keys, the stored keys come back untouched.
    let plain = TableReader::open(got, OpenOptions::default().keys(KeyFormat::Plain)).unwrap();
    let keys: Vec<Vec<u8>> = {
        let mut it = plain.iter(&ro);
        it.seek_to_first();
        it.into_iter().map(|e| e.unwrap().0).collect()
    };
    assert_eq!(keys, vec![k1_del, k1, k2]);
}
