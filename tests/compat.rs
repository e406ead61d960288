//! One test per deliberate difference from LevelDB (listed in docs/compat.md).

use std::sync::Arc;

use leveldb_table::raw::format::block_trailer;
use leveldb_table::raw::hash::hash_signed_tail;
use leveldb_table::raw::{Block, BlockBuilder};
use leveldb_table::Cursor;
use leveldb_table::{
    error::DecompressError, raw::format::BlockHandle, raw::CountingReader, table::FilterStatus,
    table::KeyFormat, BlockCache, BytewiseComparator, Compression, Error, FilterPolicy,
    OpenOptions, Options, ReadOptions, TableBuilder, TableReader,
};

fn table_bytes(n: u32, opts: &Options) -> Vec<u8> {
    let mut b = TableBuilder::new(Vec::new(), opts).unwrap();
    for i in 0..n {
        b.add(
            format!("key{i:05}").as_bytes(),
            format!("value{i:05}").as_bytes(),
        )
        .unwrap();
    }
    b.finish().unwrap().0
}

fn plain() -> OpenOptions {
    OpenOptions::default().keys(KeyFormat::Plain)
}

/// Flips one byte inside the value of the first entry of the data block at `h`.
fn flip_in_block(bytes: &mut [u8], h: BlockHandle) {
    bytes[h.offset as usize + 12] ^= 0x20;
}

#[test]
fn data_checksums_are_verified_by_default() {
    let opts = Options::default().compression(Compression::None);
    let mut bytes = table_bytes(1000, &opts);
    let t = TableReader::open(bytes.clone(), plain()).unwrap();
    let (_, h) = t.data_block_handles().unwrap()[0];
    flip_in_block(&mut bytes, h);
    let t = TableReader::open(bytes.clone(), plain()).unwrap();
    let err = t.get(b"key00000", &ReadOptions::default()).unwrap_err();
    assert!(matches!(err, Error::ChecksumMismatch { .. }), "{err}");
    // LevelDB's default (no verification) silently returns the changed value.
    let t = TableReader::open(bytes, plain().verify_checksums(false)).unwrap();
    let got = t.get(b"key00000", &ReadOptions::default()).unwrap();
    assert!(got.is_found());
    assert_ne!(got.value(), Some(&b"value00000"[..]));
}

#[test]
fn metadata_checksums_are_verified_at_open() {
    let opts = Options::default().compression(Compression::None);
    let mut bytes = table_bytes(1000, &opts);
    let t = TableReader::open(bytes.clone(), plain()).unwrap();
    let index = t.footer().index;
    bytes[index.offset as usize + 3] ^= 1;
    assert!(matches!(
        TableReader::open(bytes.clone(), plain()),
        Err(Error::ChecksumMismatch { .. })
    ));
    // Like LevelDB without paranoid_checks when asked.
    assert!(TableReader::open(bytes, plain().verify_checksums(false)).is_ok());
}

#[test]
fn cursors_stop_at_a_bad_block_instead_of_skipping_it() {
    let opts = Options::default()
        .compression(Compression::None)
        .block_size(256);
    let mut bytes = table_bytes(1000, &opts);
    let t = TableReader::open(bytes.clone(), plain()).unwrap();
    let handles = t.data_block_handles().unwrap();
    let (_, bad) = handles[handles.len() / 2];
    flip_in_block(&mut bytes, bad);
    let t = TableReader::open(bytes, plain()).unwrap();
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert!(matches!(it.status(), Err(Error::ChecksumMismatch { .. })));
    assert!(
        n > 0 && n < 1000,
        "stopped at the bad block after {n} entries"
    );
    let results: Vec<_> = t.iter(&ReadOptions::default()).into_iter().collect();
    assert!(
        matches!(results.last().unwrap(), Err(Error::ChecksumMismatch { .. })),
        "the entries end with the block's checksum error"
    );
    assert_eq!(results.len(), n + 1);
}

#[test]
fn block_handles_are_checked_against_the_file_size_before_reading() {
    let opts = Options::default().compression(Compression::None);
    let bytes = table_bytes(10, &opts);
    // Point the footer's index handle far past the end.
    let mut bad = bytes.clone();
    let footer_at = bad.len() - 48;
    let mut f = Vec::new();
    let t = TableReader::open(bytes.clone(), plain()).unwrap();
    t.footer().metaindex.encode_to(&mut f);
    BlockHandle::new(1 << 40, 1 << 40).encode_to(&mut f);
    f.resize(40, 0);
    bad[footer_at..footer_at + 40].copy_from_slice(&f);
    match TableReader::open(bad, plain()) {
        Err(Error::BadBlockHandle { handle, .. }) => assert_eq!(handle.offset, 1 << 40),
        other => panic!("{:?}", other.err()),
    }
}

#[test]
fn the_block_cache_holds_only_verified_blocks() {
    let opts = Options::default().compression(Compression::None);
    let mut bytes = table_bytes(100, &opts);
    let (_, h) = TableReader::open(bytes.clone(), plain())
        .unwrap()
        .data_block_handles()
        .unwrap()[0];
    flip_in_block(&mut bytes, h);
    let cache = Arc::new(BlockCache::new(1 << 20));
    let unverified = TableReader::open(
        bytes.clone(),
        plain()
            .block_cache(Some(cache.clone()))
            .verify_checksums(false),
    )
    .unwrap();
    let t = TableReader::open(bytes, plain().block_cache(Some(cache.clone()))).unwrap();
    unverified
        .get(b"key00001", &ReadOptions::default())
        .unwrap();
    assert_eq!(cache.len(), 0, "an unverified block is not cached");
    assert!(
        matches!(t.get(b"key00001", &ReadOptions::default()), Err(Error::ChecksumMismatch { handle, .. }) if handle == h),
        "a verified read still sees the damage"
    );
}

#[test]
fn reads_without_checksums_still_cache_blocks_verified() {
    // Checksums off (LevelDB's default) must not mean "never cached": the blocks a lookup
    // brings in are verified on their way into the cache and serve later lookups.
    let opts = Options::default().compression(Compression::Snappy);
    let bytes = table_bytes(100, &opts);
    let cache = Arc::new(BlockCache::new(1 << 20));
    let t = TableReader::open(
        CountingReader::new(bytes),
        plain()
            .block_cache(Some(cache.clone()))
            .verify_checksums(false),
    )
    .unwrap();
    let read = ReadOptions::default();
    let mut v = Vec::new();
    assert!(t.get_into(b"key00001", &read, &mut v).unwrap().is_found());
    assert_eq!(cache.len(), 1, "the block was cached");
    let reads = t.source().reads();
    assert!(t.get_into(b"key00002", &read, &mut v).unwrap().is_found());
    assert!(t.get(b"key00003", &read).unwrap().is_found());
    assert_eq!(
        t.source().reads(),
        reads,
        "later lookups are served by the cache"
    );
}

/// The pre-1.18 x86 bloom filter: same bits, but tail bytes hashed as signed chars.
struct Pre118X86Bloom;

impl FilterPolicy for Pre118X86Bloom {
    fn name(&self) -> &str {
        "leveldb.BuiltinBloomFilter"
    }
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let bits = (keys.len() * 10).max(64);
        let bytes = bits.div_ceil(8);
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(6);
        let nbits = (bytes * 8) as u32;
        for k in keys {
            let mut h = hash_signed_tail(k, 0xbc9f_1d34);
            let delta = h.rotate_right(17);
            for _ in 0..6 {
                let pos = h % nbits;
                dst[start + (pos / 8) as usize] |= 1 << (pos % 8);
                h = h.wrapping_add(delta);
            }
        }
    }
    fn key_may_match(&self, _: &[u8], _: &[u8]) -> bool {
        true
    }
}

#[test]
fn legacy_named_filters_are_used_with_either_hash() {
    // Keys with tail bytes >= 0x80 hash differently under the two variants.
    let keys: Vec<Vec<u8>> = (0..2000u32)
        .map(|i| [&i.to_be_bytes()[..], &[0x80 | (i as u8)]].concat())
        .collect();
    let opts = Options::default().filter_policy(Some(Arc::new(Pre118X86Bloom)));
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for k in &keys {
        b.add(k, b"v").unwrap();
    }
    let t = TableReader::open(b.finish().unwrap().0, plain()).unwrap();
    assert!(matches!(t.filter_status(), FilterStatus::Used));
    for k in &keys {
        assert_eq!(
            t.get(k, &Default::default())
                .map(|l| l.into_value())
                .unwrap(),
            Some(b"v".to_vec()),
            "no false 'not found'"
        );
    }
    // goleveldb's variant (same name, unsigned hash) is covered by tests/other_writers.rs.
    let misses = (0..2000u32)
        .filter(|i| {
            t.filter_excludes(&[&i.to_be_bytes()[..], &[0x7f]].concat())
                .unwrap()
        })
        .count();
    assert!(
        misses > 1800,
        "the filter still excludes most absent keys ({misses})"
    );
}

#[test]
fn a_restart_point_past_the_entries_is_corruption() {
    let mut b = BlockBuilder::new(1);
    b.add(b"a", b"1");
    b.add(b"b", b"2");
    let mut raw = b.finish().to_vec();
    let n = raw.len();
    // Restart array [0, 8] -> [0, 200].
    raw[n - 8..n - 4].copy_from_slice(&200u32.to_le_bytes());
    let block = Block::from_bytes(raw).unwrap();
    let mut it = block.iter(&BytewiseComparator);
    it.seek_to_last();
    assert!(!it.valid());
    assert!(it.status().is_err(), "LevelDB would just end the iteration");
}

#[test]
fn entries_no_restart_point_reaches_are_corruption() {
    let mut b = BlockBuilder::new(16);
    b.add(b"a", b"1");
    b.add(b"b", b"2");
    let mut raw = b.finish().to_vec();
    let n = raw.len();
    // Restart count 1 -> 0: LevelDB's iterator would read the block as empty.
    raw[n - 4..].copy_from_slice(&0u32.to_le_bytes());
    let e = Block::from_bytes(raw).unwrap_err();
    assert!(e.to_string().contains("no restart point"), "{e}");
    // The bare count (LevelDB's ZeroRestartPointsInBlock) is still an empty block.
    assert!(Block::from_bytes(vec![0u8; 4]).is_ok());
}

#[test]
fn unknown_compression_ids_are_named() {
    let mut raw = b"\x00\x00\x00\x00\x01\x00\x00\x00".to_vec();
    raw.extend_from_slice(&block_trailer(&raw.clone(), 7));
    let e = leveldb_table::raw::format::StoredBlock::from_raw(
        raw.into(),
        BlockHandle::new(0, 8),
        leveldb_table::error::BlockKind::Data,
        leveldb_table::raw::format::ReadBlockOptions {
            verify_checksum: true,
            profile: Default::default(),
        },
    )
    .and_then(leveldb_table::raw::format::StoredBlock::decompress)
    .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("bad block type") && msg.contains("id 7"),
        "{msg}"
    );
}

#[test]
fn zstd_frames_without_a_content_size_are_corruption() {
    // A zstd frame written by the streaming API carries no content size.
    let mut enc = zstd_frame_without_size(b"hello hello hello hello");
    let r = leveldb_table::raw::compress::decompress(2, &enc, Default::default());
    assert!(matches!(r, Err(DecompressError::BadLength(_))), "{r:?}");
    enc.truncate(3);
    let r = leveldb_table::raw::compress::decompress(3, &enc, Default::default());
    assert!(matches!(r, Err(DecompressError::BadLength(_))), "{r:?}");
}

fn zstd_frame_without_size(data: &[u8]) -> Vec<u8> {
    // Frame header: magic, descriptor 0x00 (no content size, no checksum, window byte
    // present), window descriptor, then one raw last block.
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50];
    let bh = ((data.len() as u32) << 3) | 1; // raw block, last
    f.extend_from_slice(&bh.to_le_bytes()[..3]);
    f.extend_from_slice(data);
    f
}

#[test]
fn out_of_order_keys_are_an_error_not_undefined_behaviour() {
    let mut b = TableBuilder::new(Vec::new(), &Options::default()).unwrap();
    b.add(b"b", b"").unwrap();
    match b.add(b"a", b"") {
        Err(Error::OutOfOrder { previous, got }) => {
            assert_eq!((previous, got), (b"b".to_vec(), b"a".to_vec()))
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(b.add(b"b", b""), Err(Error::OutOfOrder { .. })),
        "duplicates too"
    );
}

/// LevelDB's documentation's own example: an order that ignores trailing spaces. It calls
/// other bytes equal, so a filter keyed by bytes would answer "absent" for a key stored
/// under other spaces; with `equal_keys_identical` saying so, the lookup reads the block and
/// the answer is the comparator's, as in LevelDB's memtable.
struct IgnoreTrailingSpaces {
    identical: bool,
}

impl leveldb_table::Comparator for IgnoreTrailingSpaces {
    fn name(&self) -> &str {
        "test.IgnoreTrailingSpaces"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        let trim = |k: &[u8]| k.len() - k.iter().rev().take_while(|&&c| c == b' ').count();
        a[..trim(a)].cmp(&b[..trim(b)])
    }
    fn find_shortest_separator(&self, _: &mut Vec<u8>, _: &[u8]) {}
    fn find_short_successor(&self, _: &mut Vec<u8>) {}
    fn equal_keys_identical(&self, _key: &[u8]) -> bool {
        self.identical
    }
}

#[test]
fn keys_equal_under_other_bytes_are_found_past_the_filter() {
    for identical in [false, true] {
        let mut o = Options::default().bloom(10).keys(KeyFormat::Internal);
        o.comparator = Arc::new(IgnoreTrailingSpaces { identical });
        let mut b = TableBuilder::new(Vec::new(), &o).unwrap();
        for (i, k) in [&b"apple"[..], b"banana", b"cherry"].iter().enumerate() {
            let ik = leveldb_table::raw::internal_key::internal_key(
                k,
                i as u64 + 1,
                leveldb_table::raw::internal_key::ValueType::Value,
            );
            b.add(&ik, b"v").unwrap();
        }
        let bytes = b.finish().unwrap().0;
        let mut r = OpenOptions::default().keys(KeyFormat::Internal);
        r.comparator = Arc::new(IgnoreTrailingSpaces { identical });
        let t = TableReader::open(bytes, r).unwrap();
        let read = ReadOptions::default();
        assert!(t.get(b"banana", &read).unwrap().value().is_some());
        let other_bytes = t.get(b"banana  ", &read).unwrap().value().is_some();
        // Trusting the byte-keyed filter misses the key; not trusting it finds it.
        assert_eq!(other_bytes, !identical, "identical: {identical}");
        assert_eq!(t.filter_excludes(b"banana  ").unwrap(), identical);
    }
}
