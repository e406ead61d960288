//! `sst build`: LevelDB's tables byte for byte, round trips, options, formats and codecs, bad input.

use serde_json::Value;

mod common;

use common::corpus::*;

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
