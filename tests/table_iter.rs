//! A table's cursor as a std iterator (`for entry in table.iter(&read)`): every entry from
//! the first call without a seek, from the cursor's position after one, the entries of a
//! range (plain keys and a database's internal keys, bounds given as user keys), and a
//! damaged block ends the entries with an error item, never silently.

use leveldb_table::table::KeyFormat;
use std::ops::Bound;

use leveldb_table::error::BlockKind;
use leveldb_table::raw::internal_key::{internal_key, parse_internal_key, ValueType};
use leveldb_table::{Cursor, Error, OpenOptions, Options, ReadOptions, TableBuilder, TableReader};

/// An item of a table's std iterator.
type Entry = Result<(Vec<u8>, Vec<u8>), Error>;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// 2000 entries in blocks of about 1 KiB, uncompressed (so a flipped byte lands in one
/// block's data).
fn table() -> Vec<u8> {
    let opts = Options::default()
        .block_size(1024)
        .compression(leveldb_table::Compression::None);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for i in 0..2000 {
        b.add(&key(i), format!("value{i}").as_bytes()).unwrap();
    }
    b.finish().unwrap().0
}

#[test]
fn a_cursor_not_positioned_starts_at_the_first_entry() {
    let t = TableReader::open(table(), OpenOptions::default()).unwrap();
    let read = ReadOptions::default();
    let mut n = 0;
    for e in t.iter(&read) {
        let (k, v) = e.unwrap();
        assert_eq!(k, key(n));
        assert_eq!(v, format!("value{n}").into_bytes());
        n += 1;
    }
    assert_eq!(n, 2000);
    // Positioned first: from there on.
    let mut it = t.iter(&read);
    it.seek(&key(1990));
    let rest: Vec<_> = it.into_iter().map(|e| e.unwrap().0).collect();
    assert_eq!(rest, (1990..2000).map(key).collect::<Vec<_>>());
    // Positioned past the end: nothing (not a restart from the first entry).
    let mut it = t.iter(&read);
    it.seek(b"zzz");
    assert_eq!(it.into_iter().count(), 0);
}

#[test]
fn a_damaged_block_ends_the_entries_with_an_error() {
    let mut bytes = table();
    let clean = TableReader::open(bytes.clone(), OpenOptions::default()).unwrap();
    let blocks = clean.data_block_handles().unwrap();
    assert!(blocks.len() > 20, "{} blocks", blocks.len());
    let damaged = blocks[5].1;
    bytes[damaged.offset as usize + 10] ^= 0x40;
    let t = TableReader::open(bytes, OpenOptions::default()).unwrap();
    let read = ReadOptions::default();
    let items: Vec<_> = t.iter(&read).into_iter().collect();
    let (last, entries) = items.split_last().unwrap();
    let before = clean
        .iter(&read)
        .into_iter()
        .take_while(|e| e.as_ref().unwrap().0 < blocks[4].0)
        .count();
    assert!(entries.len() > before, "{} {before}", entries.len());
    assert!(entries.iter().all(Result::is_ok));
    match last {
        Err(Error::ChecksumMismatch { kind, handle, .. }) => {
            assert_eq!((*kind, *handle), (BlockKind::Data, damaged));
        }
        other => panic!("{other:?}"),
    }
    // A range over the damage says so too; one before it does not.
    let first_key = clean.iter(&read).into_iter().next().unwrap().unwrap().0;
    assert!(t.range(first_key.as_slice().., &read).any(|e| e.is_err()));
    let early = t.range(key(0).as_slice()..key(10).as_slice(), &read);
    assert_eq!(early.map(Result::unwrap).count(), 10);
}

#[test]
fn ranges_of_a_database_table_take_user_keys() {
    // A database's table: versions of user keys u0..u9, three each (sequences descending).
    let opts = Options::default().keys(KeyFormat::Internal);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    let mut seq = 1000;
    for u in 0..10u8 {
        for kind in [ValueType::Value, ValueType::Deletion, ValueType::Value] {
            b.add(&internal_key(&[b'u', b'0' + u], seq, kind), b"v")
                .unwrap();
            seq -= 1;
        }
    }
    let t = TableReader::open(b.finish().unwrap().0, OpenOptions::default()).unwrap();
    assert!(t.is_internal());
    let read = ReadOptions::default();
    let users = |r: Vec<Entry>| -> Vec<Vec<u8>> {
        r.into_iter()
            .map(|e| parse_internal_key(&e.unwrap().0).unwrap().user_key.to_vec())
            .collect()
    };
    let three = |u: &[u8]| vec![u.to_vec(); 3];
    // [u3, u5): every version of u3 and u4.
    let got = users(t.range(b"u3".as_slice()..b"u5".as_slice(), &read).collect());
    assert_eq!(got, [three(b"u3"), three(b"u4")].concat());
    // (u3, u5]: every version of u4 and u5.
    let r = (
        Bound::Excluded(b"u3".as_slice()),
        Bound::Included(b"u5".as_slice()),
    );
    let got = users(t.range::<&[u8]>(r, &read).collect());
    assert_eq!(got, [three(b"u4"), three(b"u5")].concat());
    // ..=u0 and u9..: the ends.
    assert_eq!(
        users(t.range(..=b"u0".as_slice(), &read).collect()),
        three(b"u0")
    );
    assert_eq!(
        users(t.range(b"u9".as_slice().., &read).collect()),
        three(b"u9")
    );
}
