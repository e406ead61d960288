//! Unit tests of lookups past the cache (`transient.rs`), for database and plain tables:
//! blocks read for one lookup and not kept. Answers are checked against a model of the
//! table's versions, and the tests check that the path they are about ran.

use std::collections::BTreeMap;
use std::io;

use super::transient::TRANSIENT;
use crate::internal_key::internal_key;
use std::sync::{Arc, RwLock};

use bytes::Bytes;

use super::*;
use crate::cache::BlockCache;
use crate::error::BlockKind;
use crate::format::{self, MAX_SEQUENCE};
use crate::internal_key::ValueType;
use crate::io::RandomAccess;
use crate::options::{Compression, KeyFormat, OpenOptions, Options, ReadOptions};
use crate::table_builder::TableBuilder;

/// A table file the test can damage while a reader has it open.
struct Shared(Arc<RwLock<Vec<u8>>>);

impl RandomAccess for Shared {
    fn size(&self) -> io::Result<u64> {
        Ok(self.0.read().unwrap().len() as u64)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.0.read().unwrap().as_slice().read_at(offset, len)
    }
}

/// Each user key's versions, newest first: (sequence, value or deletion).
type Model = BTreeMap<Vec<u8>, Vec<(u64, Option<Vec<u8>>)>>;

fn user_key(i: usize) -> Vec<u8> {
    format!("user{i:06}").into_bytes()
}

/// About 100 bytes, half a repeat of the other half (snappy keeps blocks compressed).
fn value(i: usize, version: usize) -> Vec<u8> {
    let half: Vec<u8> = (0..50)
        .map(|j| b'a' + ((i * 31 + j * 7 + version * 3) % 26) as u8)
        .collect();
    [half.clone(), half].concat()
}

/// The first sequence of key `i`: its versions take `base(i)`, `+1` and `+2`.
fn base(i: usize) -> u64 {
    i as u64 * 3 + 10
}

/// `n` keys with a value each, every fifth overwritten, every seventh then deleted: an
/// internal-key snappy table of 4 KiB blocks with the given restart interval.
fn build(n: usize, restart_interval: usize) -> (Vec<u8>, Model) {
    let mut model = Model::new();
    for i in 0..n {
        let s = base(i);
        let mut versions = Vec::new();
        if i % 7 == 0 {
            versions.push((s + 2, None));
        }
        if i % 5 == 0 {
            versions.push((s + 1, Some(value(i, 1))));
        }
        versions.push((s, Some(value(i, 0))));
        model.insert(user_key(i), versions);
    }
    let opts = Options::default()
        .block_size(4096)
        .block_restart_interval(restart_interval)
        .compression(Compression::Snappy)
        .bloom(10)
        .keys(KeyFormat::Internal);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (k, versions) in &model {
        for (seq, v) in versions {
            let (t, v) = match v {
                Some(v) => (ValueType::Value, v.as_slice()),
                None => (ValueType::Deletion, &[][..]),
            };
            b.add(&internal_key(k, *seq, t), v).unwrap();
        }
    }
    (b.finish().unwrap().0, model)
}

/// What a lookup of `key` at `snapshot` must answer.
fn expected(model: &Model, key: &[u8], snapshot: u64) -> Lookup {
    let newest = model
        .get(key)
        .and_then(|vs| vs.iter().find(|(seq, _)| *seq <= snapshot));
    match newest {
        None => Lookup::NotFound,
        Some((seq, None)) => Lookup::Deleted { sequence: *seq },
        Some((seq, Some(v))) => Lookup::Found {
            value: v.clone(),
            sequence: Some(*seq),
        },
    }
}

/// Every lookup the tests make: each key at every snapshot that tells its versions apart,
/// and absent keys before, between and after.
fn probes(n: usize) -> Vec<(Vec<u8>, u64)> {
    let mut p = vec![
        (b"a".to_vec(), MAX_SEQUENCE),
        (user_key(n + 5), MAX_SEQUENCE),
    ];
    for i in 0..n {
        let s = base(i);
        for snapshot in [MAX_SEQUENCE, s + 1, s, s - 1] {
            p.push((user_key(i), snapshot));
        }
        let mut between = user_key(i);
        between.push(b'!');
        p.push((between, MAX_SEQUENCE));
    }
    p
}

/// A reader over `bytes` whose cache holds about two blocks.
fn small_cache_reader(bytes: Arc<RwLock<Vec<u8>>>, verify: bool) -> TableReader<Shared> {
    let cache = Arc::new(BlockCache::new(2 * 4400));
    let ro = OpenOptions::default()
        .keys(KeyFormat::Internal)
        .block_cache(Some(cache))
        .verify_checksums(verify);
    TableReader::open(Shared(bytes), ro).unwrap()
}

fn transient_count() -> u64 {
    TRANSIENT.get()
}

/// Lookups past a cache that keeps almost nothing answer as the model says (restart
/// intervals 1, 2 and 16), in both modes: not filling the cache (every lookup after a
/// block's first goes past it) and filling a cache that turns most blocks away. Most of
/// them went past the cache.
#[test]
fn lookups_past_the_cache_answer_as_the_model() {
    let n = 600;
    for restart_interval in [1, 2, 16] {
        let (bytes, model) = build(n, restart_interval);
        let t = small_cache_reader(Arc::new(RwLock::new(bytes)), true);
        assert!(t.data_block_handles().unwrap().len() > 10);
        for fill_cache in [false, true] {
            let opts = ReadOptions {
                fill_cache,
                ..ReadOptions::default()
            };
            let before = transient_count();
            // Three passes, the probes in a scattered order: blocks come and go.
            let probes = probes(n);
            let mut x = 11u64;
            for _ in 0..3 * probes.len() {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let (k, snapshot) = &probes[(x >> 33) as usize % probes.len()];
                let got = t.get(k, &opts.snapshot(Some(*snapshot))).unwrap();
                assert_eq!(
                    got,
                    expected(&model, k, *snapshot),
                    "key {k:?} at {snapshot}, restart interval {restart_interval}, \
                     fill_cache {fill_cache}"
                );
            }
            let past = transient_count() - before;
            assert!(
                past > probes.len() as u64,
                "lookups past the cache: {past}, restart interval {restart_interval}, \
                 fill_cache {fill_cache}"
            );
        }
    }
}

/// Plain tables take the same path past the cache as database tables (one pipeline): a
/// plain snappy table read through a cache of about two blocks answers every key and every
/// absent neighbour as its model does, and most lookups went past the cache.
#[test]
fn plain_tables_take_the_same_path_past_the_cache() {
    let n = 600;
    let model: BTreeMap<Vec<u8>, Vec<u8>> = (0..n).map(|i| (user_key(i), value(i, 0))).collect();
    let opts = Options::default()
        .block_size(4096)
        .compression(Compression::Snappy)
        .bloom(10);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (k, v) in &model {
        b.add(k, v).unwrap();
    }
    let bytes = b.finish().unwrap().0;
    let ro = OpenOptions::default()
        .keys(KeyFormat::Plain)
        .block_cache(Some(Arc::new(BlockCache::new(2 * 4400))));
    let t = TableReader::open(Shared(Arc::new(RwLock::new(bytes))), ro).unwrap();
    assert!(t.data_block_handles().unwrap().len() > 10);
    let before = transient_count();
    let mut x = 5u64;
    let mut value_buf = Vec::new();
    for _ in 0..3 * n {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let i = (x >> 33) as usize % n;
        let k = user_key(i);
        let found = t
            .get_into(&k, &ReadOptions::default(), &mut value_buf)
            .map(|l| l.is_found())
            .unwrap();
        assert!(found, "{k:?} not found");
        assert_eq!(value_buf, model[&k], "value of {k:?}");
        let mut absent = k.clone();
        absent.push(b'!');
        assert!(!t
            .get_into(&absent, &ReadOptions::default(), &mut value_buf)
            .map(|l| l.is_found())
            .unwrap());
    }
    let past = transient_count() - before;
    assert!(past > n as u64, "lookups past the cache: {past}");
}

/// A block damaged while readers have the table open (the file changed under them), read
/// past the cache: with checksums on, every lookup that reads it fails naming it and every
/// other lookup still answers right; with checksums off (the stream and entries then
/// decoded as they are), nothing panics and an error names the block.
#[test]
fn damaged_blocks_past_the_cache_fail_naming_the_block() {
    let n = 300;
    let (bytes, model) = build(n, 4);
    let shared = Arc::new(RwLock::new(bytes));
    let checked = small_cache_reader(shared.clone(), true);
    let unchecked = small_cache_reader(shared.clone(), false);
    let opts = ReadOptions::default().fill_cache(false);
    let probes = probes(n);
    // Every block seen once (the records learn the cache does not hold it), then again.
    for _ in 0..2 {
        for (k, s) in &probes {
            assert_eq!(
                checked.get(k, &opts.snapshot(Some(*s))).unwrap(),
                expected(&model, k, *s)
            );
            assert_eq!(
                unchecked.get(k, &opts.snapshot(Some(*s))).unwrap(),
                expected(&model, k, *s)
            );
        }
    }
    let handles = checked.data_block_handles().unwrap();
    let handle = handles[handles.len() / 2].1;
    let start = handle.offset as usize;
    let stored = handle.size as usize + format::BLOCK_TRAILER_LEN;
    let positions = (0..8)
        .chain((8..stored).step_by(23))
        .chain(stored - 5..stored);
    let before = transient_count();
    for at in positions {
        let at = start + at;
        let good = shared.read().unwrap()[at];
        for flip in [0x01, 0x80, 0xff] {
            shared.write().unwrap()[at] = good ^ flip;
            let mut failed = 0;
            for (k, s) in &probes {
                match checked.get(k, &opts.snapshot(Some(*s))) {
                    Ok(got) => assert_eq!(got, expected(&model, k, *s), "damage at {at}"),
                    Err(e) => {
                        assert_eq!(e.block(), Some((BlockKind::Data, handle)), "{e}");
                        failed += 1;
                    }
                }
                if let Err(e) = unchecked.get(k, &opts.snapshot(Some(*s))) {
                    assert_eq!(e.block(), Some((BlockKind::Data, handle)), "{e}");
                }
            }
            assert!(failed > 0, "no lookup read the damaged byte at {at}");
        }
        shared.write().unwrap()[at] = good;
    }
    assert!(
        transient_count() > before,
        "the damaged block was read past the cache"
    );
}
