//! `--bloom-bits N` / `--no-filter`: the filter the writing subcommands (`build`, `db build`)
//! put in the tables they write; one declaration, flattened into each.

/// The filter to write: LevelDB's bloom filter with `bloom_bits` bits per key, or none.
#[derive(clap::Args, Debug)]
pub struct FilterFlags {
    /// Bloom filter bits per key.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        conflicts_with = "no_filter"
    )]
    pub bloom_bits: usize,
    /// Write no filter block.
    #[arg(long)]
    pub no_filter: bool,
}

impl FilterFlags {
    /// Bits per key of the bloom filter to write, or `None` for no filter.
    pub fn bloom(&self) -> Option<usize> {
        (!self.no_filter).then_some(self.bloom_bits)
    }
}
