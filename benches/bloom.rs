//! Bloom filter (LevelDB's `BuiltinBloomFilter2`, 10 bits/key): filter creation per key and
//! probe cost for present and absent keys.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use leveldb_table::{filter::BloomFilterPolicy, FilterPolicy};

mod common;

fn bench(c: &mut Criterion) {
    let policy = BloomFilterPolicy::new(10);
    let mut g = c.benchmark_group("bloom");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);

    // Creation: 36 keys is one 4 KiB data block of the workload; 10,000 a larger filter.
    for n in [36u64, 10_000] {
        let keys: Vec<Vec<u8>> = (0..n).map(common::key).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let mut dst = Vec::new();
        g.throughput(Throughput::Elements(n));
        g.bench_with_input(BenchmarkId::new("create_per_key", n), &refs, |b, refs| {
            b.iter(|| {
                dst.clear();
                policy.create_filter(black_box(refs), &mut dst);
                black_box(dst.len())
            })
        });
    }

    // Probes against one 10,000-key filter (12.5 KB, stays in L1/L2).
    let n = 10_000u64;
    let keys: Vec<Vec<u8>> = (0..n).map(common::key).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    let mut filter = Vec::new();
    policy.create_filter(&refs, &mut filter);
    let hit_keys: Vec<Vec<u8>> = common::probes(n, 1024, 1)
        .into_iter()
        .map(common::key)
        .collect();
    let miss_keys: Vec<Vec<u8>> = common::probes(n, 1024, 2)
        .into_iter()
        .map(common::miss_key)
        .collect();
    g.throughput(Throughput::Elements(1024));
    g.bench_function("probe_present_x1024", |b| {
        b.iter(|| {
            hit_keys
                .iter()
                .filter(|k| policy.key_may_match(k, black_box(&filter)))
                .count()
        })
    });
    g.bench_function("probe_absent_x1024", |b| {
        b.iter(|| {
            miss_keys
                .iter()
                .filter(|k| policy.key_may_match(k, black_box(&filter)))
                .count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
