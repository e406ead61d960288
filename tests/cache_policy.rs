//! The block cache seen from a table: point lookups served from a table's own per-block
//! slots still reach the cache's eviction policy, evicted blocks are read again correctly
//! (their buffers are recycled for later decompressions), and the charge stays within the
//! capacity. Every test runs with each replacement policy, with and without the lookup
//! records holding cache entries.

mod common;

use std::fs::File;
use std::sync::Arc;

use leveldb_table::{
    raw::CountingReader, table::CachePolicy, table::KeyFormat, BlockCache, Compression,
    OpenOptions, Options, ReadOptions, TableBuilder, TableReader,
};

/// Entries per data block (block size 4096: a block closes once it reaches 4096 bytes).
const PER_BLOCK: usize = 5;
const BLOCKS: usize = 400;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// 1000 bytes, half of them a repeat of the other half, so that snappy keeps the blocks
/// compressed (as in LevelDB's db_bench) and every read decompresses.
fn value(i: usize) -> Vec<u8> {
    common::half_compressible(i, 1000)
}

/// Each policy, with lookup records holding entries and without.
const CONFIGS: &[(CachePolicy, bool)] = &[
    (CachePolicy::ClockTinyLfu, true),
    (CachePolicy::ClockTinyLfu, false),
    #[cfg(feature = "quick-cache")]
    (CachePolicy::QuickCache, true),
    #[cfg(feature = "quick-cache")]
    (CachePolicy::QuickCache, false),
];

/// A snappy table of `BLOCKS` data blocks, opened with a cache of `cache_blocks` blocks
/// (`policy`, records holding entries if `links`); reads are counted.
fn table(
    dir: &tempfile::TempDir,
    cache_blocks: u64,
    (policy, links): (CachePolicy, bool),
) -> (TableReader<CountingReader<File>>, Arc<BlockCache>) {
    let path = dir.path().join("t.ldb");
    let opts = Options::default()
        .block_size(4096)
        .compression(Compression::Snappy)
        .bloom(10);
    let mut b = TableBuilder::new(File::create(&path).unwrap(), &opts).unwrap();
    for i in 0..BLOCKS * PER_BLOCK {
        b.add(&key(i), &value(i)).unwrap();
    }
    b.finish().unwrap();
    let cache = Arc::new(BlockCache::with_policy(cache_blocks * 4096, policy).record_links(links));
    let ro = OpenOptions::default()
        .keys(KeyFormat::Plain)
        .block_cache(Some(cache.clone()));
    let file = CountingReader::new(File::open(&path).unwrap());
    let t = TableReader::open(file, ro).unwrap();
    let blocks = t.data_block_handles().unwrap().len();
    assert_eq!(blocks, BLOCKS, "entries per block as planned");
    (t, cache)
}

fn get(t: &TableReader<CountingReader<File>>, i: usize, buf: &mut Vec<u8>) {
    assert!(
        t.get_into(&key(i), &ReadOptions::default(), buf)
            .map(|l| l.is_found())
            .unwrap(),
        "key {i}"
    );
    assert_eq!(*buf, value(i), "value of key {i}");
}

/// A block used over and over, between uses of blocks seen once each, stays cached: its
/// uses reach the policy although they are served from the table's slot.
#[test]
fn a_block_in_use_survives_a_stream_of_one_off_blocks() {
    for &config in CONFIGS {
        a_block_in_use_survives_a_stream_of_one_off_blocks_with(config);
    }
}

fn a_block_in_use_survives_a_stream_of_one_off_blocks_with(config: (CachePolicy, bool)) {
    let dir = tempfile::tempdir().unwrap();
    let (t, cache) = table(&dir, 16, config);
    let mut buf = Vec::new();
    get(&t, 0, &mut buf); // the hot block, and the filter and index, loaded
    let rounds = 3 * BLOCKS;
    let mut hot_reads = 0;
    let mut cold_reads = 0;
    for r in 0..rounds {
        let before = t.source().reads();
        for _ in 0..4 {
            get(&t, 1, &mut buf);
        }
        hot_reads += t.source().reads() - before;
        // A different block each round (never block 0), revisited only every BLOCKS - 1 rounds.
        let cold = PER_BLOCK * (1 + r % (BLOCKS - 1)) + r % PER_BLOCK;
        let before = t.source().reads();
        get(&t, cold, &mut buf);
        cold_reads += t.source().reads() - before;
        // The real bound, with no slack: every shard evicts before it admits a block (or
        // refuses it), so its charge stays within its capacity (the cache's divided by the
        // shard count, rounded down) and the sum within the cache's.
        assert!(
            cache.charge() <= cache.capacity(),
            "charge {}",
            cache.charge()
        );
    }
    assert!(
        cold_reads as usize >= rounds * 9 / 10,
        "the one-off blocks were read ({cold_reads} reads in {rounds} rounds)"
    );
    assert!(
        hot_reads <= 2,
        "the block in use was read again {hot_reads} times in {rounds} rounds"
    );
}

/// Every value is right while the cache evicts, recycles the buffers of evicted blocks and
/// reads blocks again, in passes over the keys in different orders.
#[test]
fn values_stay_right_through_eviction_and_buffer_reuse() {
    for &config in CONFIGS {
        values_stay_right_through_eviction_and_buffer_reuse_with(config);
    }
}

fn values_stay_right_through_eviction_and_buffer_reuse_with(config: (CachePolicy, bool)) {
    let dir = tempfile::tempdir().unwrap();
    let (t, cache) = table(&dir, 8, config);
    let mut buf = Vec::new();
    let n = BLOCKS * PER_BLOCK;
    for pass in 0..3usize {
        let step = [1, 7919, 104_729][pass];
        for j in 0..n {
            get(&t, (j * step + pass) % n, &mut buf);
            assert!(cache.charge() <= cache.capacity());
        }
        let entries = t.iter(&ReadOptions::default()).into_iter();
        for (i, kv) in entries.enumerate() {
            let (k, v) = kv.unwrap();
            assert_eq!((k, v), (key(i), value(i)));
        }
    }
    assert!(
        t.source().reads() as usize > 3 * BLOCKS,
        "blocks were evicted and read again"
    );
}

/// One table and one small cache shared by threads that look keys up (through the slots,
/// the cache and the file, with constant eviction and buffer reuse) and scan: every answer
/// right, the charge within the capacity at the end.
#[test]
fn threads_sharing_a_table_and_a_small_cache_read_right() {
    for &config in CONFIGS {
        threads_sharing_a_table_and_a_small_cache_read_right_with(config);
    }
}

fn threads_sharing_a_table_and_a_small_cache_read_right_with(config: (CachePolicy, bool)) {
    let dir = tempfile::tempdir().unwrap();
    let (t, cache) = table(&dir, 8, config);
    let n = BLOCKS * PER_BLOCK;
    std::thread::scope(|s| {
        for thread in 0..4usize {
            let t = &t;
            s.spawn(move || {
                let mut buf = Vec::new();
                let mut x = thread as u64 * 7919 + 1;
                for round in 0..3000 {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    let i = (x >> 33) as usize % n;
                    get(t, i, &mut buf);
                    // Absent keys just above a present one: the filter or the block says no.
                    let absent = [key(i), b"!".to_vec()].concat();
                    assert!(!t
                        .get_into(&absent, &ReadOptions::default(), &mut buf)
                        .map(|l| l.is_found())
                        .unwrap());
                    if round % 1000 == thread {
                        let scanned = t
                            .iter(&ReadOptions::default())
                            .into_iter()
                            .map(|kv| kv.unwrap())
                            .enumerate()
                            .all(|(i, (k, v))| k == key(i) && v == value(i));
                        assert!(scanned);
                    }
                }
            });
        }
    });
    assert!(cache.charge() <= cache.capacity());
}
