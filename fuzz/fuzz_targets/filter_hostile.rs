//! Filters from hostile bytes, and filters built from arbitrary keys.
//!
//! Input: `len: u16 LE | len bytes of filter-block data | probe stream`. The filter-block
//! data is read with `raw::FilterBlockReader` (bloom policy) and probed with arbitrary block
//! offsets and keys; the same bytes are also probed directly as one bloom filter with
//! `BloomFilterPolicy`, `LegacyBloomFilterPolicy` and `CacheLocalBloomPolicy`. The probe stream also supplies keys
//! that are built into a filter block and into bloom filters, and then every added key must
//! match (a filter never answers a wrong "no").
#![no_main]

use std::sync::Arc;

use arbitrary::{Result, Unstructured};
use leveldb_table::raw::{FilterBlockBuilder, FilterBlockReader};
use leveldb_table::{
    filter::BloomFilterPolicy, filter::CacheLocalBloomPolicy, filter::LegacyBloomFilterPolicy,
    raw::bloom::BloomFilter, FilterPolicy,
};
use libfuzzer_sys::fuzz_target;

fn run(data: &[u8]) -> Result<()> {
    if data.len() < 2 {
        return Ok(());
    }
    let len = usize::from(u16::from_le_bytes([data[0], data[1]])).min(data.len() - 2);
    let filter_bytes = &data[2..2 + len];
    let mut u = Unstructured::new(&data[2 + len..]);

    let bits: u8 = u.int_in_range(0..=40)?;
    let bloom: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(usize::from(bits)));
    let legacy = LegacyBloomFilterPolicy::new(usize::from(bits));
    let local =
        CacheLocalBloomPolicy::new(f64::from(bits) + f64::from(u.int_in_range(0..=9u8)?) / 10.0);

    // Hostile bytes as a filter block and as a single filter.
    let reader = FilterBlockReader::new(bloom.clone(), filter_bytes);
    let n = reader.num_filters();
    assert!(n <= filter_bytes.len() / 4);
    for i in 0..n.min(64) {
        if let Some(f) = reader.filter(i) {
            assert!(f.len() <= filter_bytes.len());
        }
    }
    for _ in 0..u.int_in_range(0..=32)? {
        let offset: u64 = if u.arbitrary()? {
            u.arbitrary()?
        } else {
            u.int_in_range(0..=1 << 16)?
        };
        let key: &[u8] = u.arbitrary()?;
        let _ = reader.filter_index(offset);
        let _ = reader.key_may_match(offset, key);
        let _ = bloom.key_may_match(key, filter_bytes);
        let _ = legacy.key_may_match(key, filter_bytes);
        let _ = local.key_may_match(key, filter_bytes);
    }

    // Built filters answer "may match" for every key they were built from.
    let base_lg: u8 = u.int_in_range(1..=31)?;
    let mut builder = FilterBlockBuilder::with_base_lg(bloom.clone(), base_lg);
    let mut blocks: Vec<(u64, Vec<&[u8]>)> = Vec::new();
    let mut offset = 0u64;
    for _ in 0..u.int_in_range(0..=8)? {
        // Offsets grow, and never so far that the builder writes thousands of empty filters.
        offset += u.int_in_range(0..=(4096u64 << base_lg.min(11)))?;
        if (offset >> base_lg) > 4096 {
            break;
        }
        builder.start_block(offset);
        let mut keys = Vec::new();
        for _ in 0..u.int_in_range(0..=16)? {
            let k: &[u8] = u.arbitrary()?;
            builder.add_key(k);
            keys.push(k);
        }
        blocks.push((offset, keys));
        // The next block starts after this one.
        offset += 1;
    }
    let block = builder.finish();
    let reader = FilterBlockReader::new(bloom.clone(), &block[..]);
    assert_eq!(reader.base_lg(), base_lg);
    for (off, keys) in &blocks {
        for k in keys {
            assert!(reader.key_may_match(*off, k), "filter block lost a key");
        }
    }
    let all: Vec<&[u8]> = blocks.iter().flat_map(|(_, k)| k.iter().copied()).collect();
    let mut single = Vec::new();
    bloom.create_filter(&all, &mut single);
    let mut legacy_filter = Vec::new();
    legacy.create_filter(&all, &mut legacy_filter);
    let mut local_filter = Vec::new();
    local.create_filter(&all, &mut local_filter);
    let mut standalone = BloomFilter::for_capacity(all.len(), 0.01);
    for k in &all {
        standalone.insert(k);
    }
    for k in &all {
        assert!(bloom.key_may_match(k, &single), "bloom filter lost a key");
        assert!(
            legacy.key_may_match(k, &legacy_filter),
            "legacy bloom filter lost a key"
        );
        assert!(standalone.contains(k), "standalone bloom filter lost a key");
        assert!(
            local.key_may_match(k, &local_filter),
            "cache-local filter lost a key"
        );
        assert!(bloom.key_may_match(k, standalone.as_bytes()));
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});
