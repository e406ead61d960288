//! `sst bloom add|check|remove|info`: a scalable bloom filter shared through Redis or a Redis
//! Cluster (`--redis URL[,URL...] [--cluster] --name NAME`) or kept in a local file
//! (`--file PATH`), or a counting filter in a file (`--counting --file PATH`), fed keys one
//! per line on stdin. The flags all subcommands share are in `target.rs`, the stdin and
//! stdout hot path in `io.rs` (and `rows.rs`, a Redis check's rows written on a thread of
//! their own); `scalable.rs` and `counting.rs` run the two kinds of filter.

mod counting;
mod io;
mod rows;
mod scalable;
mod target;

use target::{CheckArgs, KeyArgs, Target};

use crate::exit::{CmdResult, Failure};

/// `sst bloom ...`
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub action: Action,
}

/// `sst bloom` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum Action {
    /// Add the keys on stdin; prints a JSON summary.
    Add(KeyArgs),
    /// Check the keys on stdin, in input order.
    Check(CheckArgs),
    /// Remove the keys on stdin from a counting filter (--counting --file); prints a JSON
    /// summary. A key that is not in the filter is reported and changes nothing.
    Remove(KeyArgs),
    /// Print the filter's parameters, fill and estimated false-positive rate as JSON.
    Info(Target),
}

/// Runs `sst bloom SUBCOMMAND` on a scalable or (with --counting) a counting filter.
pub fn run(a: &Args) -> CmdResult {
    let target = match &a.action {
        Action::Add(k) | Action::Remove(k) => &k.target,
        Action::Check(c) => &c.keys.target,
        Action::Info(t) => t,
    };
    if target.counting {
        return match &a.action {
            Action::Add(k) => counting::run_add(k),
            Action::Remove(k) => counting::run_remove(k),
            Action::Check(c) => counting::run_check(&c.keys, c.format),
            Action::Info(t) => counting::run_info(t),
        };
    }
    match &a.action {
        Action::Add(k) => scalable::run_add(k),
        Action::Check(c) => scalable::run_check(c),
        Action::Remove(_) => Err(Failure::error(
            "bloom remove needs a counting filter (--counting --file PATH): a scalable filter \
             cannot remove keys",
        )),
        Action::Info(t) => scalable::run_info(t),
    }
}
