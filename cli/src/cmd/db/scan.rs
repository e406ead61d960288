//! `sst db scan DIR`: the live view of a database directory, each user key with its newest
//! visible value (or as of `--at-seq`), in the directory's order.

use std::ffi::OsString;
use std::io::Write;

use leveldb_table::ReadOptions;

use crate::exit::{CmdResult, Failure, EXIT_FAIL};
use crate::input::flags::Global;
use crate::input::keys;
use crate::render::chrome::Decoding;
use crate::render::output::{self, OutFormat, RowsOut};
use crate::render::rows::{Entry, RowWriter};

use super::open::{damage_code, describe, open, DbArgs};
use leveldb_table::Cursor;

#[derive(clap::Args, Debug)]
pub struct Args {
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
    pub decode: crate::render::chrome::DecodeArgs,
}

/// Runs `sst db scan`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    if crate::render::chrome::sqlite::is_sqlite_target(&a.db.dir) {
        if a.from.is_some() || a.to.is_some() || a.at_seq.is_some() {
            return Err(Failure::error(format!(
                "{}: Chromium's SQLite IndexedDB: --from, --to and --at-seq are LevelDB's; \
                 --database and --store select rows",
                a.db.dir.display()
            )));
        }
        return crate::render::chrome::sqlite::scan(&crate::render::chrome::sqlite::ScanArgs {
            path: &a.db.dir,
            format: a.format,
            hex: a.hex,
            limit: a.limit,
            decode: &a.decode,
        });
    }
    let from = a
        .from
        .as_deref()
        .map(|k| keys::key_arg(k, a.hex, "--from"))
        .transpose()?;
    let to =
        a.to.as_deref()
            .map(|k| keys::key_arg(k, a.hex, "--to"))
            .transpose()?;
    let db = open(&a.db, g)?;
    let seq = a.at_seq.unwrap_or(db.last_sequence());
    let mut view = db.iter(&ReadOptions::default().snapshot(Some(seq)));
    let dec = Decoding::for_db(&db, &a.db.dir, &a.decode, None)?;
    match from.clone().or_else(|| dec.start_key()) {
        Some(f) => view.seek(&f),
        None => view.seek_to_first(),
    }
    let ucmp = db.internal_comparator().user_comparator().clone();
    let rows = RowWriter {
        format: a.format,
        hex: a.hex,
        dec: &dec,
    };
    let mut out = RowsOut::new(output::stdout(), a.format);
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
        rows.push(
            &mut line,
            Entry::Db {
                key: view.key(),
                value: view.value(),
                seq: view.sequence(),
            },
        );
        out.write_all(&line)?;
        n += 1;
        view.next();
    }
    out.finish()?;
    if let Err(e) = view.status() {
        return Err(Failure::Exit(
            EXIT_FAIL,
            format!("{} (after {n} entries)", describe(&a.db, &e)),
        ));
    }
    Ok(damage_code(&db, &a.db))
}
