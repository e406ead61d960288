//! The conformance kit's adapter for the `sstable` crate (docs/conformance.md): tables only
//! (the crate has no database level).
//!
//! ```text
//! adapter capabilities
//! adapter read-table FILE     Table::new_from_file + its iterator
//! adapter write-table FILE [--block-size N] [--restart-interval N]
//!                          [--compression none|snappy] [--bloom-bits N]   (JSONL on stdin)
//! ```
//!
//! The crate's iterator has no error status: a block it cannot read ends or skips silently,
//! which the kit's damaged cases show.

use std::io::{BufRead, Write};
use std::process::exit;
use std::sync::Arc;

use sstable::{filter::BloomPolicy, CompressionType, Options, SSIterator, Table, TableBuilder};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The hex string of `"name": "..."` in a row the kit wrote.
fn field(line: &str, name: &str) -> Option<Vec<u8>> {
    let at = line.find(&format!("\"{name}\""))? + name.len() + 2;
    let rest = &line[at..];
    let start = rest.find('"')? + 1;
    let end = start + rest[start..].find('"')?;
    unhex(&rest[start..end])
}

fn read_table(path: &str) -> i32 {
    let table = match Table::new_from_file(Options::default(), std::path::Path::new(path)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{path}: {e:?}");
            return 1;
        }
    };
    let mut it = table.iter();
    let out = std::io::stdout();
    let mut out = std::io::BufWriter::new(out.lock());
    let (mut k, mut v) = (Vec::new(), Vec::new());
    while it.advance() {
        if it.current(&mut k, &mut v) {
            let _ = writeln!(out, "{{\"key\":\"{}\",\"value\":\"{}\"}}", hex(&k), hex(&v));
        }
    }
    let _ = out.flush();
    0
}

fn write_table(path: &str, flags: &[String]) -> i32 {
    let mut opts = Options::default();
    let mut bloom = None;
    for pair in flags.chunks(2) {
        let (flag, value) = (pair[0].as_str(), pair.get(1).map_or("", String::as_str));
        let n = value.parse::<usize>().unwrap_or(0);
        match (flag, value) {
            ("--block-size", _) => opts.block_size = n,
            ("--restart-interval", _) => opts.block_restart_interval = n,
            ("--compression", "none") => opts.compression_type = CompressionType::CompressionNone,
            ("--compression", "snappy") => opts.compression_type = CompressionType::CompressionSnappy,
            ("--bloom-bits", _) => bloom = Some(n as u32),
            _ => {
                eprintln!("write-table: unsupported {flag} {value}");
                return 3;
            }
        }
    }
    let tmp = format!("{path}.tmp");
    let file = match std::fs::File::create(&tmp) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("{tmp}: {e:?}");
            return 1;
        }
    };
    let mut b = match bloom {
        Some(bits) => {
            opts.filter_policy = Arc::new(Box::new(BloomPolicy::new(bits)));
            TableBuilder::new(opts, file)
        }
        None => TableBuilder::new_no_filter(opts, file),
    };
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let Ok(line) = line else {
            eprintln!("stdin: read error");
            return 1;
        };
        if line.trim().is_empty() {
            continue;
        }
        let (Some(k), Some(v)) = (field(&line, "key"), field(&line, "value")) else {
            eprintln!("stdin line {}: not a {{\"key\", \"value\"}} row", i + 1);
            return 1;
        };
        if let Err(e) = b.add(&k, &v) {
            eprintln!("{path}: {e:?}");
            return 1;
        }
    }
    if let Err(e) = b.finish() {
        eprintln!("{path}: {e:?}");
        return 1;
    }
    match std::fs::rename(&tmp, path) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{path}: {e:?}");
            1
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let code = match (args.get(1).map(String::as_str), args.len()) {
        (Some("capabilities"), _) => {
            println!(
                "{{\"name\": \"sstable 0.11.1 (Rust)\", \"verbs\": [\"read-table\", \"write-table\"], \"compressions\": [\"none\", \"snappy\"]}}"
            );
            0
        }
        (Some("read-table"), 3) => read_table(&args[2]),
        (Some("write-table"), n) if n >= 3 => write_table(&args[2], &args[3..]),
        (verb, _) => {
            eprintln!("unsupported: {verb:?}");
            3
        }
    };
    exit(code);
}
