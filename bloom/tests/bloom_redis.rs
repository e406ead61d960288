//! `RedisBloomFilter` against a real `redis-server` started by each test on a free port.

#[path = "redis_server/mod.rs"]
mod redis_server;

use redis_server::RedisServer;
use std::time::Duration;

use sst_bloom::{Error, RedisBloomFilter, RedisOptions, ScalableParams, Servers};

fn keys(prefix: &str, range: std::ops::Range<u32>) -> Vec<Vec<u8>> {
    range
        .map(|i| format!("{prefix}:{i}").into_bytes())
        .collect()
}

fn add_all(f: &mut RedisBloomFilter, keys: &[Vec<u8>]) {
    for chunk in keys.chunks(1000) {
        let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
        f.add(&refs).expect("add");
    }
}

fn count_maybe(f: &mut RedisBloomFilter, keys: &[Vec<u8>]) -> usize {
    let mut n = 0;
    for chunk in keys.chunks(1000) {
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

fn params(capacity: u64, fp_rate: f64) -> ScalableParams {
    ScalableParams {
        capacity,
        fp_rate,
        ..ScalableParams::default()
    }
}

#[test]
fn fp_rate_within_target_after_growing_to_4x() {
    let server = RedisServer::start();
    for fp in [0.01, 0.001] {
        let name = format!("grow-{fp}");
        let mut f = RedisBloomFilter::create_or_open(&server.url(), &name, params(10_000, fp))
            .expect("create");
        let present = keys("in", 0..40_000);
        add_all(&mut f, &present);
        let layers = f.layers().expect("layers");
        assert!(
            layers.len() >= 3,
            "4x the capacity needs 3 layers: {layers:?}"
        );
        assert_eq!(
            count_maybe(&mut f, &present),
            present.len(),
            "false negatives"
        );
        let absent = keys("out", 0..100_000);
        let fps = count_maybe(&mut f, &absent);
        let rate = fps as f64 / absent.len() as f64;
        assert!(rate <= fp * 1.25, "fp rate {rate} > 1.25 * {fp}");
        let est = f.estimated_fp_rate().expect("estimate");
        assert!(est > 0.0 && est <= fp, "estimated {est} vs target {fp}");
    }
}

#[test]
fn other_parameters_are_refused_and_missing_filters_reported() {
    let server = RedisServer::start();
    let url = server.url();
    RedisBloomFilter::create_or_open(&url, "p", params(1000, 0.01)).expect("create");
    RedisBloomFilter::create_or_open(&url, "p", params(1000, 0.01)).expect("same again");
    let e = RedisBloomFilter::create_or_open(&url, "p", params(2000, 0.01)).unwrap_err();
    assert!(
        matches!(&e, Error::Mismatch { field: "capacity", stored, requested, .. }
            if stored == "1000" && requested == "2000"),
        "{e}"
    );
    let e = RedisBloomFilter::create_or_open(&url, "p", params(1000, 0.001)).unwrap_err();
    assert!(
        matches!(
            &e,
            Error::Mismatch {
                field: "fp_rate",
                ..
            }
        ),
        "{e}"
    );
    let f = RedisBloomFilter::open(&url, "p").expect("open existing");
    assert_eq!(f.params(), params(1000, 0.01));
    let e = RedisBloomFilter::open(&url, "nothing").unwrap_err();
    assert!(
        matches!(&e, Error::NotFound { name } if name == "nothing"),
        "{e}"
    );
}

#[test]
fn unreachable_server_is_an_error_naming_the_command() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let e = RedisBloomFilter::open(&format!("redis://127.0.0.1:{port}/"), "x").unwrap_err();
    assert!(
        matches!(&e, Error::Redis { command, .. } if command == "connect"),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with(&format!("redis connect on 127.0.0.1:{port} failed")),
        "{e}"
    );
}

#[test]
fn half_written_and_repeated_batches_retry_cleanly() {
    let server = RedisServer::start();
    let mut f = RedisBloomFilter::create_or_open(&server.url(), "retry", params(1000, 0.01))
        .expect("create");
    // A batch that failed after setting some of a key's bits: only the first half is set.
    let key = b"half-written".as_slice();
    let (bitmap, bits) = f.bit_locations(key, 0);
    let client = redis::Client::open(server.url()).unwrap();
    let mut con = client.get_connection().unwrap();
    for &b in &bits[..bits.len() / 2] {
        let _: i64 = redis::cmd("SETBIT")
            .arg(&bitmap)
            .arg(b)
            .arg(1)
            .query(&mut con)
            .unwrap();
    }
    assert_eq!(f.check(&[key]).unwrap(), vec![false]);
    let s = f.add(&[key]).unwrap();
    assert_eq!((s.added, s.present), (1, 0));
    assert_eq!(f.check(&[key]).unwrap(), vec![true]);
    // Sending a whole batch again adds nothing and loses nothing.
    let batch = keys("again", 0..500);
    add_all(&mut f, &batch);
    let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
    let s = f.add(&refs).unwrap();
    assert_eq!((s.keys, s.added, s.present), (500, 0, 500));
    assert_eq!(count_maybe(&mut f, &batch), 500);
}

#[test]
fn concurrent_writers_across_growth_lose_nothing() {
    let server = RedisServer::start();
    let url = server.url();
    // Tiny layers so that the writers open layers while the other one writes.
    let p = params(200, 0.01);
    RedisBloomFilter::create_or_open(&url, "conc", p).expect("create");
    let handles: Vec<_> = (0..2)
        .map(|t| {
            let url = url.clone();
            std::thread::spawn(move || {
                let mut f = RedisBloomFilter::create_or_open(&url, "conc", p).expect("open");
                let mine = keys(&format!("t{t}"), 0..6000);
                for chunk in mine.chunks(100) {
                    let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
                    f.add(&refs).expect("add");
                }
                mine
            })
        })
        .collect();
    let all: Vec<Vec<u8>> = handles
        .into_iter()
        .flat_map(|h| h.join().expect("writer"))
        .collect();
    let mut f = RedisBloomFilter::open(&url, "conc").expect("open");
    assert!(f.layers().unwrap().len() >= 5);
    assert_eq!(count_maybe(&mut f, &all), all.len(), "false negatives");
}

#[test]
fn restart_mid_run_is_retried_through_and_loses_nothing() {
    let mut server = RedisServer::start_persistent();
    let url = server.url();
    let first = keys("before", 0..3000);
    let mut f =
        RedisBloomFilter::create_or_open(&url, "restart", params(1000, 0.01)).expect("create");
    add_all(&mut f, &first);
    server.restart();
    // The old connection is gone: the client reconnects and the batch goes through.
    let batch = keys("during", 0..100);
    let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
    f.add(&refs).expect("add after a restart");
    assert_eq!(count_maybe(&mut f, &batch), batch.len());
    // A server gone for good is an error naming the command once the retries run out.
    let quick = RedisOptions {
        retry_for: Duration::from_millis(300),
        ..RedisOptions::default()
    };
    let mut short = RedisBloomFilter::open_on(&Servers::single(&url), "restart", &quick)
        .expect("open with a short retry budget");
    server.stop();
    let e = short.check(&refs).unwrap_err();
    assert!(
        matches!(&e, Error::Redis { command, .. } if command == "HGET"),
        "{e}"
    );
    let e = RedisBloomFilter::open_on(&Servers::single(&url), "restart", &quick).unwrap_err();
    assert!(
        matches!(&e, Error::Redis { command, .. } if command == "connect"),
        "{e}"
    );
    server.restart();
    // The next run: everything acknowledged before the restart is there, and it goes on.
    let mut f = RedisBloomFilter::open(&url, "restart").expect("reopen");
    assert_eq!(count_maybe(&mut f, &first), first.len());
    let second = keys("after", 0..3000);
    add_all(&mut f, &second);
    add_all(&mut f, &batch);
    assert_eq!(count_maybe(&mut f, &first), first.len());
    assert_eq!(count_maybe(&mut f, &second), second.len());
    assert_eq!(count_maybe(&mut f, &batch), batch.len());
    assert!(f.layers().unwrap().len() >= 3);
}

#[test]
fn memory_per_key_is_close_to_the_math() {
    let server = RedisServer::start();
    let mut f = RedisBloomFilter::create_or_open(&server.url(), "mem", params(50_000, 0.01))
        .expect("create");
    // 90% of the capacity: one layer (it opens the next one a little before 100%).
    add_all(&mut f, &keys("m", 0..45_000));
    let layers = f.layers().unwrap();
    assert_eq!(layers.len(), 1);
    let bytes = f.memory_usage().unwrap() as f64;
    // m/n = log2(1/e)/ln 2 bits per key, the first layer's rate e = 1% * (1 - 0.5).
    let math = 50_000.0 * (1.0f64 / (0.01 * 0.5)).log2() / std::f64::consts::LN_2 / 8.0;
    assert!(
        (layers[0].bits as f64 / 8.0 - math).abs() < 8.0,
        "{layers:?}"
    );
    assert!(
        bytes >= math && bytes < math * 1.25,
        "{bytes} bytes vs {math} by the math"
    );
}

#[test]
fn error_replies_and_damaged_metadata_are_errors_not_panics() {
    let server = RedisServer::start();
    let url = server.url();
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut con = client.get_connection().unwrap();
    // The metadata key holds a string: WRONGTYPE from HMGET.
    let _: () = redis::cmd("SET")
        .arg("bloom:{str}:meta")
        .arg("x")
        .query(&mut con)
        .unwrap();
    let e = RedisBloomFilter::open(&url, "str").unwrap_err();
    assert!(
        matches!(&e, Error::Redis { command, detail, .. } if command == "HMGET" && detail.contains("WRONGTYPE")),
        "{e}"
    );
    let e = RedisBloomFilter::create_or_open(&url, "str", params(10, 0.01)).unwrap_err();
    assert!(
        matches!(&e, Error::Redis { command, .. } if command == "EVAL init"),
        "{e}"
    );
    // Fields that do not parse or are out of range.
    for (field, value) in [
        ("capacity", "ten"),
        ("fp_rate", "2.0"),
        ("layers", "0"),
        ("bitmap_bits", "3"),
    ] {
        let name = format!("bad-{field}");
        RedisBloomFilter::create_or_open(&url, &name, params(10, 0.01)).unwrap();
        let _: () = redis::cmd("HSET")
            .arg(format!("bloom:{{{name}}}:meta"))
            .arg(field)
            .arg(value)
            .query(&mut con)
            .unwrap();
        let e = RedisBloomFilter::open(&url, &name).unwrap_err();
        assert!(matches!(e, Error::Redis { .. }), "{field}: {e}");
    }
    // A bitmap key of the wrong type: the command that failed is named (the filter's one
    // bitmap is a few bytes, so even one key reads it whole: `GET`, see redis/dense.rs).
    let mut f = RedisBloomFilter::create_or_open(&url, "wrong", params(10, 0.01)).unwrap();
    let (bitmap, _) = f.bit_locations(b"k", 0);
    let _: () = redis::cmd("LPUSH")
        .arg(&bitmap)
        .arg("x")
        .query(&mut con)
        .unwrap();
    let e = f.check(&[b"k"]).unwrap_err();
    assert!(
        matches!(&e, Error::Redis { command, detail, .. } if command == "GET" && detail.contains("WRONGTYPE")),
        "{e}"
    );
    // The metadata deleted under an open filter.
    let _: () = redis::cmd("DEL")
        .arg("bloom:{wrong}:meta")
        .query(&mut con)
        .unwrap();
    let e = f.check(&[b"other"]).unwrap_err();
    assert!(
        matches!(&e, Error::NotFound { name } if name == "wrong"),
        "{e}"
    );
}

/// A batch with many keys on a bitmap reads it whole (`GET`) or OR-s into it whole (a
/// script), a batch of one key uses one `BITFIELD` per key (redis/dense.rs): both paths
/// give the same answers on the same filter, and each finds what the other added.
#[test]
fn whole_bitmap_and_per_key_paths_agree() {
    let server = RedisServer::start();
    let url = server.url();
    let mut f =
        RedisBloomFilter::create_or_open(&url, "paths", params(20_000, 0.01)).expect("create");
    // Added key by key (per-key path), then checked as one batch (whole bitmaps).
    let one_by_one = keys("single", 0..300);
    let mut added = 0;
    for k in &one_by_one {
        let s = f.add(&[k.as_slice()]).expect("add one");
        assert_eq!(s.added + s.present, 1);
        added += s.added;
    }
    let refs: Vec<&[u8]> = one_by_one.iter().map(Vec::as_slice).collect();
    assert!(f.check(&refs).expect("check").iter().all(|&m| m));
    // Added as one batch (whole bitmaps), then checked key by key.
    let batch = keys("batch", 0..15_000);
    let refs: Vec<&[u8]> = batch.iter().map(Vec::as_slice).collect();
    let s = f.add(&refs).expect("add batch");
    assert_eq!(s.keys, 15_000);
    assert!(s.added >= 14_800, "{s:?}");
    for k in batch.iter().step_by(37) {
        assert_eq!(f.check(&[k.as_slice()]).expect("check one"), vec![true]);
    }
    // Adding the same batch again changes nothing: every key is already there.
    let again = f.add(&refs).expect("add again");
    assert_eq!((again.added, again.present), (0, 15_000));
    // Absent keys: the same answers (false positives included) both ways.
    let absent = keys("absent", 0..3_000);
    let refs: Vec<&[u8]> = absent.iter().map(Vec::as_slice).collect();
    let whole = f.check(&refs).expect("check batch");
    let single: Vec<bool> = absent
        .iter()
        .map(|k| f.check(&[k.as_slice()]).expect("check one")[0])
        .collect();
    assert_eq!(whole, single);
    let fps = whole.iter().filter(|&&m| m).count();
    assert!(fps < 3_000 / 40, "{fps} false positives of 3000");
    // The layer counts exactly the keys reported added (room given back for the others).
    let layers = f.layers().expect("layers");
    assert_eq!(layers.len(), 1);
    assert_eq!(layers[0].items, added + s.added);
}

/// The URL's password and database are used: `AUTH` before anything else, the filter's keys
/// in the database named, a wrong password an error that names `AUTH`.
#[test]
fn url_password_and_database_are_used() {
    let server = RedisServer::start();
    let mut admin = redis::Client::open(server.url())
        .expect("client")
        .get_connection()
        .expect("connect");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("requirepass")
        .arg("s3cret")
        .query(&mut admin)
        .expect("set a password");
    let url = format!("redis://:s3cret@127.0.0.1:{}/3", server.port);
    let mut f = RedisBloomFilter::create_or_open(&url, "authed", params(10_000, 0.01))
        .expect("create with the password");
    let added = keys("a", 0..2_000);
    let refs: Vec<&[u8]> = added.iter().map(Vec::as_slice).collect();
    f.add(&refs).expect("add");
    assert!(f.check(&refs).expect("check").iter().all(|&m| m));
    // The keys are in database 3, none in 0.
    let mut db = |n: i64| -> Vec<String> {
        let _: () = redis::cmd("SELECT")
            .arg(n)
            .query(&mut admin)
            .expect("select");
        redis::cmd("KEYS")
            .arg("*authed*")
            .query(&mut admin)
            .expect("keys")
    };
    // (The admin connection stays authenticated across CONFIG SET requirepass.)
    assert!(!db(3).is_empty());
    assert!(db(0).is_empty());
    // A wrong password is an error naming AUTH, not a filter.
    let bad = format!("redis://:wrong@127.0.0.1:{}/3", server.port);
    let Err(err) = RedisBloomFilter::create_or_open(&bad, "authed", params(10_000, 0.01)) else {
        panic!("a wrong password was accepted");
    };
    assert!(err.to_string().contains("AUTH"), "{err}");
}
