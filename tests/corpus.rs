//! Tables written by real LevelDB (C++ 1.22 through plyvel, and Mojang's fork) read exactly:
//! every entry in order, every probe answered as LevelDB answered, every filter block
//! rebuilt byte for byte, and the uncompressed table rewritten byte for byte.

mod common;

use leveldb_table::table::KeyFormat;
use std::fs::File;
use std::sync::Arc;

use common::*;
use leveldb_table::raw::internal_key::{internal_key, ValueType};
use leveldb_table::raw::{Block, FilterBlockBuilder};
use leveldb_table::Cursor;
use leveldb_table::{
    error::BlockKind, filter::BloomFilterPolicy, raw::CountingReader, table::FilterStatus,
    BytewiseComparator, Compression, FilterPolicy, Lookup, OpenOptions, Options, ReadOptions,
    TableBuilder, TableReader,
};

fn open(path: &std::path::Path) -> TableReader<File> {
    TableReader::open(File::open(path).unwrap(), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_case_scans_to_its_entries_forward_and_backward() {
    for name in case_names() {
        let case = load_case(&name);
        for t in &case.tables {
            let table = open(&t.path);
            assert!(table.is_internal(), "{name}: database keys detected");
            let ro = ReadOptions::default();
            let mut it = table.iter(&ro);
            it.seek_to_first();
            for (n, e) in t.entries.iter().enumerate() {
                assert!(it.valid(), "{name}: ended early at {n}: {:?}", it.status());
                assert_eq!(it.key(), &e.ikey[..], "{name}: key {n}");
                assert!(e.value.matches(it.value()), "{name}: value {n}");
                let p = it.parsed_key().unwrap();
                assert_eq!(
                    (p.sequence, p.value_type as u8),
                    (e.seq, if e.kind == 1 { 1 } else { 0 })
                );
                assert_eq!(p.user_key, e.user_key());
                it.next();
            }
            assert!(!it.valid() && it.status().is_ok(), "{name}: extra entries");
            it.seek_to_last();
            for e in t.entries.iter().rev() {
                assert!(it.valid(), "{name}: backward ended early");
                assert_eq!(it.key(), &e.ikey[..]);
                assert!(e.value.matches(it.value()));
                it.prev();
            }
            assert!(!it.valid() && it.status().is_ok());
            // Seek to every key.
            for e in &t.entries {
                it.seek(&e.ikey);
                assert!(it.valid());
                assert_eq!(it.key(), &e.ikey[..]);
            }
        }
    }
}

/// Newest version across a case's tables, through the filter-consulting lookup.
fn lookup_case(tables: &[TableReader<File>], user_key: &[u8]) -> Lookup {
    let mut best: Option<(u64, Lookup)> = None;
    for t in tables {
        let r = t.get(user_key, &ReadOptions::default()).unwrap();
        let seq = match &r {
            Lookup::Found { sequence, .. } => sequence.unwrap(),
            Lookup::Deleted { sequence } => *sequence,
            Lookup::NotFound => continue,
        };
        if best.as_ref().is_none_or(|(s, _)| seq > *s) {
            best = Some((seq, r));
        }
    }
    best.map_or(Lookup::NotFound, |(_, r)| r)
}

#[test]
fn every_probe_answers_as_leveldb_answered() {
    for name in case_names() {
        let case = load_case(&name);
        let tables: Vec<_> = case.tables.iter().map(|t| open(&t.path)).collect();
        let gets = case.gets();
        assert!(!gets.is_empty());
        let (mut found, mut absent) = (0, 0);
        for (key, expected) in gets {
            let got = lookup_case(&tables, &key);
            match (&expected, &got) {
                (Some(ev), Lookup::Found { value, .. }) => {
                    assert!(
                        ev.matches(value),
                        "{name}: wrong value for {}",
                        hex::encode(&key)
                    );
                    found += 1;
                }
                (None, Lookup::NotFound | Lookup::Deleted { .. }) => absent += 1,
                _ => panic!(
                    "{name}: key {} expected {expected:?}, got {got:?}",
                    hex::encode(&key)
                ),
            }
        }
        assert!(found > 0 && absent > 0, "{name}: probes cover both answers");
    }
}

#[test]
fn table_facts_match_the_corpus_index() {
    for name in case_names() {
        let case = load_case(&name);
        for t in &case.tables {
            let table = open(&t.path);
            let m = &t.meta;
            let f = table.footer();
            assert_eq!(
                [f.metaindex.offset, f.metaindex.size],
                as_pair(&m["metaindex_handle"])
            );
            assert_eq!([f.index.offset, f.index.size], as_pair(&m["index_handle"]));
            let handles = table.data_block_handles().unwrap();
            assert_eq!(
                handles.len() as u64,
                m["num_data_blocks"].as_u64().unwrap(),
                "{name}"
            );
            assert_eq!(handles.len() as u64, m["index_entries"].as_u64().unwrap());
            for ((sep, h), row) in handles.iter().zip(m["data_blocks"].as_array().unwrap()) {
                assert_eq!(h.offset, row[0].as_u64().unwrap());
                assert_eq!(h.size, row[1].as_u64().unwrap());
                assert_eq!(hex::encode(sep), row[4].as_str().unwrap());
            }
            let meta_keys: Vec<String> = table
                .metaindex()
                .iter()
                .map(|(k, _)| String::from_utf8_lossy(k).into())
                .collect();
            let want: Vec<String> = m["metaindex_keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_string())
                .collect();
            assert_eq!(meta_keys, want, "{name}");
            match m["filter"].as_object() {
                Some(filt) => {
                    assert!(
                        matches!(table.filter_status(), FilterStatus::Used),
                        "{name}"
                    );
                    let r = table.filter().unwrap();
                    assert_eq!(
                        r.num_filters() as u64,
                        filt["num_filters"].as_u64().unwrap()
                    );
                    assert_eq!(u64::from(r.base_lg()), filt["base_lg"].as_u64().unwrap());
                    let fh = table.filter_handle().unwrap();
                    assert_eq!([fh.offset, fh.size], as_pair(&m["filter_handle"]));
                }
                None => assert!(matches!(table.filter_status(), FilterStatus::Absent)),
            }
            let report = table.verify();
            assert!(report.is_ok(), "{name}: {:?}", report.problems);
            assert_eq!(report.entries, t.entries.len() as u64);
        }
    }
}

fn as_pair(v: &serde_json::Value) -> [u64; 2] {
    [v[0].as_u64().unwrap(), v[1].as_u64().unwrap()]
}

#[test]
fn every_filter_block_is_rebuilt_byte_for_byte() {
    let mut checked = 0;
    for name in case_names() {
        let case = load_case(&name);
        for t in &case.tables {
            let Some(filt) = t.meta["filter"].as_object() else {
                continue;
            };
            assert!(filt["regenerates_exactly"].as_bool().unwrap());
            let bits = filt["bits_per_key"].as_u64().unwrap() as usize;
            let table = open(&t.path);
            let fh = table.filter_handle().unwrap();
            let stored = table.read_block(fh, BlockKind::Filter).unwrap().data;
            let policy: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(bits));
            let mut b = FilterBlockBuilder::new(policy);
            let mut entries = t.entries.iter();
            for row in t.meta["data_blocks"].as_array().unwrap() {
                b.start_block(row[0].as_u64().unwrap());
                for _ in 0..row[3].as_u64().unwrap() {
                    b.add_key(entries.next().unwrap().user_key());
                }
                // As TableBuilder does after writing each block (trailer included).
                b.start_block(row[0].as_u64().unwrap() + row[1].as_u64().unwrap() + 5);
            }
            assert!(entries.next().is_none());
            let rebuilt = b.finish();
            assert!(
                rebuilt == stored,
                "{name}: filter block differs ({} vs {} bytes)",
                rebuilt.len(),
                stored.len()
            );
            checked += 1;
        }
    }
    assert!(checked >= 6);
}

fn build_from_entries(entries: &[Entry], opts: &Options) -> Vec<u8> {
    let mut b = TableBuilder::new(Vec::new(), opts).unwrap();
    for e in entries {
        let ExpectedValue::Bytes(v) = &e.value else {
            panic!("needs full values")
        };
        b.add(&e.ikey, v).unwrap();
    }
    b.finish().unwrap().0
}

#[test]
fn uncompressed_leveldb_table_is_rewritten_byte_for_byte() {
    let case = load_case("nocompress_bloom");
    let t = &case.tables[0];
    let opts = Options::default()
        .compression(Compression::None)
        .block_size(1024)
        .block_restart_interval(4)
        .bloom(10)
        .keys(KeyFormat::Internal);
    let ours = build_from_entries(&t.entries, &opts);
    let theirs = std::fs::read(&t.path).unwrap();
    assert_eq!(ours.len(), theirs.len());
    assert!(ours == theirs, "identical bytes (same sha256)");
}

#[test]
fn snappy_tables_rebuild_to_the_same_blocks() {
    // Snappy encoders differ between implementations (libsnappy vs the `snap` crate), so
    // offsets may differ; the decoded data blocks and the index keys must not.
    for name in ["small_snappy", "bloom_bits_4", "bloom_bits_20", "no_filter"] {
        let case = load_case(name);
        let t = &case.tables[0];
        let mut opts = Options::default();
        if let Some(bits) = case.info["options"]["bloom_filter_bits"].as_u64() {
            opts = opts.bloom(bits as usize);
        }
        let ours = TableReader::open(
            build_from_entries(&t.entries, &opts.keys(KeyFormat::Internal)),
            OpenOptions::default(),
        )
        .unwrap();
        let theirs = open(&t.path);
        let (a, b) = (
            ours.data_block_handles().unwrap(),
            theirs.data_block_handles().unwrap(),
        );
        assert_eq!(a.len(), b.len(), "{name}");
        for ((ka, ha), (kb, hb)) in a.iter().zip(&b) {
            assert_eq!(ka, kb, "{name}: index separators");
            let data = BlockKind::Data;
            assert_eq!(
                ours.read_block(*ha, data).unwrap().data,
                theirs.read_block(*hb, data).unwrap().data,
                "{name}: decoded data block"
            );
        }
        assert_eq!(ours.metaindex().len(), theirs.metaindex().len());
    }
}

#[test]
fn the_filter_is_consulted_before_any_data_block_read() {
    let case = load_case("nocompress_bloom");
    let t = &case.tables[0];
    let bytes = std::fs::read(&t.path).unwrap();
    let table = TableReader::open(CountingReader::new(bytes), OpenOptions::default()).unwrap();
    let src = table.source();
    // Absent keys: near misses of present keys and unrelated strings.
    let mut absent = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..10_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = if i % 2 == 0 {
            let e = &t.entries[(x % t.entries.len() as u64) as usize];
            let mut k = e.user_key().to_vec();
            k.extend_from_slice(format!("~{i}").as_bytes());
            k
        } else {
            format!("absent-{x:016x}").into_bytes()
        };
        absent.push(k);
    }
    src.reset();
    for k in &absent {
        assert_eq!(
            table
                .get(k, &Default::default())
                .map(|l| l.into_value())
                .unwrap(),
            None
        );
    }
    let reads = src.reads();
    assert!(
        reads <= 200,
        "{reads} data-block reads for 10,000 absent keys (limit 2%)"
    );
    // A present key costs exactly one data-block read on a cold cache.
    for e in t.entries.iter().step_by(97) {
        src.reset();
        let got = table.get(e.user_key(), &ReadOptions::default()).unwrap();
        assert!(matches!(got, Lookup::Found { .. }));
        assert_eq!(src.reads(), 1);
    }
}

#[test]
fn approximate_offset_of_plain_matches_leveldb_bounds() {
    // LevelDB table_test ApproximateOffsetOfPlain.
    let opts = Options::default()
        .compression(Compression::None)
        .block_size(1024);
    let x = |n| vec![b'x'; n];
    let entries: Vec<(&[u8], Vec<u8>)> = vec![
        (b"k01", b"hello".to_vec()),
        (b"k02", b"hello2".to_vec()),
        (b"k03", x(10000)),
        (b"k04", x(200000)),
        (b"k05", x(300000)),
        (b"k06", b"hello3".to_vec()),
        (b"k07", x(100000)),
    ];
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (k, v) in &entries {
        b.add(k, v).unwrap();
    }
    let t = TableReader::open(b.finish().unwrap().0, OpenOptions::default()).unwrap();
    let within = |k: &[u8], lo: u64, hi: u64| {
        let o = t.approximate_offset_of(k);
        assert!(
            o >= lo && o <= hi,
            "{}: {o} not in [{lo}, {hi}]",
            String::from_utf8_lossy(k)
        );
    };
    for k in [&b"abc"[..], b"k01", b"k01a", b"k02", b"k03"] {
        within(k, 0, 0);
    }
    within(b"k04", 10000, 11000);
    within(b"k04a", 210000, 211000);
    within(b"k05", 210000, 211000);
    within(b"k06", 510000, 511000);
    within(b"k07", 510000, 511000);
    within(b"xyz", 610000, 612000);
}

#[test]
fn zero_restart_points_in_block() {
    // LevelDB table_test ZeroRestartPointsInBlock.
    let block = Block::from_bytes(vec![0u8; 4]).unwrap();
    let mut it = block.iter(&BytewiseComparator);
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(b"foo");
    assert!(!it.valid());
    assert!(it.status().is_ok());
}

#[test]
fn snapshots_see_older_versions() {
    let opts = Options::default().bloom(10).keys(KeyFormat::Internal);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (seq, kind, v) in [
        (9u64, ValueType::Value, "v9"),
        (5, ValueType::Deletion, ""),
        (2, ValueType::Value, "v2"),
    ] {
        b.add(&internal_key(b"key", seq, kind), v.as_bytes())
            .unwrap();
    }
    let t = TableReader::open(b.finish().unwrap().0, OpenOptions::default()).unwrap();
    let ro = ReadOptions::default();
    let found = |v: &str, s| Lookup::Found {
        value: v.as_bytes().to_vec(),
        sequence: Some(s),
    };
    assert_eq!(t.get(b"key", &ro).unwrap(), found("v9", 9));
    assert_eq!(
        t.get(b"key", &ro.snapshot(Some(8))).unwrap(),
        Lookup::Deleted { sequence: 5 }
    );
    assert_eq!(
        t.get(b"key", &ro.snapshot(Some(5))).unwrap(),
        Lookup::Deleted { sequence: 5 }
    );
    assert_eq!(
        t.get(b"key", &ro.snapshot(Some(4))).unwrap(),
        found("v2", 2)
    );
    assert_eq!(
        t.get(b"key", &ro.snapshot(Some(1))).unwrap(),
        Lookup::NotFound
    );
}

/// Memory-mapped reading (`TableReader::open_mmap`, zero-copy blocks, with a block cache)
/// gives exactly what positioned reads give: every entry and every probe's answer.
#[test]
fn memory_mapped_tables_read_the_same_as_files() {
    for name in case_names() {
        let case = load_case(&name);
        let gets = case.gets();
        for t in &case.tables {
            let file = open(&t.path);
            let ro = OpenOptions::default()
                .block_cache(Some(Arc::new(leveldb_table::BlockCache::new(1 << 20))));
            // SAFETY: the corpus files are read-only fixtures nothing writes during the test.
            let mapped = unsafe { TableReader::open_mmap(&t.path, ro) }.unwrap();
            let a: Vec<_> = file
                .iter(&ReadOptions::default())
                .into_iter()
                .map(Result::unwrap)
                .collect();
            let b: Vec<_> = mapped
                .iter(&ReadOptions::default())
                .into_iter()
                .map(Result::unwrap)
                .collect();
            assert_eq!(a.len(), t.entries.len(), "{name}");
            assert_eq!(a, b, "{name}: scans differ");
            for _round in 0..2 {
                for (key, _) in &gets {
                    let want = file.get(key, &ReadOptions::default()).unwrap();
                    let got = mapped.get(key, &ReadOptions::default()).unwrap();
                    assert_eq!(want, got, "{name}: {}", hex::encode(key));
                }
            }
            assert!(mapped.verify().is_ok(), "{name}");
        }
    }
}
