//! Database point lookups (`Db::get_into`) on a directory of 200,000 entries in 4 KiB snappy
//! blocks with bloom filters (written by the bulk builder: about 6 tables of 2 MiB at one
//! level), random hits and misses: with a block cache that holds every block (warm), and
//! with one that holds about a tenth of them (many lookups read their block from the file).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use leveldb_table::db::engine::{BulkBuilder, BulkOptions};
use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::{BlockCache, Compression, ReadOptions};

mod common;

fn bench(c: &mut Criterion) {
    const N: u64 = 200_000;
    let entries = common::entries(N);
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("db");
    let opts = BulkOptions::default().table(common::options(Compression::Snappy));
    let mut b = BulkBuilder::create(&path, opts).expect("bulk builder");
    for (k, v) in &entries {
        b.add(k, v).expect("add");
    }
    b.finish().expect("finish");
    let hits: Vec<&[u8]> = common::probes(N, 1024, 1)
        .into_iter()
        .map(|i| entries[i as usize].0.as_slice())
        .collect();
    let misses: Vec<Vec<u8>> = common::probes(N - 1, 1024, 2)
        .into_iter()
        .map(common::miss_key)
        .collect();

    let mut g = c.benchmark_group("db_get_200k_snappy");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Elements(1024));
    for (tag, cache) in [("warm", 256u64 << 20), ("small_cache", 2_500_000)] {
        let opts =
            DbOptions::default().block_cache(Some(std::sync::Arc::new(BlockCache::new(cache))));
        let db = Db::open(&path, opts).expect("open");
        let read = ReadOptions::default();
        let mut val = Vec::with_capacity(128);
        for k in &hits {
            assert!(db.get_into(k, &read, &mut val).unwrap().is_found());
        }
        g.bench_function(format!("hit_{tag}_x1024"), |b| {
            b.iter(|| {
                let mut found = 0;
                for k in &hits {
                    found += db.get_into(k, &read, &mut val).unwrap().is_found() as usize;
                }
                assert_eq!(found, hits.len());
                found
            })
        });
        g.bench_function(format!("miss_{tag}_x1024"), |b| {
            b.iter(|| {
                let mut found = 0;
                for k in &misses {
                    found += db.get_into(k, &read, &mut val).unwrap().is_found() as usize;
                }
                assert_eq!(found, 0);
                found
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
