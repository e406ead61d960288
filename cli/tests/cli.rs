//! End-to-end tests of the `sst` binary on the real LevelDB tables of `testdata/cases`, on the
//! damaged copies of `testdata/corrupt`, and on damaged copies made here.
//!
//! Values over 64 KiB are listed in the corpus by length and SHA-256 only; they are checked
//! with the small SHA-256 below.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_sst");

/// The repository root (this crate lives in `cli/`).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cli/ has a parent")
        .to_path_buf()
}

fn case_dir(case: &str) -> PathBuf {
    root().join("testdata/cases").join(case)
}

/// Runs `sst` with `args` (and `stdin`), checks it did not panic and ended with an exit code.
fn sst_in(args: &[&str], stdin: Option<&[u8]>) -> Output {
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

fn sst(args: &[&str]) -> Output {
    sst_in(args, None)
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn jsonl(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

fn read_maybe_gz(path: &Path) -> String {
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
struct CorpusTable {
    case: String,
    path: PathBuf,
    meta: Value,
    entries: Vec<Value>,
}

fn corpus() -> Vec<CorpusTable> {
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

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The corpus's compression names, in `sst`'s words.
fn comp_name(n: &str) -> &str {
    match n {
        "zlib_raw" => "raw-deflate",
        other => other,
    }
}

/// SHA-256 of the corpus's big values (its rows record `value_sha256`), with the `sha2` crate.
fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(data))
}

/// Checks a hex value against a corpus row holding either "value" or "value_len" + "value_sha256".
fn assert_value(got_hex: &str, row: &Value, what: &str) {
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

// ---------------------------------------------------------------------------------------
// LevelDB's Hash, for checking `sst filter`'s probes independently.

fn leveldb_hash(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0xc6a4a793;
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        h = h
            .wrapping_add(u32::from_le_bytes(c.try_into().unwrap()))
            .wrapping_mul(M);
        h ^= h >> 16;
    }
    let t = chunks.remainder();
    if !t.is_empty() {
        if t.len() == 3 {
            h = h.wrapping_add(u32::from(t[2]) << 16);
        }
        if t.len() >= 2 {
            h = h.wrapping_add(u32::from(t[1]) << 8);
        }
        h = h.wrapping_add(u32::from(t[0])).wrapping_mul(M);
        h ^= h >> 24;
    }
    h
}

// ---------------------------------------------------------------------------------------
// Global behaviour.

#[test]
fn version_help_and_examples() {
    let o = sst(&["--version"]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        stdout(&o).trim(),
        format!("sst {}", env!("CARGO_PKG_VERSION"))
    );

    let o = sst(&["--help"]);
    assert_eq!(code(&o), 0);
    let help = stdout(&o);
    assert!(help.contains("Exit codes:"), "{help}");
    for line in ["  0  success", "  1  corruption", "  2  usage error"] {
        assert!(help.contains(line), "missing {line:?} in {help}");
    }
    for cmd in [
        "scan", "get", "verify", "stats", "blocks", "filter", "build",
    ] {
        assert!(help.contains(cmd), "{cmd} not in help");
        let o = sst(&[cmd, "--help"]);
        assert_eq!(code(&o), 0, "{cmd} --help");
        let h = stdout(&o);
        assert!(h.contains("Examples:"), "{cmd} --help has no examples: {h}");
        assert!(
            h.contains(&format!("sst {cmd} ")),
            "{cmd} --help examples do not run {cmd}"
        );
    }

    // Usage errors exit 2.
    assert_eq!(code(&sst(&[])), 2);
    assert_eq!(code(&sst(&["scan"])), 2);
    assert_eq!(code(&sst(&["frobnicate"])), 2);
    assert_eq!(code(&sst(&["scan", "x.ldb", "--format", "xml"])), 2);
    let small = case_dir("small_snappy").join("000005.ldb");
    let o = sst(&["scan", p(&small), "--hex", "--from", "zz"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("--from"), "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------
// scan

fn internal_rows_equal(got: &[Value], want: &[Value], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: number of entries");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ikey = w["ikey"].as_str().unwrap();
        let what = format!("{what}: entry {i}");
        assert_eq!(g["key"].as_str().unwrap(), ikey, "{what}: key");
        assert_eq!(
            g["user_key"].as_str().unwrap(),
            &ikey[..ikey.len() - 16],
            "{what}: user_key"
        );
        assert_eq!(g["seq"], w["seq"], "{what}: seq");
        let kind = if w["type"] == 1 { "value" } else { "deletion" };
        assert_eq!(g["kind"], kind, "{what}: kind");
        assert_value(g["value"].as_str().unwrap(), w, &what);
        let fields: Vec<&String> = g.as_object().unwrap().keys().collect();
        assert_eq!(fields.len(), 5, "{what}: fields {fields:?}");
    }
}

#[test]
fn scan_jsonl_equals_corpus_entries() {
    for t in corpus() {
        let o = sst(&["scan", p(&t.path), "--format", "jsonl"]);
        assert_eq!(code(&o), 0, "{}: {}", t.path.display(), stderr(&o));
        assert!(o.stderr.is_empty());
        let got = jsonl(&stdout(&o));
        internal_rows_equal(&got, &t.entries, &t.path.display().to_string());

        let o = sst(&["scan", p(&t.path), "--format", "jsonl", "--reverse"]);
        assert_eq!(code(&o), 0);
        let mut rev = jsonl(&stdout(&o));
        rev.reverse();
        assert_eq!(
            rev,
            got,
            "{}: --reverse is the scan reversed",
            t.path.display()
        );

        // --keys internal gives the same; --keys plain drops the internal fields.
        let o = sst(&[
            "scan",
            p(&t.path),
            "--format",
            "jsonl",
            "--keys",
            "internal",
            "--limit",
            "3",
        ]);
        assert_eq!(jsonl(&stdout(&o)), got[..got.len().min(3)]);
        let o = sst(&[
            "--keys",
            "plain",
            "scan",
            p(&t.path),
            "--format",
            "jsonl",
            "--limit",
            "3",
        ]);
        for (g, w) in jsonl(&stdout(&o)).iter().zip(&got) {
            assert_eq!(g["key"], w["key"]);
            assert_eq!(g["value"], w["value"]);
            assert!(g.get("seq").is_none());
        }
    }
}

#[test]
fn scan_ranges_limits_and_text() {
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "small_snappy")
        .unwrap();
    let file = p(&t.path);
    let user = |r: &Value| {
        let k = r["ikey"].as_str().unwrap();
        hex::decode(&k[..k.len() - 16]).unwrap()
    };
    let keys: Vec<Vec<u8>> = t.entries.iter().map(user).collect();
    let scan_keys = |args: &[&str]| -> Vec<Vec<u8>> {
        let mut a = vec!["scan", file, "--format", "jsonl"];
        a.extend_from_slice(args);
        let o = sst(&a);
        assert_eq!(code(&o), 0, "{args:?}: {}", stderr(&o));
        jsonl(&stdout(&o))
            .iter()
            .map(|r| hex::decode(r["user_key"].as_str().unwrap()).unwrap())
            .collect()
    };
    let from = b"key-0010".to_vec();
    let to = b"key-0020".to_vec();
    let want: Vec<Vec<u8>> = keys
        .iter()
        .filter(|k| **k >= from && **k < to)
        .cloned()
        .collect();
    assert!(want.len() >= 10);
    assert_eq!(scan_keys(&["--from", "key-0010", "--to", "key-0020"]), want);
    assert_eq!(
        scan_keys(&[
            "--from",
            "6b65792d30303130",
            "--to",
            "6b65792d30303230",
            "--hex"
        ]),
        want
    );
    let mut rev = want.clone();
    rev.reverse();
    assert_eq!(
        scan_keys(&["--from", "key-0010", "--to", "key-0020", "--reverse"]),
        rev
    );
    assert_eq!(
        scan_keys(&[
            "--from",
            "key-0010",
            "--to",
            "key-0020",
            "--reverse",
            "--limit",
            "2"
        ]),
        rev[..2]
    );
    assert_eq!(
        scan_keys(&["--from", "key-0010", "--limit", "3"]),
        want[..3]
    );
    // --from between keys, --to past the end, empty ranges.
    let tail: Vec<Vec<u8>> = keys
        .iter()
        .filter(|k| k.as_slice() >= b"key-0195!".as_slice())
        .cloned()
        .collect();
    assert_eq!(scan_keys(&["--from", "key-0195!", "--to", "zzz"]), tail);
    assert_eq!(
        scan_keys(&["--reverse", "--to", "key-0000"]),
        Vec::<Vec<u8>>::new()
    );
    assert_eq!(scan_keys(&["--from", "zzz"]), Vec::<Vec<u8>>::new());
    assert_eq!(
        scan_keys(&["--from", "key-0020", "--to", "key-0010"]),
        Vec::<Vec<u8>>::new()
    );
    assert_eq!(scan_keys(&["--limit", "0"]), Vec::<Vec<u8>>::new());

    // Text: leveldbutil's form.
    let o = sst(&["scan", file, "--limit", "2"]);
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[1], "'key-0001' @ 2 : val => 'v1:filter of alpha alpha '",
        "text line: {text}"
    );
    assert!(lines[0].starts_with("'key-0000/a' @ 1 : val => 'v0:"));
    let o = sst(&[
        "scan",
        file,
        "--limit",
        "1",
        "--hex",
        "--from",
        "6b65792d30303031",
    ]);
    assert_eq!(
        stdout(&o),
        "6b65792d30303031 @ 2 : val => 76313a66696c746572206f6620616c70686120616c70686120\n"
    );

    // Deletions, escaping.
    let m = case_dir("mojang_zlib").join("000009.ldb");
    let o = sst(&["scan", p(&m)]);
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    let dels: Vec<&str> = text.lines().filter(|l| l.contains(" : del => ")).collect();
    assert_eq!(dels.len(), 200);
    assert!(
        dels.iter().all(|l| l.ends_with(" : del => ''")),
        "{:?}",
        dels[0]
    );
    let big = case_dir("bigvalues").join("000005.ldb");
    let o = sst(&["scan", p(&big), "--limit", "1"]);
    assert_eq!(stdout(&o), "'' @ 1 : val => 'value of the empty key'\n");
}

#[test]
fn scan_plain_table_and_escaping() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plain.ldb");
    let input = "{\"key\":\"00\",\"value\":\"27\"}\n{\"key\":\"615c27\",\"value\":\"ff0a\"}\n{\"key\":\"62\",\"value\":\"\"}\n";
    let o = sst_in(
        &["build", p(&out), "--from", "-", "--keys", "plain"],
        Some(input.as_bytes()),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let o = sst(&["scan", p(&out)]);
    assert_eq!(
        stdout(&o),
        "'\\x00' => '\\''\n'a\\\\\\'' => '\\xff\\x0a'\n'b' => ''\n"
    );
    let o = sst(&["scan", p(&out), "--format", "jsonl"]);
    assert_eq!(stdout(&o), input);
    let o = sst(&[
        "scan",
        p(&out),
        "--format",
        "jsonl",
        "--from",
        "a",
        "--to",
        "b",
    ]);
    assert_eq!(jsonl(&stdout(&o)).len(), 1);
    let o = sst(&["scan", p(&out), "--reverse", "--hex"]);
    assert_eq!(stdout(&o), "62 => \n615c27 => ff0a\n00 => 27\n");
}

/// Flips one byte of a copy of `src` at `at`.
fn damaged_copy(src: &Path, dir: &Path, name: &str, at: usize, xor: u8) -> PathBuf {
    let mut b = std::fs::read(src).unwrap();
    b[at] ^= xor;
    let out = dir.join(name);
    std::fs::write(&out, b).unwrap();
    out
}

#[test]
fn scan_stops_at_corruption_with_what_was_read() {
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "nocompress_bloom")
        .unwrap();
    let blocks = t.meta["data_blocks"].as_array().unwrap();
    // Damage data block 5 (its first byte): blocks 0..5 are printed, then the error.
    let off = blocks[5][0].as_u64().unwrap();
    let before: u64 = blocks[..5].iter().map(|b| b[3].as_u64().unwrap()).sum();
    let dir = tempfile::tempdir().unwrap();
    let bad = damaged_copy(&t.path, dir.path(), "bad.ldb", off as usize + 3, 0x10);
    let o = sst(&["scan", p(&bad), "--format", "jsonl"]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    let got = jsonl(&stdout(&o));
    assert_eq!(got.len() as u64, before);
    internal_rows_equal(
        &got,
        &t.entries[..before as usize],
        "entries before the damage",
    );
    let err = stderr(&o);
    assert!(
        err.contains(p(&bad)) && err.contains(&format!("offset {off}")),
        "{err}"
    );
    assert!(err.contains("checksum mismatch"), "{err}");
    // Without checksums, the scan goes on (the entry decodes with a changed byte).
    let o = sst(&["scan", p(&bad), "--format", "jsonl", "--no-verify"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(jsonl(&stdout(&o)).len(), t.entries.len());
    // Reverse: the blocks after the damage, then the error.
    let o = sst(&["scan", p(&bad), "--format", "jsonl", "--reverse"]);
    assert_eq!(code(&o), 1);
    let after: u64 = blocks[6..].iter().map(|b| b[3].as_u64().unwrap()).sum();
    assert_eq!(jsonl(&stdout(&o)).len() as u64, after);

    // The corpus's bit-flipped table: nothing before the damaged block 0.
    let flip = root().join("testdata/corrupt/data_block_bitflip_nocompress.ldb");
    let o = sst(&["scan", p(&flip), "--format", "jsonl"]);
    assert_eq!(code(&o), 1);
    assert_eq!(stdout(&o), "");
    assert!(
        stderr(&o).contains("offset 0: block checksum mismatch"),
        "{}",
        stderr(&o)
    );
    let o = sst(&[
        "scan",
        p(&flip),
        "--format",
        "jsonl",
        "--no-verify",
        "--limit",
        "1",
    ]);
    assert_eq!(code(&o), 0);
    assert_eq!(jsonl(&stdout(&o))[0]["value"], "103a64622061");
}

// ---------------------------------------------------------------------------------------
// stats and blocks

#[test]
fn stats_equal_tables_jsonl() {
    for t in corpus() {
        let m = &t.meta;
        let o = sst(&["stats", p(&t.path), "--format", "json"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let s: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let what = t.path.display().to_string();
        assert_eq!(s["entries"], m["num_entries"], "{what}");
        assert_eq!(s["data_blocks"], m["num_data_blocks"], "{what}");
        assert_eq!(s["file_bytes"], m["size"], "{what}");
        assert_eq!(s["internal_keys"], true);
        let comp: BTreeMap<String, u64> = s["compression"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v["blocks"].as_u64().unwrap()))
            .collect();
        let want: BTreeMap<String, u64> = m["data_block_compression"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (comp_name(k).to_string(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(comp, want, "{what}: compression");
        let stored: u64 = m["data_blocks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b[1].as_u64().unwrap())
            .sum();
        assert_eq!(s["data_stored_bytes"], stored, "{what}");
        assert_eq!(s["index"]["entries"], m["index_entries"], "{what}");
        assert_eq!(
            s["index"]["compression"],
            comp_name(m["index_block_compression"].as_str().unwrap())
        );
        assert_eq!(s["metaindex"], m["metaindex_keys"], "{what}");
        assert_eq!(s["footer"]["metaindex"]["offset"], m["metaindex_handle"][0]);
        assert_eq!(s["footer"]["metaindex"]["size"], m["metaindex_handle"][1]);
        assert_eq!(s["footer"]["index"]["offset"], m["index_handle"][0]);
        assert_eq!(s["footer"]["index"]["size"], m["index_handle"][1]);
        assert_eq!(s["smallest_key"], m["smallest_ikey"], "{what}");
        assert_eq!(s["largest_key"], m["largest_ikey"], "{what}");
        assert_eq!(s["deletions"], m["num_deletions"], "{what}");
        assert_eq!(s["user_keys"], m["num_distinct_user_keys"], "{what}");
        assert_eq!(s["seq_min"], m["seq_range"][0], "{what}");
        assert_eq!(s["seq_max"], m["seq_range"][1], "{what}");
        let key_bytes: u64 = t
            .entries
            .iter()
            .map(|e| e["ikey"].as_str().unwrap().len() as u64 / 2)
            .sum();
        let value_bytes: u64 = t
            .entries
            .iter()
            .map(|e| {
                e["value"]
                    .as_str()
                    .map_or_else(|| e["value_len"].as_u64().unwrap(), |v| v.len() as u64 / 2)
            })
            .sum();
        assert_eq!(s["raw_key_bytes"], key_bytes, "{what}");
        assert_eq!(s["raw_value_bytes"], value_bytes, "{what}");
        let f = &s["filter"];
        if m["filter"].is_null() {
            assert!(f.is_null(), "{what}: filter {f}");
            continue;
        }
        let mf = &m["filter"];
        assert_eq!(f["policy"], mf["policy"], "{what}");
        assert_eq!(f["filters"], mf["num_filters"], "{what}");
        assert_eq!(
            f["filters"].as_u64().unwrap() - f["empty_filters"].as_u64().unwrap(),
            mf["num_nonempty_filters"].as_u64().unwrap(),
            "{what}: non-empty filters"
        );
        assert_eq!(f["k_values"], mf["probes_k"], "{what}");
        assert_eq!(f["k"], mf["probes_k"][0], "{what}");
        assert_eq!(f["base_lg"], mf["base_lg"], "{what}");
        assert_eq!(f["bits_per_key_setting"], mf["bits_per_key"], "{what}");
        // Measured bits per key: at least the setting; under setting + 1 unless some filter
        // is so small that LevelDB's 64-bit minimum applies.
        let bpk = f["bits_per_key"].as_f64().unwrap();
        let set = mf["bits_per_key"].as_f64().unwrap();
        assert!(bpk >= set, "{what}: measured bits/key {bpk} vs {set}");
        if f["keys_per_filter"]["min"].as_f64().unwrap() * set >= 64.0 {
            assert!(bpk < set + 1.0, "{what}: measured bits/key {bpk} vs {set}");
        }
        assert_eq!(f["malformed_filters"], 0);
        assert_eq!(f["offset"], m["filter_handle"][0]);
        assert_eq!(f["bytes"], m["filter_handle"][1]);
        let kpf = &f["keys_per_filter"];
        let (min, max) = (kpf["min"].as_u64().unwrap(), kpf["max"].as_u64().unwrap());
        let mean = kpf["mean"].as_f64().unwrap();
        assert!(min as f64 <= mean && mean <= max as f64 && min >= 1);
        let n_nonempty = mf["num_nonempty_filters"].as_f64().unwrap();
        assert!(
            (mean * n_nonempty - m["num_entries"].as_f64().unwrap()).abs() < 1e-6,
            "{what}: keys per filter add up"
        );
    }
}

#[test]
fn stats_probe_measures_false_positives() {
    let rate = |case: &str| -> (Value, f64) {
        let f = case_dir(case).join("000005.ldb");
        let o = sst(&["stats", p(&f), "--format", "json", "--probe", "20000"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let s: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let pr = s["filter"]["probe"].clone();
        assert_eq!(pr["keys"], 20000);
        assert_eq!(pr["present"], 0);
        assert!(pr["routed"].as_u64().unwrap() > 10000, "{pr}");
        (pr.clone(), pr["fp_rate"].as_f64().unwrap())
    };
    let (_, r20) = rate("bloom_bits_20");
    let (_, r10) = rate("nocompress_bloom");
    let (_, r4) = rate("bloom_bits_4");
    assert!(r20 < 0.005, "bits 20: {r20}");
    assert!(r10 > 0.001 && r10 < 0.03, "bits 10: {r10}");
    assert!(r4 > 0.08 && r4 < 0.3, "bits 4: {r4}");
    // Deterministic.
    let (a, _) = rate("bloom_bits_4");
    let (b, _) = rate("bloom_bits_4");
    assert_eq!(a, b);
    // Text output and a table without a filter.
    let f = case_dir("no_filter").join("000005.ldb");
    let o = sst(&["stats", p(&f), "--probe", "100"]);
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).contains("filter:           none"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("entries:          3000"));
}

#[test]
fn blocks_equal_tables_jsonl() {
    for t in corpus() {
        let m = &t.meta;
        let o = sst(&["blocks", p(&t.path), "--format", "jsonl"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let rows = jsonl(&stdout(&o));
        let what = t.path.display().to_string();
        let data: Vec<&Value> = rows.iter().filter(|r| r["type"] == "data").collect();
        let want = m["data_blocks"].as_array().unwrap();
        assert_eq!(data.len(), want.len(), "{what}");
        for (g, w) in data.iter().zip(want) {
            assert_eq!(g["offset"], w[0], "{what}");
            assert_eq!(g["size"], w[1], "{what}");
            assert_eq!(
                g["compression"],
                comp_name(w[2].as_str().unwrap()),
                "{what}"
            );
            assert_eq!(g["entries"], w[3], "{what}");
            assert_eq!(g["checksum_ok"], true);
            assert!(g.get("error").is_none());
            assert!(g["first_key"].is_string() && g["last_key"].is_string());
        }
        // First and last keys of the table.
        assert_eq!(data[0]["first_key"], m["smallest_ikey"]);
        assert_eq!(data[data.len() - 1]["last_key"], m["largest_ikey"]);
        // Data blocks first, in index order; then filter, metaindex, index.
        let types: Vec<&str> = rows.iter().map(|r| r["type"].as_str().unwrap()).collect();
        let mut want_types = vec!["data"; want.len()];
        if !m["filter_handle"].is_null() {
            want_types.push("filter");
        }
        want_types.extend(["metaindex", "index"]);
        assert_eq!(types, want_types, "{what}");
        let by_type = |ty: &str| rows.iter().find(|r| r["type"] == ty).unwrap();
        let (meta, index) = (by_type("metaindex"), by_type("index"));
        assert_eq!(
            (&meta["offset"], &meta["size"]),
            (&m["metaindex_handle"][0], &m["metaindex_handle"][1])
        );
        assert_eq!(
            (&index["offset"], &index["size"]),
            (&m["index_handle"][0], &m["index_handle"][1])
        );
        assert_eq!(index["entries"], m["index_entries"]);
        assert_eq!(
            meta["entries"].as_u64().unwrap() as usize,
            m["metaindex_keys"].as_array().unwrap().len()
        );
        if !m["filter_handle"].is_null() {
            let f = by_type("filter");
            assert_eq!(
                (&f["offset"], &f["size"]),
                (&m["filter_handle"][0], &m["filter_handle"][1])
            );
            assert_eq!(f["entries"], m["filter"]["num_filters"]);
            assert!(f["first_key"].is_null() && f["last_key"].is_null());
            assert_eq!(f["compression"], "none");
        }
        // Text format: one line per block plus a header.
        let o = sst(&["blocks", p(&t.path)]);
        assert_eq!(stdout(&o).lines().count(), rows.len() + 1);
    }
}

#[test]
fn blocks_go_on_past_bad_blocks() {
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "nocompress_bloom")
        .unwrap();
    let blocks = t.meta["data_blocks"].as_array().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut b = std::fs::read(&t.path).unwrap();
    for i in [2usize, 7, 100] {
        b[blocks[i][0].as_u64().unwrap() as usize + 10] ^= 1;
    }
    // And the index block itself.
    let index_at = t.meta["index_handle"][0].as_u64().unwrap() as usize;
    b[index_at + 20] ^= 0x01;
    let bad = dir.path().join("bad.ldb");
    std::fs::write(&bad, &b).unwrap();
    let o = sst(&["blocks", p(&bad), "--format", "jsonl"]);
    assert_eq!(code(&o), 1);
    let rows = jsonl(&stdout(&o));
    let data: Vec<&Value> = rows.iter().filter(|r| r["type"] == "data").collect();
    assert_eq!(data.len(), blocks.len(), "every data block is still listed");
    for (i, r) in data.iter().enumerate() {
        let bad_block = [2, 7, 100].contains(&i);
        assert_eq!(r["checksum_ok"], !bad_block, "block {i}");
        assert_eq!(r.get("error").is_some(), bad_block, "block {i}");
        if bad_block {
            let e = r["error"].as_str().unwrap();
            assert!(
                e.contains(p(&bad)) && e.contains(&format!("offset {}", r["offset"])),
                "{e}"
            );
        }
    }
    let index = rows.iter().find(|r| r["type"] == "index").unwrap();
    assert_eq!(index["checksum_ok"], false);
    // With --no-verify nothing is checked.
    let o = sst(&["blocks", p(&bad), "--format", "jsonl", "--no-verify"]);
    assert_eq!(code(&o), 0);
    assert!(jsonl(&stdout(&o))
        .iter()
        .all(|r| r["checksum_ok"].is_null()));
}

// ---------------------------------------------------------------------------------------
// build

#[test]
fn build_reproduces_leveldb_table_byte_for_byte() {
    let src = case_dir("nocompress_bloom").join("000005.ldb");
    let case: Value = serde_json::from_str(
        &std::fs::read_to_string(case_dir("nocompress_bloom").join("case.json")).unwrap(),
    )
    .unwrap();
    assert!(case["options"]["compression"].is_null());
    assert_eq!(case["options"]["bloom_filter_bits"], 10);
    assert_eq!(case["options"]["block_size"], 1024);
    assert_eq!(case["options"]["block_restart_interval"], 4);
    let scan = sst(&["scan", p(&src), "--format", "jsonl"]);
    assert_eq!(code(&scan), 0);
    let dir = tempfile::tempdir().unwrap();
    for keys in ["internal", "auto"] {
        let out = dir.path().join(format!("copy-{keys}.ldb"));
        let o = sst_in(
            &[
                "build",
                p(&out),
                "--from",
                "-",
                "--keys",
                keys,
                "--compression",
                "none",
                "--bloom-bits",
                "10",
                "--block-size",
                "1024",
                "--restart-interval",
                "4",
            ],
            Some(&scan.stdout),
        );
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        let msg = stdout(&o);
        assert!(
            msg.contains("2000 entries")
                && msg.contains("137 data blocks")
                && msg.contains("153777 bytes"),
            "{msg}"
        );
        assert!(msg.contains(p(&out)));
        assert!(
            std::fs::read(&out).unwrap() == std::fs::read(&src).unwrap(),
            "--keys {keys}: not byte-identical"
        );
    }
}

#[test]
fn build_round_trips_every_table() {
    let dir = tempfile::tempdir().unwrap();
    for (i, t) in corpus().iter().enumerate() {
        let scan = sst(&["scan", p(&t.path), "--format", "jsonl"]);
        let out = dir.path().join(format!("rt{i}.ldb"));
        let o = sst_in(&["build", p(&out), "--from", "-"], Some(&scan.stdout));
        assert_eq!(code(&o), 0, "{}: {}", t.path.display(), stderr(&o));
        // The helper-thread build writes the same file.
        let par = dir.path().join(format!("rt{i}-par.ldb"));
        let o = sst_in(
            &["build", p(&par), "--from", "-", "--parallel-compression"],
            Some(&scan.stdout),
        );
        assert_eq!(code(&o), 0, "{}: {}", t.path.display(), stderr(&o));
        assert!(std::fs::read(&par).unwrap() == std::fs::read(&out).unwrap());
        let again = sst(&["scan", p(&out), "--format", "jsonl"]);
        assert_eq!(code(&again), 0);
        assert!(
            again.stdout == scan.stdout,
            "{}: round trip differs",
            t.path.display()
        );
        let v = sst(&["verify", p(&out)]);
        assert_eq!(code(&v), 0, "{}", stdout(&v));
    }
}

#[test]
fn build_options_formats_and_codecs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tsv: String = (0..3000)
        .map(|i| format!("key{i:05}\tvalue {i} {}\n", "x".repeat(i % 50)))
        .collect();
    for (codec, name) in [
        ("zstd", "zstd"),
        ("deflate", "raw-deflate"),
        ("none", "none"),
        ("snappy", "snappy"),
    ] {
        let out = d.join(format!("{codec}.ldb"));
        let o = sst_in(
            &[
                "build",
                p(&out),
                "--from",
                "-",
                "--format",
                "tsv",
                "--compression",
                codec,
                "--block-size",
                "2048",
            ],
            Some(tsv.as_bytes()),
        );
        assert_eq!(code(&o), 0, "{codec}: {}", stderr(&o));
        let s: Value =
            serde_json::from_str(&stdout(&sst(&["stats", p(&out), "--format", "json"]))).unwrap();
        assert_eq!(s["entries"], 3000);
        assert_eq!(s["internal_keys"], false);
        let comps: Vec<&String> = s["compression"].as_object().unwrap().keys().collect();
        assert!(comps.contains(&&name.to_string()), "{codec}: {comps:?}");
        assert_eq!(s["filter"]["bits_per_key_setting"], 10);
        assert_eq!(s["filter"]["k"], 6);
        let g = sst(&["get", p(&out), "key00042", "key00042x"]);
        assert_eq!(code(&g), 1);
        assert_eq!(
            stdout(&g),
            format!(
                "'key00042' => 'value 42 {}'\n'key00042x': not found\n",
                "x".repeat(42)
            )
        );
    }
    // --no-filter, --bloom-bits, --restart-interval, --hex tsv.
    let hex_tsv = "00\t01\n0001\t\n02\tffff\n";
    let out = d.join("hex.ldb");
    let o = sst_in(
        &[
            "build",
            p(&out),
            "--from",
            "-",
            "--format",
            "tsv",
            "--hex",
            "--no-filter",
        ],
        Some(hex_tsv.as_bytes()),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    let s: Value =
        serde_json::from_str(&stdout(&sst(&["stats", p(&out), "--format", "json"]))).unwrap();
    assert!(s["filter"].is_null());
    assert_eq!(s["metaindex"], serde_json::json!([]));
    assert_eq!(
        stdout(&sst(&["scan", p(&out), "--hex"])),
        "00 => 01\n0001 => \n02 => ffff\n"
    );
    let out = d.join("bits.ldb");
    let o = sst_in(
        &[
            "build",
            p(&out),
            "--from",
            "-",
            "--format",
            "tsv",
            "--bloom-bits",
            "20",
            "--restart-interval",
            "1",
        ],
        Some(tsv.as_bytes()),
    );
    assert_eq!(code(&o), 0);
    let s: Value =
        serde_json::from_str(&stdout(&sst(&["stats", p(&out), "--format", "json"]))).unwrap();
    assert_eq!(s["filter"]["bits_per_key_setting"], 20);
    assert_eq!(s["filter"]["k"], 13);
    // Input from a file, jsonl with extra fields and blank lines.
    let input = d.join("in.jsonl");
    std::fs::write(
        &input,
        "{\"key\":\"61\",\"value\":\"31\",\"extra\":1}\n\n{\"key\":\"62\",\"value\":\"32\"}\n",
    )
    .unwrap();
    let out = d.join("fromfile.ldb");
    let o = sst(&["build", p(&out), "--from", p(&input)]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&sst(&["scan", p(&out)])), "'a' => '1'\n'b' => '2'\n");
    // Bad option values.
    assert_eq!(
        code(&sst(&[
            "build",
            p(&out),
            "--from",
            p(&input),
            "--block-size",
            "0"
        ])),
        2
    );
    assert_eq!(
        code(&sst(&[
            "build",
            p(&out),
            "--from",
            p(&input),
            "--compression",
            "lz4"
        ])),
        2
    );
    assert_eq!(
        code(&sst(&[
            "build",
            p(&out),
            "--from",
            p(&input),
            "--no-filter",
            "--bloom-bits",
            "5"
        ])),
        2
    );
    assert_eq!(
        code(&sst(&[
            "build",
            p(&out),
            "--from",
            p(&input),
            "--compression",
            "deflate",
            "--level",
            "12"
        ])),
        2
    );
}

#[test]
fn build_rejects_bad_input_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = d.join("out.ldb");
    let unsorted = "a\t1\nc\t3\nb\t2\nd\t4\n";
    let o = sst_in(
        &["build", p(&out), "--from", "-", "--format", "tsv"],
        Some(unsorted.as_bytes()),
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    assert!(stderr(&o).contains("out of order"), "{}", stderr(&o));
    assert!(!out.exists(), "nothing at OUT after a failed build");
    let leftovers: Vec<_> = std::fs::read_dir(d).unwrap().collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    // --sort fixes it.
    let o = sst_in(
        &["build", p(&out), "--from", "-", "--format", "tsv", "--sort"],
        Some(unsorted.as_bytes()),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(
        stdout(&sst(&["scan", p(&out)])),
        "'a' => '1'\n'b' => '2'\n'c' => '3'\n'd' => '4'\n"
    );

    // Duplicates: rejected with and without --sort, naming the line.
    let out2 = d.join("dup.ldb");
    let dup = "a\t1\nb\t2\nc\t3\nb\t9\n";
    let o = sst_in(
        &[
            "build",
            p(&out2),
            "--from",
            "-",
            "--format",
            "tsv",
            "--sort",
        ],
        Some(dup.as_bytes()),
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("line 4")
            && stderr(&o).contains("duplicate")
            && stderr(&o).contains("line 2"),
        "{}",
        stderr(&o)
    );
    assert!(!out2.exists());
    let o = sst_in(
        &["build", p(&out2), "--from", "-", "--format", "tsv"],
        Some(b"a\t1\na\t2\n"),
    );
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains("line 2") && stderr(&o).contains("duplicate"),
        "{}",
        stderr(&o)
    );

    // Malformed lines.
    for (input, fmt, needle) in [
        ("{\"key\":\"6\",\"value\":\"\"}\n", "jsonl", "line 1"),
        (
            "{\"key\":\"61\",\"value\":\"\"}\nnot json\n",
            "jsonl",
            "line 2",
        ),
        ("{\"key\":\"61\"}\n", "jsonl", "\"value\""),
        ("a\t1\nno tab here\n", "tsv", "line 2"),
    ] {
        let o = sst_in(
            &["build", p(&out2), "--from", "-", "--format", fmt],
            Some(input.as_bytes()),
        );
        assert_eq!(code(&o), 2, "{input:?}");
        assert!(stderr(&o).contains(needle), "{input:?}: {}", stderr(&o));
        assert!(!out2.exists());
    }
    // Internal keys must be internal keys.
    let o = sst_in(
        &["build", p(&out2), "--from", "-", "--keys", "internal"],
        Some(b"{\"key\":\"6161\",\"value\":\"\"}\n"),
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("not an internal key"), "{}", stderr(&o));
    // Internal order: same user key, newer sequence first.
    let rows = "{\"key\":\"610102000000000000\",\"value\":\"\"}\n{\"key\":\"610101000000000000\",\"value\":\"\"}\n";
    let o = sst_in(
        &["build", p(&out2), "--from", "-", "--keys", "internal"],
        Some(rows.as_bytes()),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    // Missing input file.
    let o = sst(&["build", p(&out2), "--from", p(&d.join("missing.jsonl"))]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("missing.jsonl"));
}

// ---------------------------------------------------------------------------------------
// get

/// What a lookup of each user key of `entries` must answer: the first (newest) version.
fn expected_gets(entries: &[Value]) -> Vec<(String, Value)> {
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

#[test]
fn get_answers_every_key_of_every_table() {
    let dir = tempfile::tempdir().unwrap();
    for t in corpus() {
        let want = expected_gets(&t.entries);
        let keys_file = dir.path().join("keys.txt");
        let mut keys: String = want.iter().map(|(k, _)| format!("{k}\n")).collect();
        // Absent keys too: the answer lines stay in order.
        keys.push_str("00ff00ff\n");
        std::fs::write(&keys_file, &keys).unwrap();
        let o = sst(&[
            "get",
            p(&t.path),
            "--keys-from",
            p(&keys_file),
            "--hex",
            "--format",
            "jsonl",
        ]);
        let got = jsonl(&stdout(&o));
        assert_eq!(got.len(), want.len() + 1, "{}", t.path.display());
        let mut deleted = 0;
        for ((k, row), g) in want.iter().zip(&got) {
            let what = format!("{} key {k}", t.path.display());
            assert_eq!(g["key"].as_str().unwrap(), k, "{what}");
            if row["type"] == 1 {
                assert_eq!(g["found"], true, "{what}: {g}");
                assert_value(g["value"].as_str().unwrap(), row, &what);
            } else {
                deleted += 1;
                assert_eq!(
                    g,
                    &serde_json::json!({"key": k, "found": false, "deleted": true, "seq": row["seq"]}),
                    "{what}"
                );
            }
        }
        assert_eq!(
            got[want.len()],
            serde_json::json!({"key": "00ff00ff", "found": false})
        );
        assert_eq!(code(&o), 1, "{}: a key was not found", t.path.display());
        // Without the absent key (and deletions), exit 0.
        if deleted == 0 {
            let keys: String = want.iter().map(|(k, _)| format!("{k}\n")).collect();
            let o = sst_in(
                &["get", p(&t.path), "--keys-from", "-", "--hex"],
                Some(keys.as_bytes()),
            );
            assert_eq!(code(&o), 0, "{}: {}", t.path.display(), stderr(&o));
            assert_eq!(stdout(&o).lines().count(), want.len());
        }
    }
}

#[test]
fn get_matches_corpus_gets() {
    // gets.jsonl holds a database's answers; they are this table's answers where the
    // database has one table.
    for t in corpus() {
        let dir = case_dir(&t.case);
        let tables = std::fs::read_to_string(dir.join("tables.jsonl"))
            .unwrap()
            .lines()
            .count();
        if tables != 1 {
            continue;
        }
        let gets = jsonl(&std::fs::read_to_string(dir.join("gets.jsonl")).unwrap());
        let keys: String = gets
            .iter()
            .map(|g| format!("{}\n", g["key"].as_str().unwrap()))
            .collect();
        let o = sst_in(
            &[
                "get",
                p(&t.path),
                "--keys-from",
                "-",
                "--hex",
                "--format",
                "jsonl",
            ],
            Some(keys.as_bytes()),
        );
        let got = jsonl(&stdout(&o));
        assert_eq!(got.len(), gets.len());
        let mut misses = 0;
        for (g, w) in got.iter().zip(&gets) {
            assert_eq!(g["key"], w["key"]);
            assert_eq!(g["found"], w["found"], "{}: {w}", t.path.display());
            if w["found"] == true {
                assert_value(
                    g["value"].as_str().unwrap(),
                    w,
                    &t.path.display().to_string(),
                );
            } else {
                misses += 1;
            }
        }
        assert_eq!(code(&o), if misses > 0 { 1 } else { 0 });
    }
}

#[test]
fn get_arguments_raw_keys_and_exit_codes() {
    let big = case_dir("bigvalues").join("000005.ldb");
    // Raw keys from stdin: an empty line is the empty key.
    let o = sst_in(
        &["get", p(&big), "--keys-from", "-", "--format", "jsonl"],
        Some(b"a-small-000\n\nnope\n"),
    );
    let got = jsonl(&stdout(&o));
    assert_eq!(got.len(), 3);
    assert_eq!(got[0]["key"], hex::encode("a-small-000"));
    assert_eq!(got[0]["found"], true);
    assert_eq!(got[1]["key"], "");
    assert_eq!(got[1]["value"], hex::encode("value of the empty key"));
    assert_eq!(got[2]["found"], false);
    assert_eq!(code(&o), 1);
    // Arguments come before --keys-from; text output.
    let o = sst_in(
        &["get", p(&big), "a-small-000", "--keys-from", "-"],
        Some(b""),
    );
    assert_eq!(code(&o), 0);
    assert!(
        stdout(&o).starts_with("'a-small-000' => '"),
        "{}",
        stdout(&o)
    );
    // Text for a deletion.
    let m = case_dir("mojang_zlib").join("000009.ldb");
    let scan = jsonl(&stdout(&sst(&["scan", p(&m), "--format", "jsonl"])));
    let del = scan.iter().find(|r| r["kind"] == "deletion").unwrap();
    let o = sst(&["get", p(&m), "--hex", del["user_key"].as_str().unwrap()]);
    assert_eq!(code(&o), 1);
    assert_eq!(
        stdout(&o),
        format!(
            "{}: deleted @ {}\n",
            del["user_key"].as_str().unwrap(),
            del["seq"]
        )
    );
    // No keys at all; a missing table; a table that cannot be opened.
    assert_eq!(code(&sst(&["get", p(&big)])), 2);
    let o = sst(&["get", "/nonexistent/x.ldb", "k"]);
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("/nonexistent/x.ldb"));
    let bm = root().join("testdata/corrupt/bad_magic.ldb");
    let o = sst(&["get", p(&bm), "k"]);
    assert_eq!(code(&o), 2);
    assert!(
        stderr(&o).contains(p(&bm))
            && stderr(&o).contains("offset 7437")
            && stderr(&o).contains("bad magic"),
        "{}",
        stderr(&o)
    );
    // Bad hex in --keys-from names the line.
    let o = sst_in(
        &["get", p(&big), "--hex", "--keys-from", "-"],
        Some(b"00\nxyz\n"),
    );
    assert_eq!(code(&o), 2);
    assert!(stderr(&o).contains("line 2"), "{}", stderr(&o));
}

#[test]
fn get_reports_unreadable_blocks_per_key() {
    let flip = root().join("testdata/corrupt/data_block_bitflip_nocompress.ldb");
    let info: Value = serde_json::from_str(
        &std::fs::read_to_string(
            root().join("testdata/corrupt/data_block_bitflip_nocompress.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let damaged: Vec<&str> = info["damaged_data_block"]["user_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "nocompress_bloom")
        .unwrap();
    let want = expected_gets(&t.entries);
    let keys: String = want.iter().map(|(k, _)| format!("{k}\n")).collect();
    let o = sst_in(
        &[
            "get",
            p(&flip),
            "--keys-from",
            "-",
            "--hex",
            "--format",
            "jsonl",
        ],
        Some(keys.as_bytes()),
    );
    assert_eq!(code(&o), 2);
    let got = jsonl(&stdout(&o));
    assert_eq!(got.len(), want.len(), "every key is answered");
    let mut errors = 0;
    for ((k, row), g) in want.iter().zip(&got) {
        if damaged.contains(&k.as_str()) {
            errors += 1;
            let e = g["error"].as_str().unwrap_or_else(|| panic!("{g}"));
            assert!(
                e.contains(p(&flip)) && e.contains("offset 0") && e.contains("checksum mismatch"),
                "{e}"
            );
            assert!(g.get("found").is_none());
        } else {
            assert_eq!(g["found"], true);
            assert_value(g["value"].as_str().unwrap(), row, k);
        }
    }
    assert_eq!(errors, 15);
    assert!(stderr(&o).contains("checksum mismatch"));
    // --no-verify: every key found, one value altered.
    let o = sst_in(
        &[
            "get",
            p(&flip),
            "--keys-from",
            "-",
            "--hex",
            "--format",
            "jsonl",
            "--no-verify",
        ],
        Some(keys.as_bytes()),
    );
    assert_eq!(code(&o), 0);
    assert_eq!(jsonl(&stdout(&o))[0]["value"], "103a64622061");
    // The filter with bogus offsets answers "may match": every key found.
    let bogus = root().join("testdata/corrupt/filter_bogus_offsets.ldb");
    let o = sst_in(
        &["get", p(&bogus), "--keys-from", "-", "--hex"],
        Some(keys.as_bytes()),
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
}

// ---------------------------------------------------------------------------------------
// verify

#[test]
fn verify_good_and_bad_tables() {
    for t in corpus() {
        let o = sst(&["verify", p(&t.path)]);
        assert_eq!(code(&o), 0, "{}", stdout(&o));
        assert_eq!(
            stdout(&o),
            format!(
                "{}: OK ({} entries, {} data blocks)\n",
                p(&t.path),
                t.meta["num_entries"],
                t.meta["num_data_blocks"]
            )
        );
    }
    let corrupt = root().join("testdata/corrupt");
    for (file, needle) in [
        (
            "bad_magic.ldb",
            "offset 7437: not an sstable (bad magic number",
        ),
        ("truncated_47.ldb", "offset 0: file is too short"),
        (
            "data_block_bitflip_nocompress.ldb",
            "offset 0: block checksum mismatch",
        ),
        ("filter_bogus_offsets.ldb", "offset 146188: filter block"),
    ] {
        let f = corrupt.join(file);
        let o = sst(&["verify", p(&f)]);
        assert_eq!(code(&o), 1, "{file}: {}", stdout(&o));
        let out = stdout(&o);
        assert!(
            out.contains(&format!("{}: {needle}", p(&f))),
            "{file}: {out}"
        );
        assert!(!out.contains(": OK"));
    }
    // Missing file: 2. Several files: the worst code.
    let good = case_dir("small_snappy").join("000005.ldb");
    let o = sst(&["verify", "/nonexistent/t.ldb"]);
    assert_eq!(code(&o), 2);
    assert!(stdout(&o).contains("/nonexistent/t.ldb"));
    let o = sst(&["verify", p(&good), p(&corrupt.join("bad_magic.ldb"))]);
    assert_eq!(code(&o), 1);
    assert!(stdout(&o).starts_with(&format!("{}: OK (200 entries, 4 data blocks)\n", p(&good))));
    let o = sst(&[
        "verify",
        p(&good),
        "/nonexistent/t.ldb",
        p(&corrupt.join("bad_magic.ldb")),
    ]);
    assert_eq!(code(&o), 2);

    // A RocksDB footer (the block-based magic): "not a LevelDB table", exit 2.
    let dir = tempfile::tempdir().unwrap();
    let mut b = std::fs::read(&good).unwrap();
    let n = b.len();
    b[n - 8..].copy_from_slice(&0x88e2_41b7_85f4_cff7u64.to_le_bytes());
    let rocks = dir.path().join("rocks.sst");
    std::fs::write(&rocks, &b).unwrap();
    let o = sst(&["verify", p(&rocks)]);
    assert_eq!(code(&o), 2, "{}", stdout(&o));
    assert!(
        stdout(&o).contains("RocksDB") && stdout(&o).contains("not a LevelDB table"),
        "{}",
        stdout(&o)
    );
    for cmd in ["scan", "stats", "blocks"] {
        let o = sst(&[cmd, p(&rocks)]);
        assert_eq!(code(&o), 2, "{cmd}");
        assert!(stderr(&o).contains("RocksDB"), "{cmd}: {}", stderr(&o));
    }
    // The corpus's RocksDB files, where present.
    let rdir = root().join("testdata/rocksdb");
    if rdir.is_dir() {
        for e in std::fs::read_dir(&rdir).unwrap() {
            let f = e.unwrap().path();
            if f.extension().is_some_and(|x| x == "sst") {
                let o = sst(&["verify", p(&f)]);
                assert_eq!(code(&o), 2, "{}: {}", f.display(), stdout(&o));
                assert!(stdout(&o).contains("RocksDB"), "{}", stdout(&o));
            }
        }
    }
}

#[test]
fn verify_finds_problems_deep_in_a_table() {
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "nocompress_bloom")
        .unwrap();
    let blocks = t.meta["data_blocks"].as_array().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut b = std::fs::read(&t.path).unwrap();
    let offs: Vec<u64> = [3usize, 50, 136]
        .iter()
        .map(|&i| blocks[i][0].as_u64().unwrap())
        .collect();
    for &o in &offs {
        b[o as usize + 1] ^= 0x80;
    }
    let bad = dir.path().join("bad.ldb");
    std::fs::write(&bad, &b).unwrap();
    let o = sst(&["verify", p(&bad)]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    for off in offs {
        assert!(
            out.contains(&format!(
                "{}: offset {off}: block checksum mismatch",
                p(&bad)
            )),
            "{out}"
        );
    }
    assert!(out.contains("3 problem(s)"), "{out}");
}

// ---------------------------------------------------------------------------------------
// filter

#[test]
fn filter_explains_lookups() {
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "small_snappy")
        .unwrap();
    let file = p(&t.path);
    let blocks = t.meta["data_blocks"].as_array().unwrap();
    let run = |key_hex: &str| -> Value {
        let o = sst(&["filter", file, "--hex", key_hex, "--format", "json"]);
        assert_eq!(code(&o), 0, "{}", stderr(&o));
        serde_json::from_str(&stdout(&o)).unwrap()
    };
    let mut absent_excluded = 0;
    for (k, row) in expected_gets(&t.entries).iter().step_by(7) {
        let v = run(k);
        assert_eq!(v["verdict"], "may match", "{k}");
        assert_eq!(v["present"]["state"], "found");
        assert_eq!(v["present"]["seq"], row["seq"]);
        assert_eq!(v["library_filter_excludes"], false);
        assert_eq!(
            v["seek_key"].as_str().unwrap(),
            format!("{k}01ffffffffffffff")
        );
        // The block the key is in.
        let n = v["block"]["number"].as_u64().unwrap() as usize;
        assert_eq!(v["block"]["offset"], blocks[n][0]);
        assert_eq!(
            v["filter"]["index"].as_u64().unwrap(),
            blocks[n][0].as_u64().unwrap() >> 11
        );
        // Probes recomputed here.
        let key = hex::decode(k).unwrap();
        let mut h = leveldb_hash(&key, 0xbc9f1d34);
        assert_eq!(v["filter"]["hash"], h);
        let delta = h.rotate_right(17);
        let bits = v["filter"]["bits"].as_u64().unwrap() as u32;
        let probes = v["filter"]["probes"].as_array().unwrap();
        assert_eq!(probes.len() as u64, v["filter"]["k"].as_u64().unwrap());
        for pr in probes {
            assert_eq!(pr["bit"], h % bits);
            assert_eq!(pr["set"], true);
            h = h.wrapping_add(delta);
        }
        // An absent neighbour: the verdict agrees with the library.
        let absent = format!("{k}7e7e");
        let v = run(&absent);
        assert_eq!(v["present"]["state"], "not found");
        let excluded = v["verdict"] == "definitely absent";
        assert_eq!(v["library_filter_excludes"], excluded, "{absent}: {v}");
        if excluded {
            absent_excluded += 1;
            assert!(v["filter"]["probes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["set"] == false));
        }
    }
    assert!(absent_excluded > 0);
    // Text output.
    let o = sst(&["filter", file, "key-0001"]);
    let text = stdout(&o);
    for needle in [
        "block:      data block 0 at offset 0",
        "probe 0:",
        "verdict:    may match",
        "in table:   found (seq 2)",
    ] {
        assert!(text.contains(needle), "{needle:?} not in {text}");
    }
    // No filter.
    let nf = case_dir("no_filter").join("000005.ldb");
    let o = sst(&["filter", p(&nf), "k/00001/", "--format", "json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["filter"].is_null());
    assert_eq!(v["verdict"], "may match");
}

// ---------------------------------------------------------------------------------------
// Damaged tables: no panic, errors name the file and an offset.

/// Checks one damaged table with every subcommand.
fn check_damaged(f: &Path, keys_hex: &str) {
    let fs = p(f);
    let err_lines_ok = |o: &Output, cmd: &str| {
        for line in stderr(o).lines() {
            if line.contains("note:") {
                continue;
            }
            assert!(
                line.contains(fs),
                "{cmd}: error does not name the file: {line}"
            );
            assert!(
                line.contains("offset "),
                "{cmd}: error has no offset: {line}"
            );
        }
    };
    let o = sst(&["scan", fs, "--format", "jsonl"]);
    assert!([0, 1, 2].contains(&code(&o)));
    if code(&o) != 0 {
        assert!(!o.stderr.is_empty(), "scan failed silently");
        err_lines_ok(&o, "scan");
    }
    jsonl(&stdout(&o));
    let o = sst(&["scan", fs, "--reverse", "--no-verify"]);
    assert!([0, 1, 2].contains(&code(&o)));

    let o = sst(&["verify", fs]);
    assert!([0, 1].contains(&code(&o)), "verify: {}", stdout(&o));
    for line in stdout(&o).lines() {
        assert!(line.starts_with(&format!("{fs}: ")), "{line}");
        assert!(
            line.contains("offset ") || line.contains(": OK (") || line.contains("problem(s)"),
            "verify: {line}"
        );
    }
    let o = sst(&["stats", fs, "--format", "json", "--probe", "50"]);
    assert!([0, 1, 2].contains(&code(&o)));
    if code(&o) == 0 {
        let _: Value = serde_json::from_str(&stdout(&o)).unwrap();
    } else {
        err_lines_ok(&o, "stats");
    }
    let o = sst(&["blocks", fs, "--format", "jsonl"]);
    assert!([0, 1, 2].contains(&code(&o)));
    for r in jsonl(&stdout(&o)) {
        if let Some(e) = r.get("error") {
            let e = e.as_str().unwrap();
            assert!(e.contains(fs) && e.contains("offset "), "blocks: {e}");
        }
    }
    err_lines_ok(&o, "blocks");
    let o = sst_in(
        &["get", fs, "--keys-from", "-", "--hex", "--format", "jsonl"],
        Some(keys_hex.as_bytes()),
    );
    assert!([0, 1, 2].contains(&code(&o)));
    for r in jsonl(&stdout(&o)) {
        if let Some(e) = r.get("error") {
            let e = e.as_str().unwrap();
            assert!(e.contains(fs) && e.contains("offset "), "get: {e}");
        }
    }
    err_lines_ok(&o, "get");
    let first = keys_hex.lines().next().unwrap_or("00");
    let o = sst(&["filter", fs, "--hex", first]);
    assert!([0, 1, 2].contains(&code(&o)));
    err_lines_ok(&o, "filter");
}

#[test]
fn damaged_tables_never_panic() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for f in std::fs::read_dir(root().join("testdata/corrupt")).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "ldb") {
            check_damaged(
                &f,
                "6b2f30303030302f787a627a6379617a\n6b2f30303031352f786279637a\n00\n",
            );
            checked += 1;
        }
    }
    for (case, step) in [("small_snappy", 61usize), ("mojang_zlib", 47)] {
        let t = corpus()
            .into_iter()
            .find(|t| t.case == case && t.meta["size"].as_u64().unwrap() < 10000)
            .unwrap();
        let keys: String = expected_gets(&t.entries)
            .iter()
            .step_by(5)
            .map(|(k, _)| format!("{k}\n"))
            .collect();
        let orig = std::fs::read(&t.path).unwrap();
        let n = orig.len();
        // Bit flips over the whole file, denser in the tail (footer, index, metaindex, filter).
        let mut at: Vec<usize> = (0..n).step_by(step).collect();
        at.extend((n.saturating_sub(400)..n).step_by(7));
        for (i, &pos) in at.iter().enumerate() {
            let f = damaged_copy(
                &t.path,
                dir.path(),
                &format!("{case}-flip-{i}.ldb"),
                pos,
                1 << (i % 8),
            );
            check_damaged(&f, &keys);
            checked += 1;
        }
        // Truncations.
        for len in [0, 1, 47, 48, 49, n / 2, n - 49, n - 48, n - 1] {
            let f = dir.path().join(format!("{case}-trunc-{len}.ldb"));
            std::fs::write(&f, &orig[..len]).unwrap();
            check_damaged(&f, &keys);
            checked += 1;
        }
    }
    assert!(checked > 200);
}

// ---------------------------------------------------------------------------------------
// A closed pipe ends quietly.

#[test]
fn closed_pipe_is_quiet() {
    // The biggest table of the corpus.
    let biggest = corpus()
        .into_iter()
        .max_by_key(|t| t.meta["size"].as_u64().unwrap())
        .unwrap();
    for args in [
        vec!["scan", p(&biggest.path)],
        vec!["scan", p(&biggest.path), "--format", "jsonl"],
        vec!["blocks", p(&biggest.path)],
    ] {
        let mut child = std::process::Command::new(BIN)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert!(!line.is_empty());
        drop(out);
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {status:?} {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.is_empty(), "{args:?}: expected a quiet end, got {err}");
    }
    // get with many keys into a closed pipe.
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "bloom_bits_20")
        .unwrap();
    let keys: String = expected_gets(&t.entries)
        .iter()
        .map(|(k, _)| format!("{k}\n"))
        .collect();
    let mut child = std::process::Command::new(BIN)
        .args([
            "get",
            p(&t.path),
            "--hex",
            "--keys-from",
            "-",
            "--format",
            "jsonl",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(keys.as_bytes());
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    drop(out);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    writer.join().unwrap();
    assert_eq!(status.code(), Some(0), "get: {status:?} {err}");
    assert!(!err.contains("panicked"));
}

#[test]
fn verify_footer_padding_and_one_line_per_damaged_meta_block() {
    let t = corpus()
        .into_iter()
        .find(|t| t.case == "small_snappy")
        .unwrap();
    let n = t.meta["size"].as_u64().unwrap() as usize;
    let dir = tempfile::tempdir().unwrap();
    // The last padding byte before the magic.
    let f = damaged_copy(&t.path, dir.path(), "pad.ldb", n - 9, 0x04);
    let o = sst(&["verify", p(&f)]);
    assert_eq!(code(&o), 1);
    assert!(
        stdout(&o).contains(&format!(
            "{}: offset {}: footer padding byte is 0x04",
            p(&f),
            n - 9
        )),
        "{}",
        stdout(&o)
    );
    // Every other command still reads the table (LevelDB ignores the padding).
    assert_eq!(code(&sst(&["scan", p(&f)])), 0);
    // A damaged filter block is one problem, not two.
    let filter_at = t.meta["filter_handle"][0].as_u64().unwrap() as usize;
    let f = damaged_copy(&t.path, dir.path(), "filter.ldb", filter_at + 5, 0x01);
    let o = sst(&["verify", p(&f)]);
    assert_eq!(code(&o), 1);
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(
        out.contains(&format!(
            "offset {filter_at}: block checksum mismatch: filter block"
        )),
        "{out}"
    );
    assert!(out.contains(": 1 problem(s)"), "{out}");
}
