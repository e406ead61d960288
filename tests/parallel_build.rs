//! `Options::parallel_compression`: the file is byte for byte the one the builder writes
//! on its own thread, for every shape of input (tiny and large blocks, blocks that compress
//! and blocks stored raw, explicit flushes, no filter, internal keys, empty tables).

use leveldb_table::{
    table::KeyFormat, Compression, OpenOptions, Options, TableBuilder, TableReader,
};

/// Entry `i`: compressible values, with every seventh value noise (stored raw when a block
/// is mostly such values).
fn entry(i: usize, value_len: usize) -> (Vec<u8>, Vec<u8>) {
    let key = format!("key{:07}", i * 3).into_bytes();
    let mut x = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let value = (0..value_len)
        .map(|j| {
            if i % 7 == 0 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            } else {
                b'a' + ((i + j % 10) % 26) as u8
            }
        })
        .collect();
    (key, value)
}

fn build(opts: &Options, n: usize, value_len: usize, flush_every: Option<usize>) -> Vec<u8> {
    let mut b = TableBuilder::new(Vec::new(), opts).unwrap();
    for i in 0..n {
        let (k, v) = entry(i, value_len);
        b.add(&k, &v).unwrap();
        if flush_every.is_some_and(|f| i % f == f - 1) {
            b.flush().unwrap();
        }
    }
    let (bytes, stats) = b.finish().unwrap();
    assert_eq!(stats.file_size, bytes.len() as u64);
    bytes
}

#[test]
fn parallel_compression_writes_the_same_bytes() {
    let bases = [
        Options::default().bloom(10),
        Options::default().bloom(10).block_size(1),
        Options::default().bloom(10).block_size(64 << 10),
        Options::default()
            .filter_policy(None)
            .block_restart_interval(1),
        Options::default().bloom(10).compression(Compression::None),
    ];
    for base in bases {
        for (n, value_len) in [(0, 10), (1, 10), (5, 3000), (3000, 100), (20_000, 40)] {
            for flush_every in [None, Some(1), Some(37)] {
                let serial = build(&base.clone(), n, value_len, flush_every);
                let parallel = build(
                    &base.clone().parallel_compression(true),
                    n,
                    value_len,
                    flush_every,
                );
                assert!(
                    serial == parallel,
                    "{base:?} n {n} value {value_len} flush {flush_every:?}: {} vs {} bytes",
                    serial.len(),
                    parallel.len()
                );
                // And the table reads back.
                if n > 0 {
                    let t = TableReader::open(
                        bytes::Bytes::from(parallel),
                        OpenOptions::default().keys(KeyFormat::Plain),
                    )
                    .unwrap();
                    let (k, v) = entry(n - 1, value_len);
                    assert_eq!(
                        t.get(&k, &Default::default())
                            .map(|l| l.into_value())
                            .unwrap(),
                        Some(v)
                    );
                }
            }
        }
    }
}

#[test]
fn parallel_compression_of_internal_keys_writes_the_same_bytes() {
    let opts = Options::default().bloom(10).keys(KeyFormat::Internal);
    let mut out = Vec::new();
    for parallel in [false, true] {
        let mut b =
            TableBuilder::new(Vec::new(), &opts.clone().parallel_compression(parallel)).unwrap();
        for i in 0..5000u64 {
            let mut k = format!("user{:06}", i).into_bytes();
            k.extend_from_slice(&((i + 1) << 8 | 1).to_le_bytes());
            b.add(&k, &entry(i as usize, 60).1).unwrap();
        }
        out.push(b.finish().unwrap().0);
    }
    assert!(out[0] == out[1]);
}

/// The helper thread leaves the builder `Send` and `Sync`, as it was without one.
#[test]
fn builders_stay_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<TableBuilder<Vec<u8>>>();
    send_sync::<leveldb_table::table::TableFileBuilder>();
    send_sync::<TableReader<bytes::Bytes>>();
}

/// A builder dropped half way with blocks in flight stops its helper thread cleanly.
#[test]
fn dropping_a_parallel_builder_midway_is_fine() {
    let opts = Options::default().bloom(10).parallel_compression(true);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for i in 0..2000 {
        let (k, v) = entry(i, 100);
        b.add(&k, &v).unwrap();
    }
    assert!(b.file_size() > 0, "blocks were written while adding");
    drop(b);
}
