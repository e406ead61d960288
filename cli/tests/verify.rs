//! `sst verify`: good and damaged tables, problems deep in a table, footer padding.

mod common;

use common::corpus::*;

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
