//! The point-lookup fast path of a table with a decoded index: per-block lookup records
//! (filter bytes copied inline, or the filter's place in the filter block when it is too long
//! to copy), restart hints kept beside cached blocks, and the cache slot. Each case compares
//! every answer with the keys written, before and after the blocks are evicted, and checks
//! that the filter still keeps absent keys away from the file.

mod common;

use std::collections::BTreeMap;
use std::fs::File;
use std::sync::Arc;

use leveldb_table::{
    raw::CountingReader, table::KeyFormat, BlockCache, Compression, OpenOptions, Options,
    ReadOptions, TableBuilder, TableReader,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Writes `model` as a snappy table (block 4096, restart 16, bloom 10), opens it through a
/// read counter with a cache of `cache_bytes`.
fn open(
    dir: &tempfile::TempDir,
    model: &Model,
    cache_bytes: u64,
) -> TableReader<CountingReader<File>> {
    let path = dir.path().join("t.ldb");
    let opts = Options::default()
        .block_size(4096)
        .block_restart_interval(16)
        .compression(Compression::Snappy)
        .bloom(10);
    let mut b = TableBuilder::new(File::create(&path).unwrap(), &opts).unwrap();
    for (k, v) in model {
        b.add(k, v).unwrap();
    }
    b.finish().unwrap();
    let ro = OpenOptions::default()
        .keys(KeyFormat::Plain)
        .block_cache(Some(Arc::new(BlockCache::new(cache_bytes))));
    TableReader::open(CountingReader::new(File::open(&path).unwrap()), ro).unwrap()
}

/// Half-compressible bytes, so snappy keeps blocks compressed.
fn value(i: usize, len: usize) -> Vec<u8> {
    common::half_compressible(i, len)
}

/// Every key found with its value, and keys next to them (a byte more, a last byte bumped
/// or dropped) answered as the map answers; three rounds, so that later rounds use cached
/// blocks (hints) or, with a small cache, blocks read again after eviction.
fn check_all(t: &TableReader<CountingReader<File>>, model: &Model) {
    let mut buf = Vec::new();
    for round in 0..3 {
        for (k, v) in model {
            assert!(
                t.get_into(k, &ReadOptions::default(), &mut buf)
                    .map(|l| l.is_found())
                    .unwrap(),
                "round {round}: {k:?} not found"
            );
            assert_eq!(&buf, v, "round {round}: value of {k:?}");
        }
        for k in model.keys() {
            let mut near = vec![[&k[..], &[0]].concat(), [&k[..], b"~~"].concat()];
            if let Some((&last, head)) = k.split_last() {
                near.push(head.to_vec());
                near.push([head, &[last.wrapping_add(1)]].concat());
                near.push([head, &[last.wrapping_sub(1)]].concat());
            }
            for p in near {
                let found = t
                    .get_into(&p, &ReadOptions::default(), &mut buf)
                    .map(|l| l.is_found())
                    .unwrap();
                assert_eq!(found, model.contains_key(&p), "round {round}: probe {p:?}");
                if found {
                    assert_eq!(&buf, &model[&p]);
                }
            }
        }
    }
}

/// Keys that agree on many bytes past what all keys of the table share: the 8-byte prefixes
/// of many restart keys are equal to the target's, so lookups compare those keys whole.
#[test]
fn restart_keys_with_equal_prefixes_are_compared_whole() {
    let mut model = Model::new();
    for i in 0..6000 {
        // 500 consecutive keys share "GGGG" + a 10-byte run after their group number.
        let k = format!("{:04}{}{:06}", i / 500, "X".repeat(10), i % 500);
        model.insert(k.into_bytes(), value(i, 100));
    }
    let dir = tempfile::tempdir().unwrap();
    check_all(&open(&dir, &model, 64 << 20), &model);
    // A cache of a few blocks: hints are rebuilt as blocks come back.
    check_all(&open(&dir, &model, 16 << 10), &model);
}

/// Keys of 0 to 3 bytes and keys that are prefixes of others: prefixes are zero-padded, so
/// a short key and a longer one with zero bytes map to the same prefix.
#[test]
fn short_keys_and_keys_with_zero_bytes() {
    let mut model = Model::new();
    let mut i = 0;
    for a in [0u8, 1, b'a', 0xff] {
        model.insert(vec![a], value(i, 90));
        i += 1;
        for b in [0u8, 1, 0x7f, 0xff] {
            model.insert(vec![a, b], value(i, 90));
            i += 1;
            for c in [0u8, 2, 0xfe] {
                model.insert(vec![a, b, c], value(i, 90));
                model.insert(vec![a, b, c, 0, 0, 0, 0, 0, 0, 0, 0, 1], value(i + 1, 90));
                i += 2;
            }
        }
    }
    model.insert(Vec::new(), value(i, 90));
    let dir = tempfile::tempdir().unwrap();
    check_all(&open(&dir, &model, 64 << 20), &model);
    check_all(&open(&dir, &model, 8 << 10), &model);
}

/// Absent keys cost (almost) no block reads whether the block's filter is copied into its
/// lookup record (100-byte values: ~40 keys, a 51-byte filter) or too long for it and read
/// from the filter block (10-byte values: ~200 keys, a 250-byte filter).
#[test]
fn filters_keep_absent_keys_off_the_file_inline_or_not() {
    for value_len in [100usize, 10] {
        let mut model = Model::new();
        for i in 0..20_000 {
            model.insert(format!("k{:09}", i * 2).into_bytes(), value(i, value_len));
        }
        let dir = tempfile::tempdir().unwrap();
        // No block cached (cache of one byte): every block a lookup searches is a read.
        let t = open(&dir, &model, 1);
        let mut buf = Vec::new();
        // First use loads the filter and builds the records; count from here.
        assert!(!t
            .get_into(b"k000000001", &ReadOptions::default(), &mut buf)
            .map(|l| l.is_found())
            .unwrap());
        t.source().reset();
        let probes = 10_000;
        for i in 0..probes {
            let absent = format!("k{:09}", i * 4 + 1);
            assert!(!t
                .get_into(absent.as_bytes(), &ReadOptions::default(), &mut buf)
                .map(|l| l.is_found())
                .unwrap());
        }
        let reads = t.source().reads();
        // 10 bits per key: about 1% false positives.
        assert!(
            reads < probes / 30,
            "value length {value_len}: {reads} block reads for {probes} absent keys"
        );
        check_all(&open(&dir, &model, 256 << 10), &model);
    }
}

/// Damaged filter offsets (checksum recomputed, so the filter block is used): a lookup's
/// copy of the filter answers as the filter block does (LevelDB's rules: a malformed range
/// may match, unless it is empty, which matches nothing), for every key.
#[test]
fn lookup_records_answer_as_the_filter_block_for_damaged_offsets() {
    use leveldb_table::raw::coding::decode_fixed32;
    use leveldb_table::raw::format::block_trailer;

    let opts = Options::default()
        .block_size(1024)
        .compression(Compression::None)
        .bloom(10);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    let keys: Vec<Vec<u8>> = (0..600)
        .map(|i| format!("k{:06}", i).into_bytes())
        .collect();
    for (i, k) in keys.iter().enumerate() {
        b.add(k, &value(i, 60)).unwrap();
    }
    let good = b.finish().unwrap().0;
    let ro = || {
        OpenOptions::default()
            .keys(KeyFormat::Plain)
            .block_cache(Some(Arc::new(BlockCache::new(1 << 20))))
    };
    let fh = TableReader::open(good.clone(), ro())
        .unwrap()
        .filter_handle()
        .unwrap();
    let (start, size) = (fh.offset as usize, fh.size as usize);
    let array_start = decode_fixed32(&good[start + size - 5..]) as usize;
    let num = (size - 5 - array_start) / 4;
    assert!(num > 10, "{num} filters");
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    let mut no_match_seen = 0;
    for trial in 0..150 {
        let mut file = good.clone();
        for _ in 0..1 + rnd(3) {
            let i = rnd(num as u64) as usize;
            let at = start + array_start + 4 * i;
            let next = decode_fixed32(&file[at + 4..]) as u64;
            let v = match rnd(6) {
                0 => 0,
                1 => next,
                2 => array_start as u64 + 1 + rnd(50),
                3 => u64::from(u32::MAX),
                4 => rnd(array_start as u64 + 1),
                _ => next.saturating_sub(1 + rnd(4)),
            };
            file[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
            if rnd(4) == 0 {
                // An empty range past the offset array: LevelDB's "no key matches".
                let w = array_start as u32 + 10;
                file[at..at + 4].copy_from_slice(&w.to_le_bytes());
                file[at + 4..at + 8].copy_from_slice(&w.to_le_bytes());
            }
        }
        let trailer = block_trailer(&file[start..start + size], 0);
        file[start + size..start + size + 5].copy_from_slice(&trailer);
        let t = TableReader::open(file, ro()).unwrap();
        for k in &keys {
            let excluded = t.filter_excludes(k).unwrap();
            no_match_seen += usize::from(excluded);
            assert_eq!(
                t.get(k, &Default::default())
                    .map(|l| l.into_value())
                    .unwrap()
                    .is_some(),
                !excluded,
                "trial {trial}: key {k:?}"
            );
        }
    }
    // The damage did rule some present keys out (the empty-range case), as LevelDB would.
    assert!(no_match_seen > 0);
}

/// Database tables (internal keys, several versions per user key, deletions): lookups at
/// every snapshot through the lookup records and restart hints answer as the versions
/// written, cached or evicted.
#[test]
fn database_tables_answer_every_snapshot() {
    use leveldb_table::raw::internal_key::internal_key;
    use leveldb_table::{raw::internal_key::ValueType, Lookup};

    // User keys with 1 to 3 versions each; sequence numbers rise with insertion.
    let mut versions: Vec<(Vec<u8>, u64, bool, Vec<u8>)> = Vec::new();
    let mut seq = 1u64;
    for i in 0..3000usize {
        let user = format!("user/{:03}/{:05}", i % 7, i).into_bytes();
        for v in 0..1 + i % 3 {
            versions.push((user.clone(), seq, (i + v) % 5 == 0, value(i * 3 + v, 80)));
            seq += 1;
        }
    }
    // Internal key order: user key ascending, sequence descending.
    versions.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let opts = Options::default()
        .block_size(4096)
        .compression(Compression::Snappy)
        .bloom(10)
        .keys(KeyFormat::Internal);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (user, seq, deleted, v) in &versions {
        let vt = if *deleted {
            ValueType::Deletion
        } else {
            ValueType::Value
        };
        let stored: &[u8] = if *deleted { b"" } else { v };
        b.add(&internal_key(user, *seq, vt), stored).unwrap();
    }
    let bytes = b.finish().unwrap().0;
    for cache in [64u64 << 20, 16 << 10] {
        let ro = OpenOptions::default()
            .keys(KeyFormat::Internal)
            .block_cache(Some(Arc::new(BlockCache::new(cache))));
        let t = TableReader::open(bytes.clone(), ro).unwrap();
        for round in 0..2 {
            for (user, seq, deleted, v) in &versions {
                // At the version's own sequence it is the newest visible one.
                let got = t
                    .get(user, &ReadOptions::default().snapshot(Some(*seq)))
                    .unwrap();
                let want = if *deleted {
                    Lookup::Deleted { sequence: *seq }
                } else {
                    Lookup::Found {
                        value: v.clone(),
                        sequence: Some(*seq),
                    }
                };
                assert_eq!(got, want, "cache {cache} round {round}: {user:?} at {seq}");
                // Below the oldest version nothing is visible.
                let oldest = versions
                    .iter()
                    .filter(|x| &x.0 == user)
                    .map(|x| x.1)
                    .min()
                    .unwrap();
                if *seq == oldest {
                    assert_eq!(
                        t.get(user, &ReadOptions::default().snapshot(Some(seq - 1)))
                            .unwrap(),
                        Lookup::NotFound
                    );
                }
            }
            // Absent user keys.
            for i in 0..500 {
                let absent = format!("user/{:03}/{:05}x", i % 7, i).into_bytes();
                assert_eq!(
                    t.get(
                        &absent,
                        &ReadOptions::default().snapshot(Some(u64::MAX >> 8))
                    )
                    .unwrap(),
                    Lookup::NotFound
                );
            }
        }
    }
}

/// Blocks with many restart points (restart interval 1 and 2, small entries): the hints hold
/// an even sample of them, and the restart search between two samples finds the entry.
#[test]
fn blocks_with_many_restart_points_use_sampled_hints() {
    for restart in [1usize, 2, 5] {
        let mut model = Model::new();
        for i in 0..8000usize {
            // Runs of keys sharing long prefixes, and some short keys, with 8-40 byte values.
            let k = match i % 4 {
                0 => format!("{:03}", i / 40).into_bytes(),
                _ => format!("{:03}/{}/{:05}", i / 40, "y".repeat(i % 13), i).into_bytes(),
            };
            model.insert(k, value(i, 8 + i % 33));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.ldb");
        let opts = Options::default()
            .block_size(4096)
            .block_restart_interval(restart)
            .compression(Compression::Snappy)
            .bloom(10);
        let mut b = TableBuilder::new(File::create(&path).unwrap(), &opts).unwrap();
        for (k, v) in &model {
            b.add(k, v).unwrap();
        }
        b.finish().unwrap();
        for cache in [64u64 << 20, 12 << 10] {
            let ro = OpenOptions::default()
                .keys(KeyFormat::Plain)
                .block_cache(Some(Arc::new(BlockCache::new(cache))));
            let t = TableReader::open(CountingReader::new(File::open(&path).unwrap()), ro).unwrap();
            check_all(&t, &model);
        }
    }
}
