//! Table point lookups (`TableReader::get_into`) on an in-memory 100,000-entry snappy table
//! with a block cache that holds every block (warm): hits and misses, with the filter and
//! without it (misses then read and search a data block). A second group does the same on
//! keys of 16 random bytes (hashes, as Bitcoin Core's chainstate and content-addressed
//! stores hold), whose index keys share no prefix. `hit_filter_get` against
//! `hit_filter_get_into` measures what reusing the value buffer saves. A third group reads
//! past the block cache: a cache that holds an eighth of the blocks (random hits: most blocks
//! are not cached, and the cache turns most away), and reads that do not fill the cache
//! (`ReadOptions::fill_cache(false)`, every block read for the one lookup).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use leveldb_table::{Compression, ReadOptions};

mod common;

fn bench(c: &mut Criterion) {
    const N: u64 = 100_000;
    let entries = common::entries(N);
    let bytes = common::build_table(&entries, Compression::Snappy);
    let hits: Vec<(Vec<u8>, Vec<u8>)> = common::probes(N, 1024, 1)
        .into_iter()
        .map(|i| entries[i as usize].clone())
        .collect();
    let misses: Vec<Vec<u8>> = common::probes(N - 1, 1024, 2)
        .into_iter()
        .map(common::miss_key)
        .collect();

    let mut g = c.benchmark_group("table_get_100k_snappy_warm");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Elements(1024));
    for use_filter in [true, false] {
        let t = common::open(&bytes, 256 << 20, use_filter);
        let mut val = Vec::with_capacity(128);
        for (k, v) in &hits {
            assert!(
                t.get_into(k, &ReadOptions::default(), &mut val)
                    .map(|l| l.is_found())
                    .unwrap()
                    && &val == v
            );
        }
        let tag = if use_filter { "filter" } else { "nofilter" };
        g.bench_function(format!("hit_{tag}_x1024"), |b| {
            b.iter(|| {
                let mut found = 0;
                for (k, _) in &hits {
                    found += t
                        .get_into(k, &ReadOptions::default(), &mut val)
                        .map(|l| l.is_found())
                        .unwrap() as usize;
                }
                found
            })
        });
        g.bench_function(format!("miss_{tag}_x1024"), |b| {
            b.iter(|| {
                let mut found = 0;
                for k in &misses {
                    found += t
                        .get_into(k, &ReadOptions::default(), &mut val)
                        .map(|l| l.is_found())
                        .unwrap() as usize;
                }
                found
            })
        });
    }
    // get (a new Vec per value found) against get_into (one reused buffer), warm hits: the
    // measurement behind keeping get_into in the API.
    let t = common::open(&bytes, 256 << 20, true);
    let read = ReadOptions::default();
    g.bench_function("hit_filter_get_x1024", |b| {
        b.iter(|| {
            let mut bytes = 0;
            for (k, _) in &hits {
                bytes += t.get(k, &read).unwrap().value().map_or(0, <[u8]>::len);
            }
            bytes
        })
    });
    let mut val = Vec::with_capacity(128);
    g.bench_function("hit_filter_get_into_x1024", |b| {
        b.iter(|| {
            let mut bytes = 0;
            for (k, _) in &hits {
                if t.get_into(k, &read, &mut val).unwrap().is_found() {
                    bytes += val.len();
                }
            }
            bytes
        })
    });
    // Without a block cache: every hit reads, checks and decompresses its block.
    let t = common::open(&bytes, 0, true);
    let mut val = Vec::with_capacity(128);
    g.bench_function("hit_filter_nocache_x1024", |b| {
        b.iter(|| {
            let mut found = 0;
            for (k, _) in &hits {
                found += t
                    .get_into(k, &ReadOptions::default(), &mut val)
                    .map(|l| l.is_found())
                    .unwrap() as usize;
            }
            found
        })
    });
    g.finish();

    // Past the cache: a 100k-entry table (about 2,560 data blocks of 4 KiB uncompressed) with
    // a cache of 1.25 MB, hits spread over the whole table; and reads that do not fill it.
    let mut g = c.benchmark_group("table_get_100k_snappy_past_cache");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Elements(1024));
    for (name, cache, fill) in [
        ("hit_small_cache_x1024", 1_250_000, true),
        ("hit_no_fill_x1024", 256 << 20, false),
    ] {
        let t = common::open(&bytes, cache, true);
        let read = ReadOptions::default().fill_cache(fill);
        let mut val = Vec::with_capacity(128);
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut found = 0;
                for (k, _) in &hits {
                    found += t
                        .get_into(k, &read, &mut val)
                        .map(|l| l.is_found())
                        .unwrap() as usize;
                }
                assert_eq!(found, hits.len());
                found
            })
        });
    }
    g.finish();

    // Hashed keys: no common prefix in the index.
    let mut hashed: Vec<(Vec<u8>, Vec<u8>)> = common::probes(u64::MAX, N as usize, 7)
        .into_iter()
        .zip(common::probes(u64::MAX, N as usize, 8))
        .map(|(a, b)| {
            let mut k = a.to_be_bytes().to_vec();
            k.extend_from_slice(&b.to_be_bytes());
            (k, vec![7u8; 100])
        })
        .collect();
    hashed.sort();
    hashed.dedup_by(|a, b| a.0 == b.0);
    let bytes = common::build_table(&hashed, Compression::Snappy);
    let t = common::open(&bytes, 256 << 20, true);
    let hits: Vec<&[u8]> = common::probes(hashed.len() as u64, 1024, 3)
        .into_iter()
        .map(|i| hashed[i as usize].0.as_slice())
        .collect();
    // Fresh random keys: absent (a 2^-128 chance each of being present).
    let misses: Vec<Vec<u8>> = common::probes(u64::MAX, 1024, 9)
        .into_iter()
        .map(|a| [a.to_be_bytes(), (!a).to_be_bytes()].concat())
        .collect();
    let mut val = Vec::with_capacity(128);
    for k in &misses {
        assert!(!t
            .get_into(k, &ReadOptions::default(), &mut val)
            .map(|l| l.is_found())
            .unwrap());
    }
    let mut g = c.benchmark_group("table_get_100k_hashed_keys_warm");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Elements(1024));
    g.bench_function("hit_filter_x1024", |b| {
        b.iter(|| {
            let mut found = 0;
            for k in &hits {
                found += t
                    .get_into(k, &ReadOptions::default(), &mut val)
                    .map(|l| l.is_found())
                    .unwrap() as usize;
            }
            found
        })
    });
    g.bench_function("miss_filter_x1024", |b| {
        b.iter(|| {
            let mut found = 0;
            for k in &misses {
                found += t
                    .get_into(k, &ReadOptions::default(), &mut val)
                    .map(|l| l.is_found())
                    .unwrap() as usize;
            }
            found
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
