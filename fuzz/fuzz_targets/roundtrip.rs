//! Arbitrary sorted, unique entries and options -> TableBuilder -> TableReader: the forward
//! scan, the backward scan, a seek to each key and a get of each key give back exactly what
//! was written; absent keys are not found; verify() finds nothing; the bytes are
//! deterministic.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Arc;

use arbitrary::Arbitrary;
use bytes::Bytes;
use leveldb_table::raw::internal_key::internal_key;
use leveldb_table::Cursor;
use leveldb_table::{
    raw::internal_key::ValueType, table::FilterStatus, table::KeyFormat, BlockCache, Compression,
    Lookup, Options, RandomAccess, ReadOptions, OpenOptions, TableBuilder, TableReader,
};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    entries: Vec<(Vec<u8>, Vec<u8>, bool)>,
    block_size: u16,
    restart_interval: u8,
    snappy: bool,
    bloom: Option<u8>,
    internal: bool,
    cache: bool,
    /// Cache capacity in KiB (small ones evict, recycle block buffers and leave the
    /// per-block slots pointing at evicted blocks).
    cache_kib: u8,
    /// Also build with parallel compression (must give the same bytes).
    parallel: bool,
    /// Read from a zero-copy source (`Bytes`, as a memory map is): with a cache, point
    /// lookups then build and use the blocks' search directories.
    zero_copy: bool,
}

type Row = (Vec<u8>, Vec<u8>, Vec<u8>, u64, bool);

fuzz_target!(|input: Input| {
    let block_size = usize::from(input.block_size) % 8192 + 1;
    let restart = usize::from(input.restart_interval) % 64 + 1;
    let mut opts = Options::default()
        .block_size(block_size)
        .block_restart_interval(restart);
    opts = opts.compression(if input.snappy {
        Compression::Snappy
    } else {
        Compression::None
    });
    if let Some(b) = input.bloom {
        opts = opts.bloom(usize::from(b % 32));
    }
    if input.internal {
        opts = opts.keys(KeyFormat::Internal);
    }
    // Sorted, unique user keys; `deleted` only means something for internal keys.
    let map: BTreeMap<Vec<u8>, (Vec<u8>, bool)> = input
        .entries
        .into_iter()
        .map(|(k, v, d)| (k, (v, d && input.internal)))
        .collect();
    let rows: Vec<(Vec<u8>, Vec<u8>, Vec<u8>, u64, bool)> = map
        .into_iter()
        .enumerate()
        .map(|(i, (user, (value, deleted)))| {
            let seq = i as u64 + 1;
            let vt = if deleted {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            let stored = if input.internal {
                internal_key(&user, seq, vt)
            } else {
                user.clone()
            };
            (user, stored, value, seq, deleted)
        })
        .collect();

    let build = || {
        let mut b = TableBuilder::new(Vec::new(), &opts).expect("valid options");
        for (_, stored, value, _, _) in &rows {
            b.add(stored, value).expect("add in order");
        }
        b.finish().expect("finish into a Vec").0
    };
    let bytes = build();
    assert_eq!(bytes, build(), "the same input built two different tables");
    if input.parallel {
        let par = opts.clone().parallel_compression(true);
        let mut b = TableBuilder::new(Vec::new(), &par).expect("valid options");
        for (_, stored, value, _, _) in &rows {
            b.add(stored, value).expect("add in order");
        }
        let (par_bytes, _) = b.finish().expect("finish into a Vec");
        assert!(par_bytes == bytes, "parallel compression changed the table");
    }

    let mut ropts = OpenOptions::default().keys(if input.internal {
        KeyFormat::Internal
    } else {
        KeyFormat::Plain
    });
    if input.cache {
        let kib = u64::from(input.cache_kib) % 64 + 1;
        ropts = ropts.block_cache(Some(Arc::new(BlockCache::new(kib << 10))));
    }
    let input_flags = Flags {
        internal: input.internal,
        bloom: input.bloom.is_some(),
    };
    if input.zero_copy {
        let t = TableReader::open(Bytes::from(bytes), ropts).expect("open a table we built");
        check(&t, &rows, &input_flags);
    } else {
        let t = TableReader::open(&bytes[..], ropts).expect("open a table we built");
        check(&t, &rows, &input_flags);
    }
});

struct Flags {
    internal: bool,
    bloom: bool,
}

fn check<R: RandomAccess>(t: &TableReader<R>, rows: &[Row], input: &Flags) {
    assert_eq!(t.is_internal(), input.internal);
    if input.bloom {
        assert!(
            matches!(t.filter_status(), FilterStatus::Used),
            "{:?}",
            t.filter_status()
        );
    }
    // Point lookups first (on a cold cache they bring blocks in, with their directories),
    // then scans and seeks, then the lookups again (now served from the cache).
    lookups(t, rows, input);
    let expected: Vec<(Vec<u8>, Vec<u8>)> = rows
        .iter()
        .map(|(_, s, v, _, _)| (s.clone(), v.clone()))
        .collect();
    let got: Vec<(Vec<u8>, Vec<u8>)> = {
        // As a std iterator, from the first call (no seek).
        t.iter(&ReadOptions::default())
            .into_iter()
            .map(|r| r.expect("scan of a table we built"))
            .collect()
    };
    assert_eq!(got, expected, "forward scan");

    let mut back = Vec::new();
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_last();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    assert!(it.status().is_ok());
    back.reverse();
    assert_eq!(back, expected, "backward scan");

    for (_, stored, value, _, _) in rows {
        it.seek(stored);
        assert!(
            it.valid() && it.key() == &stored[..] && it.value() == &value[..],
            "seek"
        );
    }
    lookups(t, rows, input);
    let report = t.verify();
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.entries, rows.len() as u64);
}

fn lookups<R: RandomAccess>(t: &TableReader<R>, rows: &[Row], input: &Flags) {
    for (user, _, value, seq, deleted) in rows {
        let want = if *deleted { None } else { Some(value.clone()) };
        assert_eq!(
            t.get(user, &Default::default())
                .map(|l| l.into_value())
                .expect("get"),
            want,
            "get"
        );
        let l = t
            .get(user, &ReadOptions::default().snapshot(Some(u64::MAX >> 8)))
            .expect("lookup");
        let want = match (input.internal, deleted) {
            (false, _) => Lookup::Found {
                value: value.clone(),
                sequence: None,
            },
            (true, false) => Lookup::Found {
                value: value.clone(),
                sequence: Some(*seq),
            },
            (true, true) => Lookup::Deleted { sequence: *seq },
        };
        assert_eq!(l, want, "lookup");
        if input.internal {
            // Before its only version was written, the key did not exist.
            assert_eq!(
                t.get(user, &ReadOptions::default().snapshot(Some(seq - 1)))
                    .expect("lookup"),
                Lookup::NotFound
            );
        }
        assert!(
            !t.filter_excludes(user).expect("filter_excludes"),
            "filter excludes a present key"
        );
        // Absent neighbours: an extension, a prefix, and the last byte moved by one.
        let mut neighbours = vec![[&user[..], &[0]].concat()];
        if let Some((&last, head)) = user.split_last() {
            neighbours.push(head.to_vec());
            neighbours.push([head, &[last.wrapping_add(1)]].concat());
            neighbours.push([head, &[last.wrapping_sub(1)]].concat());
        }
        for absent in neighbours {
            if rows.binary_search_by(|r| r.0.cmp(&absent)).is_err() {
                assert_eq!(
                    t.get(&absent, &Default::default())
                        .map(|l| l.into_value())
                        .expect("get absent"),
                    None,
                    "absent key found"
                );
            }
        }
    }
}
