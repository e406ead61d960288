//! `sst db scan|get|records|info`: a LevelDB database directory, read-only (the library's
//! `leveldb_table::db`): CURRENT, the MANIFEST's live tables per level and the live logs,
//! merged; nothing in the directory is written, locked or touched.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use leveldb_table::db::records::records;
use leveldb_table::db::{Db, DbOptions};
use leveldb_table::raw::internal_key::ValueType;
use serde_json::{json, Value};

use crate::common::{self, CmdResult, Failure, Global, EXIT_FAIL, EXIT_OK};
use crate::decoding::Decoding;
use crate::output::{self, OutFormat, RowsOut};

const EXAMPLES: &str = "\
Examples:
  sst db info  chrome/Local\\ Storage/leveldb              levels, tables, logs, sequences
  sst db scan  db/ --format jsonl                          the live view, in key order
  sst db scan  db/ --from user: --to user; --at-seq 1200   a range, as of sequence 1200
  sst db get   db/ user:42 user:43                         newest values (logs, then levels)
  sst db records db/ --format jsonl                        every record of every file

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
    Records(RecordsArgs),
    /// What the MANIFEST says: comparator, numbers, sequences, tables per level, logs.
    Info(InfoArgs),
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
    /// Skip damaged log records and missing tables, and read every table and log when the
    /// MANIFEST is missing or damaged; each skip is reported on stderr (exit 1).
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

#[derive(clap::Args, Debug)]
pub struct RecordsArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format: text, json or jsonl `{"key", "value", "seq", "kind", "status",
    /// "file", "offset"}` (key and value hex).
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// Text output shows keys and values in hex.
    #[arg(long)]
    pub hex: bool,
    #[command(flatten)]
    pub decode: crate::decoding::DecodeArgs,
}

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
}

fn open(a: &DbArgs, g: &Global) -> Result<Db, Failure> {
    let opts = DbOptions {
        verify_checksums: g.verify,
        salvage: a.salvage,
        ..DbOptions::default()
    };
    let db = Db::open(&a.dir, opts).map_err(|e| {
        Failure::error(
            crate::sqlite_note::not_leveldb(&a.dir).unwrap_or(format!("{}: {e}", a.dir.display())),
        )
    })?;
    for n in db.notes() {
        common::warn(&format!("{}: {n}", a.dir.display()));
    }
    if let Some(c) = g.comparator.filter(|c| c.name() != db.comparator_name()) {
        return Err(Failure::error(format!(
            "{}: --comparator {} contradicts the MANIFEST, which names {:?} (a database is \
             always read in its MANIFEST's order)",
            a.dir.display(),
            c.name(),
            db.comparator_name()
        )));
    }
    Ok(db)
}

/// Exit code for a run that read everything asked: 1 if damage was skipped.
fn damage_code(db: &Db, a: &DbArgs) -> i32 {
    if a.salvage
        && db
            .notes()
            .iter()
            .any(|n| n.contains("skipped") || n.contains("instead"))
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
        Command::Records(s) => list_records(g, s),
        Command::Info(s) => info(g, s),
        Command::Build(s) => crate::dbbuild::run(s),
    }
}

fn text_line(line: &mut Vec<u8>, key: &[u8], value: &[u8], seq: u64, hex: bool, dec: &Decoding) {
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

fn describe(a: &DbArgs, e: &leveldb_table::Error) -> String {
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
    a.decode.refuse_filters("db get")?;
    let db = open(&a.db, g)?;
    let dec = Decoding::for_db(&db, &a.db.dir, &a.decode)?;
    let seq = a.at_seq.unwrap_or(db.last_sequence());
    let mut out = RowsOut::new(common::verdict_stdout(), a.format);
    let mut value = Vec::new();
    let mut line = Vec::with_capacity(256);
    let mut missing = false;
    for k in &keys {
        let found = db
            .get_into(k, seq, &mut value)
            .map_err(|e| Failure::error(describe(&a.db, &e)))?;
        missing |= found.is_none();
        line.clear();
        match (a.format, found) {
            (OutFormat::Text, Some(s)) => text_line(&mut line, k, &value, s, a.hex, &dec),
            (OutFormat::Text, None) => {
                dec.push_key_text(&mut line, k, a.hex);
                line.extend_from_slice(b": not found\n");
            }
            (_, f) => {
                line.extend_from_slice(b"{\"key\":\"");
                common::push_hex(&mut line, k);
                match f {
                    Some(s) => {
                        line.extend_from_slice(b"\",\"found\":true,\"value\":\"");
                        common::push_hex(&mut line, &value);
                        line.extend_from_slice(b"\",\"seq\":");
                        line.extend_from_slice(s.to_string().as_bytes());
                        dec.push_json(&mut line, k, Some(&value));
                        line.extend_from_slice(b"}\n");
                    }
                    None => {
                        line.extend_from_slice(b"\",\"found\":false");
                        dec.push_json(&mut line, k, None);
                        line.extend_from_slice(b"}\n");
                    }
                }
            }
        }
        out.write_all(&line)?;
    }
    out.finish()?;
    Ok(if missing {
        EXIT_FAIL
    } else {
        damage_code(&db, &a.db)
    })
}

fn list_records(g: &Global, a: &RecordsArgs) -> CmdResult {
    let db = open(&a.db, g)?;
    let all = records(&db).map_err(|e| Failure::error(describe(&a.db, &e)))?;
    let dec = Decoding::for_db(&db, &a.db.dir, &a.decode)?;
    let mut out = RowsOut::new(common::stdout(), a.format);
    let mut line = Vec::with_capacity(256);
    for r in all.iter().filter(|r| dec.keep(&r.key)) {
        line.clear();
        let kind = match r.kind {
            ValueType::Value => "value",
            ValueType::Deletion => "deletion",
        };
        match a.format {
            OutFormat::Text => {
                dec.push_key_text(&mut line, &r.key, a.hex);
                line.extend_from_slice(
                    format!(
                        " @ {} : {kind} [{}] {}:{} => ",
                        r.sequence,
                        r.status.as_str(),
                        r.file,
                        r.offset
                    )
                    .as_bytes(),
                );
                dec.push_value_text(&mut line, &r.key, &r.value, a.hex);
                line.push(b'\n');
            }
            OutFormat::Json | OutFormat::Jsonl => {
                line.extend_from_slice(b"{\"key\":\"");
                common::push_hex(&mut line, &r.key);
                line.extend_from_slice(b"\",\"value\":\"");
                common::push_hex(&mut line, &r.value);
                line.extend_from_slice(
                    format!(
                        "\",\"seq\":{},\"kind\":\"{kind}\",\"status\":\"{}\",\"file\":",
                        r.sequence,
                        r.status.as_str()
                    )
                    .as_bytes(),
                );
                common::push_json_str(&mut line, &r.file);
                line.extend_from_slice(format!(",\"offset\":{}", r.offset).as_bytes());
                let value = (r.kind == ValueType::Value).then_some(&r.value[..]);
                dec.push_json(&mut line, &r.key, value);
                line.extend_from_slice(b"}\n");
            }
        }
        out.write_all(&line)?;
    }
    out.finish()?;
    Ok(damage_code(&db, &a.db))
}

fn info(g: &Global, a: &InfoArgs) -> CmdResult {
    let db = open(&a.db, g)?;
    let m = db.manifest();
    let levels: Vec<Value> = (0..7)
        .map(|l| {
            let files: Vec<Value> = db
                .level_files(l)
                .iter()
                .map(|f| {
                    json!({
                        "number": f.number,
                        "file": db.table_name(f.number),
                        "size": f.size,
                        "smallest": common::hex(&f.smallest),
                        "largest": common::hex(&f.largest),
                        "smallest_text": common::key_text(&f.smallest, true),
                        "largest_text": common::key_text(&f.largest, true),
                    })
                })
                .collect();
            json!({"level": l, "files": files, "bytes": db.level_files(l).iter().map(|f| f.size).sum::<u64>()})
        })
        .collect();
    let logs: Vec<Value> = db
        .logs()
        .iter()
        .map(|l| {
            json!({
                "number": l.number,
                "batches": l.batches,
                "records": l.records,
                "torn_tail": l.torn_tail.map(|(o, n)| json!({"offset": o, "len": n})),
            })
        })
        .collect();
    // Files of the directory that nothing live refers to.
    let mut unlisted = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&a.db.dir) {
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect();
        names.sort();
        for name in names {
            use leveldb_table::db::FileKind;
            let listed = match FileKind::parse(&name) {
                Some(FileKind::Table(n)) => db.table_name(n).is_some(),
                Some(FileKind::Log(n)) => db.logs().iter().any(|l| l.number == n),
                Some(FileKind::Manifest(_)) => db.manifest_name() == Some(name.as_str()),
                Some(_) => true,
                None => false,
            };
            if !listed {
                unlisted.push(name);
            }
        }
    }
    let v = json!({
        "dir": a.db.dir.display().to_string(),
        "manifest": db.manifest_name(),
        "comparator": db.comparator_name(),
        "log_number": m.log_number,
        "prev_log_number": m.prev_log_number,
        "next_file": m.next_file_number,
        "last_sequence": db.last_sequence(),
        "manifest_last_sequence": m.last_sequence,
        "manifest_edits": m.edits,
        "levels": levels,
        "logs": logs,
        "memtable_entries": db.memtable().len(),
        "files_not_in_manifest": unlisted,
        "notes": db.notes(),
    });
    let mut out = common::stdout();
    match a.format {
        OutFormat::Json | OutFormat::Jsonl => output::write_document(&mut out, &v, a.format)?,
        OutFormat::Text => {
            writeln!(out, "directory:      {}", a.db.dir.display())?;
            writeln!(
                out,
                "manifest:       {}",
                v["manifest"]
                    .as_str()
                    .unwrap_or("- (unusable; every table read)")
            )?;
            writeln!(out, "comparator:     {}", db.comparator_name())?;
            writeln!(
                out,
                "log number:     {} (prev {})",
                m.log_number, m.prev_log_number
            )?;
            writeln!(out, "next file:      {}", m.next_file_number)?;
            writeln!(
                out,
                "last sequence:  {} (MANIFEST {})",
                db.last_sequence(),
                m.last_sequence
            )?;
            for l in 0..7 {
                let files = db.level_files(l);
                if files.is_empty() {
                    continue;
                }
                let bytes: u64 = files.iter().map(|f| f.size).sum();
                writeln!(
                    out,
                    "level {l}:        {} table(s), {bytes} bytes",
                    files.len()
                )?;
                for f in files {
                    writeln!(
                        out,
                        "  {:<14} {:>9}  {} .. {}",
                        db.table_name(f.number).unwrap_or("?"),
                        f.size,
                        common::key_text(&f.smallest, true),
                        common::key_text(&f.largest, true)
                    )?;
                }
            }
            for l in db.logs() {
                writeln!(
                    out,
                    "log {:06}.log:  {} batches, {} records{}",
                    l.number,
                    l.batches,
                    l.records,
                    if l.torn_tail.is_some() {
                        " (torn tail ignored)"
                    } else {
                        ""
                    }
                )?;
            }
            if !unlisted.is_empty() {
                writeln!(out, "not in the MANIFEST: {}", unlisted.join(", "))?;
            }
        }
    }
    out.flush()?;
    Ok(damage_code(&db, &a.db))
}
