//! Snappy on the benchmark's data blocks, per 4 KiB block: compression through the
//! builder's reusable `Compressor` against a fresh `snap` encoder call, and decompression
//! (the table builder's and the reader's codec work). `table_bench_cpp --calibrate` in
//! shared/bench prints libsnappy's figures on similar chunks, for comparison.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use leveldb_table::raw::compress::{snappy_into, Compressor};
use leveldb_table::raw::BlockBuilder;
use leveldb_table::{BytewiseComparator, Compression};

mod common;

/// The uncompressed data blocks of 20,000 benchmark entries (block 4096, restart 16).
fn blocks() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut b = BlockBuilder::new(16);
    for (k, v) in common::entries(20_000) {
        b.add(&k, &v);
        if b.current_size_estimate() >= 4096 {
            out.push(b.finish().to_vec());
            b.reset();
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let _ = BytewiseComparator;
    let blocks = blocks();
    let total: u64 = blocks.iter().map(|b| b.len() as u64).sum();
    let mut g = c.benchmark_group("snappy_4k_blocks");
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Bytes(total));
    g.bench_function("compress_reused_compressor", |b| {
        let mut c = Compressor::default();
        b.iter(|| {
            blocks
                .iter()
                .map(|x| c.compress(Compression::Snappy, x).unwrap().len())
                .sum::<usize>()
        })
    });
    g.bench_function("compress_snap_crate", |b| {
        let mut e = snap::raw::Encoder::new();
        let mut out = vec![0; snap::raw::max_compress_len(8192)];
        b.iter(|| {
            blocks
                .iter()
                .map(|x| e.compress(x, &mut out).unwrap())
                .sum::<usize>()
        })
    });
    let compressed: Vec<Vec<u8>> = blocks
        .iter()
        .map(|x| {
            Compressor::default()
                .compress(Compression::Snappy, x)
                .unwrap()
                .to_vec()
        })
        .collect();
    g.bench_function("decompress", |b| {
        let mut out = Vec::new();
        b.iter(|| {
            compressed
                .iter()
                .map(|x| {
                    snappy_into(x, &mut out).unwrap();
                    out.len()
                })
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
