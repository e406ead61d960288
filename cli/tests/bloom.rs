//! `sst bloom add|check|info` against a real `redis-server` started here on a free port, and
//! on local files: the output contract, two processes adding at once, errors.

#[path = "../../bloom/tests/redis_cluster/mod.rs"]
mod redis_cluster;
#[path = "../../bloom/tests/redis_server/mod.rs"]
mod redis_server;

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};

use redis_cluster::RedisCluster;
use redis_server::RedisServer;
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_sst");

fn spawn(args: &[&str]) -> Child {
    Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sst")
}

/// Feeds `input` on stdin (from a thread, so a full pipe cannot block) and waits.
fn finish(mut child: Child, input: Vec<u8>) -> Output {
    let mut stdin = child.stdin.take().expect("stdin");
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait for sst");
    // sst may end without reading all of its input (an error before the first key): a
    // closed pipe on our side is then expected, any other write error is not.
    match feeder.join().expect("feeder") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("write stdin: {e}"),
        _ => {}
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "sst panicked: {stderr}");
    out
}

fn sst(args: &[&str], input: &[u8]) -> Output {
    finish(spawn(args), input.to_vec())
}

fn lines(keys: &[String]) -> Vec<u8> {
    keys.iter()
        .flat_map(|k| format!("{k}\n").into_bytes())
        .collect()
}

fn json(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn jsonl(out: &Output) -> Vec<Value> {
    out.stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a JSON line"))
        .collect()
}

#[test]
fn two_processes_adding_at_once_lose_no_key() {
    let server = RedisServer::start();
    two_processes_adding_at_once(&[&server.url()]);
}

#[test]
fn two_processes_adding_at_once_on_a_cluster_lose_no_key() {
    let cluster = RedisCluster::start();
    let seeds = cluster.seeds();
    // One waits for a replica of every master it writes to, the other does not.
    two_processes_adding_at_once(&[&seeds, "--cluster", "--bitmap-bits", "4096"]);
    let keys: usize = cluster
        .masters()
        .iter()
        .map(|&p| cluster.keys_on(p, "bloom:shared:*").len())
        .sum();
    assert!(keys > 3, "the bitmaps spread over the cluster: {keys}");
}

#[test]
fn add_check_info_contract_on_a_cluster() {
    let cluster = RedisCluster::start();
    let seeds = cluster.seeds();
    contract(&["--redis", &seeds, "--cluster", "--name", "contract"]);
    contract(&[
        "--redis",
        &seeds,
        "--cluster",
        "--name",
        "durable",
        "--wait-replicas",
        "1",
    ]);
    // Several URLs are a cluster: without --cluster, a usage error.
    let out = sst(
        &["bloom", "info", "--redis", &seeds, "--name", "contract"],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("add --cluster"), "{err}");
    // Asking for more replicas than the cluster has: refused, not reported added.
    let out = sst(
        &[
            "bloom",
            "add",
            "--redis",
            &seeds,
            "--cluster",
            "--name",
            "contract",
            "--wait-replicas",
            "2",
            "--wait-timeout-ms",
            "100",
        ],
        b"new-key\n",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 of 2 replicas acknowledged"), "{err}");
}

fn two_processes_adding_at_once(target: &[&str]) {
    let mut args = vec!["bloom", "add", "--redis"];
    args.extend_from_slice(target);
    args.extend_from_slice(&["--name", "shared", "--capacity", "500"]);
    let mut waiting = args.clone();
    if target.contains(&"--cluster") {
        waiting.extend_from_slice(&["--wait-replicas", "1"]);
    }
    let a: Vec<String> = (0..10_000).map(|i| format!("a-{i}")).collect();
    let b: Vec<String> = (0..10_000).map(|i| format!("b-{i}")).collect();
    // Both processes are running before either gets its keys.
    let (pa, pb) = (spawn(&args), spawn(&waiting));
    let (la, lb) = (lines(&a), lines(&b));
    let ta = std::thread::spawn(move || finish(pa, la));
    let tb = std::thread::spawn(move || finish(pb, lb));
    for out in [ta.join().unwrap(), tb.join().unwrap()] {
        let s = json(&out);
        assert_eq!(s["keys"], 10_000);
        assert_eq!(s["name"], "shared");
    }
    let all: Vec<String> = a.into_iter().chain(b).collect();
    let mut check = vec!["bloom", "check", "--redis"];
    check.extend_from_slice(target);
    check.extend_from_slice(&["--name", "shared", "--format", "jsonl"]);
    let out = sst(&check, &lines(&all));
    assert_eq!(out.status.code(), Some(0), "every key may be present");
    let rows = jsonl(&out);
    assert_eq!(rows.len(), all.len());
    for (row, key) in rows.iter().zip(&all) {
        assert_eq!(row["key"], key.as_str(), "input order");
        assert_eq!(row["maybe"], true, "false negative for {key}");
    }
    let mut info = vec!["bloom", "info", "--redis"];
    info.extend_from_slice(target);
    info.extend_from_slice(&["--name", "shared"]);
    let info = json(&sst(&info, b""));
    let layers = info["layers"].as_array().unwrap();
    assert!(layers.len() >= 5, "20000 keys from 500: {info}");
    assert_eq!(info["store"], "redis");
}

/// The same contract on Redis and on a file.
fn contract(target: &[&str]) {
    let with = |cmd: &str, extra: &[&str]| -> Vec<String> {
        let mut v = vec!["bloom".to_string(), cmd.to_string()];
        v.extend(target.iter().map(|s| s.to_string()));
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |args: Vec<String>, input: &[u8]| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        sst(&refs, input)
    };
    // Checking or describing a filter that does not exist yet is an error (exit 2).
    let out = run(with("check", &[]), b"x\n");
    assert_eq!(out.status.code(), Some(2));
    let out = run(with("info", &[]), b"");
    assert_eq!(out.status.code(), Some(2));

    let s = json(&run(
        with("add", &["--capacity", "100", "--fp-rate", "0.01"]),
        b"apple\nbanana\napple\n",
    ));
    assert_eq!(
        (s["keys"].clone(), s["added"].clone(), s["present"].clone()),
        (3.into(), 2.into(), 1.into())
    );
    assert_eq!(s["layers"], 1);
    // Raw bytes of the line, or hex with --hex ("cherry" = 636865727279).
    let s = json(&run(with("add", &["--hex"]), b"636865727279\n00ff\n"));
    assert_eq!(s["added"], 2);

    let out = run(
        with("check", &["--format", "jsonl"]),
        b"apple\ncherry\nzebra-not-there\n",
    );
    assert_eq!(out.status.code(), Some(1), "some key is absent");
    let rows = jsonl(&out);
    let got: Vec<(String, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_string(),
                r["maybe"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("apple".into(), true),
            ("cherry".into(), true),
            ("zebra-not-there".into(), false)
        ]
    );
    let out = run(with("check", &["--hex", "--format", "jsonl"]), b"00FF\n");
    assert_eq!(jsonl(&out)[0]["key"], "00ff");
    assert_eq!(jsonl(&out)[0]["maybe"], true);
    let out = run(with("check", &["--hex"]), b"0g\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));

    let info = json(&run(with("info", &[]), b""));
    assert_eq!(info["capacity"], 100);
    assert_eq!(info["fp_rate"], 0.01);
    assert_eq!(info["growth"], 2);
    assert_eq!(info["ratio"], 0.5);
    assert_eq!(info["items"], 4);
    let layer = &info["layers"][0];
    assert_eq!(layer["items"], 4);
    let fill = layer["fill"].as_f64().unwrap();
    let k = layer["k"].as_u64().unwrap();
    assert!(fill > 0.0 && fill < 0.1, "{info}");
    let est = info["estimated_fp_rate"].as_f64().unwrap();
    assert!((est - fill.powi(k as i32)).abs() < 1e-12, "{info}");

    // Other parameters than the stored ones: a clear error.
    let out = run(with("add", &["--capacity", "200"]), b"x\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("exists with capacity 100, not 200"), "{err}");
}

#[test]
fn add_check_info_contract_on_redis() {
    let server = RedisServer::start();
    contract(&["--redis", &server.url(), "--name", "contract"]);
}

#[test]
fn add_check_info_contract_on_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bloom");
    contract(&["--file", path.to_str().unwrap()]);
}

#[test]
fn unreachable_redis_is_exit_2_naming_the_command() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}/");
    let out = sst(&["bloom", "add", "--redis", &url, "--name", "x"], b"k\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("redis connect on 127.0.0.1:{port} failed")),
        "{err}"
    );
}

/// A check of several batches (taken in turn by the checkers, each with its own connection)
/// answers every key in input order: the added keys `maybe`, the others mostly `absent`; the
/// same in text, JSON lines and hex.
#[test]
fn checks_of_many_batches_answer_in_input_order() {
    let server = RedisServer::start();
    let url = server.url();
    let target = ["--redis", url.as_str(), "--name", "order"];
    let keys: Vec<String> = (0..300_000).map(|i| format!("order:{i:07}")).collect();
    let added: Vec<String> = keys.iter().step_by(2).cloned().collect();
    let mut args = vec!["bloom", "add"];
    args.extend(target);
    args.extend(["--capacity", "500000"]);
    // A new key whose bits were all set already (a false positive) counts as present.
    let s = json(&sst(&args, &lines(&added)));
    assert_eq!(s["keys"], 150_000);
    assert!(s["added"].as_u64().unwrap() > 149_000, "{s}");

    let check = |extra: &[&str], input: Vec<u8>| -> Output {
        let mut args = vec!["bloom", "check"];
        args.extend(target);
        args.extend(extra);
        let out = finish(spawn(&args), input);
        assert_eq!(out.status.code(), Some(1), "some keys are absent");
        out
    };
    let text = check(&[], lines(&keys));
    let rows: Vec<&[u8]> = text.stdout.split(|&b| b == b'\n').collect();
    assert_eq!(rows.len(), keys.len() + 1);
    let mut false_positives = 0;
    for (i, (row, key)) in rows.iter().zip(&keys).enumerate() {
        let absent = format!("absent\t'{key}'");
        if i % 2 == 0 || row != &absent.as_bytes() {
            assert_eq!(*row, format!("maybe\t'{key}'").as_bytes(), "row {i}");
        }
        false_positives += usize::from(i % 2 == 1 && row.starts_with(b"maybe"));
    }
    assert!(false_positives < 150_000 / 50, "{false_positives}");

    let rows = jsonl(&check(&["--format", "jsonl"], lines(&keys)));
    assert_eq!(rows.len(), keys.len());
    let hex: Vec<String> = keys.iter().map(hex::encode).collect();
    let hex_rows = jsonl(&check(&["--hex", "--format", "jsonl"], lines(&hex)));
    for (i, key) in keys.iter().enumerate() {
        assert_eq!(rows[i]["key"], key.as_str(), "row {i}");
        assert_eq!(hex_rows[i]["key"], hex[i].as_str(), "row {i}");
        assert_eq!(rows[i]["maybe"], hex_rows[i]["maybe"], "row {i}");
        if i % 2 == 0 {
            assert_eq!(rows[i]["maybe"], true, "row {i}");
        }
    }
}
