//! `sst db scan|get|records|info`: a LevelDB database directory, read-only (the library's
//! `leveldb_table::db`): CURRENT, the MANIFEST's live tables per level and the live logs,
//! merged; nothing in the directory is written, locked or touched.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use leveldb_table::db::{builtin_comparator, Db, DbOptions};
use leveldb_table::LookupKind;

use crate::common::{self, CmdResult, Failure, Global, EXIT_FAIL, EXIT_OK};
use crate::decoding::Decoding;
use crate::output::{OutFormat, RowsOut};

const EXAMPLES: &str = "\
Examples:
  sst db info  chrome/Local\\ Storage/leveldb              levels, tables, logs, sequences
  sst db scan  db/ --format jsonl                          the live view, in key order
  sst db scan  db/ --from user: --to user; --at-seq 1200   a range, as of sequence 1200
  sst db get   db/ user:42 user:43                         newest values (logs, then levels)
  sst db records db/ --format jsonl                        every record of every file, located to the byte
  sst db scan  damaged/ --salvage                          read past damage (named on stderr); agrees
                                                           with db records --salvage and db get --salvage

The directory is read as it is: no LOCK taken (it works while LevelDB or Chrome holds it),
nothing created, renamed, replayed or rewritten, no mtime touched.
Exit: 0 success (get: every key found); 1 a key not found (get), damage met (--salvage);
2 the directory cannot be read (damage without --salvage, an unknown comparator).";

/// `sst db` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// The live view: each user key with its newest visible value, in key order.
    Scan(ScanArgs),
    /// Look user keys up: the memtable (logs), then level 0 newest first, then levels 1-6.
    Get(GetArgs),
    /// Every record of every table and log, with file, offset, sequence and status.
    Records(crate::dbrecords::RecordsArgs),
    /// What the MANIFEST says: comparator, numbers, sequences, tables per level, logs.
    Info(crate::dbinfo::InfoArgs),
    /// Write a new database directory from sorted entries (a bulk load LevelDB opens
    /// without compacting).
    Build(crate::dbbuild::Args),
}

/// `sst db ...`
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

/// Options every `sst db` subcommand shares.
#[derive(clap::Args, Debug)]
pub struct DbArgs {
    /// The database directory.
    pub dir: PathBuf,
    /// Skip damaged log records, damaged table blocks and missing tables, and read every
    /// table and log when the MANIFEST is missing or damaged (the order and the last
    /// sequence then taken from the keys); each skip is reported on stderr (exit 1). Scan,
    /// get and records skip the same damage and agree.
    #[arg(long)]
    pub salvage: bool,
}

#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// First user key (inclusive).
    #[arg(long, value_name = "KEY")]
    pub from: Option<OsString>,
    /// Stop before this user key (exclusive).
    #[arg(long, value_name = "KEY")]
    pub to: Option<OsString>,
    /// Read as of this sequence number (a snapshot); default the newest.
    #[arg(long, value_name = "N")]
    pub at_seq: Option<u64>,
    /// Print at most N entries.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Output format: text, json (an array of the jsonl rows) or jsonl
    /// `{"key": hex, "value": hex, "seq": n}`.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// --from/--to are hex; text output shows keys and values in hex.
    #[arg(long)]
    pub hex: bool,
    #[command(flatten)]
    pub decode: crate::decoding::DecodeArgs,
}

#[derive(clap::Args, Debug)]
pub struct GetArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// User keys to look up.
    #[arg(id = "key_args", value_name = "KEY")]
    pub key_args: Vec<OsString>,
    /// Read keys from a file, one per line (`-` is stdin).
    #[arg(long, value_name = "PATH")]
    pub keys_from: Option<PathBuf>,
    /// Read as of this sequence number; default the newest.
    #[arg(long, value_name = "N")]
    pub at_seq: Option<u64>,
    /// Keys are hex; text output shows keys and values in hex.
    #[arg(long)]
    pub hex: bool,
    /// Output format: text, json or jsonl
    /// `{"key": hex, "found": bool, "value": hex, "seq": n}` (value and seq when found).
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    #[command(flatten)]
    pub decode: crate::decoding::DecodeArgs,
}

/// Opens the directory (`--comparator` is the order when no MANIFEST names one) and warns
/// of what opening noticed or skipped.
pub(crate) fn open(a: &DbArgs, g: &Global) -> Result<Db, Failure> {
    let opts = DbOptions {
        verify_checksums: g.verify,
        salvage: a.salvage,
        order: g.comparator.and_then(|c| builtin_comparator(c.name())),
        ..DbOptions::default()
    };
    let db = Db::open(&a.dir, opts).map_err(|e| {
        let flag = match (&e, g.comparator) {
            (leveldb_table::Error::UnsettledOrder { .. }, Some(c)) => {
                format!(" (--comparator {})", c.name())
            }
            _ => String::new(),
        };
        Failure::error(
            crate::sqlite_note::not_leveldb(&a.dir)
                .unwrap_or(format!("{}: {e}{flag}", a.dir.display())),
        )
    })?;
    for n in db.notes() {
        common::warn(&format!("{}: {n}", a.dir.display()));
    }
    Ok(db)
}

/// After a read under `--salvage`: each damaged range skipped since opening (opening's
/// are among its notes), then a summary line when anything was skipped.
pub(crate) fn report_damage(db: &Db, a: &DbArgs) {
    if !a.salvage {
        return;
    }
    let all = db.damage();
    for d in all.iter().skip(db.damage_at_open()) {
        common::warn(&format!("{}: {d}", a.dir.display()));
    }
    if !all.is_empty() {
        common::warn(&format!(
            "{}: salvage: {} damaged range(s) skipped; every record printed comes from a block \
             or log record whose checksum matched",
            a.dir.display(),
            all.len()
        ));
    }
}

/// Exit code for a run that read everything asked: 1 if damage was skipped.
pub(crate) fn damage_code(db: &Db, a: &DbArgs) -> i32 {
    report_damage(db, a);
    if a.salvage
        && (!db.damage().is_empty()
            || db.is_repair_view()
            || db.notes().iter().any(|n| n.contains("skipped")))
    {
        EXIT_FAIL
    } else {
        EXIT_OK
    }
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    match &a.command {
        Command::Scan(s) => scan(g, s),
        Command::Get(s) => get(g, s),
        Command::Records(s) => crate::dbrecords::run(g, s),
        Command::Info(s) => crate::dbinfo::run(g, s),
        Command::Build(s) => crate::dbbuild::run(s),
    }
}

pub(crate) fn text_line(
    line: &mut Vec<u8>,
    key: &[u8],
    value: &[u8],
    seq: u64,
    hex: bool,
    dec: &Decoding,
) {
    dec.push_key_text(line, key, hex);
    line.extend_from_slice(b" @ ");
    line.extend_from_slice(seq.to_string().as_bytes());
    line.extend_from_slice(b" => ");
    dec.push_value_text(line, key, value, hex);
    line.push(b'\n');
}

fn scan(g: &Global, a: &ScanArgs) -> CmdResult {
    let from = a
        .from
        .as_deref()
        .map(|k| common::key_arg(k, a.hex, "--from"))
        .transpose()?;
    let to =
        a.to.as_deref()
            .map(|k| common::key_arg(k, a.hex, "--to"))
            .transpose()?;
    let db = open(&a.db, g)?;
    let seq = a.at_seq.unwrap_or(db.last_sequence());
    let mut view = db
        .view_at(seq)
        .map_err(|e| Failure::error(describe(&a.db, &e)))?;
    let dec = Decoding::for_db(&db, &a.db.dir, &a.decode)?;
    match from.clone().or_else(|| dec.start_key()) {
        Some(f) => view.seek(&f),
        None => view.seek_to_first(),
    }
    let ucmp = db.internal_comparator().user_comparator().clone();
    let mut out = RowsOut::new(common::stdout(), a.format);
    let mut line = Vec::with_capacity(256);
    let mut n = 0u64;
    while view.valid() {
        if a.limit.is_some_and(|l| n >= l) {
            break;
        }
        if to
            .as_deref()
            .is_some_and(|t| ucmp.compare(view.key(), t).is_ge())
            || dec.past_end(view.key())
        {
            break;
        }
        if !dec.keep(view.key()) {
            view.next();
            continue;
        }
        line.clear();
        match a.format {
            OutFormat::Text => text_line(
                &mut line,
                view.key(),
                view.value(),
                view.sequence(),
                a.hex,
                &dec,
            ),
            OutFormat::Json | OutFormat::Jsonl => {
                line.extend_from_slice(b"{\"key\":\"");
                common::push_hex(&mut line, view.key());
                line.extend_from_slice(b"\",\"value\":\"");
                common::push_hex(&mut line, view.value());
                line.extend_from_slice(b"\",\"seq\":");
                line.extend_from_slice(view.sequence().to_string().as_bytes());
                dec.push_json(&mut line, view.key(), Some(view.value()));
                line.extend_from_slice(b"}\n");
            }
        }
        out.write_all(&line)?;
        n += 1;
        view.next();
    }
    out.finish()?;
    if let Some(e) = view.error() {
        return Err(Failure::Exit(
            EXIT_FAIL,
            format!("{} (after {n} entries)", describe(&a.db, e)),
        ));
    }
    Ok(damage_code(&db, &a.db))
}

pub(crate) fn describe(a: &DbArgs, e: &leveldb_table::Error) -> String {
    format!("{}: {e}", a.dir.display())
}

fn get(g: &Global, a: &GetArgs) -> CmdResult {
    if a.key_args.is_empty() && a.keys_from.is_none() {
        return Err(Failure::error(
            "db get: give keys as arguments or with --keys-from PATH|-",
        ));
    }
    let mut keys: Vec<Vec<u8>> = a
        .key_args
        .iter()
        .map(|k| common::key_arg(k, a.hex, "KEY"))
        .collect::<Result<_, _>>()?;
    if let Some(path) = &a.keys_from {
        let mut r = common::LineReader::open(path)?;
        let mut raw = Vec::new();
        while r.next_line(&mut raw)? {
            keys.push(if a.hex {
                let mut k = Vec::new();
                common::unhex_into(common::trim(&raw), &mut k).map_err(|e| {
                    Failure::error(format!(
                        "{}: line {}: invalid hex key: {e}",
                        r.name(),
                        r.line_no
                    ))
                })?;
                k
            } else {
                raw.clone()
            });
        }
    }
    let db = open(&a.db, g)?;
    let dec = Decoding::for_db(&db, &a.db.dir, &a.decode)?;
    let seq = a.at_seq.unwrap_or(db.last_sequence());
    let mut out = RowsOut::new(common::verdict_stdout(), a.format);
    let mut value = Vec::new();
    let mut line = Vec::with_capacity(256);
    let mut missing = false;
    for k in &keys {
        let found = db
            .lookup_into(k, seq, &mut value)
            .map_err(|e| Failure::error(describe(&a.db, &e)))?;
        line.clear();
        match a.format {
            OutFormat::Text => match found {
                LookupKind::Found { sequence, .. } => {
                    text_line(&mut line, k, &value, sequence.unwrap_or(0), a.hex, &dec)
                }
                LookupKind::Deleted { sequence } => {
                    dec.push_key_text(&mut line, k, a.hex);
                    line.extend_from_slice(format!(": deleted @ {sequence}\n").as_bytes());
                }
                LookupKind::NotFound => {
                    dec.push_key_text(&mut line, k, a.hex);
                    line.extend_from_slice(b": not found\n");
                }
            },
            OutFormat::Json | OutFormat::Jsonl => {
                line.extend_from_slice(b"{\"key\":\"");
                common::push_hex(&mut line, k);
                match found {
                    LookupKind::Found { sequence, .. } => {
                        line.extend_from_slice(b"\",\"found\":true,\"value\":\"");
                        common::push_hex(&mut line, &value);
                        line.extend_from_slice(b"\",\"seq\":");
                        line.extend_from_slice(sequence.unwrap_or(0).to_string().as_bytes());
                        dec.push_json(&mut line, k, Some(&value));
                    }
                    LookupKind::Deleted { sequence } => {
                        line.extend_from_slice(b"\",\"found\":false,\"deleted\":true,\"seq\":");
                        line.extend_from_slice(sequence.to_string().as_bytes());
                        dec.push_json(&mut line, k, None);
                    }
                    LookupKind::NotFound => {
                        line.extend_from_slice(b"\",\"found\":false");
                        dec.push_json(&mut line, k, None);
                    }
                }
                line.extend_from_slice(b"}\n");
            }
        }
        missing |= !matches!(found, LookupKind::Found { .. });
        out.write_all(&line)?;
    }
    out.finish()?;
    Ok(if missing {
        EXIT_FAIL
    } else {
        damage_code(&db, &a.db)
    })
}
