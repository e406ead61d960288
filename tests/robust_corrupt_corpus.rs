//! The damaged tables in testdata/corrupt/ give the verdicts their .json files list:
//! `open` ok/error; `scan` ok/error; `gets`: `damaged_block_error` (the listed user keys
//! fail, every other key is found with its value) or `all_ok` (every key is found with its
//! value). Keys and values come from the entries of the table each file was derived from.
//!
//! The tables hold internal keys (they come from LevelDB databases); lookups use the newest
//! version: `lookup(user_key, u64::MAX >> 8, ReadOptions::default())`.

mod robust_common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

use leveldb_table::Cursor;
use leveldb_table::{Lookup, OpenOptions, ReadOptions, TableReader};
use robust_common::{read_testdata, testdata};
use serde_json::Value;

/// (user key -> value of its newest version, or None for a deletion), and the scan order
/// (internal key, value) of every entry.
struct Expected {
    newest: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    entries: Vec<(Vec<u8>, Vec<u8>)>,
}

fn load_entries(derived_from: &str) -> Expected {
    // "cases/<case>/NNNNNN.ldb" -> "cases/<case>/NNNNNN.entries.jsonl[.gz]"
    let stem = derived_from
        .strip_suffix(".ldb")
        .expect("derived_from names a .ldb");
    let plain = testdata(&format!("{stem}.entries.jsonl"));
    let text = if plain.exists() {
        std::fs::read_to_string(plain).unwrap()
    } else {
        let gz = read_testdata(&format!("{stem}.entries.jsonl.gz"));
        let mut s = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut s)
            .unwrap();
        s
    };
    let mut newest: BTreeMap<Vec<u8>, (u64, Option<Vec<u8>>)> = BTreeMap::new();
    let mut entries = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        let ikey = hex::decode(v["ikey"].as_str().unwrap()).unwrap();
        let value = hex::decode(v["value"].as_str().unwrap_or("")).unwrap();
        let seq = v["seq"].as_u64().unwrap();
        let deleted = v["type"].as_u64().unwrap() == 0;
        let user = ikey[..ikey.len() - 8].to_vec();
        entries.push((ikey, value.clone()));
        let e = newest.entry(user).or_insert((0, None));
        if seq >= e.0 {
            *e = (seq, if deleted { None } else { Some(value) });
        }
    }
    Expected {
        newest: newest.into_iter().map(|(k, (_, v))| (k, v)).collect(),
        entries,
    }
}

#[test]
fn damaged_tables_give_the_listed_verdicts() {
    let dir = testdata("corrupt");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    cases.sort();
    assert!(
        cases.len() >= 4,
        "expected the four damaged tables, found {}",
        cases.len()
    );
    let mut checked = BTreeSet::new();
    for json_path in cases {
        let meta: Value =
            serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        let file = meta["file"].as_str().unwrap();
        let bytes = read_testdata(&format!("corrupt/{file}"));
        assert_eq!(
            bytes.len() as u64,
            meta["size"].as_u64().unwrap(),
            "{file}: size"
        );
        let verdict = &meta["verdict"];

        let opened = TableReader::open(&bytes[..], OpenOptions::default());
        match verdict["open"].as_str().unwrap() {
            "error" => {
                let e = opened
                    .err()
                    .unwrap_or_else(|| panic!("{file}: open should fail"));
                assert!(e.is_corruption(), "{file}: {e}");
                checked.insert(file.to_string());
                continue;
            }
            "ok" => {}
            other => panic!("{file}: unknown open verdict {other}"),
        }
        let t = opened.unwrap_or_else(|e| panic!("{file}: open should succeed: {e}"));
        assert!(
            t.is_internal(),
            "{file}: a database table holds internal keys"
        );
        let expected = load_entries(meta["derived_from"].as_str().unwrap());

        // Scan.
        let mut it = t.iter(&ReadOptions::default());
        it.seek_to_first();
        let scanned: Result<Vec<_>, _> = it.into_iter().collect();
        match verdict["scan"].as_str().unwrap() {
            "error" => {
                let e = scanned
                    .err()
                    .unwrap_or_else(|| panic!("{file}: scan should fail"));
                assert!(e.is_corruption(), "{file}: {e}");
                assert!(e.offset().is_some(), "{file}: {e}");
            }
            "ok" => {
                let got = scanned.unwrap_or_else(|e| panic!("{file}: scan should succeed: {e}"));
                assert_eq!(got, expected.entries, "{file}: scan contents");
            }
            other => panic!("{file}: unknown scan verdict {other}"),
        }

        // Gets of every user key.
        let damaged: BTreeSet<Vec<u8>> = match verdict["gets"].as_str().unwrap() {
            "all_ok" => BTreeSet::new(),
            "damaged_block_error" => meta["damaged_data_block"]["user_keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| hex::decode(k.as_str().unwrap()).unwrap())
                .collect(),
            other => panic!("{file}: unknown gets verdict {other}"),
        };
        assert!(
            damaged.iter().all(|k| expected.newest.contains_key(k)),
            "{file}: listed keys exist"
        );
        let (mut errors, mut found) = (0, 0);
        for (user, value) in &expected.newest {
            let got = t.get(user, &ReadOptions::default().snapshot(Some(u64::MAX >> 8)));
            if damaged.contains(user) {
                let e = got
                    .err()
                    .unwrap_or_else(|| panic!("{file}: get {} should fail", hex::encode(user)));
                assert!(e.is_corruption() && e.offset().is_some(), "{file}: {e}");
                errors += 1;
            } else {
                let got = got.unwrap_or_else(|e| panic!("{file}: get {}: {e}", hex::encode(user)));
                let want = match value {
                    Some(v) => Lookup::Found {
                        value: v.clone(),
                        sequence: got_seq(&got),
                    },
                    None => Lookup::Deleted {
                        sequence: got_seq(&got).unwrap_or(0),
                    },
                };
                assert_eq!(got, want, "{file}: get {}", hex::encode(user));
                found += 1;
            }
        }
        assert_eq!(errors, damaged.len(), "{file}");
        assert_eq!(found + errors, expected.newest.len(), "{file}");
        checked.insert(file.to_string());
    }
    for f in [
        "bad_magic.ldb",
        "truncated_47.ldb",
        "data_block_bitflip_nocompress.ldb",
        "filter_bogus_offsets.ldb",
    ] {
        assert!(checked.contains(f), "{f} not checked");
    }
}

fn got_seq(l: &Lookup) -> Option<u64> {
    match l {
        Lookup::Found { sequence, .. } => *sequence,
        Lookup::Deleted { sequence } => Some(*sequence),
        Lookup::NotFound => None,
    }
}

/// The two damaged tables that open: what `verify()` says about them.
#[test]
fn verify_reports_the_damaged_block_only() {
    let t = read_testdata("corrupt/data_block_bitflip_nocompress.ldb");
    let r = TableReader::open(&t[..], OpenOptions::default())
        .unwrap()
        .verify();
    assert_eq!(r.problem_count, 1, "{:?}", r.problems);
    assert!(
        matches!(r.problems[0], leveldb_table::Error::ChecksumMismatch { .. }),
        "{}",
        r.problems[0]
    );
    assert_eq!(r.problems[0].offset(), Some(0));
    // Bogus filter offsets are "may match" (as LevelDB's FilterBlockReader): nothing fails.
    let t = read_testdata("corrupt/filter_bogus_offsets.ldb");
    let r = TableReader::open(&t[..], OpenOptions::default())
        .unwrap()
        .verify();
    assert!(r.is_ok(), "{:?}", r.problems);
}
