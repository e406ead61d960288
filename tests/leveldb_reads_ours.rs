//! LevelDB itself reads the tables we write: `tests/cpp/ldb_check.cc`, built against Debian's
//! `libleveldb-dev` (LevelDB 1.23), opens each table with checksum verification and paranoid
//! checks, iterates forward and backward, seeks and looks up (through the filter) every key,
//! and compares with what we wrote. If the program cannot be built, the test fails.

use leveldb_table::table::KeyFormat;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use leveldb_table::raw::internal_key::{internal_key, ValueType};
use leveldb_table::{Compression, Options, TableBuilder};

fn checker() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ldb_check");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp/ldb_check.cc");
        let status = Command::new("g++")
            .args(["-O1", "-std=c++17"])
            .arg(&src)
            .args(["-lleveldb", "-o"])
            .arg(&out)
            .status()
            .expect("g++ must be installed (see .ci/run)");
        assert!(
            status.success(),
            "building ldb_check against libleveldb-dev failed"
        );
        out
    })
}

struct Case {
    name: String,
    opts: Options,
    bloom: Option<usize>,
    internal: bool,
    entries: Vec<(Vec<u8>, Vec<u8>)>,
}

fn run(case: &Case) {
    let dir = tempfile::tempdir().unwrap();
    let table = dir.path().join("t.ldb");
    let expected = dir.path().join("e.jsonl");
    let mut b = TableBuilder::new(std::fs::File::create(&table).unwrap(), &case.opts).unwrap();
    let mut e = std::io::BufWriter::new(std::fs::File::create(&expected).unwrap());
    for (k, v) in &case.entries {
        b.add(k, v).unwrap();
        writeln!(
            e,
            "{{\"key\":\"{}\",\"value\":\"{}\"}}",
            hex::encode(k),
            hex::encode(v)
        )
        .unwrap();
    }
    b.finish().unwrap();
    e.flush().unwrap();
    drop(e);
    let mut cmd = Command::new(checker());
    cmd.arg("--table")
        .arg(&table)
        .arg("--expected")
        .arg(&expected);
    if let Some(bits) = case.bloom {
        cmd.args(["--bloom", &bits.to_string()]);
    }
    if case.internal {
        cmd.arg("--internal");
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}: LevelDB disagrees: {stdout} {}",
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("\"ok\": true") || stdout.contains("\"ok\":true"),
        "{}: {stdout}",
        case.name
    );
}

fn entries(n: usize, value_len: impl Fn(usize) -> usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut x: u32 = 12345;
    (0..n)
        .map(|i| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let k = format!("key/{:06}/{}", i * 3, "p".repeat((x >> 8) as usize % 20)).into_bytes();
            let v: Vec<u8> = (0..value_len(i))
                .map(|j| b"abcdefgh"[(i + j) % 8] ^ (j as u8 & 3))
                .collect();
            (k, v)
        })
        .collect()
}

#[test]
fn leveldb_reads_plain_tables_across_options() {
    let mut n = 0;
    for compression in [Compression::Snappy, Compression::None] {
        for (block_size, restart) in [(128, 1), (1024, 2), (4096, 16), (16384, 33), (65536, 64)] {
            for bloom in [Some(10), None] {
                let mut opts = Options::default()
                    .compression(compression)
                    .block_size(block_size)
                    .block_restart_interval(restart);
                if let Some(b) = bloom {
                    opts = opts.bloom(b);
                }
                run(&Case {
                    name: format!(
                        "{compression:?} block {block_size} restart {restart} bloom {bloom:?}"
                    ),
                    opts,
                    bloom,
                    internal: false,
                    entries: entries(1500, |i| i % 150),
                });
                n += 1;
            }
        }
    }
    assert_eq!(n, 20);
}

#[test]
fn leveldb_reads_empty_tables_and_big_values() {
    for bloom in [Some(10), None] {
        let mut opts = Options::default();
        if let Some(b) = bloom {
            opts = opts.bloom(b);
        }
        run(&Case {
            name: format!("empty, bloom {bloom:?}"),
            opts: opts.clone(),
            bloom,
            internal: false,
            entries: vec![],
        });
        run(&Case {
            name: format!("300 KB value, bloom {bloom:?}"),
            opts,
            bloom,
            internal: false,
            entries: entries(40, |i| if i == 17 { 300_000 } else { 10 + i }),
        });
    }
    // A single entry with an empty key and an empty value.
    run(&Case {
        name: "empty key".into(),
        opts: Options::default().bloom(10),
        bloom: Some(10),
        internal: false,
        entries: vec![(Vec::new(), Vec::new()), (b"a".to_vec(), b"b".to_vec())],
    });
}

#[test]
fn leveldb_reads_database_tables_with_internal_keys() {
    let mut es = Vec::new();
    let mut seq = 10_000u64;
    for (k, _) in entries(2000, |_| 0) {
        // Several versions of some keys, newest first, some deletions.
        let versions = if k.len() % 3 == 0 { 3 } else { 1 };
        for v in 0..versions {
            seq -= 1;
            let kind = if v == 1 {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            let value = if kind == ValueType::Value {
                format!("v{seq}").into_bytes()
            } else {
                vec![]
            };
            es.push((internal_key(&k, seq, kind), value));
        }
    }
    for compression in [Compression::Snappy, Compression::None] {
        run(&Case {
            name: format!("internal keys {compression:?}"),
            opts: Options::default()
                .compression(compression)
                .bloom(10)
                .keys(KeyFormat::Internal),
            bloom: Some(10),
            internal: true,
            entries: es.clone(),
        });
    }
}

#[test]
fn leveldb_reads_tables_with_the_cache_local_filter_unfiltered() {
    // LevelDB, configured with its bloom policy, finds no `filter.leveldb.BuiltinBloomFilter2`
    // entry (the metaindex names `filter.leveldb-table.CacheLocalBloom.1`) and reads the data
    // blocks unfiltered: every entry, every get and every seek still right.
    for internal in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("t.ldb");
        let expected = dir.path().join("e.jsonl");
        let mut opts = Options::default().local_bloom(9.5);
        if internal {
            opts = opts.keys(KeyFormat::Internal);
        }
        let mut b = TableBuilder::new(std::fs::File::create(&table).unwrap(), &opts).unwrap();
        let mut e = std::io::BufWriter::new(std::fs::File::create(&expected).unwrap());
        for (i, (k, v)) in entries(3000, |i| i % 40).into_iter().enumerate() {
            let mut k = k;
            if internal {
                k.extend_from_slice(&((((i as u64) + 1) << 8) | 1).to_le_bytes());
            }
            b.add(&k, &v).unwrap();
            writeln!(
                e,
                "{{\"key\":\"{}\",\"value\":\"{}\"}}",
                hex::encode(&k),
                hex::encode(&v)
            )
            .unwrap();
        }
        b.finish().unwrap();
        e.flush().unwrap();
        drop(e);
        let mut cmd = Command::new(checker());
        cmd.arg("--table")
            .arg(&table)
            .arg("--expected")
            .arg(&expected)
            .args(["--bloom", "10"]);
        if internal {
            cmd.arg("--internal");
        }
        let out = cmd.output().unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        for field in [
            "forward_mismatches",
            "backward_mismatches",
            "seek_failures",
            "get_failures",
        ] {
            assert_eq!(v[field], 0, "{field}: {v}");
        }
        assert_eq!(v["entries"], 3000);
        assert_eq!(v["status"], "ok");
        // Unfiltered: every absent in-range probe went to a data block.
        assert_eq!(v["filter_passed"], v["filter_baseline"], "{v}");
        // And our reader uses the filter: most absent keys never reach a block.
        let t = leveldb_table::TableReader::open_path(&table, Default::default()).unwrap();
        assert!(matches!(
            t.filter_status(),
            leveldb_table::table::FilterStatus::Used
        ));
    }
}

#[test]
fn leveldb_reads_refiltered_tables() {
    use leveldb_table::refilter::refilter;
    use leveldb_table::{
        filter::BloomFilterPolicy, filter::CacheLocalBloomPolicy, FilterPolicy, TableReader,
    };
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.ldb");
    let expected = dir.path().join("e.jsonl");
    let mut b = TableBuilder::new(
        std::fs::File::create(&src).unwrap(),
        &Options::default().bloom(10),
    )
    .unwrap();
    let mut e = std::io::BufWriter::new(std::fs::File::create(&expected).unwrap());
    for (k, v) in entries(4000, |i| i % 60) {
        b.add(&k, &v).unwrap();
        writeln!(
            e,
            "{{\"key\":\"{}\",\"value\":\"{}\"}}",
            hex::encode(&k),
            hex::encode(&v)
        )
        .unwrap();
    }
    b.finish().unwrap();
    e.flush().unwrap();
    drop(e);
    let table = TableReader::open_path(&src, Default::default()).unwrap();
    for (name, policy, bloom_arg) in [
        (
            "bloom16",
            Some(Arc::new(BloomFilterPolicy::new(16)) as Arc<dyn FilterPolicy>),
            Some("16"),
        ),
        (
            "local",
            Some(Arc::new(CacheLocalBloomPolicy::new(10.0)) as Arc<dyn FilterPolicy>),
            None,
        ),
        ("none", None, None),
    ] {
        let out = dir.path().join(format!("{name}.ldb"));
        let mut f = std::fs::File::create(&out).unwrap();
        refilter(&table, policy, &mut f).unwrap();
        drop(f);
        let mut cmd = Command::new(checker());
        cmd.arg("--table")
            .arg(&out)
            .arg("--expected")
            .arg(&expected);
        if let Some(b) = bloom_arg {
            // LevelDB with its bloom policy: the rebuilt filter must be in use and right.
            cmd.args(["--bloom", b]);
        }
        let o = cmd.output().unwrap();
        let s = String::from_utf8_lossy(&o.stdout);
        assert!(
            o.status.success() && s.contains("\"ok\": true"),
            "{name}: {s} {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
