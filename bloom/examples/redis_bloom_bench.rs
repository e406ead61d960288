//! Batched `RedisBloomFilter` against the hand-rolled per-bit design (one `SETBIT` / `GETBIT`
//! round trip per probed bit, the whole filter in one Redis value), measured in the same run
//! on a `redis-server` started here on a free loopback port; memory per key (`MEMORY USAGE`)
//! against the math. Prints one JSON document (recorded in docs/bloom.md).
//!
//! `cargo run --release -p sst-bloom --features redis --example redis_bloom_bench`
//!
//! With `-- --redis URL[,URL...] [--cluster] [--keys N] [--capacity N] [--batch N]
//! [--name NAME]` it measures only the batched filter's add and check on servers already
//! running (what `scripts/bench_bloom_cli.sh` compares the CLI with), and prints
//! `{"add_keys_per_s": ..., "check_present_keys_per_s": ...}`. With `--cluster
//! --crate-cluster` it also checks the same keys through the `redis` crate's own cluster
//! client (`ClusterClient`, `cluster_pipe`, one `BITFIELD_RO` per key as ours sends), for the
//! measured comparison with the hand-made routing in docs/bloom.md.

#[path = "../tests/redis_server/mod.rs"]
mod redis_server;

use std::time::Instant;

use redis_server::RedisServer;
use serde_json::json;
use sst_bloom::{RedisBloomFilter, RedisOptions, ScalableParams, Servers};

const KEYS: u64 = 200_000;
/// The first layer's capacity: the run grows the filter to 4x it.
const CAPACITY: u64 = KEYS / 4;
const BATCH: usize = 1000;
/// The per-bit design is slow: it is measured on fewer keys (rates are per key).
const PER_BIT_KEYS: u64 = 5_000;
const FP: f64 = 0.01;

fn key(prefix: &str, i: u64) -> Vec<u8> {
    format!("{prefix}:{i:012}").into_bytes()
}

/// The hand-rolled filter: one bitmap of m bits, k bits per key from the same double hash,
/// each bit its own round trip.
struct PerBit {
    con: redis::Connection,
    bits: u64,
    k: u32,
}

impl PerBit {
    fn positions(&self, key: &[u8]) -> Vec<u64> {
        let h = xxhash_rust::xxh3::xxh3_128(key);
        let (a, b) = (h as u64, ((h >> 64) as u64) | 1);
        (0..u64::from(self.k))
            .map(|i| a.wrapping_add(i.wrapping_mul(b)) % self.bits)
            .collect()
    }
    fn add(&mut self, key: &[u8]) {
        for p in self.positions(key) {
            let _: i64 = redis::cmd("SETBIT")
                .arg("perbit")
                .arg(p)
                .arg(1)
                .query(&mut self.con)
                .expect("SETBIT");
        }
    }
    fn check(&mut self, key: &[u8]) -> bool {
        for p in self.positions(key) {
            let bit: i64 = redis::cmd("GETBIT")
                .arg("perbit")
                .arg(p)
                .query(&mut self.con)
                .expect("GETBIT");
            if bit == 0 {
                return false;
            }
        }
        true
    }
}

fn rate(n: u64, start: Instant) -> f64 {
    n as f64 / start.elapsed().as_secs_f64()
}

/// `redis-benchmark`'s plain SETBIT rate with one client and no pipelining (requests/s),
/// the issue's stand-in for one round trip per bit; None when the tool is not installed.
fn redis_benchmark_setbit(port: u16) -> Option<f64> {
    let out = std::process::Command::new("redis-benchmark")
        .args([
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-c",
            "1",
            "-n",
            "50000",
            "-r",
            "1000000",
        ])
        .args(["--csv", "SETBIT", "rb:__rand_int__", "7", "1"])
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // CSV: a header line, then "SETBIT rb:__rand_int__ 7 1","<requests per second>",...
    let line = text.lines().nth(1)?;
    line.split(',').nth(1)?.trim_matches('"').parse().ok()
}

/// The batched filter alone on given servers: `--redis LIST [--cluster] [--keys N]
/// [--capacity N] [--batch N] [--name NAME]`.
fn on_servers(args: &[String]) {
    let get = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let num = |flag: &str, d: u64| get(flag).and_then(|v| v.parse().ok()).unwrap_or(d);
    let servers = Servers::parse(
        &get("--redis").expect("--redis LIST"),
        args.iter().any(|a| a == "--cluster"),
    )
    .expect("servers");
    let keys = num("--keys", 300_000);
    let batch = num("--batch", 16_384) as usize;
    let params = ScalableParams {
        capacity: num("--capacity", keys),
        fp_rate: FP,
        ..ScalableParams::default()
    };
    let name = get("--name").unwrap_or_else(|| "libbench".into());
    let mut f =
        RedisBloomFilter::create_or_open_on(&servers, &name, params, &RedisOptions::default())
            .expect("open");
    let present: Vec<Vec<u8>> = (1..=keys)
        .map(|i| format!("key:{i:012}").into_bytes())
        .collect();
    let t = Instant::now();
    for chunk in present.chunks(batch) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        f.add(&refs).expect("add");
    }
    let add_rate = rate(keys, t);
    let t = Instant::now();
    let mut found = 0usize;
    let mut answers = Vec::new();
    for chunk in present.chunks(batch) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        f.check_into(&refs, &mut answers).expect("check");
        found += answers.iter().filter(|&&m| m).count();
    }
    let check_rate = rate(keys, t);
    assert_eq!(found as u64, keys, "false negatives");
    let crate_rate = args
        .iter()
        .any(|a| a == "--crate-cluster")
        .then(|| crate_cluster_check(&servers, &f, &present, batch));
    println!(
        "{}",
        json!({"keys": keys, "batch": batch, "add_keys_per_s": add_rate.round(),
               "check_present_keys_per_s": check_rate.round(),
               "redis_crate_cluster_check_keys_per_s": crate_rate.map(f64::round)})
    );
}

/// The same check (one layer) through the `redis` crate's sync cluster client: one
/// `BITFIELD_RO` per key in a `cluster_pipe` per batch. Keys/s.
fn crate_cluster_check(
    servers: &Servers,
    f: &RedisBloomFilter,
    keys: &[Vec<u8>],
    batch: usize,
) -> f64 {
    let client = redis::cluster::ClusterClient::new(servers.urls().to_vec()).expect("client");
    let mut con = client.get_connection().expect("cluster connection");
    let t = Instant::now();
    let mut found = 0usize;
    for chunk in keys.chunks(batch) {
        let mut pipe = redis::cluster::cluster_pipe();
        for k in chunk {
            let (bitmap, bits) = f.bit_locations(k, 0);
            let cmd = pipe.cmd("BITFIELD_RO").arg(bitmap);
            for b in bits {
                cmd.arg("GET").arg("u1").arg(b);
            }
        }
        let replies: Vec<Vec<i64>> = pipe.query(&mut con).expect("cluster pipeline");
        found += replies
            .iter()
            .filter(|r| !r.is_empty() && r.iter().all(|&b| b == 1))
            .count();
    }
    let r = rate(keys.len() as u64, t);
    assert_eq!(found, keys.len(), "false negatives through the redis crate");
    r
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--redis") {
        return on_servers(&args);
    }
    let server = RedisServer::start();
    let url = server.url();
    let params = ScalableParams {
        capacity: CAPACITY,
        fp_rate: FP,
        ..ScalableParams::default()
    };
    let mut f = RedisBloomFilter::create_or_open(&url, "bench", params).expect("create");

    let present: Vec<Vec<u8>> = (0..KEYS).map(|i| key("in", i)).collect();
    let absent: Vec<Vec<u8>> = (0..KEYS).map(|i| key("out", i)).collect();
    let t = Instant::now();
    for chunk in present.chunks(BATCH) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        f.add(&refs).expect("add");
    }
    let add_rate = rate(KEYS, t);
    let t = Instant::now();
    let mut found = 0usize;
    for chunk in present.chunks(BATCH) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        found += f
            .check(&refs)
            .expect("check")
            .iter()
            .filter(|&&m| m)
            .count();
    }
    let check_rate = rate(KEYS, t);
    assert_eq!(found as u64, KEYS, "false negatives");
    let mut fps = 0usize;
    for chunk in absent.chunks(BATCH) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        fps += f
            .check(&refs)
            .expect("check")
            .iter()
            .filter(|&&m| m)
            .count();
    }
    let layers = f.layers().expect("layers");
    let memory = f.memory_usage().expect("memory");
    let items: u64 = layers.iter().map(|l| l.items).sum();
    let layer_bits: u64 = layers.iter().map(|l| l.bits).sum();

    // The per-bit design, sized like the first layer, on the same server.
    let client = redis::Client::open(url.as_str()).expect("client");
    let first = &layers[0];
    let mut pb = PerBit {
        con: client.get_connection().expect("connect"),
        bits: first.bits,
        k: first.k,
    };
    let t = Instant::now();
    for k in present.iter().take(PER_BIT_KEYS as usize) {
        pb.add(k);
    }
    let pb_add = rate(PER_BIT_KEYS, t);
    let t = Instant::now();
    let pb_found = present
        .iter()
        .take(PER_BIT_KEYS as usize)
        .filter(|k| pb.check(k))
        .count();
    let pb_check = rate(PER_BIT_KEYS, t);
    assert_eq!(pb_found as u64, PER_BIT_KEYS);

    let setbit_c1 = redis_benchmark_setbit(server.port);

    let eps0 = FP * (1.0 - params.ratio);
    let math_bits_per_key = (1.0 / eps0).log2() / std::f64::consts::LN_2;
    let out = json!({
        "keys": KEYS,
        "capacity": CAPACITY,
        "batch": BATCH,
        "fp_target": FP,
        "batched": {
            "add_keys_per_s": add_rate.round(),
            "check_present_keys_per_s": check_rate.round(),
            "layers": layers.len(),
            "items": items,
            "fp_measured": fps as f64 / KEYS as f64,
        },
        "per_bit_round_trip": {
            "keys": PER_BIT_KEYS,
            "k": first.k,
            "add_keys_per_s": pb_add.round(),
            "check_present_keys_per_s": pb_check.round(),
        },
        "redis_benchmark_setbit_one_client_per_s": setbit_c1,
        "redis_benchmark_keys_per_s_at_k_setbits": setbit_c1.map(|r| (r / f64::from(first.k)).round()),
        "speedup": {
            "add": add_rate / pb_add,
            "check": check_rate / pb_check,
        },
        "memory": {
            "redis_bytes": memory,
            "layer_bits": layer_bits,
            "redis_bytes_over_layer_bytes": memory as f64 / (layer_bits as f64 / 8.0),
            "redis_bytes_per_key": memory as f64 / items as f64,
            "layer_bits_per_key": layer_bits as f64 / items as f64,
            "math_first_layer_bits_per_key": math_bits_per_key,
        },
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("json"));
}
