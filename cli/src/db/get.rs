//! `sst db get DIR KEY...`: user keys looked up as LevelDB's `DB::Get` does: the memtable
//! (the logs), then level 0 newest first, then levels 1-6.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use leveldb_table::{Lookup, ReadOptions};

use crate::chrome::Decoding;
use crate::common::{self, CmdResult, Failure, Global, EXIT_FAIL};
use crate::output::{OutFormat, RowsOut};
use crate::rows::{Entry, RowWriter};

use super::open::{damage_code, describe, open, DbArgs};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArgs,
    /// User keys to look up (Chromium's SQLite IndexedDB: IndexedDB keys as JSON, with
    /// --store NAME and, when several databases have it, --database NAME).
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
    pub decode: crate::chrome::DecodeArgs,
}

/// Runs `sst db get`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    if crate::chrome::sqlite::is_sqlite_target(&a.db.dir) {
        return crate::chrome::sqlite::get(&crate::chrome::sqlite::GetArgs {
            path: &a.db.dir,
            keys: &a.key_args,
            format: a.format,
            decode: &a.decode,
        });
    }
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
    let dec = Decoding::for_db(&db, &a.db.dir, &a.decode, None)?;
    let seq = a.at_seq.unwrap_or(db.last_sequence());
    let rows = RowWriter {
        format: a.format,
        hex: a.hex,
        dec: &dec,
    };
    let mut out = RowsOut::new(common::verdict_stdout(), a.format);
    let mut value = Vec::new();
    let mut line = Vec::with_capacity(256);
    let mut missing = false;
    for k in &keys {
        let found = db
            .get_into(k, &ReadOptions::default().snapshot(Some(seq)), &mut value)
            .map_err(|e| Failure::error(describe(&a.db, &e)))?;
        line.clear();
        match a.format {
            OutFormat::Text => match found {
                Lookup::Found { sequence, .. } => rows.push(
                    &mut line,
                    Entry::Db {
                        key: k,
                        value: &value,
                        seq: sequence.unwrap_or(0),
                    },
                ),
                Lookup::Deleted { sequence } => {
                    dec.push_key_text(&mut line, k, a.hex);
                    line.extend_from_slice(format!(": deleted @ {sequence}\n").as_bytes());
                }
                Lookup::NotFound => {
                    dec.push_key_text(&mut line, k, a.hex);
                    line.extend_from_slice(b": not found\n");
                }
            },
            OutFormat::Json | OutFormat::Jsonl => {
                line.extend_from_slice(b"{\"key\":\"");
                common::push_hex(&mut line, k);
                match found {
                    Lookup::Found { sequence, .. } => {
                        line.extend_from_slice(b"\",\"found\":true,\"value\":\"");
                        common::push_hex(&mut line, &value);
                        line.extend_from_slice(b"\",\"seq\":");
                        line.extend_from_slice(sequence.unwrap_or(0).to_string().as_bytes());
                        dec.push_json(&mut line, k, Some(&value));
                    }
                    Lookup::Deleted { sequence } => {
                        line.extend_from_slice(b"\",\"found\":false,\"deleted\":true,\"seq\":");
                        line.extend_from_slice(sequence.to_string().as_bytes());
                        dec.push_json(&mut line, k, None);
                    }
                    Lookup::NotFound => {
                        line.extend_from_slice(b"\",\"found\":false");
                        dec.push_json(&mut line, k, None);
                    }
                }
                line.extend_from_slice(b"}\n");
            }
        }
        missing |= !matches!(found, Lookup::Found { .. });
        out.write_all(&line)?;
    }
    out.finish()?;
    Ok(if missing {
        EXIT_FAIL
    } else {
        damage_code(&db, &a.db)
    })
}
