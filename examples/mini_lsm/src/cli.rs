//! The command line of `mini_lsm` (see `main.rs`), callable from tests with any writer for
//! standard output.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use crate::{Db, Options};
use leveldb_table::db::files::WriteBatch;

fn usage() -> ExitCode {
    eprintln!(
        "usage: mini_lsm DIR put K V | get K | delete K | scan [--from K] [--to K] | \
         bench [--num N] [--benchmarks fillseq,fillrandom,overwrite,readrandom,readseq] \
         [--fresh] [--json] [--sync]"
    );
    ExitCode::from(2)
}

/// Runs the command line of this process.
pub fn main_from_env() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    main(&args, &mut std::io::stdout().lock())
}

/// Runs the command line `args` (without the program name), printing to `out`.
pub fn main(args: &[String], out: &mut dyn Write) -> ExitCode {
    let (Some(dir), Some(cmd)) = (args.first(), args.get(1)) else {
        return usage();
    };
    let rest = &args[2..];
    match run(dir, cmd, rest, out) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mini_lsm: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(dir: &str, cmd: &str, rest: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let open = || Db::open(dir, Options::default()).map_err(|e| format!("{dir}: {e}"));
    let err = |e: leveldb_table::Error| e.to_string();
    match (cmd, rest) {
        ("put", [k, v]) => open()?.put(k.as_bytes(), v.as_bytes()).map_err(err)?,
        ("delete", [k]) => open()?.delete(k.as_bytes()).map_err(err)?,
        ("get", [k]) => match open()?.get(k.as_bytes()).map_err(err)? {
            Some(v) => {
                let _ = out.write_all(&v);
                let _ = out.write_all(b"\n");
            }
            None => return Ok(ExitCode::from(1)),
        },
        ("scan", flags) => {
            let (mut from, mut to) = (None, None);
            let mut it = flags.iter();
            while let Some(f) = it.next() {
                let slot = match f.as_str() {
                    "--from" => &mut from,
                    "--to" => &mut to,
                    _ => return Ok(usage()),
                };
                let Some(v) = it.next() else {
                    return Ok(usage());
                };
                *slot = Some(v.as_bytes().to_vec());
            }
            let db = open()?;
            let mut it = db.iter(from.as_deref(), to.as_deref(), None).map_err(err)?;
            let mut out = std::io::BufWriter::new(out);
            while it.valid() {
                let line = [it.key(), b"\t", it.value(), b"\n"].concat();
                if out.write_all(&line).is_err() {
                    return Ok(ExitCode::SUCCESS); // a closed pipe (`| head`)
                }
                it.advance();
            }
            it.status().map_err(err)?;
            let _ = out.flush();
        }
        ("bench", flags) => return bench(dir, flags, out),
        _ => return Ok(usage()),
    }
    Ok(ExitCode::SUCCESS)
}

/// SplitMix64 (Steele, Lea, Flood 2014): the random key stream both sides of
/// `scripts/bench_mini_lsm.sh` compute.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// db_bench's key: the number as 16 decimal digits.
fn key_of(k: u64, out: &mut Vec<u8>) {
    out.clear();
    let _ = write!(out, "{k:016}");
}

/// A 100-byte value that compresses to about half (db_bench's ratio 0.5): 50 letters from a
/// stream seeded by `i`, twice.
fn value_of(i: u64, v: &mut Vec<u8>) {
    const LETTERS: &[u8; 52] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    v.clear();
    let mut x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..50 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.push(LETTERS[(x % 52) as usize]);
    }
    v.extend_from_within(..50);
}

/// CPU seconds this process used so far, all threads (user + system, from /proc/self/stat,
/// in the kernel's 100 Hz ticks); 0 where there is no /proc.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    // Fields 14 and 15 of the line (utime, stime): 11 and 12 after the command name.
    (tick(11) + tick(12)) / 100.0
}

fn bench(dir: &str, flags: &[String], out: &mut dyn Write) -> Result<ExitCode, String> {
    let (mut num, mut list, mut fresh, mut json, mut sync) =
        (1_000_000u64, None, false, false, false);
    let mut it = flags.iter();
    while let Some(f) = it.next() {
        match f.as_str() {
            "--num" => num = it.next().and_then(|s| s.parse().ok()).ok_or("--num N")?,
            "--benchmarks" => list = Some(it.next().ok_or("--benchmarks LIST")?.clone()),
            "--fresh" => fresh = true,
            "--json" => json = true,
            "--sync" => sync = true,
            _ => return Ok(usage()),
        }
    }
    let opts = Options {
        sync,
        ..Options::default()
    };
    let list = list.unwrap_or_else(|| "fillrandom".into());
    let mut db = Some(Db::open(dir, opts.clone()).map_err(|e| format!("{dir}: {e}"))?);
    let (mut key, mut value) = (Vec::new(), Vec::new());
    let mut batch = WriteBatch::new();
    for name in list.split(',') {
        if matches!(name, "fillseq" | "fillrandom") && list.contains(',') {
            if !fresh {
                return Err(format!(
                    "{name} starts from an empty database: add --fresh to let it delete {dir}"
                ));
            }
            drop(db.take());
            let _ = std::fs::remove_dir_all(dir);
            db = Some(Db::open(dir, opts.clone()).map_err(|e| format!("{dir}: {e}"))?);
        }
        let Some(d) = db.as_ref() else {
            return Err("no database".into());
        };
        let start = Instant::now();
        let cpu_start = cpu_seconds();
        let mut found = None;
        let seed = match name {
            "fillrandom" => 1 << 32,
            "overwrite" => 2 << 32,
            _ => 3 << 32,
        };
        match name {
            "fillseq" | "fillrandom" | "overwrite" => {
                for i in 0..num {
                    let k = if name == "fillseq" {
                        i
                    } else {
                        splitmix64(seed + i) % num
                    };
                    key_of(k, &mut key);
                    value_of(i, &mut value);
                    // As db_bench: one batch, cleared and refilled per write.
                    batch.clear();
                    batch.put(&key, &value);
                    d.write(&mut batch).map_err(|e| e.to_string())?;
                }
            }
            "readrandom" => {
                let mut hits = 0u64;
                for i in 0..num {
                    key_of(splitmix64(seed + i) % num, &mut key);
                    hits += u64::from(
                        d.get_into(&key, None, &mut value)
                            .map_err(|e| e.to_string())?,
                    );
                }
                found = Some(hits);
            }
            "readseq" => {
                let mut it = d.iter(None, None, None).map_err(|e| e.to_string())?;
                let mut n = 0u64;
                let mut bytes = 0usize;
                while it.valid() {
                    bytes += it.key().len() + it.value().len();
                    n += 1;
                    it.advance();
                }
                it.status().map_err(|e| e.to_string())?;
                std::hint::black_box(bytes);
                found = Some(n);
            }
            other => return Err(format!("unknown benchmark {other:?}")),
        }
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu_start;
        let ops = found.filter(|_| name == "readseq").unwrap_or(num).max(1);
        let us = secs * 1e6 / ops as f64;
        if json {
            let _ = writeln!(
                out,
                "{{\"bench\": \"{name}\", \"micros_per_op\": {us:.4}, \"cpu_s\": {cpu:.2}, \"ops\": {ops}, \"found\": {}, \"tables\": {:?}}}",
                found.map_or("null".into(), |f| f.to_string()),
                d.tables_per_level()
            );
        } else {
            let extra = found.map_or(String::new(), |f| format!(" ({f} found)"));
            let _ = writeln!(
                out,
                "{name:<12}: {us:>9.3} micros/op; {ops} ops{extra}; {cpu:.2} s of CPU"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
