//! `sst log FILE`: dump a write-ahead log, its WriteBatches record by record with offsets
//! (or, with `--physical`, its physical records and gaps); damage is reported where it is
//! and reading goes on (as LevelDB's log reader does).

use std::io::Write;
use std::path::PathBuf;

use leveldb_table::db::files::WriteBatchReader;
use leveldb_table::raw::internal_key::ValueType;
use leveldb_table::{
    db::files::type_name, db::files::GapKind, db::files::Physical, db::files::PhysicalReader,
};
use serde_json::{json, Value};

use crate::exit::{self, CmdResult, EXIT_FAIL, EXIT_OK};
use crate::input::filekind::Kind;
use crate::input::flags::Global;
use crate::input::log_file::{bad_record, for_each_record, read_as};
use crate::render::chrome::Decoding;
use crate::render::output::{self, OutFormat, RowsOut};
use crate::render::rows::kind_name;
use crate::render::text;

/// `sst log FILE`
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  sst log db/000008.log                  every batch: offset, sequence, count, then its puts and deletions
  sst log db/000008.log --format jsonl   one row per record: {\"offset\",\"seq\",\"kind\",\"key\",\"value\"} (hex)
  sst log db/000008.log --physical       every physical record (offset, block, type, length, checksum)
                                         and every gap (padding, zeros, damage, torn tail), covering the file
Damaged records (bad checksum, bad length, fragments out of place) are reported on stderr
with their offset and the bytes dropped, and the records after them are still read; an
incomplete last record (a write in progress) is reported as a torn tail.
Exit: 0 clean, 1 damage found, 2 the file cannot be read.")]
pub struct Args {
    /// The log file (`NNNNNN.log`).
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// Text output shows keys and values in hex.
    #[arg(long)]
    pub hex: bool,
    /// List the physical records instead: each header (offset, block, type FULL / FIRST /
    /// MIDDLE / LAST, payload length, checksum ok or not) and each stretch holding none
    /// (block padding, preallocated zeros, damage, a torn tail), in file order; jsonl rows
    /// `{"offset", "block", "type", "length", "checksum_ok"[, "dropped"]}` and
    /// `{"offset", "block", "gap": "padding"|"zeros"|"damage"|"torn", "len"[, "reason"]}`.
    /// Works on MANIFESTs too.
    #[arg(long)]
    pub physical: bool,
}

/// A log file's block size (LevelDB's `log::kBlockSize`), for the block column.
const LOG_BLOCK: usize = leveldb_table::db::files::LOG_BLOCK_SIZE;

/// `sst log --physical FILE`: every physical item, covering the file; exit 1 on damage (a
/// bad checksum, a bad length), 0 otherwise (a torn tail is reported, as LevelDB ignores it).
fn run_physical(a: &Args) -> CmdResult {
    let bytes = read_as(
        &a.file,
        &[Kind::Log, Kind::Manifest],
        "a file in the log format (a write-ahead log or a MANIFEST)",
    )?;
    let mut out = RowsOut::new(output::stdout(), a.format);
    let mut damaged = false;
    for p in PhysicalReader::new(&bytes) {
        let row = match p {
            Physical::Record {
                offset,
                kind,
                payload,
                checksum_ok,
                dropped,
            } => {
                damaged |= !checksum_ok;
                let mut v = json!({
                    "offset": offset,
                    "block": offset / LOG_BLOCK as u64,
                    "type": type_name(kind),
                    "length": payload.len(),
                    "checksum_ok": checksum_ok,
                });
                if kind > 4 {
                    v["type_byte"] = json!(kind);
                }
                if !checksum_ok {
                    v["dropped"] = json!(dropped);
                }
                v
            }
            Physical::Gap { offset, len, kind } => {
                let mut v = json!({
                    "offset": offset,
                    "block": offset / LOG_BLOCK as u64,
                    "gap": kind.as_str(),
                    "len": len,
                });
                match kind {
                    GapKind::Damage(reason) => {
                        damaged = true;
                        v["reason"] = json!(reason);
                        exit::warn(&format!(
                            "{}: offset {offset}: {reason} ({len} bytes dropped)",
                            a.file.display()
                        ));
                    }
                    GapKind::Torn => exit::warn(&format!(
                        "{}: the last record at offset {offset} ({len} bytes) is incomplete (a \
                         write in progress, or a cut file)",
                        a.file.display()
                    )),
                    GapKind::Padding | GapKind::Zeros => {}
                }
                v
            }
        };
        match a.format {
            OutFormat::Json | OutFormat::Jsonl => {
                serde_json::to_writer(&mut out, &row).map_err(std::io::Error::from)?;
                out.write_all(b"\n")?;
            }
            OutFormat::Text => writeln!(out, "{}", physical_text(&row))?,
        }
    }
    out.finish()?;
    Ok(if damaged { EXIT_FAIL } else { EXIT_OK })
}

/// A physical row as a text line: `offset O  block B  TYPE  length L  checksum ok|BAD`, or
/// `offset O  block B  gap  N bytes[: reason]`.
fn physical_text(row: &Value) -> String {
    let n = |f: &str| row[f].as_u64().unwrap_or_default();
    let head = format!("offset {:>9}  block {:>5}", n("offset"), n("block"));
    match row["type"].as_str() {
        Some(t) => {
            let ok = if row["checksum_ok"] == true {
                "checksum ok".to_string()
            } else {
                format!("checksum BAD ({} bytes dropped)", row["dropped"])
            };
            format!("{head}  {t:<7} length {:>5}  {ok}", n("length"))
        }
        None => {
            let why = row["reason"]
                .as_str()
                .map_or(String::new(), |r| format!(": {r}"));
            format!(
                "{head}  {:<7} {} bytes{why}",
                row["gap"].as_str().unwrap_or_default(),
                n("len")
            )
        }
    }
}

/// Runs `sst log`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    if a.physical {
        return run_physical(a);
    }
    let bytes = read_as(&a.file, &[Kind::Log], "a write-ahead log")?;
    // IndexedDB keys (and values) decoded when the order is idb_cmp1: asked, or the
    // MANIFEST of the log's directory names it.
    let idb_asked = g.comparator == Some(crate::input::flags::ComparatorArg::IdbCmp1);
    let dec = Decoding::for_log(&a.file, idb_asked)?;
    let mut out = RowsOut::new(output::stdout(), a.format);
    let mut line = Vec::new();
    let damaged = for_each_record(&a.file, &bytes, |offset, data| {
        let batch = match WriteBatchReader::new(data) {
            Ok(b) => b,
            Err(e) => {
                bad_record(&a.file, offset, e);
                return Ok(true);
            }
        };
        if a.format == OutFormat::Text {
            writeln!(
                out,
                "--- batch at offset {offset}: sequence {}, {} record(s)",
                batch.sequence(),
                batch.count()
            )?;
        }
        for r in batch.records() {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    bad_record(&a.file, offset, e);
                    return Ok(true);
                }
            };
            line.clear();
            let kind = kind_name(r.kind);
            match a.format {
                OutFormat::Text => {
                    line.extend_from_slice(
                        format!(
                            "  {} {} ",
                            r.sequence,
                            if r.kind == ValueType::Value {
                                "put"
                            } else {
                                "del"
                            }
                        )
                        .as_bytes(),
                    );
                    dec.push_key_text(&mut line, r.key, a.hex);
                    if r.kind == ValueType::Value {
                        line.extend_from_slice(b" => ");
                        dec.push_value_text(&mut line, r.key, r.value, a.hex);
                    }
                    line.push(b'\n');
                }
                OutFormat::Json | OutFormat::Jsonl => {
                    line.extend_from_slice(
                        format!(
                            "{{\"offset\":{offset},\"seq\":{},\"kind\":\"{kind}\",\"key\":\"",
                            r.sequence
                        )
                        .as_bytes(),
                    );
                    text::push_hex(&mut line, r.key);
                    line.extend_from_slice(b"\",\"value\":\"");
                    text::push_hex(&mut line, r.value);
                    line.push(b'"');
                    let value = (r.kind == ValueType::Value).then_some(r.value);
                    dec.push_json(&mut line, r.key, value);
                    line.extend_from_slice(b"}\n");
                }
            }
            out.write_all(&line)?;
        }
        Ok(false)
    })?;
    out.finish()?;
    Ok(if damaged { EXIT_FAIL } else { EXIT_OK })
}
