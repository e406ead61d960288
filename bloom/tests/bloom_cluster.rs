//! `RedisBloomFilter` on a real Redis Cluster (3 masters, 3 replicas) that each test starts
//! itself on free loopback ports (`redis_cluster/mod.rs`): growth and rate, how the bitmaps
//! spread over the masters, resharding and a slot migration under a writer, and a master
//! killed while a writer adds, with and without waiting for replicas.

#[path = "redis_cluster/mod.rs"]
mod redis_cluster;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis_cluster::{cli_text, wait_for, RedisCluster};
use sst_bloom::{Durability, RedisBloomFilter, RedisOptions, ScalableParams, Servers};

fn keys(prefix: &str, range: std::ops::Range<u64>) -> Vec<Vec<u8>> {
    range
        .map(|i| format!("{prefix}:{i:010}").into_bytes())
        .collect()
}

fn params(capacity: u64, fp_rate: f64) -> ScalableParams {
    ScalableParams {
        capacity,
        fp_rate,
        ..ScalableParams::default()
    }
}

/// Small bitmaps, so that a test-sized filter spreads over many slots.
fn opts() -> RedisOptions {
    RedisOptions {
        bitmap_bits: 8192,
        ..RedisOptions::default()
    }
}

fn open(c: &RedisCluster, name: &str, p: ScalableParams, o: &RedisOptions) -> RedisBloomFilter {
    RedisBloomFilter::create_or_open_on(&Servers::cluster(c.seed_urls()), name, p, o)
        .expect("open the filter on the cluster")
}

fn add_all(f: &mut RedisBloomFilter, keys: &[Vec<u8>]) {
    for chunk in keys.chunks(2000) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        f.add(&refs).expect("add");
    }
}

fn count_maybe(f: &mut RedisBloomFilter, keys: &[Vec<u8>]) -> usize {
    let mut n = 0;
    for chunk in keys.chunks(5000) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        n += f
            .check(&refs)
            .expect("check")
            .iter()
            .filter(|&&m| m)
            .count();
    }
    n
}

#[test]
fn grows_to_4x_within_the_rate_and_spreads_over_every_master() {
    let c = RedisCluster::start();
    let mut f = open(&c, "grow", params(20_000, 0.01), &opts());
    assert!(f.is_cluster());
    let present = keys("in", 0..80_000);
    add_all(&mut f, &present);
    assert!(f.layers().unwrap().len() >= 3, "grew to 4x");
    assert_eq!(
        count_maybe(&mut f, &present),
        present.len(),
        "false negatives"
    );
    let absent = keys("out", 0..100_000);
    let fp = count_maybe(&mut f, &absent) as f64 / absent.len() as f64;
    println!("false-positive rate after 4x growth on the cluster: {fp}");
    assert!(fp <= 0.01 * 1.25, "false-positive rate {fp} vs target 0.01");

    // Every bitmap is a key of its own; count them on each master.
    let masters = c.masters();
    assert_eq!(masters.len(), 3);
    let per: Vec<usize> = masters
        .iter()
        .map(|&p| c.keys_on(p, "bloom:grow:*").len())
        .collect();
    let total: usize = per.iter().sum();
    let expected: u64 = f
        .layers()
        .unwrap()
        .iter()
        .map(|l| l.bits.div_ceil(8192))
        .sum();
    assert_eq!(total as u64, expected, "every bitmap was written once");
    for (&p, &n) in masters.iter().zip(&per) {
        let share = n as f64 / total as f64;
        println!("master {p}: {n} of {total} bitmaps ({:.1}%)", share * 100.0);
        assert!((0.20..=0.47).contains(&share), "master {p}: {share}");
    }
    // The metadata is one key in one slot, on exactly one master.
    let meta: usize = masters
        .iter()
        .map(|&p| c.keys_on(p, "bloom:{grow}:meta").len())
        .sum();
    assert_eq!(meta, 1);
}

/// A writer adding batches until told to stop; returns the acknowledged keys and the errors
/// it saw (each failed batch is sent again).
fn writer(
    c: &RedisCluster,
    name: &'static str,
    o: RedisOptions,
    acked_batches: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(Vec<Vec<u8>>, Vec<String>)> {
    let seeds = c.seed_urls();
    std::thread::spawn(move || {
        let mut f = RedisBloomFilter::create_or_open_on(
            &Servers::cluster(seeds),
            name,
            params(20_000, 0.01),
            &o,
        )
        .expect("writer: open");
        let (mut acked, mut errors) = (Vec::new(), Vec::new());
        let mut i = 0u64;
        while !stop.load(Ordering::SeqCst) {
            let batch = keys(&format!("w{i}"), 0..500);
            let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
            match f.add(&refs) {
                Ok(_) => {
                    acked.extend(batch);
                    i += 1;
                    acked_batches.fetch_add(1, Ordering::SeqCst);
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        println!("writer stats: {:?}", f.stats());
        (acked, errors)
    })
}

/// Waits until the writer acknowledged `n` more batches than now.
fn wait_batches(acked: &AtomicU64, n: u64) {
    let target = acked.load(Ordering::SeqCst) + n;
    wait_for(
        &format!("the writer to acknowledge {n} more batches"),
        || acked.load(Ordering::SeqCst) >= target,
    );
}

#[test]
fn resharding_under_a_writer_shows_no_error_and_loses_nothing() {
    let c = RedisCluster::start();
    let mut stale = open(&c, "reshard", params(20_000, 0.01), &opts());
    let early = keys("early", 0..20_000);
    add_all(&mut stale, &early);
    let (acked, stop) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let w = writer(&c, "reshard", opts(), acked.clone(), stop.clone());
    wait_batches(&acked, 2);
    let masters = c.masters();
    let before = c.slots_of(masters[1]);
    let out = c.reshard(masters[0], masters[1], 2000);
    assert!(
        out.status.success(),
        "reshard failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    wait_batches(&acked, 2);
    stop.store(true, Ordering::SeqCst);
    let (written, errors) = w.join().expect("writer");
    assert!(errors.is_empty(), "errors reached the writer: {errors:?}");
    assert_eq!(c.slots_of(masters[1]), before + 2000, "the slots moved");
    // The handle opened before the reshard still maps the old slots: it follows MOVED.
    assert_eq!(count_maybe(&mut stale, &early), early.len());
    assert_eq!(count_maybe(&mut stale, &written), written.len());
    assert!(stale.stats().moved > 0, "{:?}", stale.stats());
}

#[test]
fn ask_during_a_slot_migration_is_followed() {
    let c = RedisCluster::start();
    let mut f = open(&c, "ask", params(5_000, 0.01), &opts());
    let present = keys("k", 0..5_000);
    add_all(&mut f, &present);
    // Migrate one bitmap's slot by hand and stop half-way: the key has moved, the slot not.
    let key = "bloom:ask:0:0";
    let slot = cli_text(c.masters()[0], &["CLUSTER", "KEYSLOT", key]);
    let slot = slot.trim();
    let masters = c.masters();
    let src = *masters
        .iter()
        .find(|&&p| !c.keys_on(p, key).is_empty())
        .expect("the bitmap is on a master");
    let dst = *masters.iter().find(|&&p| p != src).expect("another master");
    let (src_id, dst_id) = (c.node_id(src), c.node_id(dst));
    assert!(cli_text(dst, &["CLUSTER", "SETSLOT", slot, "IMPORTING", &src_id]).contains("OK"));
    assert!(cli_text(src, &["CLUSTER", "SETSLOT", slot, "MIGRATING", &dst_id]).contains("OK"));
    let moved = cli_text(
        src,
        &["MIGRATE", "127.0.0.1", &dst.to_string(), key, "0", "5000"],
    );
    assert!(moved.contains("OK"), "MIGRATE: {moved}");
    assert_eq!(count_maybe(&mut f, &present), present.len());
    assert!(f.stats().ask > 0, "{:?}", f.stats());
    // Finish the migration; the next commands are MOVED there.
    for p in c.running() {
        cli_text(p, &["CLUSTER", "SETSLOT", slot, "NODE", &dst_id]);
    }
    c.wait_healthy();
    assert_eq!(count_maybe(&mut f, &present), present.len());
    assert!(f.stats().moved > 0, "{:?}", f.stats());
}

/// Kills the master that holds the filter's metadata while a writer adds, waits for its
/// replica to take over, restarts it (it rejoins as a replica) and lets the writer go on.
/// Returns (acknowledged keys, how many a fresh check misses, the writer's errors, keys
/// acknowledged after the old master rejoined).
fn kill_master_while_adding(
    name: &'static str,
    durability: Durability,
) -> (usize, usize, Vec<String>, Vec<Vec<u8>>) {
    let mut c = RedisCluster::start();
    let o = RedisOptions {
        durability,
        ..opts()
    };
    drop(open(&c, name, params(20_000, 0.01), &o));
    let meta = format!("bloom:{{{name}}}:meta");
    let victim = *c
        .masters()
        .iter()
        .find(|&&p| !c.keys_on(p, &meta).is_empty())
        .expect("the metadata is on a master");
    let replica = c.replica_of(victim).expect("the victim has a replica");
    let (acked, stop) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let w = writer(&c, name, o, acked.clone(), stop.clone());
    wait_batches(&acked, 3);
    c.kill(victim);
    wait_for("the replica to take over", || c.role(replica) == "master");
    c.wait_healthy();
    c.restart(victim);
    wait_for("the old master to rejoin as a replica", || {
        c.role(victim) == "slave"
    });
    c.wait_healthy();
    let rejoined = acked.load(Ordering::SeqCst);
    wait_batches(&acked, 3);
    stop.store(true, Ordering::SeqCst);
    let (written, errors) = w.join().expect("writer");
    let after: Vec<Vec<u8>> = written[rejoined as usize * 500..].to_vec();
    let mut f =
        RedisBloomFilter::open_on(&Servers::cluster(c.seed_urls()), name, &opts()).expect("reopen");
    let lost = written.len() - count_maybe(&mut f, &written);
    assert_eq!(
        count_maybe(&mut f, &after),
        after.len(),
        "keys added after the failover"
    );
    (written.len(), lost, errors, after)
}

#[test]
fn killed_master_with_wait_loses_no_acknowledged_key() {
    let wait = Durability::Replicas {
        count: 1,
        timeout: Duration::from_millis(500),
    };
    let (acked, lost, errors, after) = kill_master_while_adding("durable", wait);
    println!(
        "WAIT mode: {acked} keys acknowledged, {lost} lost; {} batches refused while the \
         new master had no replica: {:?}",
        errors.len(),
        errors.first()
    );
    assert_eq!(lost, 0, "acknowledged keys lost with WAIT");
    assert!(!after.is_empty());
}

#[test]
fn killed_master_without_wait_reports_what_it_lost() {
    let (acked, lost, errors, _) = kill_master_while_adding("fast", Durability::Primary);
    // Redis replicates asynchronously: the writes the master acknowledged in the last
    // moment before SIGKILL may never reach the replica that takes over.
    println!("master-acknowledged mode: {acked} keys acknowledged, {lost} lost in the failover");
    assert!(errors.is_empty(), "errors reached the writer: {errors:?}");
    assert!(lost <= acked);
}
