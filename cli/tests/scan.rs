//! `sst scan` on the corpus: every entry, ranges, limits, text, damaged tables.

use serde_json::Value;

mod common;

use common::corpus::*;

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
