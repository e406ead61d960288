//! `sst bloom add|remove|check|info --counting --file F` against a model (a multiset of keys):
//! random sequences of adds and removes, checked after every step. A key still present is
//! never absent; removing a key that is not there is reported (exit 1, counted, named on
//! stderr) and leaves the file byte for byte as it was.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_sst");

fn sst(args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run sst");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait for sst");
    let _ = feeder.join();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn summary(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn lines(keys: &[String]) -> Vec<u8> {
    keys.iter()
        .flat_map(|k| format!("{k}\n").into_bytes())
        .collect()
}

/// xorshift64*: a fixed-seed generator, so a failure replays.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn random_add_remove_sequences_agree_with_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.counting");
    let file = path.to_str().unwrap();
    let target = ["--counting", "--file", file];
    let with = |cmd: &'static str, extra: &[&'static str]| -> Vec<&str> {
        let mut v = vec!["bloom", cmd];
        v.extend_from_slice(&target);
        v.extend_from_slice(extra);
        v
    };
    // Sized so that false positives are negligible for the ~600 keys used: a refused
    // removal is then always the model's "not there".
    let sizing = ["--capacity", "20000", "--fp-rate", "0.0001"];
    let mut model: HashMap<String, u32> = HashMap::new();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let universe: Vec<String> = (0..600).map(|i| format!("key-{i}")).collect();
    for step in 0..24 {
        let n = 1 + rng.below(60) as usize;
        let batch: Vec<String> = (0..n)
            .map(|_| universe[rng.below(universe.len() as u64) as usize].clone())
            .collect();
        if step < 3 || rng.below(3) != 0 {
            let out = sst(&with("add", &sizing), &lines(&batch));
            assert_eq!(out.status.code(), Some(0), "step {step}");
            let s = summary(&out);
            assert_eq!(s["keys"], n);
            for k in &batch {
                *model.entry(k.clone()).or_default() += 1;
            }
        } else {
            // Removals, one at a time in input order, as the model applies them.
            let before = std::fs::read(&path).unwrap();
            let (mut removed, mut absent) = (0u64, 0u64);
            for k in &batch {
                match model.get_mut(k) {
                    Some(c) if *c > 0 => {
                        *c -= 1;
                        removed += 1;
                    }
                    _ => absent += 1,
                }
            }
            let out = sst(&with("remove", &[]), &lines(&batch));
            let s = summary(&out);
            assert_eq!(
                (s["removed"].as_u64(), s["absent"].as_u64()),
                (Some(removed), Some(absent)),
                "step {step}: {s}"
            );
            assert_eq!(
                out.status.code(),
                Some(if absent == 0 { 0 } else { 1 }),
                "step {step}"
            );
            if absent > 0 {
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(err.contains("is not in the filter"), "{err}");
            }
            if removed == 0 {
                assert_eq!(std::fs::read(&path).unwrap(), before, "nothing changed");
            }
        }
        // Every key still present answers maybe; the others (almost all) absent.
        let out = sst(&with("check", &["--format", "jsonl"]), &lines(&universe));
        let rows: Vec<Value> = out
            .stdout
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).unwrap())
            .collect();
        assert_eq!(rows.len(), universe.len());
        let mut false_positives = 0;
        for (row, key) in rows.iter().zip(&universe) {
            assert_eq!(row["key"], key.as_str());
            let present = model.get(key).copied().unwrap_or(0) > 0;
            if present {
                assert_eq!(row["maybe"], true, "step {step}: false negative for {key}");
            } else if row["maybe"] == true {
                false_positives += 1;
            }
        }
        assert!(false_positives <= 1, "step {step}: {false_positives}");
    }
    let info = summary(&sst(&with("info", &[]), b""));
    assert_eq!(info["kind"], "counting");
    assert_eq!(info["capacity"], 20000);
    assert_eq!(info["fp_rate"], 0.0001);
    assert_eq!(info["saturated"], 0);
    assert!(info["nonzero"].as_u64().unwrap() > 0);
}

#[test]
fn counting_usage_and_file_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c");
    let file = path.to_str().unwrap();
    // Removing from, checking or describing a filter that does not exist: exit 2.
    for cmd in ["remove", "check", "info"] {
        let out = sst(&["bloom", cmd, "--counting", "--file", file], b"x\n");
        assert_eq!(out.status.code(), Some(2), "{cmd}");
    }
    // remove needs a counting filter.
    let out = sst(&["bloom", "remove", "--file", file], b"x\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--counting"));
    // --counting needs --file.
    let out = sst(
        &[
            "bloom",
            "add",
            "--counting",
            "--redis",
            "redis://x",
            "--name",
            "n",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    // A scalable filter file is not a counting one: a clear error, exit 2.
    let out = sst(&["bloom", "add", "--file", file], b"a\n");
    assert_eq!(out.status.code(), Some(0));
    let out = sst(&["bloom", "check", "--counting", "--file", file], b"a\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not an sst counting bloom filter"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Other parameters than the stored ones.
    let path = dir.path().join("d");
    let file = path.to_str().unwrap();
    let out = sst(
        &[
            "bloom",
            "add",
            "--counting",
            "--file",
            file,
            "--capacity",
            "50",
        ],
        b"a\n",
    );
    assert_eq!(out.status.code(), Some(0));
    let out = sst(
        &[
            "bloom",
            "add",
            "--counting",
            "--file",
            file,
            "--capacity",
            "60",
        ],
        b"b\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exists with capacity 50, not 60"));
}
