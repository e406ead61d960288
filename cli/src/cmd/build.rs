//! `sst build`: write a table from jsonl or tsv entries, atomically.

use std::cmp::Ordering;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::ValueEnum;
use leveldb_table::raw::internal_key;
use leveldb_table::{
    raw::internal_key::InternalKeyComparator, table::KeyFormat, table::TableFileBuilder,
    BytewiseComparator, Comparator, Compression, Error, Options,
};

use crate::exit::{CmdResult, Failure, EXIT_OK};
use crate::input::entries::{progress, Entry, Input};
use crate::input::filter_flags::FilterFlags;
use crate::input::flags::Global;
use crate::render::{output, text};

const EXAMPLES: &str = "\
Examples:
  sst build out.ldb --from entries.jsonl
  sst scan a.ldb --format jsonl | sst build b.ldb --from -      round trip (same options)
  sst scan 000005.ldb --format jsonl | sst build copy.ldb --from - --keys internal \\
      --compression none --bloom-bits 10 --block-size 1024 --restart-interval 4
  sst build out.ldb --from data.tsv --format tsv --sort --no-filter
  sst build out.ldb --from data.tsv --format tsv --hex --compression zstd --level 3

Input:
  jsonl  one object per line with \"key\" and \"value\" in hex, as `sst scan --format jsonl`
         prints them (other fields are ignored; blank lines are skipped).
  tsv    key<TAB>value per line, raw bytes: no escaping, so keys cannot hold a TAB or a
         newline and values cannot hold a newline (use --hex, or jsonl). The line ends at
         \\n; a \\r before it is part of the value.
Keys must be in order (bytewise; for internal keys LevelDB's internal-key order), else the
build stops naming the first line out of order; --sort sorts in memory instead and
rejects exact duplicate keys. With --keys internal every key is an internal key
(user key + 8-byte tag) and the filter is built over user keys, as a LevelDB database
writes its tables; --keys auto (the default here) picks internal when the jsonl rows
carry \"seq\" (as `scan` prints for internal-key tables), else plain.
Defaults: LevelDB's snappy, block size 4096 and restart interval 16, and a bloom filter
of 10 bits per key (what LevelDB databases usually configure; LevelDB's own default is no
filter, --no-filter here).
The table is written to a temporary file next to OUT and renamed over OUT at the end:
on any failure nothing appears at OUT.";

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompressionArg {
    Snappy,
    None,
    /// zstd (compression id 2, as google/leveldb main writes it).
    Zstd,
    /// raw deflate (compression id 4, as Minecraft Bedrock's LevelDB writes it).
    Deflate,
    /// zlib stream (compression id 2 as Mojang's fork reads it; not LevelDB main's zstd).
    Zlib,
}

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The table to write.
    pub out: PathBuf,
    #[command(flatten)]
    pub input: crate::input::entries::InputArgs,
    /// Sort the input in memory (and reject duplicate keys) instead of requiring order.
    #[arg(long)]
    pub sort: bool,
    /// Data block size (uncompressed bytes at which a block is cut).
    #[arg(long, value_name = "N", default_value_t = 4096)]
    pub block_size: usize,
    /// Keys between restart points.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub restart_interval: usize,
    /// Block compression.
    #[arg(long, value_enum, default_value_t = CompressionArg::Snappy)]
    pub compression: CompressionArg,
    /// Compression level for zstd (default 1) and deflate (0..=9, default 6).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub level: Option<i32>,
    #[command(flatten)]
    pub filter: FilterFlags,
    /// Compress data blocks on a helper thread while reading the next entries (the file is
    /// the same byte for byte).
    #[arg(long)]
    pub parallel_compression: bool,
}

fn compression(a: &Args) -> Result<Compression, Failure> {
    Ok(match a.compression {
        CompressionArg::Snappy => Compression::Snappy,
        CompressionArg::None => Compression::None,
        #[cfg(feature = "zstd")]
        CompressionArg::Zstd => Compression::Zstd(a.level.unwrap_or(1)),
        #[cfg(feature = "zlib")]
        CompressionArg::Deflate => {
            let l = a.level.unwrap_or(6);
            if !(0..=9).contains(&l) {
                return Err(Failure::error(format!(
                    "--level {l}: deflate levels are 0..=9"
                )));
            }
            Compression::RawDeflate(l as u32)
        }
        #[cfg(feature = "zlib")]
        CompressionArg::Zlib => {
            let l = a.level.unwrap_or(6);
            if !(0..=9).contains(&l) {
                return Err(Failure::error(format!(
                    "--level {l}: zlib levels are 0..=9"
                )));
            }
            Compression::Zlib(l as u32)
        }
        #[allow(unreachable_patterns)]
        other => {
            return Err(Failure::error(format!(
                "--compression {other:?}: this sst was built without that codec"
            )))
        }
    })
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    let comp = compression(a)?;
    if a.block_size == 0 || a.restart_interval == 0 {
        return Err(Failure::error(
            "--block-size and --restart-interval must be at least 1",
        ));
    }
    let mut input = Input::open(&a.input)?;
    // The first entry decides auto-detected key format.
    let first = input.next()?;
    let internal = match g.keys {
        KeyFormat::Internal => true,
        KeyFormat::Plain => false,
        KeyFormat::Auto => input.saw_seq() == Some(true),
    };
    let mut opts = Options::default()
        .block_size(a.block_size)
        .block_restart_interval(a.restart_interval)
        .compression(comp)
        .parallel_compression(a.parallel_compression);
    opts = if a.filter.no_filter {
        opts.filter_policy(None)
    } else {
        opts.bloom(a.filter.bloom_bits)
    };
    if internal {
        opts = opts.keys(KeyFormat::Internal);
    }
    let cmp: Arc<dyn Comparator> = if internal {
        Arc::new(InternalKeyComparator::new(Arc::new(BytewiseComparator)))
    } else {
        Arc::new(BytewiseComparator)
    };
    let check_key = |e: &Entry| -> Result<(), Failure> {
        if internal && internal_key::parse_internal_key(&e.key).is_none() {
            return Err(Failure::error(format!(
                "{}: line {}: key {} is not an internal key (user key + 8-byte tag with type 0 or 1); \
                 use --keys plain for plain keys",
                input_name(&a.input.from),
                e.line,
                text::hex(&e.key)
            )));
        }
        Ok(())
    };
    let build_err = |e: Error| Failure::error(format!("{}: {e}", a.out.display()));
    let mut builder = TableFileBuilder::create(&a.out, &opts).map_err(build_err)?;
    let pb = progress(&a.input.from);
    if a.sort {
        let mut all = Vec::new();
        let mut next = first;
        while let Some(e) = next {
            check_key(&e)?;
            all.push(e);
            next = input.next()?;
            if let Some(pb) = &pb {
                pb.set_position(input.bytes_read());
            }
        }
        all.sort_by(|x, y| cmp.compare(&x.key, &y.key).then(x.line.cmp(&y.line)));
        for w in all.windows(2) {
            if cmp.compare(&w[0].key, &w[1].key) == Ordering::Equal {
                return Err(Failure::error(format!(
                    "{}: line {}: duplicate key {} (first on line {})",
                    input_name(&a.input.from),
                    w[1].line.max(w[0].line),
                    text::hex(&w[1].key),
                    w[0].line.min(w[1].line)
                )));
            }
        }
        for e in &all {
            builder.add(&e.key, &e.value).map_err(build_err)?;
        }
    } else {
        let mut next = first;
        let mut prev_line = 0;
        while let Some(e) = next {
            check_key(&e)?;
            match builder.add(&e.key, &e.value) {
                Ok(()) => {}
                Err(Error::OutOfOrder { previous, got }) => {
                    let what = if cmp.compare(&previous, &got) == Ordering::Equal {
                        "duplicate key"
                    } else {
                        "key out of order"
                    };
                    return Err(Failure::error(format!(
                        "{}: line {}: {what}: {} is not after {} (line {prev_line}); use --sort to sort the input",
                        input_name(&a.input.from),
                        e.line,
                        text::hex(&got),
                        text::hex(&previous)
                    )));
                }
                Err(err) => return Err(build_err(err)),
            }
            prev_line = e.line;
            next = input.next()?;
            if let Some(pb) = &pb {
                pb.set_position(input.bytes_read());
            }
        }
    }
    let stats = builder.finish().map_err(build_err)?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    let mut out = output::stdout();
    writeln!(
        out,
        "wrote {}: {} entries, {} data blocks, {} bytes ({} keys, {}, {})",
        a.out.display(),
        stats.entries,
        stats.data_blocks,
        stats.file_size,
        if internal { "internal" } else { "plain" },
        compression_label(comp),
        if a.filter.no_filter {
            "no filter".to_string()
        } else {
            format!("bloom {} bits/key", a.filter.bloom_bits)
        }
    )?;
    out.flush()?;
    Ok(EXIT_OK)
}

fn compression_label(c: Compression) -> String {
    match c {
        Compression::None => "no compression".to_string(),
        Compression::Snappy => "snappy".to_string(),
        #[cfg(feature = "zstd")]
        Compression::Zstd(l) => format!("zstd level {l}"),
        #[cfg(feature = "zlib")]
        Compression::RawDeflate(l) => format!("raw deflate level {l}"),
        #[cfg(feature = "zlib")]
        Compression::Zlib(l) => format!("zlib level {l}"),
    }
}

fn input_name(p: &Path) -> String {
    if p.as_os_str() == "-" {
        "<stdin>".into()
    } else {
        p.display().to_string()
    }
}
