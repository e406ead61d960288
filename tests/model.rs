//! Model tests: random data through blocks and tables, compared with a `BTreeMap`, with one
//! checker of the cursor contract (`Cursor`: forward, backward, seek, get) for both, and the
//! table's std iterator and ranges.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use leveldb_table::raw::{Block, BlockBuilder};
use leveldb_table::Cursor;
use leveldb_table::{
    table::KeyFormat, BlockCache, BytewiseComparator, Compression, OpenOptions, Options,
    ReadOptions, TableBuilder, TableReader,
};
use proptest::prelude::*;

/// Checks a cursor against the model: full forward and backward walks, a seek to every key
/// and to probes between keys, and next/prev after each seek.
fn check_cursor(c: &mut dyn Cursor, model: &BTreeMap<Vec<u8>, Vec<u8>>, probes: &[Vec<u8>]) {
    c.seek_to_first();
    for (k, v) in model {
        assert!(c.valid(), "forward walk ended early");
        assert_eq!((c.key(), c.value()), (&k[..], &v[..]));
        c.next();
    }
    assert!(!c.valid() && c.status().is_ok());
    c.seek_to_last();
    for (k, v) in model.iter().rev() {
        assert!(c.valid(), "backward walk ended early");
        assert_eq!((c.key(), c.value()), (&k[..], &v[..]));
        c.prev();
    }
    assert!(!c.valid() && c.status().is_ok());
    for target in model.keys().chain(probes) {
        c.seek(target);
        let mut expect = model.range(target.clone()..);
        match expect.next() {
            Some((k, v)) => {
                assert!(c.valid(), "seek to existing position");
                assert_eq!((c.key(), c.value()), (&k[..], &v[..]));
                c.next();
                match expect.next() {
                    Some((k2, _)) => assert_eq!(c.key(), &k2[..]),
                    None => assert!(!c.valid()),
                }
                c.seek(target);
                c.prev();
                match model.range(..target.clone()).next_back() {
                    Some((k0, _)) => assert_eq!(c.key(), &k0[..]),
                    None => assert!(!c.valid()),
                }
            }
            None => assert!(!c.valid()),
        }
        assert!(c.status().is_ok());
    }
}

fn arb_model() -> impl Strategy<Value = BTreeMap<Vec<u8>, Vec<u8>>> {
    // Small alphabets make shared prefixes and near-miss probes likely.
    let key = prop::collection::vec(
        prop::sample::select(vec![0u8, 1, b'a', b'b', 0xfe, 0xff]),
        0..12,
    );
    let value = prop::collection::vec(any::<u8>(), 0..300);
    prop::collection::btree_map(key, value, 0..300)
}

fn arb_probes() -> impl Strategy<Value = Vec<Vec<u8>>> {
    prop::collection::vec(
        prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xff]), 0..13),
        0..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn blocks_behave_like_a_sorted_map(
        model in arb_model(),
        probes in arb_probes(),
        restart in prop::sample::select(vec![1usize, 2, 16, 1024]),
    ) {
        let mut b = BlockBuilder::new(restart);
        for (k, v) in &model {
            b.add(k, v);
        }
        let block = Block::from_bytes(b.finish().to_vec()).unwrap();
        let mut it = block.iter(&BytewiseComparator);
        check_cursor(&mut it, &model, &probes);
    }

    #[test]
    fn tables_behave_like_a_sorted_map(
        model in arb_model(),
        probes in arb_probes(),
        restart in prop::sample::select(vec![1usize, 2, 16, 1024]),
        block_size in prop::sample::select(vec![64usize, 1024, 4096]),
        snappy in any::<bool>(),
        bloom in any::<bool>(),
        cached in any::<bool>(),
    ) {
        let mut opts = Options::default()
            .block_restart_interval(restart)
            .block_size(block_size)
            .compression(if snappy { Compression::Snappy } else { Compression::None });
        if bloom {
            opts = opts.bloom(10);
        }
        let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
        for (k, v) in &model {
            b.add(k, v).unwrap();
        }
        let (bytes, stats) = b.finish().unwrap();
        prop_assert_eq!(stats.entries, model.len() as u64);
        let mut ro = OpenOptions::default().keys(KeyFormat::Plain);
        if cached {
            ro = ro.block_cache(Some(Arc::new(BlockCache::new(1 << 16))));
        }
        let table = TableReader::open(bytes, ro).unwrap();
        let mut it = table.iter(&ReadOptions::default());
        check_cursor(&mut it, &model, &probes);
        // As a std iterator from the first call (no seek), and in ranges between probes.
        let all: Vec<_> = table.iter(&ReadOptions::default()).into_iter().map(Result::unwrap).collect();
        prop_assert_eq!(all, model.clone().into_iter().collect::<Vec<_>>());
        for a in &probes {
            for b in &probes {
                let (a, b) = (a.as_slice(), b.as_slice());
                let inside = |k: &[u8]| a <= k && k < b;
                let want: Vec<_> = model.iter().filter(|(k, _)| inside(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
                let got: Vec<_> = table.range(a..b, &ReadOptions::default()).map(Result::unwrap).collect();
                prop_assert_eq!(got, want, "{:?}..{:?}", a, b);
                let inside = |k: &[u8]| a < k && k <= b;
                let want = model.keys().filter(|k| inside(k)).count();
                let got = table.range::<&[u8]>((Bound::Excluded(a), Bound::Included(b)), &ReadOptions::default()).count();
                prop_assert_eq!(got, want);
            }
        }
        for (k, v) in &model {
            prop_assert_eq!(table.get(k, &Default::default()).map(|l| l.into_value()).unwrap(), Some(v.clone()));
        }
        for p in &probes {
            prop_assert_eq!(table.get(p, &Default::default()).map(|l| l.into_value()).unwrap(), model.get(p).cloned());
        }
        prop_assert!(table.verify().is_ok());
    }

    /// Tables read from a zero-copy source with a cache: point lookups build and use the
    /// blocks' search directories (short keys and values of 60+ bytes give blocks the
    /// directory's shape), before and after scans, and agree with the map.
    #[test]
    fn zero_copy_cached_tables_behave_like_a_sorted_map(
        model in prop::collection::btree_map(
            prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xfe, 0xff]), 0..6),
            prop::collection::vec(any::<u8>(), 60..200),
            0..200,
        ),
        probes in arb_probes(),
        restart in prop::sample::select(vec![1usize, 2, 16]),
        block_size in prop::sample::select(vec![64usize, 1024, 4096]),
        snappy in any::<bool>(),
        bloom in any::<bool>(),
    ) {
        let mut opts = Options::default()
            .block_restart_interval(restart)
            .block_size(block_size)
            .compression(if snappy { Compression::Snappy } else { Compression::None });
        if bloom {
            opts = opts.bloom(10);
        }
        let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
        for (k, v) in &model {
            b.add(k, v).unwrap();
        }
        let bytes = bytes::Bytes::from(b.finish().unwrap().0);
        let ro = OpenOptions::default()
            .keys(KeyFormat::Plain)
            .block_cache(Some(Arc::new(BlockCache::new(1 << 20))));
        let table = TableReader::open(bytes, ro).unwrap();
        let mut extended: Vec<Vec<u8>> = probes.clone();
        for k in model.keys() {
            extended.push([&k[..], &[0]].concat());
            if let Some((&last, head)) = k.split_last() {
                extended.push(head.to_vec());
                extended.push([head, &[last.wrapping_add(1)]].concat());
            }
        }
        for round in 0..2 {
            for (k, v) in &model {
                prop_assert_eq!(table.get(k, &Default::default()).map(|l| l.into_value()).unwrap(), Some(v.clone()), "round {}", round);
            }
            for p in &extended {
                prop_assert_eq!(table.get(p, &Default::default()).map(|l| l.into_value()).unwrap(), model.get(p).cloned());
            }
            if round == 0 {
                let mut it = table.iter(&ReadOptions::default());
                check_cursor(&mut it, &model, &probes);
            }
        }
        prop_assert!(table.verify().is_ok());
    }

    /// No false negatives, whatever the keys and bits per key.
    #[test]
    fn bloom_has_no_false_negatives(
        keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..200),
        bits in 1usize..=30,
    ) {
        use leveldb_table::{filter::BloomFilterPolicy, FilterPolicy};
        let p = BloomFilterPolicy::new(bits);
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let mut f = Vec::new();
        p.create_filter(&refs, &mut f);
        for k in &keys {
            prop_assert!(p.key_may_match(k, &f));
        }
        let mut standalone = leveldb_table::raw::bloom::BloomFilter::for_capacity(keys.len(), 0.01);
        for k in &keys {
            standalone.insert(k);
        }
        for k in &keys {
            prop_assert!(standalone.contains(k));
            prop_assert!(p.key_may_match(k, standalone.as_bytes()));
        }
    }

    /// Out-of-order input is an error naming both keys, never a panic.
    #[test]
    fn out_of_order_keys_are_errors(a in prop::collection::vec(any::<u8>(), 0..8), b in prop::collection::vec(any::<u8>(), 0..8)) {
        prop_assume!(a >= b);
        let mut t = TableBuilder::new(Vec::new(), &Options::default()).unwrap();
        t.add(&a, b"1").unwrap();
        let err = t.add(&b, b"2").unwrap_err();
        let is_out_of_order = matches!(err, leveldb_table::Error::OutOfOrder { .. });
        prop_assert!(is_out_of_order);
        // The builder stays usable after a rejected key.
        let mut c = a.clone();
        c.push(0);
        t.add(&c, b"3").unwrap();
        let table = TableReader::open(t.finish().unwrap().0, OpenOptions::default().keys(KeyFormat::Plain)).unwrap();
        prop_assert_eq!(table.get(&c, &Default::default()).map(|l| l.into_value()).unwrap(), Some(b"3".to_vec()));
    }
}

#[test]
fn standalone_bloom_filter_sizing_and_rate() {
    let n = 10_000;
    let mut f = leveldb_table::raw::bloom::BloomFilter::for_capacity(n, 0.01);
    // m/n = 1.44 log2(100) = 9.59 bits per key, k = round(0.693 * 9.59) = 7.
    assert_eq!(f.k(), 7);
    assert!((95_000..=97_000).contains(&f.bits()), "{}", f.bits());
    for i in 0..n {
        f.insert(format!("key{i}").as_bytes());
    }
    let fp = (0..100_000)
        .filter(|i| f.contains(format!("other{i}").as_bytes()))
        .count();
    let rate = fp as f64 / 100_000.0;
    assert!(rate < 0.015, "false-positive rate {rate}");
}

/// A block written without prefix sharing (legal, as some writers do) and one restart:
/// point seeks must still find the first key `>= target`.
fn unshared_block(model: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<u8> {
    use leveldb_table::raw::coding::{put_fixed32, put_varint32};
    let mut b = Vec::new();
    for (k, v) in model {
        put_varint32(&mut b, 0);
        put_varint32(&mut b, k.len() as u32);
        put_varint32(&mut b, v.len() as u32);
        b.extend_from_slice(k);
        b.extend_from_slice(v);
    }
    put_fixed32(&mut b, 0);
    put_fixed32(&mut b, 1);
    b
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn point_seeks_in_blocks_match_the_model(
        model in arb_model(),
        probes in arb_probes(),
        restart in prop::sample::select(vec![1usize, 2, 16, 1024]),
        shared in any::<bool>(),
    ) {
        let raw = if shared {
            let mut b = BlockBuilder::new(restart);
            for (k, v) in &model {
                b.add(k, v);
            }
            b.finish().to_vec()
        } else {
            unshared_block(&model)
        };
        let block = Block::from_bytes(raw).unwrap();
        let mut key = Vec::new();
        for t in model.keys().chain(&probes) {
            let got = block.seek_value_range(&BytewiseComparator, t, &mut key).unwrap();
            match model.range(t.clone()..).next() {
                Some((k, v)) => {
                    let r = got.expect("an entry at or after the target");
                    prop_assert_eq!(&key, k);
                    prop_assert_eq!(&block.data()[r], &v[..]);
                }
                None => prop_assert!(got.is_none()),
            }
        }
    }
}
