//! `sst db build DIR --from FILE`: a complete LevelDB database directory from sorted (or,
//! with `--sort`, unsorted) entries, with the library's bulk builder: tables at LevelDB's
//! target size in its deepest level, a MANIFEST and CURRENT; LevelDB opens it without
//! compacting. The directory appears whole or not at all.

use std::io::Write;
use std::path::PathBuf;

use leveldb_table::{db::engine::BulkBuilder, db::engine::BulkOptions};
use leveldb_table::{Compression, Options};

use leveldb_table::db::engine::extsort::ExternalSorter;

use crate::exit::{CmdResult, Failure, EXIT_OK};
use crate::input::entries::{progress, Input, InputArgs};
use crate::input::filter_flags::FilterFlags;
use crate::render::output;

const EXAMPLES: &str = "\
Examples:
  sst db build out-db --from entries.jsonl              {\"key\": hex, \"value\": hex} per line, sorted
  sst db build out-db --from data.tsv --format tsv --sort
  sst scan a.ldb --format jsonl | sst db build out-db --from -
Keys must increase strictly (bytewise), or give --sort (sorted within --memory-mb, spilling
sorted runs to a temporary directory beyond it).
Entry i gets sequence number i + 1. A temporary directory beside DIR is renamed into place
at the end: on any failure nothing appears at DIR.";

/// Compression of the tables.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DbCompression {
    /// Snappy (LevelDB's default).
    Snappy,
    /// None.
    None,
}

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES, mut_arg("no_filter", |a| a.help("Write no filter blocks")))]
pub struct Args {
    /// The directory to create (must not exist).
    pub dir: PathBuf,
    #[command(flatten)]
    pub input: InputArgs,
    /// Sort the input (duplicate keys are an error) instead of requiring order: in memory up
    /// to --memory-mb, beyond that in sorted runs on disk merged at the end.
    #[arg(long)]
    pub sort: bool,
    /// Memory budget of --sort, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = 256)]
    pub memory_mb: usize,
    /// Table compression.
    #[arg(long, value_enum, default_value_t = DbCompression::Snappy)]
    pub compression: DbCompression,
    #[command(flatten)]
    pub filter: FilterFlags,
    /// Close a table once it reaches this many bytes (LevelDB's 2 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = 2 << 20)]
    pub table_size: u64,
    /// Compress data blocks on a helper thread while the next entries are added (the same
    /// entries; table boundaries may differ, as compressed sizes are known later).
    #[arg(long)]
    pub parallel_compression: bool,
}

pub fn run(a: &Args) -> CmdResult {
    if a.table_size == 0 {
        return Err(Failure::error("--table-size must be at least 1"));
    }
    let mut table = Options::default()
        .compression(match a.compression {
            DbCompression::Snappy => Compression::Snappy,
            DbCompression::None => Compression::None,
        })
        .parallel_compression(a.parallel_compression);
    if let Some(bits) = a.filter.bloom() {
        table = table.bloom(bits);
    }
    let opts = BulkOptions::default()
        .table(table)
        .target_file_size(a.table_size);
    let mut input = Input::open(&a.input)?;
    let pb = progress(&a.input.from);
    let fail = |e: leveldb_table::Error| Failure::error(format!("{}: {e}", a.dir.display()));
    let mut b = BulkBuilder::create(&a.dir, opts).map_err(fail)?;
    if a.sort {
        let mut sorter = ExternalSorter::new(a.memory_mb.saturating_mul(1 << 20));
        while let Some(e) = input.next()? {
            sorter.push_slices(&e.key, &e.value).map_err(fail)?;
        }
        let mut sorted = sorter.finish().map_err(fail)?;
        while let Some((k, v)) = sorted.next_entry().map_err(fail)? {
            b.add(k, v).map_err(fail)?;
        }
    } else {
        while let Some(e) = input.next()? {
            b.add(&e.key, &e.value).map_err(|err| {
                Failure::error(format!(
                    "{}: line {}: {err}",
                    a.input.from.display(),
                    e.line
                ))
            })?;
            if let Some(pb) = &pb {
                if e.line % 4096 == 0 {
                    pb.set_position(input.bytes_read());
                }
            }
        }
    }
    let stats = b.finish().map_err(fail)?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    // The summary on stdout, as `build` and `refilter` print theirs.
    let mut out = output::stdout();
    writeln!(
        out,
        "wrote {}: {} entries in {} table(s), {} bytes, level 6",
        a.dir.display(),
        stats.entries,
        stats.files.len(),
        stats.bytes
    )?;
    out.flush()?;
    Ok(EXIT_OK)
}
