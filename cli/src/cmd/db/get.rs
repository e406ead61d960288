//! `sst db get DIR KEY...`: user keys looked up as LevelDB's `DB::Get` does: the memtable
//! (the logs), then level 0 newest first, then levels 1-6. With `--store NAME` (and
//! `--database NAME`) on a Chrome IndexedDB directory, each KEY is an IndexedDB key as
//! JSON, encoded into its record's key (`crate::render::chrome::IdbLookup`) and looked up alike.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;

use leveldb_table::{Lookup, ReadOptions};

use crate::exit::{CmdResult, Failure, EXIT_FAIL};
use crate::input::flags::Global;
use crate::input::{keys, lines};
use crate::render::chrome::{Decoding, IdbLookup};
use crate::render::output::{OutFormat, RowsOut};
use crate::render::rows::{Entry, RowWriter};
use crate::render::{output, text};

use super::open::{damage_code, describe, open, DbArgs};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArgs,
    /// User keys to look up (with --store, and on Chromium's SQLite IndexedDB: IndexedDB
    /// keys as JSON; a negative number is a key, not an option).
    #[arg(id = "key_args", value_name = "KEY", allow_negative_numbers = true)]
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
    pub decode: crate::render::chrome::DecodeArgs,
}

/// Runs `sst db get`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    if crate::render::chrome::sqlite::is_sqlite_target(&a.db.dir) {
        return crate::render::chrome::sqlite::get(&crate::render::chrome::sqlite::GetArgs {
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
    let idb = a.decode.names_a_store();
    if idb && a.hex {
        return Err(Failure::error(
            "db get: with --store the keys are IndexedDB keys as JSON, not hex",
        ));
    }
    let db = open(&a.db, g)?;
    let dec = Decoding::for_db(&db, &a.db.dir, &a.decode, None)?;
    let lookup = if idb {
        Some(IdbLookup::new(&dec, &a.db.dir, &a.decode)?)
    } else {
        None
    };
    let mut keys: Vec<Vec<u8>> = a
        .key_args
        .iter()
        .map(|k| match &lookup {
            Some(l) => l.record_key(&keys::os_bytes(k), "KEY"),
            None => keys::key_arg(k, a.hex, "KEY"),
        })
        .collect::<Result<_, _>>()?;
    if let Some(path) = &a.keys_from {
        let mut r = lines::LineReader::open(path)?;
        let mut raw = Vec::new();
        while r.next_line(&mut raw)? {
            keys.push(if let Some(l) = &lookup {
                let what = format!("{}: line {}", r.name(), r.line_no);
                l.record_key(lines::trim(&raw), &what)?
            } else if a.hex {
                let mut k = Vec::new();
                r.unhex_line(&raw, &mut k)?;
                k
            } else {
                raw.clone()
            });
        }
    }
    let seq = a.at_seq.unwrap_or(db.last_sequence());
    let rows = RowWriter {
        format: a.format,
        hex: a.hex,
        dec: &dec,
    };
    let mut out = RowsOut::new(output::verdict_stdout(), a.format);
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
                text::push_hex(&mut line, k);
                match found {
                    Lookup::Found { sequence, .. } => {
                        line.extend_from_slice(b"\",\"found\":true,\"value\":\"");
                        text::push_hex(&mut line, &value);
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
