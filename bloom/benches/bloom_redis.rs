//! `RedisBloomFilter` on a `redis-server` started here on a free loopback port: batched add
//! and check (1000 keys a batch, a few round trips) side by side with the hand-rolled design
//! that sends one `SETBIT`/`GETBIT` round trip per probed bit. The JSON-printing twin with
//! memory per key is `examples/redis_bloom_bench.rs`.

#[path = "../tests/redis_server/mod.rs"]
mod redis_server;

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use redis_server::RedisServer;
use sst_bloom::{RedisBloomFilter, ScalableParams};

const BATCH: u64 = 1000;
/// Keys per iteration of the per-bit design (k round trips each).
const PER_BIT: u64 = 100;

fn key(prefix: &str, i: u64) -> Vec<u8> {
    format!("{prefix}:{i:012}").into_bytes()
}

fn per_bit_positions(key: &[u8], bits: u64, k: u32) -> Vec<u64> {
    let h = xxhash_rust::xxh3::xxh3_128(key);
    let (a, b) = (h as u64, ((h >> 64) as u64) | 1);
    (0..u64::from(k))
        .map(|i| a.wrapping_add(i.wrapping_mul(b)) % bits)
        .collect()
}

fn bench(c: &mut Criterion) {
    let server = RedisServer::start();
    let url = server.url();
    let params = ScalableParams {
        capacity: 1_000_000,
        fp_rate: 0.01,
        ..ScalableParams::default()
    };
    let mut f = RedisBloomFilter::create_or_open(&url, "bench", params).expect("create");
    let first = f.layers().expect("layers")[0].clone();
    let client = redis::Client::open(url.as_str()).expect("client");
    let mut con = client.get_connection().expect("connect");

    let mut g = c.benchmark_group("redis_bloom");
    g.measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(10);

    // Fresh keys each iteration, so every add writes.
    let mut next = 0u64;
    g.throughput(Throughput::Elements(BATCH));
    g.bench_function("add_batched_x1000", |b| {
        b.iter(|| {
            let keys: Vec<Vec<u8>> = (next..next + BATCH).map(|i| key("in", i)).collect();
            next += BATCH;
            let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            f.add(&refs).expect("add")
        })
    });
    let present: Vec<Vec<u8>> = (0..BATCH).map(|i| key("in", i)).collect();
    let refs: Vec<&[u8]> = present.iter().map(Vec::as_slice).collect();
    g.bench_function("check_batched_x1000", |b| {
        b.iter(|| f.check(&refs).expect("check"))
    });

    g.throughput(Throughput::Elements(PER_BIT));
    let mut next = 0u64;
    g.bench_function("add_per_bit_round_trip_x100", |b| {
        b.iter(|| {
            for i in next..next + PER_BIT {
                for p in per_bit_positions(&key("in", i), first.bits, first.k) {
                    let _: i64 = redis::cmd("SETBIT")
                        .arg("perbit")
                        .arg(p)
                        .arg(1)
                        .query(&mut con)
                        .expect("SETBIT");
                }
            }
            next += PER_BIT;
        })
    });
    g.bench_function("check_per_bit_round_trip_x100", |b| {
        b.iter(|| {
            (0..PER_BIT)
                .filter(|&i| {
                    per_bit_positions(&key("in", i), first.bits, first.k)
                        .into_iter()
                        .all(|p| {
                            let bit: i64 = redis::cmd("GETBIT")
                                .arg("perbit")
                                .arg(p)
                                .query(&mut con)
                                .expect("GETBIT");
                            bit == 1
                        })
                })
                .count()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
