//! Thousands of deterministic mutants of real and built tables: opening, scanning both ways,
//! getting and verifying each one returns `Ok` or `Err`, never panics, and stays within a
//! bound on reads and scan steps. Every corruption error names a file offset.
//!
//! Mutations (see `robust_common::mutate`): bit flips (with and without a fixed CRC), byte
//! runs, truncations, appended garbage, garbage before the footer, random footer handles,
//! footer and index handles past EOF or overlapping other blocks, overlong varints, huge
//! restart counts and bad restart points, bad entry headers, filter `base_lg` 0/63/200 and
//! `k` 0/31/255 (with the filter block's CRC recomputed so the change is reached), bad
//! metaindex entries, a snappy preamble claiming 1 GiB, unknown and mismatched compression
//! ids, out-of-order separators.
//!
//! To replay one mutant: the failure message names the table, the seed and the mutation;
//! `mutant(table, seed)` below rebuilds it.

mod robust_common;

use leveldb_table::table::KeyFormat;
use std::panic::{catch_unwind, AssertUnwindSafe};

use leveldb_table::raw::internal_key::internal_key;
use leveldb_table::Cursor;
use leveldb_table::{raw::internal_key::ValueType, Compression, Error, Options, TableBuilder};
use robust_common::{exercise, modes, mutate, probe_keys, read_testdata, Mutant, Parts, Rng};

/// A table to mutate and how many mutants to make of it.
struct Subject {
    name: String,
    bytes: Vec<u8>,
    mutants: u64,
}

fn built(opts: &Options, n: usize, internal: bool, value_len: usize) -> Vec<u8> {
    let mut b = TableBuilder::new(Vec::new(), opts).unwrap();
    for i in 0..n {
        let user = format!("user-{:05}-{}", i * 7, "q".repeat(i % 5));
        let value: Vec<u8> = (0..value_len + i % 13)
            .map(|j| b"abcdefgh"[(i + j) % 8])
            .collect();
        let key = if internal {
            let vt = if i % 9 == 8 {
                ValueType::Deletion
            } else {
                ValueType::Value
            };
            internal_key(user.as_bytes(), 1000 + i as u64, vt)
        } else {
            user.into_bytes()
        };
        b.add(&key, &value).unwrap();
    }
    b.finish().unwrap().0
}

fn subjects() -> Vec<Subject> {
    let base = Options::default();
    // Larger real tables get fewer mutants: each mutant reads the whole table several times.
    let mut v = vec![
        Subject {
            name: "cases/small_snappy/000005.ldb".into(),
            bytes: read_testdata("cases/small_snappy/000005.ldb"),
            mutants: 900,
        },
        Subject {
            name: "cases/mojang_zlib/000009.ldb".into(),
            bytes: read_testdata("cases/mojang_zlib/000009.ldb"),
            mutants: 500,
        },
        Subject {
            name: "cases/no_filter/000005.ldb".into(),
            bytes: read_testdata("cases/no_filter/000005.ldb"),
            mutants: 40,
        },
        Subject {
            name: "cases/nocompress_bloom/000005.ldb".into(),
            bytes: read_testdata("cases/nocompress_bloom/000005.ldb"),
            mutants: 40,
        },
        Subject {
            name: "cases/bloom_bits_4/000005.ldb".into(),
            bytes: read_testdata("cases/bloom_bits_4/000005.ldb"),
            mutants: 25,
        },
        // zstd blocks (google/leveldb main, compression id 2).
        Subject {
            name: "leveldb_zstd/zstd_plain.ldb".into(),
            bytes: read_testdata("leveldb_zstd/zstd_plain.ldb"),
            mutants: 150,
        },
    ];
    let built_tables = [
        (
            "built/plain-raw-bloom-r2-b256",
            built(
                &base
                    .clone()
                    .compression(Compression::None)
                    .bloom(10)
                    .block_restart_interval(2)
                    .block_size(256),
                120,
                false,
                20,
            ),
        ),
        (
            "built/internal-snappy-bloom-b512",
            built(
                &base
                    .clone()
                    .bloom(10)
                    .keys(KeyFormat::Internal)
                    .block_size(512),
                150,
                true,
                30,
            ),
        ),
        (
            "built/internal-raw-nofilter-r1",
            built(
                &base
                    .clone()
                    .compression(Compression::None)
                    .block_restart_interval(1)
                    .keys(KeyFormat::Internal)
                    .block_size(400),
                80,
                true,
                10,
            ),
        ),
        (
            "built/plain-snappy-b4096-r16",
            built(&base.clone().bloom(10), 200, false, 40),
        ),
    ];
    for (name, bytes) in built_tables {
        v.push(Subject {
            name: name.into(),
            bytes,
            mutants: 500,
        });
    }
    v
}

fn mutant(
    s: &Subject,
    parts: &Parts,
    regions: &[(
        leveldb_table::error::BlockKind,
        leveldb_table::raw::format::BlockHandle,
    )],
    seed: u64,
) -> Mutant {
    let mut rng = Rng::new(seed.wrapping_mul(0x1000_0000_01b3) ^ s.bytes.len() as u64);
    mutate(&s.bytes, parts, regions, &mut rng)
}

fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "non-string panic".into())
}

/// A corruption error must say where: an offset, and a number in its message.
fn check_error(e: &Error, ctx: &str, failures: &mut Vec<String>) {
    if !e.is_corruption() {
        failures.push(format!(
            "{ctx}: non-corruption error from a byte source that cannot fail: {e}"
        ));
        return;
    }
    // Not a damaged location but a different format: named, with no offset (docs/errors.md).
    if matches!(e, Error::RocksDb { .. }) {
        return;
    }
    if e.offset().is_none() {
        failures.push(format!("{ctx}: error without an offset: {e:?}"));
    }
    let msg = e.to_string();
    if !msg.bytes().any(|b| b.is_ascii_digit()) {
        failures.push(format!("{ctx}: error message without a number: {msg}"));
    }
}

#[test]
fn mutants_never_panic_stay_bounded_and_errors_name_offsets() {
    let mut failures = Vec::new();
    let mut total = 0u64;
    let mut opened = 0u64;
    let mut errors = 0u64;
    let mut kinds = std::collections::BTreeMap::<String, u64>::new();
    for s in subjects() {
        let parts = Parts::from_table(&s.bytes);
        let regions = Parts::regions(&s.bytes);
        let keys = probe_keys(&s.bytes, 6);
        for seed in 0..s.mutants {
            let m = mutant(&s, &parts, &regions, seed);
            let kind: String = m
                .desc
                .split(|c: char| c.is_ascii_digit())
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
            *kinds.entry(kind).or_default() += 1;
            total += 1;
            for mode in modes() {
                let ctx = format!("{} seed {seed} [{}] ({})", s.name, mode.name, m.desc);
                match catch_unwind(AssertUnwindSafe(|| exercise(&m.bytes, &mode, &keys))) {
                    Err(p) => failures.push(format!("{ctx}: PANIC {}", panic_message(&p))),
                    Ok(out) => {
                        opened += u64::from(out.opened);
                        errors += out.errors.len() as u64;
                        for v in out.violations {
                            failures.push(format!("{ctx}: {v}"));
                        }
                        for e in &out.errors {
                            check_error(e, &ctx, &mut failures);
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "{total} mutants, {opened} opens succeeded, {errors} errors checked; kinds: {kinds:?}"
    );
    assert!(total >= 3000, "too few mutants: {total}");
    // The mutants must exercise both outcomes, or the test proves little.
    assert!(
        opened > total / 4 && errors > total,
        "opened {opened}, errors {errors}"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
}

/// A handful of hand-made mutants whose outcome is known exactly.
#[test]
fn targeted_mutants_have_the_expected_outcome() {
    use leveldb_table::{OpenOptions, TableReader};
    let t = read_testdata("cases/small_snappy/000005.ldb");
    let n = t.len();
    // Truncated below the footer.
    let e = TableReader::open(&t[..47], OpenOptions::default())
        .err()
        .expect("47 bytes");
    assert!(matches!(e, Error::TooShort { file_size: 47 }), "{e}");
    // Footer index handle past EOF.
    let parts = Parts::from_table(&t);
    let bad = parts.assemble(&mut |p, s, ctx| {
        if p == robust_common::Part::Footer {
            let f = leveldb_table::raw::format::Footer {
                metaindex: ctx.metaindex.unwrap(),
                index: leveldb_table::raw::format::BlockHandle::new(ctx.offset, 100),
            };
            s.bytes = f.encode().to_vec();
        }
    });
    let e = TableReader::open(&bad[..], OpenOptions::default())
        .err()
        .expect("index past EOF");
    assert!(
        matches!(
            e,
            Error::BadBlockHandle {
                kind: leveldb_table::error::BlockKind::Index,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("bad block handle"), "{e}");
    // An 11-byte varint in the footer.
    let mut bad = t.clone();
    bad[n - 48..n - 37].fill(0x80);
    let e = TableReader::open(&bad[..], OpenOptions::default())
        .err()
        .expect("overlong varint");
    assert!(matches!(e, Error::BadFooterHandle { .. }), "{e}");
    assert_eq!(e.offset(), Some(n as u64 - 48));
    // Non-minimal (but terminated) varints in the footer read the same table.
    let m = parts.assemble(&mut |p, s, ctx| {
        if p == robust_common::Part::Footer {
            let (mi, ix) = (ctx.metaindex.unwrap(), ctx.index.unwrap());
            let mut f = Vec::new();
            robust_common::put_overlong_varint(&mut f, mi.offset, 2);
            robust_common::put_overlong_varint(&mut f, mi.size, 2);
            robust_common::put_overlong_varint(&mut f, ix.offset, 2);
            robust_common::put_overlong_varint(&mut f, ix.size, 2);
            f.resize(40, 0);
            f.extend_from_slice(&s.bytes[40..]);
            s.bytes = f;
        }
    });
    let a = TableReader::open(&t[..], OpenOptions::default()).unwrap();
    let b = TableReader::open(&m[..], OpenOptions::default()).unwrap();
    let scan = |t: &TableReader<&[u8]>| {
        let mut it = t.iter(&Default::default());
        it.seek_to_first();
        it.into_iter().collect::<Result<Vec<_>, _>>().unwrap()
    };
    assert_eq!(scan(&a), scan(&b));
    assert!(b.verify().is_ok());
}
