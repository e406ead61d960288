//! Writes the seed corpora under fuzz/seeds/<target>/ (run from the repository root):
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example gen_seeds
//! ```
//!
//! Seeds: the small real tables in testdata/ (LevelDB, Mojang, the damaged ones), tables
//! built here with varied options, their raw blocks (for block_hostile) and filter blocks
//! (for filter_hostile). Deterministic: running it twice writes the same files.

use leveldb_table::table::KeyFormat;
use std::fs;
use std::path::Path;

use leveldb_table::raw::internal_key::internal_key;
use leveldb_table::{
    error::BlockKind, raw::internal_key::ValueType, Compression, Options, OpenOptions,
    TableBuilder, TableReader,
};

fn build(opts: &Options, n: usize, internal: bool) -> Vec<u8> {
    let mut b = TableBuilder::new(Vec::new(), opts).unwrap();
    for i in 0..n {
        let user = format!("key-{:04}/{}", i, "x".repeat(i % 7));
        let value = format!("value {} {}", i, "abc".repeat(i % 11));
        let key = if internal {
            internal_key(
                user.as_bytes(),
                i as u64 + 1,
                if i % 5 == 4 {
                    ValueType::Deletion
                } else {
                    ValueType::Value
                },
            )
        } else {
            user.into_bytes()
        };
        b.add(&key, value.as_bytes()).unwrap();
    }
    b.finish().unwrap().0
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join(name), bytes).unwrap();
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let seeds = root.join("fuzz/seeds");
    let td = root.join("testdata");

    let mut tables: Vec<(String, Vec<u8>)> = Vec::new();
    for rel in [
        "cases/small_snappy/000005.ldb",
        "cases/mojang_zlib/000009.ldb",
        "corrupt/bad_magic.ldb",
        "corrupt/truncated_47.ldb",
    ] {
        tables.push((rel.replace('/', "_"), fs::read(td.join(rel)).unwrap()));
    }
    let base = Options::default();
    let built: Vec<(&str, Options, usize, bool)> = vec![
        ("empty_plain", base.clone(), 0, false),
        (
            "plain_raw_bloom_tiny_blocks",
            base.clone()
                .compression(Compression::None)
                .bloom(10)
                .block_size(128)
                .block_restart_interval(2),
            40,
            false,
        ),
        (
            "plain_snappy_bloom",
            base.clone().bloom(10).block_size(512),
            60,
            false,
        ),
        (
            "internal_snappy_bloom",
            base.clone().bloom(10).keys(KeyFormat::Internal).block_size(700),
            60,
            true,
        ),
        (
            "internal_raw_nofilter_r1",
            base.clone()
                .compression(Compression::None)
                .block_restart_interval(1)
                .keys(KeyFormat::Internal)
                .block_size(300),
            30,
            true,
        ),
        (
            "plain_zstd",
            base.clone()
                .compression(Compression::Zstd(3))
                .bloom(8)
                .block_size(1024),
            50,
            false,
        ),
        (
            "plain_deflate",
            base.clone()
                .compression(Compression::RawDeflate(6))
                .block_size(1024),
            50,
            false,
        ),
        ("one_entry", base.clone().bloom(10), 1, false),
    ];
    for (name, opts, n, internal) in &built {
        tables.push((format!("built_{name}.ldb"), build(opts, *n, *internal)));
    }

    for (name, bytes) in &tables {
        write(&seeds.join("table_hostile"), name, bytes);
        let Ok(t) = TableReader::open(&bytes[..], OpenOptions::default()) else {
            continue;
        };
        // block_hostile: flags byte (bit 0: internal comparator) + uncompressed block.
        let flag = u8::from(t.is_internal());
        let mut blocks = vec![("index", t.index_block().data().to_vec())];
        if let Ok(c) = t.read_block(t.footer().metaindex, BlockKind::Metaindex) {
            blocks.push(("metaindex", c.data.to_vec()));
        }
        if let Ok(hs) = t.data_block_handles() {
            for (i, (_, h)) in hs.iter().take(2).enumerate() {
                if let Ok(c) = t.read_block(*h, BlockKind::Data) {
                    blocks.push((if i == 0 { "data0" } else { "data1" }, c.data.to_vec()));
                }
            }
        }
        for (kind, data) in blocks {
            let mut seed = vec![flag];
            seed.extend_from_slice(&data);
            write(
                &seeds.join("block_hostile"),
                &format!("{name}.{kind}"),
                &seed,
            );
        }
        // filter_hostile: u16 length + filter block + a probe stream.
        if let Some(h) = t.filter_handle() {
            if let Ok(c) = t.read_block(h, BlockKind::Filter) {
                if c.data.len() <= usize::from(u16::MAX) {
                    let mut seed = (c.data.len() as u16).to_le_bytes().to_vec();
                    seed.extend_from_slice(&c.data);
                    seed.extend_from_slice(
                        b"\x0a\x05\x00\x00key-0001/x\x00\x08\x00\x00key-0002/xx",
                    );
                    write(
                        &seeds.join("filter_hostile"),
                        &format!("{name}.filter"),
                        &seed,
                    );
                }
            }
        }
    }
    // roundtrip: a few structured inputs (any bytes decode as an `Input`).
    for (i, s) in [
        &b"\x03\x01a\x01b\x00\x02cc\x01d\x01\x00\x10\x04\x01\x01\x0a\x00\x01"[..],
        &[0x55; 64][..],
        &[0x01; 200][..],
    ]
    .iter()
    .enumerate()
    {
        write(&seeds.join("roundtrip"), &format!("seed{i}"), s);
    }
    println!("seeds written under {}", seeds.display());
}
