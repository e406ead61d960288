//! Helpers shared by the integration tests: the real-LevelDB corpus in `testdata/cases/`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// `testdata/` of this crate.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata")
}

/// Names of the corpus cases.
pub fn case_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(testdata().join("cases"))
        .expect("testdata/cases exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Reads a JSONL file, transparently gunzipping `.gz`.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader: Box<dyn Read> = if path.extension().is_some_and(|e| e == "gz") {
        Box::new(flate2::read::GzDecoder::new(file))
    } else {
        Box::new(file)
    };
    BufReader::new(reader)
        .lines()
        .map(|l| l.unwrap())
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(&l).unwrap())
        .collect()
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn unhex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().expect("hex string")).expect("valid hex")
}

/// An expected value: exact bytes, or (for values over 64 KiB) length + sha256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExpectedValue {
    Bytes(Vec<u8>),
    Digest { len: u64, sha256: String },
}

impl ExpectedValue {
    pub fn from_row(row: &Value) -> ExpectedValue {
        match row.get("value") {
            Some(v) => ExpectedValue::Bytes(unhex(v)),
            None => ExpectedValue::Digest {
                len: row["value_len"].as_u64().expect("value_len"),
                sha256: row["value_sha256"]
                    .as_str()
                    .expect("value_sha256")
                    .to_string(),
            },
        }
    }

    pub fn matches(&self, got: &[u8]) -> bool {
        match self {
            ExpectedValue::Bytes(b) => b == got,
            ExpectedValue::Digest { len, sha256 } => {
                got.len() as u64 == *len && hex::encode(Sha256::digest(got)) == *sha256
            }
        }
    }
}

/// One raw internal entry of a corpus table.
#[derive(Debug, Clone)]
pub struct Entry {
    pub ikey: Vec<u8>,
    pub seq: u64,
    pub kind: u8,
    pub value: ExpectedValue,
}

impl Entry {
    pub fn user_key(&self) -> &[u8] {
        &self.ikey[..self.ikey.len() - 8]
    }
}

/// A table of a case with its expected entries and its `tables.jsonl` row.
pub struct CaseTable {
    pub path: PathBuf,
    pub entries: Vec<Entry>,
    pub meta: Value,
}

pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub info: Value,
    pub tables: Vec<CaseTable>,
}

pub fn load_case(name: &str) -> Case {
    let dir = testdata().join("cases").join(name);
    let info = read_json(&dir.join("case.json"));
    let metas = read_jsonl(&dir.join("tables.jsonl"));
    let tables = metas
        .into_iter()
        .map(|meta| {
            let path = dir.join(meta["file"].as_str().unwrap());
            let entries = read_jsonl(&dir.join(meta["entries_file"].as_str().unwrap()))
                .iter()
                .map(|r| Entry {
                    ikey: unhex(&r["ikey"]),
                    seq: r["seq"].as_u64().unwrap(),
                    kind: r["type"].as_u64().unwrap() as u8,
                    value: ExpectedValue::from_row(r),
                })
                .collect();
            CaseTable {
                path,
                entries,
                meta,
            }
        })
        .collect();
    Case {
        name: name.to_string(),
        dir,
        info,
        tables,
    }
}

impl Case {
    /// `gets.jsonl`: (user key, expected value if found).
    pub fn gets(&self) -> Vec<(Vec<u8>, Option<ExpectedValue>)> {
        let name = self.info["files"]["gets"].as_str().unwrap_or("gets.jsonl");
        read_jsonl(&self.dir.join(name))
            .iter()
            .map(|r| {
                let found = r["found"].as_bool().unwrap();
                (unhex(&r["key"]), found.then(|| ExpectedValue::from_row(r)))
            })
            .collect()
    }
}

/// `len` bytes of letters whose second half repeats the first, different for each `seed`:
/// snappy keeps blocks of such values compressed (about half their size), as LevelDB's
/// db_bench values.
pub fn half_compressible(seed: usize, len: usize) -> Vec<u8> {
    let mut x = (seed as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let half: Vec<u8> = (0..len / 2)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b'a' + (x % 26) as u8
        })
        .collect();
    let mut v = [half.clone(), half].concat();
    v.resize(len, b'.');
    v
}
