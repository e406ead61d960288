//! Refiltering a table (data blocks copied, filter rebuilt from the keys) against rebuilding
//! it from its entries (every block decompressed, the entries re-added, every block
//! recompressed), on the same 100,000-entry snappy table, in one run. The refilter is timed
//! with its default helper threads (one fewer than the machine has cores), with one helper,
//! and on one thread; `decompress_only` reads, checks and decompresses every data block and
//! does nothing else: the floor of any refilter, which needs the keys inside the blocks.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use leveldb_table::Cursor;
use leveldb_table::{
    error::BlockKind, filter::BloomFilterPolicy, Compression, OpenOptions, ReadOptions,
    TableBuilder, TableReader,
};
use leveldb_table::{refilter::refilter, refilter::refilter_with, refilter::RefilterOptions};

mod common;

fn bench(c: &mut Criterion) {
    let entries = common::entries(100_000);
    let opts = common::options(Compression::Snappy);
    let mut tb = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (k, v) in &entries {
        tb.add(k, v).unwrap();
    }
    let bytes = tb.finish().unwrap().0;
    let table = TableReader::open(bytes, OpenOptions::default()).unwrap();
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
    for (name, threads) in [("refilter_one_thread", 0), ("refilter_one_helper", 1)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut out = Vec::with_capacity(16 << 20);
                let opts = RefilterOptions::default().threads(threads);
                refilter_with(&table, Some(policy.clone()), &mut out, opts)
                    .unwrap()
                    .bytes
            })
        });
    }
    let handles: Vec<_> = table
        .data_block_handles()
        .unwrap()
        .into_iter()
        .map(|(_, h)| h)
        .collect();
    g.bench_function("decompress_only", |b| {
        b.iter(|| {
            let mut n = 0;
            for &h in &handles {
                n += table.read_block(h, BlockKind::Data).unwrap().data.len();
            }
            n
        })
    });
    let rebuild_opts = opts.clone().bloom(14);
    g.bench_function("full_rebuild", |b| {
        b.iter(|| {
            let mut tb = TableBuilder::new(Vec::with_capacity(16 << 20), &rebuild_opts).unwrap();
            let read = ReadOptions::default().fill_cache(false);
            // The entries read in place (no copy per entry), re-added.
            let mut it = table.iter(&read);
            it.seek_to_first();
            while it.valid() {
                tb.add(it.key(), it.value()).unwrap();
                it.next();
            }
            tb.finish().unwrap().1.file_size
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
