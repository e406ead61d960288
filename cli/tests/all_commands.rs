//! What every subcommand does alike: version and help, damaged tables (no panic, errors
//! name the file and an offset), a closed pipe ends quietly.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::Value;

mod common;

use common::corpus::*;
use common::BIN;

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
