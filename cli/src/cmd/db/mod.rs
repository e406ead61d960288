//! `sst db`: a LevelDB database directory. `scan`, `get`, `records`, `info` and `verify`
//! read it as it is (the library's `leveldb_table::db`: CURRENT, the MANIFEST's live tables per level and
//! the live logs, merged), without writing, locking or touching anything in it; `build`
//! writes a new directory with the library's bulk builder. One file per subcommand; what
//! the readers share (arguments, opening, damage reports) is in `open.rs`.

mod build;
mod get;
mod info;
mod open;
mod records;
mod scan;
mod verify;

use crate::exit::CmdResult;
use crate::input::flags::Global;

const EXAMPLES: &str = "\
Examples:
  sst db info chrome/Local\\ Storage/leveldb     levels, tables, logs, sequences
  sst db scan db/ --format jsonl                 the live view, in key order
  sst db scan db/ --from user: --to user\\; --at-seq 1200
                                                 a range, as of sequence 1200
  sst db get db/ user:42 user:43                 newest values (logs, then levels)
  sst db records db/ --format jsonl              every record of every file, to the byte
  sst db verify db/                              every block of every table, the logs, the
                                                 MANIFEST against the files: intact or not
  sst db scan damaged/ --salvage                 read past damage (named on stderr); agrees
                                                 with db records and db get --salvage
  sst db build out/ --from rows.jsonl --sort     a new directory LevelDB opens

The readers (info, scan, get, records) read the directory as it is: no LOCK taken (it works
while LevelDB or Chrome holds it), nothing created, renamed, replayed or rewritten, no mtime
touched. build writes a new directory, whole or not at all.
Exit: 0 success (get: every key found); 1 a key not found (get), damage met (--salvage);
2 the directory cannot be read (damage without --salvage, an unknown comparator), or DIR
is a file (one line says what it is and which command reads it).";

/// `sst db` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// The live view: each user key with its newest visible value, in key order.
    Scan(scan::Args),
    /// Look user keys up: the memtable (logs), then level 0 newest first, then levels 1-6.
    Get(get::Args),
    /// Every record of every table and log, with file, offset, sequence and status.
    Records(records::Args),
    /// What the MANIFEST says: comparator, numbers, sequences, tables per level, logs.
    Info(info::Args),
    /// Check the whole directory: every block of every live table, the live logs, the
    /// MANIFEST against the files present; exit 0 intact, 1 damaged, 2 unusable.
    Verify(verify::Args),
    /// Write a new database directory from sorted entries (a bulk load LevelDB opens
    /// without compacting).
    Build(build::Args),
}

/// `sst db ...`
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

/// Runs `sst db SUBCOMMAND`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    match &a.command {
        Command::Scan(s) => scan::run(g, s),
        Command::Get(s) => get::run(g, s),
        Command::Records(s) => records::run(g, s),
        Command::Info(s) => info::run(g, s),
        Command::Verify(s) => verify::run(g, s),
        Command::Build(s) => build::run(s),
    }
}
