//! Tables from the other LevelDBs in the wild, each written by the real program (see the
//! README next to each fixture): goleveldb (legacy filter name, other base_lg, its empty
//! table), google/leveldb main (zstd, id 2), Mojang's Bedrock fork (raw deflate, id 4), and
//! RocksDB files, which must be named as such instead of reported as corruption.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use leveldb_table::Cursor;
use leveldb_table::{
    error::RocksDbFormat, raw::CountingReader, table::FilterStatus, table::KeyFormat, Compression,
    Error, Lookup, OpenOptions, Options, ReadOptions, TableBuilder, TableReader,
};

fn fixture(dir: &str, name: &str) -> PathBuf {
    testdata().join(dir).join(name)
}

fn open_bytes(path: &Path) -> TableReader<CountingReader<Vec<u8>>> {
    let bytes = std::fs::read(path).unwrap();
    TableReader::open(CountingReader::new(bytes), OpenOptions::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Scans a table and compares with `X.entries.jsonl` (plain `key` or internal `ikey` rows).
fn assert_scan_matches(table: &TableReader<CountingReader<Vec<u8>>>, entries: &Path) {
    let rows = read_jsonl(entries);
    let mut it = table.iter(&ReadOptions::default());
    it.seek_to_first();
    for (i, row) in rows.iter().enumerate() {
        assert!(
            it.valid(),
            "{}: ended at {i}: {:?}",
            entries.display(),
            it.status()
        );
        let key = row.get("key").or_else(|| row.get("ikey")).unwrap();
        assert_eq!(
            hex::encode(it.key()),
            key.as_str().unwrap(),
            "{}: key {i}",
            entries.display()
        );
        assert!(
            ExpectedValue::from_row(row).matches(it.value()),
            "value {i}"
        );
        it.next();
    }
    assert!(
        !it.valid() && it.status().is_ok(),
        "{}: extra entries",
        entries.display()
    );
    // And backward.
    it.seek_to_last();
    for row in rows.iter().rev() {
        let key = row.get("key").or_else(|| row.get("ikey")).unwrap();
        assert_eq!(hex::encode(it.key()), key.as_str().unwrap());
        it.prev();
    }
    assert!(!it.valid() && it.status().is_ok());
}

fn assert_gets_match(table: &TableReader<CountingReader<Vec<u8>>>, gets: &Path) -> (usize, usize) {
    let (mut found, mut absent) = (0, 0);
    for row in read_jsonl(gets) {
        let key = unhex(&row["key"]);
        let got = table.get(&key, &ReadOptions::default()).unwrap();
        if row["found"].as_bool().unwrap() {
            let Lookup::Found { value, .. } = got else {
                panic!("{}: {} not found", gets.display(), hex::encode(&key))
            };
            assert!(ExpectedValue::from_row(&row).matches(&value));
            found += 1;
        } else {
            assert!(
                !matches!(got, Lookup::Found { .. }),
                "{}: {}",
                gets.display(),
                hex::encode(&key)
            );
            absent += 1;
        }
    }
    (found, absent)
}

#[test]
fn goleveldb_tables_read_exactly_with_their_filters() {
    for name in [
        "plain_bloom_snappy",
        "plain_bloom_nocompress",
        "plain_bloom_baselg13",
        "plain_bloom_baselg8",
        "empty_bloom_snappy",
        "empty_nofilter_nocompress",
        "db_snapshot",
    ] {
        let path = fixture("goleveldb", &format!("{name}.ldb"));
        let table = open_bytes(&path);
        assert_eq!(
            table.is_internal(),
            name == "db_snapshot",
            "{name}: key format detected"
        );
        assert_scan_matches(
            &table,
            &fixture("goleveldb", &format!("{name}.entries.jsonl")),
        );
        let (found, absent) =
            assert_gets_match(&table, &fixture("goleveldb", &format!("{name}.gets.jsonl")));
        assert!(absent > 0, "{name}");
        if !name.starts_with("empty") {
            assert!(found > 0, "{name}");
        }
        if name != "empty_nofilter_nocompress" {
            assert!(
                matches!(table.filter_status(), FilterStatus::Used),
                "{name}: the legacy-named goleveldb filter is used, not ignored"
            );
        }
        let report = table.verify();
        assert!(report.is_ok(), "{name}: {:?}", report.problems);
    }
}

#[test]
fn goleveldb_filters_skip_the_blocks_of_misses() {
    for name in [
        "plain_bloom_snappy",
        "plain_bloom_baselg13",
        "plain_bloom_baselg8",
        "db_snapshot",
    ] {
        let path = fixture("goleveldb", &format!("{name}.ldb"));
        let rows = read_jsonl(&fixture("goleveldb", &format!("{name}.entries.jsonl")));
        let with = open_bytes(&path);
        let bytes = std::fs::read(&path).unwrap();
        let without = TableReader::open(
            CountingReader::new(bytes),
            OpenOptions::default().use_filter(false),
        )
        .unwrap();
        // Near misses: every stored user key with a suffix.
        let mut probes = Vec::new();
        for row in &rows {
            let mut k = match row.get("key") {
                Some(k) => unhex(k),
                None => {
                    let ik = unhex(&row["ikey"]);
                    ik[..ik.len() - 8].to_vec()
                }
            };
            k.extend_from_slice(b"\x00miss");
            probes.push(k);
        }
        with.source().reset();
        without.source().reset();
        for p in &probes {
            assert_eq!(
                with.get(p, &Default::default())
                    .map(|l| l.into_value())
                    .unwrap(),
                None
            );
            assert_eq!(
                without
                    .get(p, &Default::default())
                    .map(|l| l.into_value())
                    .unwrap(),
                None
            );
        }
        let (a, b) = (with.source().reads(), without.source().reads());
        assert!(
            b >= probes.len() as u64 / 2,
            "{name}: misses route to blocks ({b})"
        );
        assert!(
            a * 20 <= b,
            "{name}: filter let {a} of {b} block reads through"
        );
    }
}

#[test]
fn leveldb_main_zstd_tables_read_exactly() {
    for name in ["zstd_plain", "zstd_empty"] {
        let table = open_bytes(&fixture("leveldb_zstd", &format!("{name}.ldb")));
        assert_scan_matches(
            &table,
            &fixture("leveldb_zstd", &format!("{name}.entries.jsonl")),
        );
        assert_gets_match(
            &table,
            &fixture("leveldb_zstd", &format!("{name}.gets.jsonl")),
        );
        assert!(table.verify().is_ok());
    }
    // The profile that says id 2 is zlib cannot read them; `leveldb` can.
    let bytes = std::fs::read(fixture("leveldb_zstd", "zstd_plain.ldb")).unwrap();
    let opts = OpenOptions::default()
        .compression_profile(leveldb_table::table::CompressionProfile::LevelDb);
    let t = TableReader::open(bytes.clone(), opts).unwrap();
    assert_eq!(t.iter(&ReadOptions::default()).into_iter().count(), 2000);
    let opts = OpenOptions::default()
        .compression_profile(leveldb_table::table::CompressionProfile::Mojang);
    let t = TableReader::open(bytes, opts).unwrap();
    assert!(t
        .iter(&ReadOptions::default())
        .into_iter()
        .any(|e| e.is_err()));
}

#[test]
fn mojang_bedrock_tables_read_exactly() {
    let names = ["mojang_flush", "mojang_recovered"];
    let tables: Vec<_> = names
        .iter()
        .map(|n| open_bytes(&fixture("mojang", &format!("{n}.ldb"))))
        .collect();
    for (n, t) in names.iter().zip(&tables) {
        assert!(t.is_internal());
        assert_scan_matches(t, &fixture("mojang", &format!("{n}.entries.jsonl")));
        assert!(t.verify().is_ok());
    }
    // Newest version across both tables, as the database answers.
    let mut checked = 0;
    for row in read_jsonl(&fixture("mojang", "gets.jsonl")) {
        let key = unhex(&row["key"]);
        let mut best: Option<(u64, Lookup)> = None;
        for t in &tables {
            let r = t.get(&key, &ReadOptions::default()).unwrap();
            let s = match &r {
                Lookup::Found { sequence, .. } => sequence.unwrap(),
                Lookup::Deleted { sequence } => *sequence,
                Lookup::NotFound => continue,
            };
            if best.as_ref().is_none_or(|(b, _)| s > *b) {
                best = Some((s, r));
            }
        }
        match (row["found"].as_bool().unwrap(), best.map(|b| b.1)) {
            (true, Some(Lookup::Found { value, .. })) => {
                assert!(ExpectedValue::from_row(&row).matches(&value))
            }
            (false, None | Some(Lookup::Deleted { .. })) => {}
            (f, got) => panic!("{}: expected found={f}, got {got:?}", hex::encode(&key)),
        }
        checked += 1;
    }
    assert!(checked > 10);
}

#[test]
fn rocksdb_files_are_named_not_called_corrupt() {
    let cases: [(&str, RocksDbFormat, Option<u32>); 5] = [
        ("rocksdb_fv5.sst", RocksDbFormat::BlockBased, Some(5)),
        ("rocksdb_fv1_xxh3.sst", RocksDbFormat::BlockBased, Some(1)),
        (
            "rocksdb_fv0_legacy_magic.sst",
            RocksDbFormat::LegacyBlockBased,
            Some(0),
        ),
        (
            "rocksdb_fv0_zlib.sst",
            RocksDbFormat::LegacyBlockBased,
            Some(0),
        ),
        ("rocksdb_plain_table.sst", RocksDbFormat::Plain, None),
    ];
    for (name, format, version) in cases {
        let bytes = std::fs::read(fixture("rocksdb", name)).unwrap();
        match TableReader::open(bytes, OpenOptions::default()) {
            Err(e @ Error::RocksDb { .. }) => {
                let Error::RocksDb {
                    format: f,
                    format_version: v,
                } = &e
                else {
                    unreachable!()
                };
                assert_eq!((*f, *v), (format, version), "{name}");
                assert!(e.to_string().contains("RocksDB"), "{name}: {e}");
                assert!(!e.to_string().contains("corrupt"), "{name}: {e}");
            }
            Err(e) => panic!("{name}: wrong error {e}"),
            Ok(_) => panic!("{name}: opened a RocksDB file as LevelDB"),
        }
    }
}

#[test]
fn zstd_and_raw_deflate_tables_round_trip() {
    for compression in [
        Compression::Zstd(1),
        Compression::Zstd(19),
        Compression::RawDeflate(6),
        Compression::Zlib(6),
    ] {
        for keys in [KeyFormat::Plain, KeyFormat::Internal] {
            let mut opts = Options::default().compression(compression).bloom(10);
            if keys == KeyFormat::Internal {
                opts = opts.keys(KeyFormat::Internal);
            }
            let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
            let mut expect = Vec::new();
            for i in 0..3000u32 {
                let mut k = format!("key{i:08}").into_bytes();
                if keys == KeyFormat::Internal {
                    k.extend_from_slice(&((u64::from(i) + 1) << 8 | 1).to_le_bytes());
                }
                let v = format!("value {i} {}", "abc".repeat((i % 40) as usize)).into_bytes();
                b.add(&k, &v).unwrap();
                expect.push((k, v));
            }
            let (bytes, stats) = b.finish().unwrap();
            let table = TableReader::open(bytes.clone(), OpenOptions::default()).unwrap();
            assert_eq!(table.is_internal(), keys == KeyFormat::Internal);
            // Blocks really are stored with the codec's id.
            let (_, h) = &table.data_block_handles().unwrap()[0];
            let stored = bytes[(h.offset + h.size) as usize];
            assert_eq!(stored, compression.id(), "{compression:?}");
            let got: Vec<_> = table
                .iter(&ReadOptions::default())
                .into_iter()
                .map(|e| e.unwrap())
                .collect();
            assert_eq!(got, expect);
            assert_eq!(stats.entries, 3000);
            for (k, v) in expect.iter().step_by(7) {
                let user = if keys == KeyFormat::Internal {
                    &k[..k.len() - 8]
                } else {
                    &k[..]
                };
                assert_eq!(
                    table
                        .get(user, &Default::default())
                        .map(|l| l.into_value())
                        .unwrap()
                        .as_deref(),
                    Some(&v[..])
                );
            }
            assert!(table.verify().is_ok());
        }
    }
}
