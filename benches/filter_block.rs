//! Filter block lookup (`FilterBlockReader::key_may_match`): block offset -> filter ->
//! bloom probe, over the filter block of a 100,000-entry table (one filter per data block).

use std::sync::Arc;
use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use leveldb_table::raw::{FilterBlockBuilder, FilterBlockReader};
use leveldb_table::{filter::BloomFilterPolicy, FilterPolicy};

mod common;

fn bench(c: &mut Criterion) {
    // Lay out blocks as the table builder would: ~36 keys per 4 KiB block, ~2.3 KiB stored.
    const N: u64 = 100_000;
    const PER_BLOCK: u64 = 36;
    const STORED: u64 = 2_360;
    let policy: Arc<dyn FilterPolicy> = Arc::new(BloomFilterPolicy::new(10));
    let mut fb = FilterBlockBuilder::new(policy.clone());
    let mut offset = 0u64;
    fb.start_block(0);
    for i in 0..N {
        fb.add_key(&common::key(i));
        if (i + 1) % PER_BLOCK == 0 {
            offset += STORED;
            fb.start_block(offset);
        }
    }
    let block = fb.finish();
    let block_len = block.len();
    let reader = FilterBlockReader::new(policy, bytes::Bytes::from(block));
    let offset_of = |i: u64| (i / PER_BLOCK) * STORED;
    let hits: Vec<(u64, Vec<u8>)> = common::probes(N, 1024, 1)
        .into_iter()
        .map(|i| (offset_of(i), common::key(i)))
        .collect();
    let misses: Vec<(u64, Vec<u8>)> = common::probes(N, 1024, 2)
        .into_iter()
        .map(|i| (offset_of(i), common::miss_key(i)))
        .collect();
    assert!(hits.iter().all(|(o, k)| reader.key_may_match(*o, k)));

    let mut g = c.benchmark_group(format!("filter_block_{}KB", block_len / 1000));
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Elements(1024));
    g.bench_function("key_may_match_present_x1024", |b| {
        b.iter(|| {
            hits.iter()
                .filter(|(o, k)| reader.key_may_match(black_box(*o), k))
                .count()
        })
    });
    g.bench_function("key_may_match_absent_x1024", |b| {
        b.iter(|| {
            misses
                .iter()
                .filter(|(o, k)| reader.key_may_match(black_box(*o), k))
                .count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
