//! `RedisBloomFilter` when servers misbehave: an add that stops part-way says how many keys
//! were acknowledged; a server that answers nothing is given up after the I/O timeout and
//! the call returns within the retry budget; a Redis Cluster node opened as one server is
//! refused at once. (Failovers of a real cluster: `cli/tests/bloom_failover.rs`.)

#[path = "fake_redis/mod.rs"]
mod fake_redis;
#[path = "redis_server/mod.rs"]
mod redis_server;

use std::time::{Duration, Instant};

use fake_redis::{fake_server, is, FILTER_META, NOT_A_CLUSTER};
use redis_server::RedisServer;
use sst_bloom::{Durability, Error, RedisBloomFilter, RedisOptions, ScalableParams, Servers};

fn keys(prefix: &str, range: std::ops::Range<u32>) -> Vec<Vec<u8>> {
    range
        .map(|i| format!("{prefix}:{i}").into_bytes())
        .collect()
}

fn refs(keys: &[Vec<u8>]) -> Vec<&[u8]> {
    keys.iter().map(Vec::as_slice).collect()
}

#[test]
fn an_add_that_stops_counts_the_keys_acknowledged() {
    let master = RedisServer::start();
    let replica = master.start_replica();
    let servers = Servers::single(&master.url());
    let opts = RedisOptions {
        durability: Durability::Replicas {
            count: 1,
            timeout: Duration::from_millis(200),
        },
        ..RedisOptions::default()
    };
    let params = ScalableParams {
        capacity: 1000,
        ..ScalableParams::default()
    };
    let mut f =
        RedisBloomFilter::create_or_open_on(&servers, "stop", params, &opts).expect("create");
    // The first 1,000 keys fill layer 0 (a fresh layer grants its whole capacity), the rest
    // go to newer layers.
    let first = keys("a", 0..3000);
    f.add(&refs(&first)).expect("add with the replica");
    assert!(f.layers().expect("layers").len() >= 2);
    replica.detach_from(&master);
    // Layer 0's keys (one of them twice) and new keys: the probe of the older layers
    // acknowledges layer 0's keys (present), then the reserve's WAIT finds no replica.
    let new = keys("b", 0..500);
    let mut batch: Vec<&[u8]> = refs(&first[..1000]);
    batch.extend(refs(&first[..10]));
    batch.extend(refs(&new));
    let e = f.add(&batch).expect_err("no replica to wait for");
    let Error::AddStopped {
        acknowledged,
        keys,
        source,
    } = &e
    else {
        panic!("not AddStopped: {e}");
    };
    assert!(
        matches!(**source, Error::NotReplicated { acked: 0, .. }),
        "{e}"
    );
    assert!(matches!(e.root_cause(), Error::NotReplicated { .. }));
    assert_eq!(*keys, 1510);
    // The 1,010 of layer 0, and of the new keys only false positives of the older layers.
    let mut plain = RedisBloomFilter::open(&master.url(), "stop").expect("open");
    let fp = plain.check(&refs(&new)).expect("check");
    let fp = fp.iter().filter(|&&m| m).count() as u64;
    assert!(
        (1010..=1010 + fp).contains(acknowledged),
        "{acknowledged} acknowledged, {fp} false positives"
    );
    assert!(e.to_string().contains("of the batch's 1510 keys"), "{e}");
}

#[test]
fn a_silent_server_is_given_up_after_the_io_timeout() {
    let (url, server) = fake_server(|_| None);
    let opts = RedisOptions {
        io_timeout: Duration::from_millis(300),
        ..RedisOptions::default()
    };
    let t0 = Instant::now();
    let e =
        RedisBloomFilter::open_on(&Servers::single(&url), "x", &opts).expect_err("nothing answers");
    let elapsed = t0.elapsed();
    assert!(
        e.to_string()
            .contains("no reply in 0.3 s (the I/O timeout)"),
        "{e}"
    );
    // Not the default I/O timeout (10 s).
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    server.join().expect("server");
}

#[test]
fn a_server_that_stops_answering_fails_the_call_within_the_retry_budget() {
    // Opens (INFO, HMGET of the metadata), then stops answering.
    let (url, server) = fake_server(|cmd| {
        if is(cmd, b"INFO") {
            Some(NOT_A_CLUSTER.to_vec())
        } else if is(cmd, b"HMGET") {
            Some(FILTER_META.to_vec())
        } else {
            None
        }
    });
    let opts = RedisOptions {
        retry_for: Duration::from_millis(500),
        ..RedisOptions::default()
    };
    let mut f = RedisBloomFilter::open_on(&Servers::single(&url), "x", &opts).expect("open");
    let t0 = Instant::now();
    let e = f.check(&[b"k"]).expect_err("no answer");
    let elapsed = t0.elapsed();
    assert!(e.to_string().contains("the retry budget ran out"), "{e}");
    // The wait ended with the budget, not after the I/O timeout (10 s).
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    drop(f);
    server.join().expect("server");
}

#[test]
fn moved_from_one_server_is_refused_at_once() {
    // A cluster node behind something that hides `cluster_enabled`: INFO says 0, every
    // key is elsewhere.
    let (url, server) = fake_server(|cmd| {
        Some(if is(cmd, b"INFO") {
            NOT_A_CLUSTER.to_vec()
        } else {
            b"-MOVED 3168 127.0.0.1:1\r\n".to_vec()
        })
    });
    let t0 = Instant::now();
    let e = RedisBloomFilter::open(&url, "x").expect_err("a cluster node");
    assert!(
        matches!(&e, Error::ClusterNode { evidence, .. } if evidence.contains("MOVED 3168")),
        "{e}"
    );
    assert!(e.to_string().contains("open it as a cluster"), "{e}");
    // At once, not after the 60 s retry budget.
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
    server.join().expect("server");
}
