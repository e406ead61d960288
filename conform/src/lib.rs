//! # sst-conform
//!
//! A conformance kit for implementations of the LevelDB table and directory formats. It runs
//! cases against an implementation through an *adapter*: a command that speaks a small
//! protocol (`COMMAND VERB ARGS...`, hex everywhere, messages on stderr):
//!
//! ```text
//! capabilities            -> {"name": .., "verbs": [..], "compressions": [..], "comparators": [..]}
//! read-table FILE         -> {"key": HEX, "value": HEX} per entry, in table order; non-zero on damage
//! read-db DIR             -> {"key": HEX, "value": HEX} per live key, in order; non-zero on damage
//! write-table FILE [--block-size N] [--restart-interval N] [--compression none|snappy]
//!                  [--bloom-bits N]   <- {"key": HEX, "value": HEX} per entry on stdin, sorted
//! a verb it cannot do     -> exit 3 (the case is skipped)
//! ```
//!
//! The cases ([`Group`]): `tables` (generated tables of every compression, restart interval,
//! block size and filter kind, plus tables real writers made), `directories` (generated
//! many-level directories with deletions and live logs, plus directories C++ LevelDB,
//! goleveldb and Chromium wrote), `writes` (tables the adapter writes, read back by our
//! reader and a reference, checked by `verify`, compared byte for byte with LevelDB's) and
//! `damaged` (flipped bytes in every kind of block, truncations, a lost footer, hostile blocks
//! with valid checksums). Every expected answer comes from this project's reader, and is
//! checked against the real writers' own listings where a fixture has one.
//!
//! ```text
//! lib       Config, run() -> rows and a Summary
//! run       the loop: capabilities, cases, one adapter call per case, verdicts
//!  -> cases     every case (generated now, or found in testdata/): tables, dirs, damage,
//!               fixtures, writes, over data (the entry sets) and filters (policies)
//!  -> judge     an adapter's answer against the expected one (and writes' checks)
//!  -> oracle    this project's reader: the expected answers, verify, where a byte lies
//!  -> adapter   running one command: process group, time limit, bounded output
//!  -> protocol  the wire format: verbs, capabilities, JSONL rows, write-table's flags
//! ```
//!
//! `sst conform --impl 'COMMAND'` is the command-line front; `docs/conformance.md` has the
//! protocol, the cases and the published results.

#![warn(missing_docs)]
#![deny(unsafe_code)]

mod adapter;
mod cases;
mod error;
mod judge;
mod oracle;
mod protocol;
mod run;

pub use adapter::{Adapter, Exit, Output};
pub use cases::{Case, Group, Input};
pub use error::{Error, Result};
pub use judge::Outcome;
pub use protocol::{Capabilities, Entry, Verb, WriteCompression, WriteParams};
pub use run::{list_cases, run, Config, Row, Summary};
