//! Full forward scan of an in-memory 100,000-entry table through `TableIter` (borrowed keys
//! and values): snappy with every block cached, snappy with no cache (each block read,
//! CRC-checked and decompressed), and uncompressed with no cache.

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use leveldb_table::Cursor;
use leveldb_table::{Compression, ReadOptions, TableReader};

mod common;

fn scan(t: &TableReader<bytes::Bytes>) -> u64 {
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    let (mut n, mut x) = (0u64, 0u64);
    while it.valid() {
        n += (it.key().len() + it.value().len()) as u64;
        x += u64::from(it.value()[0]);
        it.next();
    }
    assert!(it.status().is_ok());
    black_box(x);
    n
}

fn bench(c: &mut Criterion) {
    const N: u64 = 100_000;
    let entries = common::entries(N);
    let kv: u64 = entries
        .iter()
        .map(|(k, v)| (k.len() + v.len()) as u64)
        .sum();
    let snappy = common::build_table(&entries, Compression::Snappy);
    let none = common::build_table(&entries, Compression::None);

    let mut g = c.benchmark_group("scan_100k");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Bytes(kv));
    let t = common::open(&snappy, 256 << 20, true);
    assert_eq!(scan(&t), kv);
    g.bench_function("snappy_cached", |b| b.iter(|| scan(&t)));
    let t = common::open(&snappy, 0, true);
    g.bench_function("snappy_nocache", |b| b.iter(|| scan(&t)));
    let t = common::open(&none, 0, true);
    g.bench_function("none_nocache", |b| b.iter(|| scan(&t)));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
