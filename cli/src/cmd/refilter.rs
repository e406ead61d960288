//! `sst refilter IN OUT`: the table IN written to OUT with its filter rebuilt (LevelDB's bloom
//! or the cache-local one, any bits per key, or none); data blocks and the index are copied
//! byte for byte (the library's `leveldb_table::refilter`). OUT appears complete or not at
//! all (temporary file, fsync, rename); IN is only read.

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;

use leveldb_table::refilter::refilter;
use leveldb_table::{
    filter::BloomFilterPolicy, filter::CacheLocalBloomPolicy, raw::AtomicFile, FilterPolicy,
};

use crate::exit::{self, CmdResult, Failure, EXIT_OK};
use crate::input::flags::Global;
use crate::render::output;

const EXAMPLES: &str = "\
Examples:
  sst refilter old.ldb new.ldb --bloom-bits 14          a LevelDB bloom filter with more bits
  sst refilter old.ldb new.ldb --policy local           the cache-local filter (LevelDB reads the table unfiltered)
  sst refilter old.ldb new.ldb --no-filter
With LevelDB's policy and the table's own bits the output is the input, byte for byte.
A damaged table (a data block whose checksum fails) is refused.";

/// The filter policy to write.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PolicyArg {
    /// LevelDB's bloom filter (`leveldb.BuiltinBloomFilter2`).
    Leveldb,
    /// This crate's cache-local bloom filter (`leveldb-table.CacheLocalBloom.1`).
    Local,
}

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The table to read.
    pub input: PathBuf,
    /// The table to write (replaced atomically if it exists).
    pub output: PathBuf,
    /// Bits per key of the new filter (fractional allowed with --policy local).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10.0,
        conflicts_with = "no_filter"
    )]
    pub bloom_bits: f64,
    /// Which filter to write.
    #[arg(long, value_enum, default_value_t = PolicyArg::Leveldb, conflicts_with = "no_filter")]
    pub policy: PolicyArg,
    /// Write no filter.
    #[arg(long)]
    pub no_filter: bool,
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    if !(a.bloom_bits.is_finite() && a.bloom_bits >= 1.0) {
        return Err(Failure::error("--bloom-bits must be at least 1"));
    }
    if a.policy == PolicyArg::Leveldb && a.bloom_bits.fract() != 0.0 {
        return Err(Failure::error(
            "--bloom-bits must be whole for LevelDB's policy",
        ));
    }
    if a.input == a.output {
        return Err(Failure::error(
            "refilter writes a new table: give another OUT",
        ));
    }
    let table = crate::input::table_open::open_table(&a.input, &Global { verify: true, ..*g })?;
    let policy: Option<Arc<dyn FilterPolicy>> = match (a.no_filter, a.policy) {
        (true, _) => None,
        (false, PolicyArg::Leveldb) => {
            Some(Arc::new(BloomFilterPolicy::new(a.bloom_bits as usize)))
        }
        (false, PolicyArg::Local) => Some(Arc::new(CacheLocalBloomPolicy::new(a.bloom_bits))),
    };
    let fail =
        |e: leveldb_table::Error| Failure::Exit(exit::code_for(&e), exit::describe(&a.input, &e));
    let file = AtomicFile::create(&a.output)
        .map_err(|e| Failure::error(format!("{}: {e}", a.output.display())))?;
    let mut w = BufWriter::with_capacity(1 << 16, file);
    let stats = refilter(&table, policy, &mut w).map_err(fail)?;
    let file = w
        .into_inner()
        .map_err(|e| Failure::error(format!("{}: {}", a.output.display(), e.error())))?;
    file.commit()
        .map_err(|e| Failure::error(format!("{}: {e}", a.output.display())))?;
    // The summary on stdout, as every writing command prints it.
    let mut out = output::stdout();
    writeln!(
        out,
        "wrote {}: {} data blocks copied, {} keys filtered, filter {} bytes, {} bytes",
        a.output.display(),
        stats.data_blocks,
        stats.keys,
        stats.filter_bytes,
        stats.bytes
    )?;
    out.flush()?;
    Ok(EXIT_OK)
}
