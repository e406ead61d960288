//! Block seek: a 4 KiB data block (restart interval 16) and a large index block (restart
//! interval 1, as the table builder writes it), by the allocation-free point-lookup path
//! (`Block::seek_value_range`) and by a block cursor (`BlockIter::seek`).

use std::time::Duration;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use leveldb_table::raw::{Block, BlockBuilder};
use leveldb_table::BytewiseComparator;
use leveldb_table::Cursor;

mod common;

fn make_block(entries: &[(Vec<u8>, Vec<u8>)], restart: usize) -> Block {
    let mut b = BlockBuilder::new(restart);
    for (k, v) in entries {
        b.add(k, v);
    }
    Block::from_bytes(b.finish().to_vec()).expect("block")
}

fn bench(c: &mut Criterion) {
    let cmp = BytewiseComparator;
    let mut g = c.benchmark_group("block");
    g.measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(20);
    g.throughput(Throughput::Elements(1024));

    // Data block: 36 entries of 16 + 100 bytes (~4.1 KiB), as in the table.
    let data = common::entries(36);
    let block = make_block(&data, 16);
    let targets: Vec<Vec<u8>> = common::probes(36, 1024, 1)
        .into_iter()
        .map(common::key)
        .collect();
    let mut scratch = Vec::new();
    g.bench_function("data_4k_seek_value_range_x1024", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for t in &targets {
                n += block
                    .seek_value_range(&cmp, black_box(t), &mut scratch)
                    .unwrap()
                    .map_or(0, |r| r.len());
            }
            n
        })
    });
    let mut it = block.iter(&cmp);
    g.bench_function("data_4k_iter_seek_x1024", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for t in &targets {
                it.seek(black_box(t));
                n += it.value().len();
            }
            n
        })
    });

    // Index block: 25,000 separators (a 1M-entry table), 8-byte handles, restart interval 1.
    let index: Vec<(Vec<u8>, Vec<u8>)> = (0..25_000u64)
        .map(|i| (common::key(i * 40 + 39), vec![0x80, 0x80, 0x01, 0x95, 0x12]))
        .collect();
    let iblock = make_block(&index, 1);
    let itargets: Vec<Vec<u8>> = common::probes(1_000_000, 1024, 2)
        .into_iter()
        .map(common::miss_key)
        .collect();
    g.bench_function("index_25k_seek_value_range_x1024", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for t in &itargets {
                n += iblock
                    .seek_value_range(&cmp, black_box(t), &mut scratch)
                    .unwrap()
                    .map_or(0, |r| r.start);
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
