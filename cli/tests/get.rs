//! `sst get` on the corpus: every key of every table, raw keys, exit codes, unreadable blocks.

use serde_json::Value;

mod common;

use common::corpus::*;

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
