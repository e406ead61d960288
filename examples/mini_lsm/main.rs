//! `mini_lsm`: a small LSM engine built from `leveldb_table`'s public pieces (`engine/`),
//! with a command line. The directory is a LevelDB directory: C++ LevelDB opens it.
//!
//! ```text
//! mini_lsm DIR put KEY VALUE
//! mini_lsm DIR get KEY                    prints the value; exit 1 when absent
//! mini_lsm DIR delete KEY
//! mini_lsm DIR scan [--from K] [--to K]   key<TAB>value lines in key order, K <= key < K
//! mini_lsm DIR bench [--num N] [--benchmarks LIST] [--fresh] [--json] [--sync]
//! ```
//!
//! `bench` alone writes N (1,000,000) random 16-byte keys with 100-byte values into DIR and
//! reports the rate. `--benchmarks` runs db_bench's workloads in order (fillseq,
//! fillrandom, overwrite, readrandom, readseq); fillseq and fillrandom start from an empty
//! database and so need `--fresh`, which lets them delete DIR first. Errors exit 2.

mod cli;
mod engine;

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    cli::main(&args, &mut std::io::stdout().lock())
}
