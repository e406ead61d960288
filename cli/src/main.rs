//! `sst`: inspect, verify, query and build LevelDB tables (`.ldb` / `.sst`).
//!
//! One module per subcommand; `common` holds what they share. See `docs/cli.md`.

mod blocks;
mod bloom;
mod bloom_counting;
mod bloom_io;
mod build;
mod common;
mod db;
mod decoding;
mod filter;
mod flags;
mod get;
mod idb;
mod idb_rows;
mod log;
mod manifest;
mod order;
mod output;
mod refilter;
mod rows;
mod salvage;
mod scan;
mod sqlite_note;
mod stats;
mod storage_rows;
mod table_open;
mod value_json;
mod verify;

use clap::{Parser, Subcommand};

use common::{Failure, Global, EXIT_ERROR, EXIT_OK};
use flags::{ComparatorArg, KeysArg};
use leveldb_table::KeyFormat;

const EXIT_CODES: &str = "\
Exit codes:
  0  success (get: every key found; verify: every table clean)
  1  corruption found (scan, verify, stats, blocks) or a key not found (get)
  2  usage error, a file that cannot be opened or read (missing, not a LevelDB table,
     e.g. a RocksDB file), an I/O error; get: any lookup error

Checksums are verified everywhere unless --no-verify is given. Keys are detected as
internal keys (a LevelDB database's tables) or plain keys; --keys overrides.
Errors name the file, the offset in it and what is wrong.";

/// Inspect, verify, query and build LevelDB tables (.ldb / .sst).
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
    /// Do not verify block checksums (they are verified by default).
    #[arg(long, global = true)]
    no_verify: bool,

    /// Key format: auto (detect), internal (a LevelDB database's tables: user key + 8-byte
    /// sequence/type tag) or plain. For `build`, auto means: internal when the jsonl rows
    /// carry "seq" (as `scan` prints them for internal tables), else plain.
    #[arg(long, global = true, value_enum, value_name = "FORMAT")]
    keys: Option<KeysArg>,

    /// The order of a table's keys, for tables outside a database directory (a table in one
    /// is read in the order its MANIFEST names; `sst db` always uses the MANIFEST's):
    /// bytewise (LevelDB's default) or idb_cmp1 (Chrome IndexedDB). get, filter and
    /// --from/--to first check that every key is in that order and refuse otherwise.
    #[arg(long, global = true, value_enum, value_name = "ORDER")]
    comparator: Option<ComparatorArg>,

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
    /// A LevelDB database directory, read-only: scan, get, records, info.
    Db(db::Args),
    /// Dump a write-ahead log (NNNNNN.log): its WriteBatches, record by record.
    Log(log::Args),
    /// Dump a MANIFEST: its VersionEdits.
    Manifest(manifest::Args),
    /// Rewrite a table with another filter; data blocks are copied byte for byte.
    Refilter(refilter::Args),
}

/// `--no-verify` given to a subcommand where it would do nothing: refused (exit 2), so
/// nobody believes it had an effect.
fn flag_without_effect(cli: &Cli) -> Option<&'static str> {
    // --comparator names the order of tables that are read; the writers write bytewise.
    if cli.comparator == Some(ComparatorArg::IdbCmp1) {
        let writes = match &cli.command {
            Command::Build(_) | Command::Bloom(_) => true,
            Command::Db(d) => matches!(d.command, db::Command::Build(_)),
            _ => false,
        };
        if writes {
            return Some(
                "--comparator idb_cmp1 does not apply to build, db build and bloom: they write \
                 bytewise-ordered data",
            );
        }
    }
    if !cli.no_verify {
        return None;
    }
    match &cli.command {
        Command::Verify(_) => {
            Some("--no-verify does not apply to verify: it always verifies every checksum")
        }
        Command::Build(_) => Some("--no-verify does not apply to build: it reads no table"),
        Command::Bloom(_) => Some("--no-verify does not apply to bloom: it reads no table"),
        Command::Log(_) | Command::Manifest(_) => {
            Some("--no-verify does not apply to log and manifest: their records are always checked")
        }
        _ => None,
    }
}

fn main() {
    let cli = Cli::parse();
    if let Some(msg) = flag_without_effect(&cli) {
        common::warn(msg);
        std::process::exit(EXIT_ERROR);
    }
    let keys = match cli.keys {
        None | Some(KeysArg::Auto) => KeyFormat::Auto,
        Some(KeysArg::Internal) => KeyFormat::Internal,
        Some(KeysArg::Plain) => KeyFormat::Plain,
    };
    let g = Global {
        verify: !cli.no_verify,
        keys,
        comparator: cli.comparator,
    };
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
    };
    let code = match res {
        Ok(code) => code,
        Err(Failure::BrokenPipe) => EXIT_OK,
        Err(Failure::Exit(code, msg)) => {
            common::warn(&msg);
            code
        }
    };
    std::process::exit(if (0..=EXIT_ERROR).contains(&code) {
        code
    } else {
        EXIT_ERROR
    });
}
