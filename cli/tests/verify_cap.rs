//! `sst verify` caps repeated problems per table (the first 10 of each kind, then how many
//! more of that kind) and puts the note on what to do first before them; `--all` prints
//! every problem. The counts always add up to the total it reports.

use std::path::PathBuf;

mod common;

use common::{json_lines, sst};

fn testdata(p: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata")
        .join(p)
}

/// The `N` of `FILE: N problem(s) (...)`.
fn total(out: &str) -> usize {
    let last = out.lines().last().unwrap();
    let (_, rest) = last.rsplit_once(": ").unwrap();
    rest.split_whitespace().next().unwrap().parse().unwrap()
}

/// `(KIND, N)` of each `FILE: ... and N more KIND (--all ...)` line.
fn more(out: &str) -> Vec<(String, usize)> {
    out.lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once(": ... and ")?;
            let (n, kind) = rest.split_once(" more ")?;
            let kind = kind.split(" (--all").next()?;
            Some((kind.to_string(), n.parse().ok()?))
        })
        .collect()
}

fn problem_lines<'a>(out: &'a str, kind_text: &str) -> Vec<&'a str> {
    out.lines().filter(|l| l.contains(kind_text)).collect()
}

#[test]
fn an_indexeddb_table_read_bytewise_gets_the_hint_first_and_ten_lines_of_its_problems() {
    // Copied out of its directory, the table is read bytewise: hundreds of keys out of order.
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().join("000005.ldb");
    std::fs::copy(testdata("idb/chromium/000005.ldb"), &t).unwrap();
    let t = t.to_str().unwrap();
    let (code, out, _) = sst(&["verify", t]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("note: keys are out of leveldb.BytewiseComparator order")
            && lines[0].contains("pass --comparator idb_cmp1"),
        "{out}"
    );
    let n = total(&out);
    assert!(n > 100, "{n}");
    let shown = problem_lines(&out, "keys out of order in").len();
    assert_eq!(shown, 10, "{out}");
    assert_eq!(more(&out), vec![("keys out of order".to_string(), n - 10)]);
    // The hint, ten problems, the count of the rest, the total.
    assert_eq!(lines.len(), 13, "{out}");
    // --all: every one of them.
    let (code, all, _) = sst(&["verify", t, "--all"]);
    assert_eq!(code, 1);
    assert_eq!(problem_lines(&all, "keys out of order in").len(), n);
    assert!(more(&all).is_empty());
    assert_eq!(total(&all), n);
    // Read in its own order, it is clean.
    let (code, ok, _) = sst(&["verify", t, "--comparator", "idb_cmp1"]);
    assert_eq!(code, 0, "{ok}");
}

#[test]
fn many_damaged_blocks_are_counted_per_kind() {
    // A table with many data blocks, a byte flipped in 25 of them.
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.jsonl");
    let rows: String = (0..2000)
        .map(|i| {
            format!(
                "{{\"key\":\"{}\",\"value\":\"76\"}}\n",
                hex::encode(format!("k{i:06}"))
            )
        })
        .collect();
    std::fs::write(&input, rows).unwrap();
    let src = tmp.path().join("src.ldb");
    let (code, _, err) = sst(&[
        "build",
        src.to_str().unwrap(),
        "--from",
        input.to_str().unwrap(),
        "--block-size",
        "256",
        "--compression",
        "none",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = sst(&["blocks", src.to_str().unwrap(), "--format", "jsonl"]);
    assert_eq!(code, 0);
    let data: Vec<u64> = json_lines(&out)
        .iter()
        .filter(|r| r["type"] == "data")
        .map(|r| r["offset"].as_u64().unwrap())
        .collect();
    assert!(data.len() >= 25, "{}", data.len());
    let mut bytes = std::fs::read(&src).unwrap();
    for off in &data[..25] {
        bytes[*off as usize + 3] ^= 0x40;
    }
    let t = tmp.path().join("t.ldb");
    std::fs::write(&t, &bytes).unwrap();
    let t = t.to_str().unwrap();
    let (code, out, _) = sst(&["verify", t]);
    assert_eq!(code, 1);
    assert_eq!(
        problem_lines(&out, "checksum mismatch: data block").len(),
        10,
        "{out}"
    );
    let m = more(&out);
    assert_eq!(
        m,
        vec![("block checksum mismatches".to_string(), 15)],
        "{out}"
    );
    assert_eq!(total(&out), 25);
    let (_, all, _) = sst(&["verify", t, "--all"]);
    assert_eq!(
        problem_lines(&all, "checksum mismatch: data block").len(),
        25
    );
}
