//! Unit tests of the lookup records and the cache together.

use std::sync::Arc;

use super::records::Slot;
use super::*;
use crate::cache::BlockCache;
use crate::options::{Compression, KeyFormat, OpenOptions, Options, ReadOptions};
use crate::table_builder::TableBuilder;

fn key(i: usize) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// 400 bytes, half a repeat of the other half: snappy keeps every block compressed, so
/// every block a lookup uses is decompressed into a buffer the cache owns.
fn value(i: usize) -> Vec<u8> {
    let half: Vec<u8> = (0..200)
        .map(|j| b'a' + ((i * 31 + j * 7) % 26) as u8)
        .collect();
    [half.clone(), half].concat()
}

/// A snappy table of `n` entries (about 10 per block) with a cache of `blocks` blocks.
fn table(n: usize, blocks: u64) -> (TableReader<Vec<u8>>, Arc<BlockCache>) {
    let opts = Options::default()
        .block_size(4096)
        .compression(Compression::Snappy)
        .bloom(10);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for i in 0..n {
        b.add(&key(i), &value(i)).unwrap();
    }
    let (bytes, _) = b.finish().unwrap();
    let cache = Arc::new(BlockCache::new(blocks * 4400));
    let ro = OpenOptions::default()
        .keys(KeyFormat::Plain)
        .block_cache(Some(cache.clone()));
    (TableReader::open(bytes, ro).unwrap(), cache)
}

/// Records holding a block, each checked to hold exactly what the cache holds for it.
fn held_blocks(t: &TableReader<Vec<u8>>, cache: &BlockCache) -> usize {
    let records = &t.lookups.get().expect("records built by the lookups").0;
    let mut held = 0;
    for l in records.iter() {
        if let Slot::Held(h) = &*l.slot.read().unwrap() {
            let cached = cache.get_entry(t.cache_id, l.handle.offset);
            assert!(
                cached.is_some_and(|e| Arc::ptr_eq(&e, &h.entry)),
                "a record holds a block the cache let go (offset {})",
                l.handle.offset
            );
            assert_eq!(h.block.handle(), l.handle);
            held += 1;
        }
    }
    held
}

/// A record holds a block only while the cache holds it: after lookups all over a table
/// five times the cache's size (the cache evicting and declining blocks throughout),
/// every held block is the cache's current entry, and lookups stay right.
#[test]
fn records_hold_blocks_only_while_the_cache_does() {
    let (t, cache) = table(2000, 20);
    let mut v = Vec::new();
    let mut x = 7u64;
    for round in 0..6000 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        // Skewed: a quarter of the table gets most lookups, so blocks both stay and go.
        let i = if round % 3 == 0 {
            (x >> 33) as usize % 2000
        } else {
            (x >> 33) as usize % 500
        };
        assert!(t
            .get_into(&key(i), &ReadOptions::default(), &mut v)
            .map(|l| l.is_found())
            .unwrap());
        assert_eq!(v, value(i));
        if round % 500 == 0 {
            assert!(held_blocks(&t, &cache) <= cache.len());
        }
    }
    let held = held_blocks(&t, &cache);
    assert!(held > 5, "lookups went through held blocks ({held})");
    assert!(cache.charge() <= cache.capacity());
}

/// The same with threads looking up at once.
#[test]
fn records_and_cache_agree_under_threads() {
    let (t, cache) = table(2000, 16);
    std::thread::scope(|s| {
        for thread in 0..4u64 {
            let t = &t;
            s.spawn(move || {
                let mut v = Vec::new();
                let mut x = thread * 7919 + 1;
                for _ in 0..4000 {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    let i = (x >> 33) as usize % 700;
                    assert!(t
                        .get_into(&key(i), &ReadOptions::default(), &mut v)
                        .map(|l| l.is_found())
                        .unwrap());
                    assert_eq!(v, value(i));
                }
            });
        }
    });
    assert!(held_blocks(&t, &cache) <= cache.len());
    assert!(cache.charge() <= cache.capacity());
}
