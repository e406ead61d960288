//! Refiltering a table (data blocks copied, filter rebuilt from the keys) against rebuilding
//! it from its entries (every block decompressed, the entries re-added, every block
//! recompressed), on the same 100,000-entry snappy table, in one run.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use leveldb_table::refilter::refilter;
use leveldb_table::{
    BloomFilterPolicy, Compression, ReadOptions, ReaderOptions, TableBuilder, TableReader,
};

mod common;

fn bench(c: &mut Criterion) {
    let entries = common::entries(100_000);
    let opts = common::options(Compression::Snappy);
    let mut tb = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (k, v) in &entries {
        tb.add(k, v).unwrap();
    }
    let bytes = tb.finish().unwrap().0;
    let table = TableReader::open(bytes, ReaderOptions::default()).unwrap();
    let policy = std::sync::Arc::new(BloomFilterPolicy::new(14));
    let mut g = c.benchmark_group("refilter_100k");
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.bench_function("refilter", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(16 << 20);
            refilter(&table, Some(policy.clone()), &mut out)
                .unwrap()
                .bytes
        })
    });
    let rebuild_opts = opts.clone().bloom(14);
    g.bench_function("full_rebuild", |b| {
        b.iter(|| {
            let mut tb = TableBuilder::new(Vec::with_capacity(16 << 20), &rebuild_opts).unwrap();
            let read = ReadOptions {
                verify_checksums: true,
                fill_cache: false,
            };
            for r in table.iter(read).entries_from_start() {
                let (k, v) = r.unwrap();
                tb.add(&k, &v).unwrap();
            }
            tb.finish().unwrap().1.file_size
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
