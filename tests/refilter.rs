//! Refiltering: data blocks copied byte for byte, the filter rebuilt. LevelDB's own tables
//! refiltered with LevelDB's policy and their own bits come back byte for byte; other
//! policies and no filter give tables that read the same entries; a damaged table is refused.

mod common;

use std::sync::Arc;

use leveldb_table::refilter::refilter;
use leveldb_table::{
    BloomFilterPolicy, CacheLocalBloomPolicy, FilterPolicy, FilterStatus, ReadOptions,
    ReaderOptions, TableReader,
};

fn bits_of(case: &str) -> usize {
    match case {
        "bloom_bits_20" => 20,
        "bloom_bits_4" => 4,
        _ => 10,
    }
}

fn entries(bytes: Vec<u8>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let t = TableReader::open(bytes, ReaderOptions::default()).unwrap();
    t.iter(ReadOptions::default())
        .entries_from_start()
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
            let table = TableReader::open(bytes.clone(), ReaderOptions::default()).unwrap();
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
        let table = TableReader::open(bytes.clone(), ReaderOptions::default()).unwrap();
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
            let t2 = TableReader::open(out, ReaderOptions::default()).unwrap();
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
    let table = TableReader::open(bytes, ReaderOptions::default()).unwrap();
    let mut out = Vec::new();
    let e = refilter(&table, Some(Arc::new(BloomFilterPolicy::new(10))), &mut out).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
    let e = refilter(&table, None, &mut Vec::new()).unwrap_err();
    assert!(e.to_string().contains("checksum"), "{e}");
}
