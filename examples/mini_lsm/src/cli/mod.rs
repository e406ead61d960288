//! The `mini_lsm` command line, callable from tests with any standard input, output and
//! error stream.
//!
//! ```text
//! mini_lsm [--hex] DIR put K V
//! mini_lsm [--hex] DIR get K              the value and a newline; exit 1 when absent
//! mini_lsm [--hex] DIR delete K
//! mini_lsm [--hex] DIR scan [--from K] [--to K] [--reverse] [--format text|jsonl]
//! mini_lsm [--hex] DIR compact [--from K] [--to K]
//! mini_lsm DIR repair
//! mini_lsm DIR bench [--num N] [--benchmarks LIST] [--fresh] [--json] [--sync]
//!                    [--threads N] [--value_size N] [--bloom_bits N]
//! ```
//!
//! Keys and values are the arguments' bytes (any bytes, UTF-8 or not), or hex with `--hex`
//! (anywhere in the line), or standard input's bytes for an argument `-` (one per command;
//! with `--hex`, hex text). An argument after `--` is never a flag. `scan` prints
//! `key<TAB>value` lines, each byte that is not printable ASCII (and `\` and TAB) escaped
//! (`\t`, `\n`, `\r`, `\\`, `\xHH`; valid UTF-8 beyond ASCII printed as is, Unicode control
//! characters as `\u{...}`), so printable keys print as they are; `--format jsonl` prints
//! `{"key": ..., "value": ...}` objects instead (`key_hex`/`value_hex` for bytes that are
//! not UTF-8, and always with `--hex`). Errors exit 2 with a message on standard error; a
//! write to a closed pipe ends the output quietly.

mod args;
mod bench;
mod output;

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::{Db, Options};
use args::{Args, Input, Outcome};
use output::Format;

const USAGE: &str = "usage: mini_lsm [--hex] DIR put K V | get K | delete K | \
    scan [--from K] [--to K] [--reverse] [--format text|jsonl] | compact [--from K] [--to K] | \
    repair | bench [--num N] [--benchmarks fillseq,fillrandom,overwrite,fillsync,readrandom,\
    readseq,readreverse,compact] [--fresh] [--json] [--sync] [--threads N] [--value_size N] \
    [--bloom_bits N]\n\
    K or V: the argument's bytes, hex with --hex, standard input's bytes for -";

/// Runs the command line of this process.
pub fn main_from_env() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    // Handles that lock per write (not for the whole run): a thread of the engine may print.
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    main(&args, &mut std::io::stdin(), &mut stdout, &mut stderr)
}

/// Runs the command line `args` (without the program name).
pub fn main(
    args: &[OsString],
    stdin: &mut dyn Read,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> ExitCode {
    let parsed = match Args::parse(args) {
        Ok(a) => a,
        Err(msg) => {
            let _ = writeln!(err, "mini_lsm: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(parsed, stdin, out, err) {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "mini_lsm: {e}");
            ExitCode::from(2)
        }
    }
}

fn open(dir: &Path, err: &mut dyn Write) -> Result<Db, String> {
    let db = Db::open(dir, Options::default()).map_err(|e| format!("{}: {e}", dir.display()))?;
    for d in &db.recovery().dropped {
        let _ = writeln!(
            err,
            "mini_lsm: warning: {}: dropped {} bytes at offset {} ({})",
            dir.join(&d.log).display(),
            d.bytes,
            d.offset,
            d.reason
        );
    }
    Ok(db)
}

fn run(a: Args, stdin: &mut dyn Read, out: &mut dyn Write, err: &mut dyn Write) -> Outcome {
    let dir: PathBuf = a.dir.clone();
    let e = |e: crate::Error| e.to_string();
    let mut input = Input::new(stdin, a.hex);
    let ops = a.operands();
    match (a.command.as_str(), ops) {
        ("put", [k, v]) => {
            let (k, v) = (input.bytes(k)?, input.bytes(v)?);
            open(&dir, err)?.put(&k, &v).map_err(e)?;
        }
        ("delete", [k]) => {
            let k = input.bytes(k)?;
            open(&dir, err)?.delete(&k).map_err(e)?;
        }
        ("get", [k]) => {
            let k = input.bytes(k)?;
            let Some(v) = open(&dir, err)?.get(&k).map_err(e)? else {
                return Ok(ExitCode::from(1));
            };
            let shown = match a.hex {
                true => output::to_hex(&v).into_bytes(),
                false => v,
            };
            let _ = out.write_all(&shown).and_then(|()| out.write_all(b"\n"));
        }
        ("scan", []) => {
            let (from, to) = range(&a, &mut input)?;
            let format = match a.text("--format")? {
                None | Some("text") => Format::Text,
                Some("jsonl") => Format::Jsonl,
                Some(f) => return Err(format!("--format {f}: text or jsonl")),
            };
            let db = open(&dir, err)?;
            let it = match a.switch("--reverse") {
                true => db.iter_rev(from.as_deref(), to.as_deref(), None),
                false => db.iter(from.as_deref(), to.as_deref(), None),
            };
            let mut w = std::io::BufWriter::new(out);
            for kv in it.map_err(e)? {
                let (k, v) = kv.map_err(e)?;
                if output::entry(&mut w, format, a.hex, &k, &v).is_err() {
                    return Ok(ExitCode::SUCCESS); // a closed pipe (`| head`)
                }
            }
            let _ = w.flush();
        }
        ("compact", []) => {
            let (from, to) = range(&a, &mut input)?;
            let db = open(&dir, err)?;
            db.compact_range(from.as_deref(), to.as_deref())
                .map_err(e)?;
        }
        ("repair", []) => {
            let r = crate::repair(&dir, &Options::default()).map_err(e)?;
            for d in &r.dropped_records {
                let _ = writeln!(
                    err,
                    "mini_lsm: {}: dropped {} bytes at offset {} ({})",
                    dir.join(&d.log).display(),
                    d.bytes,
                    d.offset,
                    d.reason
                );
            }
            for d in &r.damage {
                let _ = writeln!(err, "mini_lsm: {}: {d}", dir.display());
            }
            let archived = match r.archived.is_empty() {
                true => "nothing".to_string(),
                false => r.archived.join(", "),
            };
            let _ = writeln!(
                out,
                "repaired {}: read {} logs and {} tables ({} entries), wrote {} tables \
                 ({} entries); dropped {} damaged log records, skipped {} damaged table \
                 ranges; moved to lost/: {archived}",
                dir.display(),
                r.logs,
                r.tables,
                r.entries_read,
                r.tables_written,
                r.entries_written,
                r.dropped_records.len(),
                r.damage.len(),
            );
        }
        ("bench", []) => return bench::run(&dir, &a, out),
        _ => return Err(USAGE.to_string()),
    }
    Ok(ExitCode::SUCCESS)
}

/// A range's ends, either open.
type Range = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The `--from` and `--to` keys, if given.
fn range(a: &Args, input: &mut Input<'_>) -> Result<Range, String> {
    let from = a.value("--from").map(|k| input.bytes(k)).transpose()?;
    let to = a.value("--to").map(|k| input.bytes(k)).transpose()?;
    Ok((from, to))
}
