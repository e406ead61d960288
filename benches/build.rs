//! Table build into an in-memory `Vec<u8>`: 100,000 entries (11.6 MB of key+value), with
//! snappy (on the builder's thread and on a helper thread) and without compression, with the
//! bloom filter (10 bits/key).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use leveldb_table::{Compression, TableBuilder};

mod common;

fn bench(c: &mut Criterion) {
    const N: u64 = 100_000;
    let entries = common::entries(N);
    let kv: u64 = entries
        .iter()
        .map(|(k, v)| (k.len() + v.len()) as u64)
        .sum();
    let mut g = c.benchmark_group("build_100k");
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Bytes(kv));
    for (name, comp, parallel) in [
        ("snappy", Compression::Snappy, false),
        ("snappy_parallel_compression", Compression::Snappy, true),
        ("none", Compression::None, false),
    ] {
        let opts = common::options(comp).parallel_compression(parallel);
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut tb = TableBuilder::new(Vec::with_capacity(16 << 20), &opts).unwrap();
                for (k, v) in &entries {
                    tb.add(k, v).unwrap();
                }
                tb.finish().unwrap().1.file_size
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
