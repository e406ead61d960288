//! The corpus the end-to-end tests of the subcommands run on: the real LevelDB tables of
//! `testdata/cases` with their expected entries, damaged copies, and running `sst` on them.
//!
//! Values over 64 KiB are listed in the corpus by length and SHA-256 only; they are checked
//! with the `sha2` crate.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::BIN;

/// The repository root (this crate lives in `cli/`).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_path_buf()
}

pub fn case_dir(case: &str) -> PathBuf {
    root().join("testdata/cases").join(case)
}

/// Runs `sst` with `args` (and `stdin`), checks it did not panic and ended with an exit code.
pub fn sst_in(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = assert_cmd::Command::new(BIN);
    cmd.args(args);
    cmd.write_stdin(stdin.unwrap_or_default().to_vec());
    let out = cmd.output().expect("run sst");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("panicked"),
        "sst {args:?} panicked: {stderr}"
    );
    assert!(
        out.status.code().is_some(),
        "sst {args:?} was killed: {:?}",
        out.status
    );
    out
}

pub fn sst(args: &[&str]) -> Output {
    sst_in(args, None)
}

pub fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn jsonl(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

pub fn read_maybe_gz(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

/// One table of the corpus: its `tables.jsonl` row and its entries.
pub struct CorpusTable {
    pub case: String,
    pub path: PathBuf,
    pub meta: Value,
    pub entries: Vec<Value>,
}

pub fn corpus() -> Vec<CorpusTable> {
    let mut out = Vec::new();
    let mut cases: Vec<_> = std::fs::read_dir(root().join("testdata/cases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    cases.sort();
    for case in cases {
        let dir = case_dir(&case);
        for meta in jsonl(&std::fs::read_to_string(dir.join("tables.jsonl")).unwrap()) {
            let entries = jsonl(&read_maybe_gz(
                &dir.join(meta["entries_file"].as_str().unwrap()),
            ));
            out.push(CorpusTable {
                case: case.clone(),
                path: dir.join(meta["file"].as_str().unwrap()),
                meta,
                entries,
            });
        }
    }
    assert!(
        out.len() >= 8,
        "expected the 7 cases / 8 tables of testdata/cases"
    );
    out
}

pub fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The corpus's compression names, in `sst`'s words.
pub fn comp_name(n: &str) -> &str {
    match n {
        "zlib_raw" => "raw-deflate",
        other => other,
    }
}

/// SHA-256 of the corpus's big values (its rows record `value_sha256`), with the `sha2` crate.
pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(data))
}

/// Checks a hex value against a corpus row holding either "value" or "value_len" + "value_sha256".
pub fn assert_value(got_hex: &str, row: &Value, what: &str) {
    if let Some(v) = row["value"].as_str() {
        assert_eq!(got_hex, v, "{what}: value");
    } else {
        let bytes = hex::decode(got_hex).unwrap();
        assert_eq!(
            bytes.len() as u64,
            row["value_len"].as_u64().unwrap(),
            "{what}: value length"
        );
        assert_eq!(
            sha256_hex(&bytes),
            row["value_sha256"].as_str().unwrap(),
            "{what}: value sha256"
        );
    }
}

/// Flips one byte of a copy of `src` at `at`.
pub fn damaged_copy(src: &Path, dir: &Path, name: &str, at: usize, xor: u8) -> PathBuf {
    let mut b = std::fs::read(src).unwrap();
    b[at] ^= xor;
    let out = dir.join(name);
    std::fs::write(&out, b).unwrap();
    out
}

/// What a lookup of each user key of `entries` must answer: the first (newest) version.
pub fn expected_gets(entries: &[Value]) -> Vec<(String, Value)> {
    let mut seen = HashMap::new();
    let mut out = Vec::new();
    for e in entries {
        let ikey = e["ikey"].as_str().unwrap();
        let user = ikey[..ikey.len() - 16].to_string();
        if seen.insert(user.clone(), ()).is_none() {
            out.push((user, e.clone()));
        }
    }
    out
}
