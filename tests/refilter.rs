//! Refiltering: data blocks copied byte for byte, the filter rebuilt. LevelDB's own tables
//! refiltered with LevelDB's policy and their own bits come back byte for byte; other
//! policies and no filter give tables that read the same entries; a damaged table is refused.

mod common;

use std::sync::Arc;

use leveldb_table::refilter::refilter;
use leveldb_table::{
    filter::BloomFilterPolicy, filter::CacheLocalBloomPolicy, table::FilterStatus, FilterPolicy,
    OpenOptions, ReadOptions, TableReader,
};

fn bits_of(case: &str) -> usize {
    match case {
        "bloom_bits_20" => 20,
        "bloom_bits_4" => 4,
        _ => 10,
    }
}

fn entries(bytes: Vec<u8>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let t = TableReader::open(bytes, OpenOptions::default()).unwrap();
    t.iter(&ReadOptions::default())
        .into_iter()
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

#[test]
fn leveldb_tables_refiltered_with_their_own_policy_are_the_same_bytes() {
    let mut n = 0;
    for case in common::case_names() {
        let c = common::load_case(&case);
        for t in &c.tables {
            let bytes = std::fs::read(&t.path).unwrap();
            let table = TableReader::open(bytes.clone(), OpenOptions::default()).unwrap();
            let policy: Option<Arc<dyn FilterPolicy>> = match table.filter_status() {
                FilterStatus::Absent => None,
                _ => Some(Arc::new(BloomFilterPolicy::new(bits_of(&case)))),
            };
            let mut out = Vec::new();
            let stats = refilter(&table, policy, &mut out).unwrap();
            assert_eq!(stats.bytes as usize, out.len());
            assert!(
                out == bytes,
                "{case}: {} bytes vs {}",
                out.len(),
                bytes.len()
            );
            n += 1;
        }
    }
    assert!(n >= 6);
}

#[test]
fn other_policies_and_no_filter_read_the_same_entries() {
    for case in ["small_snappy", "nocompress_bloom", "mojang_zlib"] {
        let c = common::load_case(case);
        let bytes = std::fs::read(&c.tables[0].path).unwrap();
        let want = entries(bytes.clone());
        let table = TableReader::open(bytes.clone(), OpenOptions::default()).unwrap();
        for policy in [
            Some(Arc::new(CacheLocalBloomPolicy::new(10.0)) as Arc<dyn FilterPolicy>),
            Some(Arc::new(BloomFilterPolicy::new(16))),
            None,
        ] {
            let name = policy.as_ref().map(|p| p.name().to_string());
            let mut out = Vec::new();
            let stats = refilter(&table, policy, &mut out).unwrap();
            // The data blocks are the same bytes at the same offsets.
            let data_end = table
                .data_block_handles()
                .unwrap()
                .last()
                .map(|(_, h)| h.offset + h.size + 5)
                .unwrap();
            assert_eq!(out[..data_end as usize], bytes[..data_end as usize]);
            assert_eq!(entries(out.clone()), want, "{case} {name:?}");
            let t2 = TableReader::open(out, OpenOptions::default()).unwrap();
            match &name {
                Some(_) => {
                    assert!(
                        matches!(t2.filter_status(), FilterStatus::Used),
                        "{case} {name:?}"
                    );
                    assert!(stats.filter_bytes > 0);
                    // Every key found through the new filter.
                    for (k, _) in want.iter().step_by(7) {
                        let uk = &k[..k.len() - 8];
                        assert!(!t2.filter_excludes(uk).unwrap());
                    }
                }
                None => assert!(matches!(t2.filter_status(), FilterStatus::Absent)),
            }
        }
    }
}

#[test]
fn a_damaged_table_is_refused_not_refiltered() {
    let c = common::load_case("small_snappy");
    let mut bytes = std::fs::read(&c.tables[0].path).unwrap();
    bytes[100] ^= 0x10;
    let table = TableReader::open(bytes, OpenOptions::default()).unwrap();
    let mut out = Vec::new();
    let e = refilter(&table, Some(Arc::new(BloomFilterPolicy::new(10))), &mut out).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
    let e = refilter(&table, None, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
}

/// A table of many 64-block runs, built here (LevelDB's builder writes the same bytes:
/// `golden_tables`): refiltered on the calling thread and with 1, 2 and 4 helper threads,
/// in runs of 1 to 1000 blocks, the bytes are the same; with LevelDB's policy at its own bits, the table itself.
fn big_table() -> Vec<u8> {
    let opts = leveldb_table::Options::default()
        .bloom(10)
        .compression(leveldb_table::Compression::Snappy);
    let mut b = leveldb_table::TableBuilder::new(Vec::new(), &opts).unwrap();
    for i in 0..60_000u32 {
        let v = format!("value {i} {}", "x".repeat((i % 97) as usize));
        b.add(format!("key{i:08}").as_bytes(), v.as_bytes())
            .unwrap();
    }
    b.finish().unwrap().0
}

#[test]
fn helper_threads_change_nothing_in_the_output() {
    use leveldb_table::{refilter::refilter_with, refilter::RefilterOptions};
    let bytes = big_table();
    let table = TableReader::open(bytes.clone(), OpenOptions::default()).unwrap();
    let blocks = table.data_block_handles().unwrap().len();
    assert!(
        blocks > 4 * 64,
        "{blocks} data blocks: several runs per helper"
    );
    for policy in [
        Some(Arc::new(BloomFilterPolicy::new(10)) as Arc<dyn FilterPolicy>),
        Some(Arc::new(CacheLocalBloomPolicy::new(10.0)) as Arc<dyn FilterPolicy>),
        None,
    ] {
        let mut one = Vec::new();
        refilter_with(
            &table,
            policy.clone(),
            &mut one,
            RefilterOptions::default().threads(0),
        )
        .unwrap();
        for threads in [0, 1, 2, 4] {
            for run_blocks in [1, 3, 64, 1000] {
                let mut out = Vec::new();
                let opts = RefilterOptions::default()
                    .threads(threads)
                    .run_blocks(run_blocks);
                let stats = refilter_with(&table, policy.clone(), &mut out, opts).unwrap();
                assert_eq!(stats.data_blocks, blocks as u64);
                assert!(out == one, "{threads} helpers, runs of {run_blocks}");
            }
        }
        if policy
            .as_ref()
            .is_some_and(|p| p.name() == "leveldb.BuiltinBloomFilter2")
        {
            assert!(
                one == bytes,
                "LevelDB's policy at its own bits gives back the table"
            );
        }
    }
}

#[test]
fn a_damaged_block_deep_in_a_big_table_is_named() {
    use leveldb_table::{refilter::refilter_with, refilter::RefilterOptions};
    let mut bytes = big_table();
    let table = TableReader::open(bytes.clone(), OpenOptions::default()).unwrap();
    let handles = table.data_block_handles().unwrap();
    // A block in the fifth run of 64, so the helpers have runs before and after it.
    let (_, h) = handles[4 * 64 + 10];
    bytes[h.offset as usize + 7] ^= 0x40;
    let table = TableReader::open(bytes, OpenOptions::default()).unwrap();
    for threads in [0, 1, 2] {
        for policy in [
            Some(Arc::new(BloomFilterPolicy::new(10)) as Arc<dyn FilterPolicy>),
            None,
        ] {
            let e = refilter_with(
                &table,
                policy,
                &mut Vec::new(),
                RefilterOptions::default().threads(threads),
            )
            .unwrap_err();
            match e {
                leveldb_table::Error::ChecksumMismatch { handle, .. } => assert_eq!(handle, h),
                other => panic!("{threads} helpers: {other}"),
            }
        }
    }
}
