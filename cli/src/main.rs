//! `sst`: inspect, verify, query and build LevelDB tables (`.ldb` / `.sst`) and database
//! directories, dump logs and MANIFESTs, keep bloom filters.
//!
//! This file parses the command line and dispatches. `cmd/` holds one module per subcommand
//! (`cmd/db/` one file per `sst db` subcommand); below them, what they share: `input` (the
//! reading flags, opening a table, its comparator, keys and lines read), `render` (output
//! formats, the one entry formatter, bytes as text) with `chrome` (IndexedDB and DOM
//! storage), and `exit` (exit codes and error messages). See `docs/cli.md`.

mod cmd;
mod exit;
mod input;
mod render;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use cmd::{
    blocks, bloom, build, conform, db, filter, get, log, manifest, profile, refilter, scan, stats,
    verify,
};
use exit::{Failure, EXIT_ERROR, EXIT_OK};
use input::flags;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (get, db get: every key found; verify: every table clean)
  1  corruption or damage found (scan, verify, stats, blocks, log, manifest; --salvage
     skipped something), a key not found (get, db get), a key absent (bloom check)
  2  usage error, a file that cannot be opened or read (missing, not a LevelDB table,
     e.g. a RocksDB file), a file of another kind than the command reads (one line says
     what it is and which command reads it), an I/O error; get: any lookup error

Checksums are verified everywhere unless --no-verify is given. Keys are detected as
internal keys (a LevelDB database's tables) or plain keys; --keys overrides. Each
subcommand's --help lists which of --keys, --comparator and --no-verify it uses; they are
accepted before the subcommand too. Errors name the file, the offset in it and what is
wrong. See docs/cli.md.";

/// Inspect, verify, query and build LevelDB tables (.ldb / .sst) and database directories.
#[derive(Parser, Debug)]
#[command(
    name = "sst",
    version,
    propagate_version = true,
    subcommand_required = true,
    arg_required_else_help = true,
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the entries of a table, in key order (or reversed), optionally within a range.
    Scan(scan::Args),
    /// Look keys up (consulting the filter, as a database does).
    Get(get::Args),
    /// Check tables: footer, every block's checksum, entries, key order, filters.
    Verify(verify::Args),
    /// Statistics: entries, blocks, compression, index, filter (and its false-positive rate).
    Stats(stats::Args),
    /// One row per block: data blocks in index order, then filter, metaindex, index.
    Blocks(blocks::Args),
    /// Show how a key goes through the index and the bloom filter, bit by bit.
    Filter(filter::Args),
    /// Build a table from jsonl or tsv entries.
    Build(build::Args),
    /// Bloom filters: scalable (shared through Redis or a Redis Cluster, or in a file) or
    /// counting (in a file): add, check, remove, info.
    Bloom(bloom::Args),
    /// A LevelDB database directory: read it as it is (info, scan, get, records) or write a
    /// new one (build).
    Db(db::Args),
    /// Dump a write-ahead log (NNNNNN.log): its WriteBatches, record by record.
    Log(log::Args),
    /// Dump a MANIFEST: its VersionEdits.
    Manifest(manifest::Args),
    /// Rewrite a table with another filter; data blocks are copied byte for byte.
    Refilter(refilter::Args),
    /// Run the conformance kit against another implementation through its adapter command.
    Conform(conform::Args),
    /// Every storage area of a Chrome or Electron profile: IndexedDB (LevelDB or SQLite),
    /// localStorage and sessionStorage per origin, other LevelDB databases.
    Profile(profile::Args),
}

fn main() {
    let matches = flags::add(Cli::command()).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let given = match flags::given(&matches) {
        Ok((given, notes)) => {
            for n in notes {
                exit::warn(&n);
            }
            given
        }
        Err(msg) => {
            exit::warn(&msg);
            std::process::exit(EXIT_ERROR);
        }
    };
    let g = given.global();
    let res = match &cli.command {
        Command::Scan(a) => scan::run(&g, a),
        Command::Get(a) => get::run(&g, a),
        Command::Verify(a) => verify::run(&g, a),
        Command::Stats(a) => stats::run(&g, a),
        Command::Blocks(a) => blocks::run(&g, a),
        Command::Filter(a) => filter::run(&g, a),
        Command::Build(a) => build::run(&g, a),
        Command::Bloom(a) => bloom::run(a),
        Command::Db(a) => db::run(&g, a),
        Command::Log(a) => log::run(&g, a),
        Command::Manifest(a) => manifest::run(a),
        Command::Refilter(a) => refilter::run(&g, a),
        Command::Conform(a) => conform::run(a),
        Command::Profile(a) => profile::run(a),
    };
    let code = match res {
        Ok(code) => code,
        Err(Failure::BrokenPipe) => EXIT_OK,
        Err(Failure::Exit(code, msg)) => {
            exit::warn(&msg);
            code
        }
    };
    std::process::exit(if (0..=EXIT_ERROR).contains(&code) {
        code
    } else {
        EXIT_ERROR
    });
}
