//! The measured half of "why not the `redis` crate's cluster client" (docs/bloom.md): on a real
//! 3+3 cluster started here, a master is SIGKILLed and its replica takes over; then the same
//! pipelined `BITFIELD_RO` checks go through the crate's sync `ClusterConnection` (opened before
//! the kill) and through a `RedisBloomFilter` (also opened before). Each gets 20 tries, 500 ms
//! apart, after the cluster reports ok again. Prints one JSON document.
//!
//! `cargo run --release -p sst-bloom --features redis --example redis_crate_failover`

#[path = "../tests/redis_cluster/mod.rs"]
mod redis_cluster;

use std::time::Duration;

use redis_cluster::{wait_for, RedisCluster};
use serde_json::json;
use sst_bloom::{RedisBloomFilter, RedisOptions, ScalableParams, Servers};

const TRIES: usize = 20;

fn main() {
    let mut c = RedisCluster::start();
    let servers = Servers::cluster(c.seed_urls());
    let opts = RedisOptions {
        bitmap_bits: 8192,
        ..RedisOptions::default()
    };
    let params = ScalableParams {
        capacity: 20_000,
        ..ScalableParams::default()
    };
    let mut f =
        RedisBloomFilter::create_or_open_on(&servers, "failover", params, &opts).expect("create");
    let keys: Vec<Vec<u8>> = (0..20_000u32)
        .map(|i| format!("k{i}").into_bytes())
        .collect();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    f.add(&refs).expect("add");

    let client = redis::cluster::ClusterClient::new(servers.urls().to_vec()).expect("client");
    let mut con = client.get_connection().expect("cluster connection");
    let crate_check = |con: &mut redis::cluster::ClusterConnection| -> Result<usize, String> {
        let mut pipe = redis::cluster::cluster_pipe();
        for k in &keys {
            let (bitmap, bits) = f.bit_locations(k, 0);
            let cmd = pipe.cmd("BITFIELD_RO").arg(bitmap);
            for b in bits {
                cmd.arg("GET").arg("u1").arg(b);
            }
        }
        let replies: Vec<Vec<i64>> = pipe.query(con).map_err(|e| e.to_string())?;
        Ok(replies.iter().filter(|r| r.iter().all(|&b| b == 1)).count())
    };
    let before = crate_check(&mut con).expect("the crate's client before the kill");
    assert_eq!(before, keys.len());

    let victim = c.masters()[0];
    let replica = c.replica_of(victim).expect("a replica");
    let on_victim = c.keys_on(victim, "bloom:failover:*").len();
    let stats_before = f.stats();
    c.kill(victim);
    wait_for("the replica to take over", || c.role(replica) == "master");
    c.wait_healthy();

    let mut crate_result = Vec::new();
    for _ in 0..TRIES {
        let r = crate_check(&mut con);
        let ok = r.as_ref().is_ok_and(|&n| n == keys.len());
        crate_result.push(r.map_or_else(|e| e, |n| format!("ok: {n} found")));
        if ok {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let ours = f.check(&refs).map(|v| v.iter().filter(|&&m| m).count());
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({
            "keys": keys.len(),
            "redis_crate_tries_after_failover": crate_result.len(),
            "redis_crate_recovered": crate_result.last().is_some_and(|r| r.starts_with("ok")),
            "redis_crate_first_error": crate_result.first(),
            "redis_crate_last_result": crate_result.last(),
            "ours": ours.as_ref().map_or_else(|e| e.to_string(), |n| format!("ok: {n} found")),
            "bitmaps_on_the_killed_master": on_victim,
            "ours_stats_before_the_kill": format!("{stats_before:?}"),
            "ours_stats_after": format!("{:?}", f.stats()),
        }))
        .expect("json")
    );
}
