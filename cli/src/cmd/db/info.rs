//! `sst db info DIR`: what a database directory holds: the MANIFEST (comparator, numbers,
//! sequences, tables per level), the logs replayed, files nothing live refers to, torn tails
//! and (under `--salvage`) what was skipped as damaged.

use std::io::Write;

use leveldb_table::db::reader::OrderSource;
use serde_json::{json, Value};

use super::open::{damage_code, open, DbArgs};
use crate::exit::{self, CmdResult, EXIT_FAIL};
use crate::input::flags::Global;
use crate::render::output::OutFormat;
use crate::render::{output, text};

/// `sst db info DIR`
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
}

/// `sst db info`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    if crate::render::chrome::sqlite::is_sqlite_target(&a.db.dir) {
        return crate::render::chrome::sqlite::info(&a.db.dir, a.format);
    }
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
                        "smallest": text::hex(&f.smallest),
                        "largest": text::hex(&f.largest),
                        "smallest_text": text::key_text(&f.smallest, true),
                        "largest_text": text::key_text(&f.largest, true),
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
            use leveldb_table::db::files::FileKind;
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
    // What opening read that is damaged (a table of another size than the MANIFEST says).
    let mut damaged: Vec<String> = Vec::new();
    for l in 0..7 {
        for f in db.level_files(l) {
            if let Some(len) = db.table_file_len(f.number).filter(|&n| n != f.size) {
                damaged.push(format!(
                    "{}: {len} bytes, but the MANIFEST says {}",
                    db.table_name(f.number).unwrap_or("?"),
                    f.size
                ));
            }
        }
    }
    let v = json!({
        "dir": a.db.dir.display().to_string(),
        "manifest": db.manifest_name(),
        "comparator": db.comparator_name(),
        "comparator_from": db.order_source().as_str(),
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
        "manifest_torn_tail": db.manifest_torn_tail().map(|(o, n)| json!({"offset": o, "len": n})),
        "damage": db.damage().iter().map(|d| json!({
            "file": d.file, "offset": d.offset, "len": d.len, "what": d.what,
        })).collect::<Vec<_>>(),
        "size_mismatches": damaged,
        "checked": CHECKED,
    });
    let mut out = output::stdout();
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
            if let (Some(m), Some((o, n))) = (db.manifest_name(), db.manifest_torn_tail()) {
                writeln!(
                    out,
                    "manifest torn:  {m}: the last record at offset {o} ({n} bytes) is \
                     incomplete; ignored"
                )?;
            }
            let from = match db.order_source() {
                OrderSource::Manifest => "",
                OrderSource::Given => " (given: no MANIFEST names one)",
                OrderSource::Keys => " (from the keys: no MANIFEST names one; every key checked)",
                OrderSource::Default => " (LevelDB's default: nothing names one)",
            };
            writeln!(out, "comparator:     {}{from}", db.comparator_name())?;
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
                        text::key_text(&f.smallest, true),
                        text::key_text(&f.largest, true)
                    )?;
                }
            }
            for l in db.logs() {
                let torn = match l.torn_tail {
                    Some((o, n)) => format!(" (torn tail at offset {o}, {n} bytes, ignored)"),
                    None => String::new(),
                };
                writeln!(
                    out,
                    "log {:06}.log:  {} batches, {} records{torn}",
                    l.number, l.batches, l.records,
                )?;
            }
            if !unlisted.is_empty() {
                writeln!(out, "not in the MANIFEST: {}", unlisted.join(", "))?;
            }
            writeln!(out, "checked:        {CHECKED}")?;
        }
    }
    out.flush()?;
    let code = damage_code(&db, &a.db);
    let torn = db.manifest_torn_tail().is_some() || db.logs().iter().any(|l| l.torn_tail.is_some());
    for d in &damaged {
        exit::warn(&format!("{}: {d}", a.db.dir.display()));
    }
    if !damaged.is_empty() || !db.damage().is_empty() || torn {
        exit::warn(&format!(
            "{}: {} in what info read: `sst db verify {}` checks every block and lists every \
             problem",
            a.db.dir.display(),
            if damaged.is_empty() && db.damage().is_empty() {
                "a torn last record (a write in progress, or a crash)"
            } else {
                "damage"
            },
            a.db.dir.display()
        ));
    }
    Ok(if damaged.is_empty() { code } else { EXIT_FAIL })
}

/// What `info` reads, and what it leaves to `db verify`.
const CHECKED: &str = "CURRENT, the MANIFEST and the live logs (record checksums), the \
                       tables' sizes; not the tables' blocks: `sst db verify DIR` reads them all";
