//! `sst bloom check` and `add` through master failures on a real Redis Cluster (3 masters,
//! 3 replicas, `cluster-node-timeout` 2 s) started here on free loopback ports: for each
//! of the three slot ranges in turn (one of them holds the filter's metadata), its master
//!
//! (a) SIGKILLed, then a check given the surviving nodes as seeds, started at once (it rides
//!     the failover) and again once the replica has taken over;
//! (b) SIGSTOPped (hung: connections accepted, nothing answered) while a check runs;
//! (c) SIGSTOPped while an add runs.
//!
//! Each finishes with exit 0 and no false negative within the node timeout plus
//! [`MARGIN`] of the fault. The processes get an I/O timeout of 30 s, so finishing sooner
//! shows the hung master was given up because its replica took over, not because it timed
//! out. One cluster serves all nine cases: a killed master is restarted and a stopped one
//! resumed, and each rejoins as a replica of the node that replaced it.
//!
//! Also: a durable add that stops part-way says how many keys were acknowledged, a
//! cluster node given without `--cluster` is refused at once with the hint, and the I/O
//! timeout and retry budget flags are used.

#[path = "../../bloom/tests/fake_redis/mod.rs"]
mod fake_redis;
#[path = "../../bloom/tests/redis_cluster/mod.rs"]
mod redis_cluster;
#[path = "../../bloom/tests/redis_server/mod.rs"]
mod redis_server;

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use redis_cluster::{cli_text, wait_for, RedisCluster};
use redis_server::RedisServer;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_sst");
/// The cluster's `cluster-node-timeout`.
const NODE_TIMEOUT_MS: u64 = 2000;
/// Allowed on top of the node timeout from a fault to the end of the command riding it. A
/// failover here takes the node timeout plus 1-3 s (the failure spreads, the replica waits
/// 0.5-1 s and is elected) and the command resumes within about a second of it (measured:
/// docs/bloom.md); the rest is room for a loaded 2-core machine. It is far below the
/// processes' 30 s I/O timeout and 60 s retry budget (the default).
const MARGIN: Duration = Duration::from_secs(13);
/// Keys in the filter, and per check or add: three batches of the CLI's 65,536.
const KEYS: usize = 150_000;
/// Keys fed before the fault: one whole batch and a few of the next. `sst bloom` reads
/// stdin 1 MiB at a time, and a key line here is 16 bytes, so the first read (65,536 lines)
/// is the first batch, handed over at once, and the next waits for the rest of the input.
const BEFORE: usize = 70_000;
/// Bytes of a key line.
const LINE: usize = 16;
const _: () = assert!(BEFORE * LINE > 1 << 20 && BEFORE < 2 * 65_536);

fn bound() -> Duration {
    Duration::from_millis(NODE_TIMEOUT_MS) + MARGIN
}

/// `KEYS` lines of `LINE` bytes: `----PREFIX:NNNNNNNNN`.
fn keys(prefix: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..KEYS {
        out.extend_from_slice(format!("{prefix:->5}:{i:09}\n").as_bytes());
    }
    assert_eq!(out.len(), KEYS * LINE);
    out
}

/// Where `KEYS` lines of `input` split after `BEFORE` lines.
fn split(input: &[u8]) -> (&[u8], &[u8]) {
    let at = input
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(BEFORE - 1)
        .map_or(input.len(), |(i, _)| i + 1);
    input.split_at(at)
}

/// `sst bloom ACTION` on the filter `name` through `seeds`, with long timeouts (see the
/// file's comment) and small bitmaps (the filter spreads over every master).
fn bloom(action: &str, seeds: &str, name: &str) -> Child {
    Command::new(BIN)
        .args([
            "bloom",
            action,
            "--cluster",
            "--redis",
            seeds,
            "--name",
            name,
        ])
        .args(["--capacity", "300000", "--bitmap-bits", "8192"])
        .args(["--io-timeout-ms", "30000"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sst")
}

/// A running `sst`: its stdin, and its stdout gathered on a thread that says when the
/// first bytes came.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    first_output: mpsc::Receiver<()>,
    stdout: std::thread::JoinHandle<Vec<u8>>,
}

impl Running {
    fn new(mut child: Child) -> Running {
        let stdin = child.stdin.take();
        let mut out = child.stdout.take().expect("stdout");
        let (tx, first_output) = mpsc::channel();
        let stdout = std::thread::spawn(move || {
            let mut all = Vec::new();
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if all.is_empty() {
                    let _ = tx.send(());
                }
                all.extend_from_slice(&buf[..n]);
            }
            all
        });
        Running {
            child,
            stdin,
            first_output,
            stdout,
        }
    }

    /// Writes `bytes` on stdin; a process that ended early (its stdin closed) is left for
    /// [`finish`](Self::finish) to report.
    fn feed(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        match stdin.write_all(bytes) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
            _ => {}
        }
    }

    /// Closes stdin and waits: (exit code, stdout, stderr).
    fn finish(mut self) -> (Option<i32>, Vec<u8>, String) {
        drop(self.stdin.take());
        let mut err = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            e.read_to_string(&mut err).expect("stderr");
        }
        let status = self.child.wait().expect("wait for sst");
        let out = self.stdout.join().expect("stdout reader");
        assert!(!err.contains("panicked"), "sst panicked: {err}");
        (status.code(), out, err)
    }
}

fn run(action: &str, seeds: &str, name: &str, input: &[u8]) -> (Option<i32>, Vec<u8>, String) {
    let mut r = Running::new(bloom(action, seeds, name));
    r.feed(input);
    r.finish()
}

/// Asserts a check's exit 0 and that every one of the `KEYS` keys was answered `maybe`.
fn assert_all_maybe(what: &str, (code, out, err): &(Option<i32>, Vec<u8>, String)) {
    assert_eq!(*code, Some(0), "{what}: {err}");
    let rows = out.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let (mut n, mut maybe) = (0, 0);
    for row in rows {
        n += 1;
        maybe += usize::from(row.starts_with(b"maybe\t"));
    }
    assert_eq!((n, maybe), (KEYS, KEYS), "{what}: rows, maybe");
}

fn assert_within(what: &str, elapsed: Duration) {
    println!("{what}: {:.2} s", elapsed.as_secs_f64());
    assert!(
        elapsed <= bound(),
        "{what}: {:.1} s, more than the node timeout plus the margin ({:.1} s)",
        elapsed.as_secs_f64(),
        bound().as_secs_f64()
    );
}

/// The seed list of the running nodes but `skip`.
fn seeds_but(c: &RedisCluster, skip: u16) -> String {
    c.running()
        .into_iter()
        .filter(|&p| p != skip)
        .map(|p| format!("redis://127.0.0.1:{p}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// Whether an `HGET ... set:0` reply counts bits: an add's batch is done once its last
/// step added the bits it set (the field is created at 0 with the filter).
fn bits_counted(reply: &str) -> bool {
    reply.trim().parse::<u64>().is_ok_and(|n| n > 0)
}

/// (a): SIGKILL the master of `slot`, check from the survivors at once and after the
/// failover, restart it.
fn killed(c: &mut RedisCluster, slot: u16, input: &[u8]) {
    let victim = c.master_of_slot(c.running()[0], slot).expect("a master");
    let survivors = seeds_but(c, victim);
    c.kill(victim);
    let t0 = Instant::now();
    let rode = run("check", &survivors, "f", input);
    assert_all_maybe(&format!("check after SIGKILL of {victim}"), &rode);
    assert_within(
        &format!("slot {slot}: check started at the SIGKILL of {victim}"),
        t0.elapsed(),
    );
    c.wait_healthy();
    let t1 = Instant::now();
    let after = run("check", &survivors, "f", input);
    assert_all_maybe(&format!("check after {victim}'s replica took over"), &after);
    assert_within(
        &format!("slot {slot}: check after the failover"),
        t1.elapsed(),
    );
    c.restart(victim);
    wait_for("the killed master to rejoin as a replica", || {
        c.role(victim) == "slave"
    });
    c.wait_healthy();
}

/// (b) and (c): SIGSTOP the master of `slot` after the first batch of a check or an add,
/// feed the rest; SIGCONT it after.
fn stopped(c: &RedisCluster, slot: u16, action: &str, name: &str, input: &[u8]) {
    let victim = c.master_of_slot(c.running()[0], slot).expect("a master");
    let seeds = c.seeds();
    let (first, rest) = split(input);
    let mut r = Running::new(bloom(action, &seeds, name));
    r.feed(first);
    if action == "check" {
        // The first batch's rows came out: the check is running.
        r.first_output
            .recv_timeout(Duration::from_secs(60))
            .expect("the first batch's rows");
    } else {
        // The first batch is added when its last step (HINCRBY set:0) is in the metadata;
        // every write of it then reaches the victim's replica before the victim stops.
        let meta = format!("bloom:{{{name}}}:meta");
        wait_for("the add's first batch", || {
            bits_counted(&cli_text(c.running()[0], &["-c", "HGET", &meta, "set:0"]))
        });
        c.wait_replicated(victim);
    }
    c.pause(victim);
    let t0 = Instant::now();
    r.feed(rest);
    let (code, out, err) = r.finish();
    let elapsed = t0.elapsed();
    if action == "check" {
        assert_all_maybe(&format!("check with {victim} stopped"), &(code, out, err));
    } else {
        assert_eq!(code, Some(0), "add with {victim} stopped: {err}");
        let summary: Value = serde_json::from_slice(&out).expect("the add's JSON line");
        assert_eq!(summary["keys"], KEYS, "{summary}");
    }
    assert_within(
        &format!("slot {slot}: {action} with its master {victim} SIGSTOPped"),
        elapsed,
    );
    if action == "add" {
        // Every key is there, the victim still stopped.
        let check = run("check", &seeds, name, input);
        assert_all_maybe(
            &format!("check of the keys added with {victim} stopped"),
            &check,
        );
    }
    c.resume(victim);
    wait_for("the stopped master to rejoin as a replica", || {
        c.role(victim) == "slave"
    });
    c.wait_healthy();
}

#[test]
fn checks_and_adds_ride_each_master_killed_or_hung() {
    let mut c = RedisCluster::start_with_node_timeout(NODE_TIMEOUT_MS);
    refused_without_cluster(&c);
    let input = keys("k");
    let (code, out, err) = run("add", &c.seeds(), "f", &input);
    assert_eq!(code, Some(0), "{err}");
    let summary: Value = serde_json::from_slice(&out).expect("JSON");
    assert_eq!(summary["keys"], KEYS);
    // One slot of each master's range; the metadata's slot is one of them.
    let meta_slot: u16 = cli_text(c.running()[0], &["CLUSTER", "KEYSLOT", "bloom:{f}:meta"])
        .trim()
        .parse()
        .expect("KEYSLOT");
    let masters = c.masters();
    let mut slots = vec![meta_slot];
    for s in [0u16, 8192, 16383] {
        let m = c.master_of_slot(c.running()[0], s);
        if slots
            .iter()
            .all(|&t| c.master_of_slot(c.running()[0], t) != m)
        {
            slots.push(s);
        }
    }
    assert_eq!(slots.len(), 3, "a slot of each of the masters {masters:?}");
    for (i, &slot) in slots.iter().enumerate() {
        let adds = keys(&format!("add{i}"));
        killed(&mut c, slot, &input);
        stopped(&c, slot, "check", "f", &input);
        stopped(&c, slot, "add", &format!("add{i}"), &adds);
    }
}

#[test]
fn a_durable_add_that_stops_says_what_was_acknowledged() {
    let master = RedisServer::start();
    let replica = master.start_replica();
    let url = master.url();
    let input = keys("d");
    let (first, rest) = split(&input);
    let mut r = Running::new(
        Command::new(BIN)
            .args(["bloom", "add", "--redis", &url, "--name", "d"])
            .args(["--capacity", "300000", "--wait-replicas", "1"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run sst"),
    );
    r.feed(first);
    wait_for("the first batch", || {
        bits_counted(&cli_text(master.port, &["HGET", "bloom:{d}:meta", "set:0"]))
    });
    // The replica leaves: the next batch's WAIT gets no replica.
    replica.detach_from(&master);
    r.feed(rest);
    let (code, out, err) = r.finish();
    assert_eq!(code, Some(2), "{err}");
    let line: Value = serde_json::from_slice(&out).expect("a JSON line on stdout");
    assert_eq!(line["complete"], false, "{line}");
    assert_eq!(line["acknowledged"], 65_536, "{line}");
    assert_eq!(line["lines_acknowledged"], 65_536, "{line}");
    // Handed to the filter: the first batch and the one that failed.
    assert_eq!(line["keys"], 2 * 65_536, "{line}");
    assert!(
        err.contains("0 of 1 replicas acknowledged")
            && err.contains("stopped with 65536 keys acknowledged")
            && err.contains("every key of the first 65536 lines"),
        "{err}"
    );
    // What it acknowledged is there.
    let lines: Vec<&[u8]> = input.split(|&b| b == b'\n').take(65_536).collect();
    let out = Command::new(BIN)
        .args(["bloom", "check", "--redis", &url, "--name", "d"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sst");
    let out = feed_all(out, lines.join(&b'\n'));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Feeds `input` on stdin (from a thread, so a full pipe cannot block) and waits. A child
/// that exits before reading all of it (a refusal at once) closes the pipe: that write's
/// broken pipe is no error of the test's when the child failed (the caller asserts on its
/// exit and output); a child that exits 0 must have read everything.
fn feed_all(mut child: Child, input: Vec<u8>) -> Output {
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait for sst");
    match feeder.join().expect("feeder") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe || out.status.success() => {
            panic!("write stdin: {e}")
        }
        _ => {}
    }
    out
}

/// A node of `c` given without `--cluster`: exit 2 at once, with the hint.
fn refused_without_cluster(c: &RedisCluster) {
    let node = format!("redis://127.0.0.1:{}", c.running()[0]);
    for action in ["add", "check", "info"] {
        let t0 = Instant::now();
        let out = feed_all(
            Command::new(BIN)
                .args(["bloom", action, "--redis", &node, "--name", "f"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run sst"),
            b"k\n".to_vec(),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{action}: {err}");
        assert!(
            err.contains("is a Redis Cluster node (INFO says cluster_enabled:1)")
                && err.contains("add --cluster"),
            "{action}: {err}"
        );
        // At once, not after the retry budget (60 s).
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "{action}: {:?}",
            t0.elapsed()
        );
    }
}

#[test]
fn the_io_timeout_and_the_retry_budget_are_the_flags() {
    let sst = |url: &str, flag: &str| {
        let t0 = Instant::now();
        let out = feed_all(
            Command::new(BIN)
                .args(["bloom", "check", "--redis", url, "--name", "f", flag, "300"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run sst"),
            b"k\n".to_vec(),
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{err}");
        // Not the defaults (10 s, 60 s).
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "{flag}: {:?}",
            t0.elapsed()
        );
        err
    };
    // Nothing answered: given up after the I/O timeout.
    let (url, server) = fake_redis::fake_server(|_| None);
    let err = sst(&url, "--io-timeout-ms");
    assert!(err.contains("no reply in 0.3 s (the I/O timeout)"), "{err}");
    server.join().expect("server");
    // Opened, then nothing answered: the check fails when its retry budget runs out.
    let (url, server) = fake_redis::fake_server(|cmd| {
        if fake_redis::is(cmd, b"INFO") {
            Some(fake_redis::NOT_A_CLUSTER.to_vec())
        } else if fake_redis::is(cmd, b"HMGET") {
            Some(fake_redis::FILTER_META.to_vec())
        } else {
            None
        }
    });
    let err = sst(&url, "--retry-budget-ms");
    assert!(
        err.contains("the retry budget ran out") && err.contains("after 0.3 s of retries"),
        "{err}"
    );
    server.join().expect("server");
}
