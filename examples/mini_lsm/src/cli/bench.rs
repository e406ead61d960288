//! `mini_lsm DIR bench`: LevelDB's db_bench workloads on the engine, with db_bench's keys,
//! values and output, so that the two run side by side on the same data
//! (`scripts/bench_mini_lsm.sh`).
//!
//! ```text
//! keys:    the number as 16 decimal digits; fillseq 0, 1, 2...; the random workloads draw
//!          from LevelDB's Random (Park-Miller), seeded 1000 + the thread's position among
//!          all threads the run started (from 1), as db_bench seeds them
//! values:  db_bench's RandomGenerator: 1 MiB of pieces of 50 printable random bytes
//!          (Random(301)) repeated to 100 (compression ratio 0.5), read in consecutive
//!          windows of --value_size bytes
//! writes:  one Put per WriteBatch, the batch cleared and refilled (db_bench's DoWrite)
//! output:  "name         :    1.234 micros/op; ..." per benchmark (db_bench's line)
//! ```

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use leveldb_table::db::files::WriteBatch;

use super::args::{Args, Outcome};
use crate::{Db, Options, WriteOptions};

/// The workloads, in db_bench's names; those that start from an empty database first.
const FRESH: &[&str] = &["fillseq", "fillrandom", "fillsync"];
const ALL: &[&str] = &[
    "fillseq",
    "fillrandom",
    "overwrite",
    "fillsync",
    "readrandom",
    "readseq",
    "readreverse",
    "compact",
];

/// LevelDB's `util/random.h` `Random`: the Park-Miller generator db_bench draws its keys
/// from.
struct LevelDbRandom(u32);

impl LevelDbRandom {
    fn new(seed: u32) -> Self {
        let s = seed & 0x7fff_ffff;
        LevelDbRandom(if s == 0 || s == 0x7fff_ffff { 1 } else { s })
    }
    fn next(&mut self) -> u32 {
        const M: u64 = 0x7fff_ffff;
        let product = u64::from(self.0) * 16807;
        let mut s = (product >> 31) + (product & M);
        if s > M {
            s -= M;
        }
        self.0 = s as u32;
        self.0
    }
    fn uniform(&mut self, n: u32) -> u32 {
        self.next() % n.max(1)
    }
}

/// db_bench's key: the number as 16 decimal digits, formatted as db_bench formats it
/// (`snprintf("%016d")`: the standard formatter here, not a cheaper digit loop, so that the
/// two drivers cost alike).
fn key_of(k: u32, out: &mut [u8; 16]) {
    let _ = write!(&mut out[..], "{k:016}");
}

/// db_bench's `RandomGenerator`.
struct ValueGen {
    data: Vec<u8>,
    pos: usize,
}

impl ValueGen {
    fn new() -> Self {
        let mut rnd = LevelDbRandom::new(301);
        let mut data = Vec::with_capacity((1 << 20) + 100);
        while data.len() < 1 << 20 {
            let raw: Vec<u8> = (0..50).map(|_| b' ' + rnd.uniform(95) as u8).collect();
            let start = data.len();
            while data.len() - start < 100 {
                data.extend_from_slice(&raw);
            }
            data.truncate(start + 100);
        }
        ValueGen { data, pos: 0 }
    }
    fn generate(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        self.data.get(self.pos - len..self.pos).unwrap_or_default()
    }
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

/// What one thread of a benchmark did.
#[derive(Default)]
struct Done {
    ops: u64,
    bytes: u64,
    found: u64,
}

struct Bench<'a> {
    db: &'a Db,
    num: u32,
    value_size: usize,
    sync: bool,
}

impl Bench<'_> {
    /// One thread's share of benchmark `name`.
    fn thread(&self, name: &str, seed: u32) -> crate::Result<Done> {
        let (db, num) = (self.db, self.num);
        let mut rand = LevelDbRandom::new(seed);
        let mut key = [0u8; 16];
        let mut done = Done::default();
        match name {
            "fillseq" | "fillrandom" | "overwrite" | "fillsync" => {
                let n = if name == "fillsync" { num / 1000 } else { num };
                let mut gen = ValueGen::new();
                let mut batch = WriteBatch::new();
                let wo = WriteOptions {
                    sync: self.sync || name == "fillsync",
                };
                for i in 0..n {
                    let k = if name == "fillseq" {
                        i
                    } else {
                        rand.uniform(num)
                    };
                    key_of(k, &mut key);
                    batch.clear();
                    batch.put(&key, gen.generate(self.value_size));
                    db.write_opts(&mut batch, wo)?;
                    done.bytes += (key.len() + self.value_size) as u64;
                }
                done.ops = u64::from(n);
            }
            "readrandom" => {
                let mut value = Vec::new();
                for _ in 0..num {
                    key_of(rand.uniform(num), &mut key);
                    done.found += u64::from(db.get_into(&key, None, &mut value)?);
                }
                done.ops = u64::from(num);
            }
            "readseq" | "readreverse" => {
                let mut it = match name {
                    "readseq" => db.iter(None, None, None)?,
                    _ => db.iter_rev(None, None, None)?,
                };
                while it.valid() && done.ops < u64::from(num) {
                    done.bytes += (it.key().len() + it.value().len()) as u64;
                    done.ops += 1;
                    match name {
                        "readseq" => it.next(),
                        _ => it.prev(),
                    }
                }
                it.status()?;
            }
            _ => {
                db.compact_range(None, None)?;
                done.ops = 1;
            }
        }
        Ok(done)
    }
}

/// Runs `bench` on `dir`.
pub fn run(dir: &Path, a: &Args, out: &mut dyn Write) -> Outcome {
    let num = a.number("--num", 1_000_000, i32::MAX as u64)? as u32;
    let threads = a.number("--threads", 1, 64)?.max(1) as u32;
    let value_size = a.number("--value_size", 100, 1 << 20)? as usize;
    let bloom_bits = a.number("--bloom_bits", 10, 64)? as usize;
    let list = a.text("--benchmarks")?.unwrap_or("fillrandom");
    let names: Vec<&str> = list.split(',').filter(|s| !s.is_empty()).collect();
    if let Some(bad) = names.iter().find(|n| !ALL.contains(n)) {
        return Err(format!(
            "unknown benchmark {bad:?} (known: {})",
            ALL.join(", ")
        ));
    }
    let listed = a.value("--benchmarks").is_some();
    if listed && !a.switch("--fresh") {
        if let Some(f) = names.iter().find(|n| FRESH.contains(n)) {
            return Err(format!(
                "{f} starts from an empty database: add --fresh to let it remove the database in {}",
                dir.display()
            ));
        }
    }
    let opts = Options {
        sync: a.switch("--sync"),
        bloom_bits_per_key: bloom_bits,
        ..Options::default()
    };
    let open = || Db::open(dir, opts.clone()).map_err(|e| format!("{}: {e}", dir.display()));
    let mut db = Some(open()?);
    let seeds = AtomicU32::new(0);
    for name in names {
        if listed && FRESH.contains(&name) {
            drop(db.take());
            crate::destroy(dir).map_err(|e| e.to_string())?;
            db = Some(open()?);
        }
        let Some(d) = db.as_ref() else {
            return Err("no database".into());
        };
        let bench = Bench {
            db: d,
            num,
            value_size,
            sync: opts.sync,
        };
        let cpu_start = cpu_seconds();
        let start = Instant::now();
        let results: Vec<crate::Result<Done>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|_| {
                    let seed = 1000 + seeds.fetch_add(1, Ordering::Relaxed) + 1;
                    let b = &bench;
                    s.spawn(move || b.thread(name, seed))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(crate::Error::InvalidArgument(
                            "a benchmark thread panicked".into(),
                        ))
                    })
                })
                .collect()
        });
        let secs = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu_start;
        let mut total = Done::default();
        for r in results {
            let r = r.map_err(|e| e.to_string())?;
            total.ops += r.ops;
            total.bytes += r.bytes;
            total.found += r.found;
        }
        let us = secs * 1e6 / total.ops.max(1) as f64;
        let extra = match name {
            "readrandom" => format!(
                " ({} of {} found)",
                total.found,
                u64::from(num) * u64::from(threads)
            ),
            _ if total.bytes > 0 => format!(" {:6.1} MB/s", total.bytes as f64 / 1048576.0 / secs),
            _ => String::new(),
        };
        let written = if a.switch("--json") {
            writeln!(
                out,
                "{{\"bench\": \"{name}\", \"micros_per_op\": {us:.4}, \"cpu_s\": {cpu:.2}, \"ops\": {}, \"found\": {}, \"tables\": {:?}}}",
                total.ops,
                total.found,
                d.tables_per_level()
            )
        } else {
            writeln!(out, "{name:<12} : {us:>11.3} micros/op;{extra}")
        };
        if written.and_then(|()| out.flush()).is_err() {
            break; // a closed pipe
        }
    }
    Ok(ExitCode::SUCCESS)
}
