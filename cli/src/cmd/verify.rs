//! `sst verify`: check whole tables.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use leveldb_table::raw::coding::decode_fixed32;
use leveldb_table::raw::format::FOOTER_LEN;
use leveldb_table::{error::BlockKind, table::FilterStatus, Error, RandomAccess, TableReader};

use crate::exit::{self, CmdResult, EXIT_ERROR, EXIT_FAIL, EXIT_OK};
use crate::input::flags::Global;
use crate::input::table_open::OpenError;
use crate::render::output;

const EXAMPLES: &str = "\
Examples:
  sst verify 000005.ldb
  sst verify db/*.ldb            every table; the exit code is the worst of them

Checks: the footer, every block's checksum (data, index, metaindex, filter), that every
entry decodes, key order (within and across blocks, against the index separators), that
every key passes its filter, and that the filter block's offsets are well formed.
Checksums are always verified here (--no-verify does not apply).
Prints 'FILE: OK (N entries, M data blocks)', or: a note on what to do first (keys out of
order that are in another known order: which, and the flag that reads them), one line per
problem, 'FILE: offset O: what is wrong' (at most 10 of each kind, then 'FILE: ... and N
more KIND'; --all prints them all), then 'FILE: N problem(s)'.
Exit: 0 every table clean; 1 corruption (also a damaged footer or index: too short, bad
magic, ...); 2 a file cannot be read (missing, I/O error) or is not a LevelDB table
(a RocksDB file).";

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// Table files.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print every problem (by default the first 10 of each kind per table, then how many
    /// more of that kind there are).
    #[arg(long)]
    pub all: bool,
    /// For a damaged table, also say what `sst scan --salvage` recovers: the entries of the
    /// blocks that check out (found by their checksums when the footer or index is lost).
    #[arg(long)]
    pub salvage: bool,
}

/// Filter-block structure checks the library's `verify` leaves out: every filter's offsets
/// lie inside the block and in order, and every data block has a filter.
fn check_filter_layout(table: &TableReader<File>, path: &Path, problems: &mut Vec<String>) {
    let Some(h) = table.filter_handle() else {
        return;
    };
    let Ok(c) = table.read_block(h, BlockKind::Filter) else {
        return; // already reported by the library
    };
    let d = &c.data[..];
    let at = |what: String| {
        format!(
            "{}: offset {}: filter block: {what}",
            path.display(),
            h.offset
        )
    };
    if d.len() < 5 {
        problems.push(at(format!(
            "{} bytes, shorter than its 5-byte tail",
            d.len()
        )));
        return;
    }
    let n = d.len();
    let base_lg = d[n - 1];
    let array_start = decode_fixed32(&d[n - 5..]) as usize;
    if array_start > n - 5 {
        problems.push(at(format!(
            "offset array start {array_start} is past the array end {}",
            n - 5
        )));
        return;
    }
    if (n - 5 - array_start) % 4 != 0 {
        problems.push(at(format!(
            "offset array of {} bytes is not a whole number of 4-byte offsets",
            n - 5 - array_start
        )));
    }
    let num = (n - 5 - array_start) / 4;
    let off = |i: usize| decode_fixed32(&d[array_start + 4 * i..]) as usize;
    let mut bad = Vec::new();
    for i in 0..num {
        let start = off(i);
        let limit = if i + 1 < num { off(i + 1) } else { array_start };
        if start > limit || limit > array_start {
            bad.push(format!("{i} ({start}..{limit})"));
        }
    }
    if !bad.is_empty() {
        let shown: Vec<&str> = bad.iter().take(10).map(String::as_str).collect();
        problems.push(at(format!(
            "{} filter(s) with offsets outside the filters area 0..{array_start} or reversed \
             (LevelDB then treats every key as a match): {}{}",
            bad.len(),
            shown.join(", "),
            if bad.len() > 10 { ", ..." } else { "" }
        )));
    }
    if base_lg < 64 {
        if let Ok(handles) = table.data_block_handles() {
            if let Some((_, last)) = handles.last() {
                let needed = (last.offset >> base_lg) as usize + 1;
                if needed > num {
                    problems.push(at(format!(
                        "{num} filters, but the data block at offset {} needs filter {}",
                        last.offset,
                        needed - 1
                    )));
                }
            }
        }
    }
}

/// The footer's padding (between the two handles and the magic) must be zero: LevelDB
/// writes zeros there and ignores them when reading, so other bytes mean damage.
fn check_footer_padding(table: &TableReader<File>, path: &Path, problems: &mut Vec<String>) {
    let footer_at = table.data_end();
    let Ok(raw) = table.source().read_at(footer_at, FOOTER_LEN) else {
        return;
    };
    if raw.len() != FOOTER_LEN {
        return;
    }
    let mut handles = Vec::new();
    table.footer().metaindex.encode_to(&mut handles);
    table.footer().index.encode_to(&mut handles);
    let padding = &raw[handles.len().min(FOOTER_LEN - 8)..FOOTER_LEN - 8];
    if let Some(i) = padding.iter().position(|&b| b != 0) {
        let at = footer_at + (handles.len() + i) as u64;
        problems.push(format!(
            "{}: offset {at}: footer padding byte is {:#04x}, not 0 (LevelDB writes zeros there)",
            path.display(),
            padding[i]
        ));
    }
}

/// Problems of one kind printed per table unless `--all`.
const PER_KIND: usize = 10;

/// What kind of problem `e` is, in words, for the count of those not shown.
fn kind_of(e: &Error) -> &'static str {
    match e {
        Error::KeyOrder { .. } => "keys out of order",
        Error::ChecksumMismatch { .. } => "block checksum mismatches",
        Error::FilterMiss { .. } => "keys their filter does not pass",
        Error::BadEntry { .. } => "entries that do not decode",
        Error::BadInternalKey { .. } => "bad internal keys",
        Error::Decompress { .. } => "blocks that do not decompress",
        Error::TruncatedBlock { .. } | Error::BadBlockHandle { .. } => {
            "blocks cut short or out of the file"
        }
        Error::BadBlockContents { .. } => "malformed blocks",
        Error::Io { .. } => "I/O errors",
        _ => "other problems",
    }
}

/// Writes `problems` (kind, line) in file order, at most `cap` of each kind, then one line
/// per kind with how many more there are; `count` (all problems found, some perhaps not
/// kept by the library) says how many are beyond the list.
fn write_capped(
    out: &mut impl Write,
    path: &Path,
    problems: &[(&'static str, String)],
    count: u64,
    cap: Option<usize>,
) -> std::io::Result<()> {
    // Each kind met, in order of first appearance, and how many of it there are.
    let mut seen: Vec<(&'static str, usize)> = Vec::new();
    for (kind, line) in problems {
        let i = match seen.iter().position(|(k, _)| k == kind) {
            Some(i) => i,
            None => {
                seen.push((kind, 0));
                seen.len() - 1
            }
        };
        seen[i].1 += 1;
        if cap.is_none_or(|c| seen[i].1 <= c) {
            writeln!(out, "{line}")?;
        }
    }
    for (kind, n) in &seen {
        let c = cap.map_or(*n, |c| (*n).min(c));
        if *n > c {
            writeln!(
                out,
                "{}: ... and {} more {kind} (--all prints every problem)",
                path.display(),
                n - c
            )?;
        }
    }
    let beyond = count.saturating_sub(problems.len() as u64);
    if beyond > 0 {
        writeln!(
            out,
            "{}: ... and {beyond} more problem(s) past the first {} kept",
            path.display(),
            problems.len()
        )?;
    }
    Ok(())
}

/// Verifies one table; returns its exit code.
fn verify_one(
    g: &Global,
    path: &Path,
    all: bool,
    out: &mut impl Write,
) -> Result<i32, exit::Failure> {
    let gv = Global { verify: true, ..*g };
    let table = match crate::input::table_open::open_table_err(path, &gv) {
        Ok(t) => t,
        Err(e) => {
            let code = match &e {
                OpenError::Io(_) | OpenError::NotATable(_) | OpenError::Order(_) => EXIT_ERROR,
                OpenError::Table(Error::RocksDb { .. }) => EXIT_ERROR,
                OpenError::Table(te) if !te.is_corruption() => EXIT_ERROR,
                OpenError::Table(_) => EXIT_FAIL,
            };
            let mut msg = e.message(path);
            if let OpenError::Table(Error::RocksDb { .. }) = &e {
                msg.push_str(" (not a LevelDB table)");
            }
            writeln!(out, "{msg}")?;
            return Ok(code);
        }
    };
    let report = table.verify();
    // The library adds "metaindex or filter block unreadable" next to the error that made
    // the block unreadable; keep only the error itself when both are there.
    let is_wrapper = |e: &Error| matches!(e, Error::BadBlockContents { reason, .. } if reason.contains("unreadable"));
    let shown: Vec<&Error> = report
        .problems
        .iter()
        .filter(|e| {
            !is_wrapper(e)
                || !report
                    .problems
                    .iter()
                    .any(|o| !is_wrapper(o) && o.block() == e.block())
        })
        .collect();
    let mut count = report.problem_count - (report.problems.len() - shown.len()) as u64;
    let mut problems: Vec<(&'static str, String)> = shown
        .iter()
        .map(|e| (kind_of(e), exit::describe(path, e)))
        .collect();
    let mut own = Vec::new();
    check_footer_padding(&table, path, &mut own);
    check_filter_layout(&table, path, &mut own);
    count += own.len() as u64;
    problems.extend(
        own.iter()
            .map(|p| ("footer and filter-block problems", p.clone())),
    );
    if count == 0 {
        writeln!(
            out,
            "{}: OK ({} entries, {} data blocks)",
            path.display(),
            report.entries,
            report.data_blocks
        )?;
        if let FilterStatus::UnknownPolicy(name) = table.filter_status() {
            exit::warn(&format!(
                "{}: note: filter policy {name:?} is unknown; keys were not checked against it",
                path.display()
            ));
        }
        return Ok(EXIT_OK);
    }
    // What to do first: keys out of order may be keys in another order than the one
    // asked for; say which, before the problems that follow from it.
    if report
        .problems
        .iter()
        .any(|e| matches!(e, Error::KeyOrder { .. }))
    {
        let name = crate::input::order::table_order_name(path, g);
        writeln!(
            out,
            "{}: note: keys are out of {name} order; {}",
            path.display(),
            crate::input::order::hint(path, g, &name)
        )?;
    }
    write_capped(out, path, &problems, count, (!all).then_some(PER_KIND))?;
    writeln!(
        out,
        "{}: {count} problem(s) ({} entries, {} data blocks checked)",
        path.display(),
        report.entries,
        report.data_blocks
    )?;
    let io_only = report.problems.iter().all(|e| !e.is_corruption()) && own.is_empty();
    Ok(if io_only { EXIT_ERROR } else { EXIT_FAIL })
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    // The exit code is the verdict, also when the reader stops reading early.
    let mut out = output::verdict_stdout();
    let mut worst = EXIT_OK;
    for f in &a.files {
        let code = verify_one(g, f, a.all, &mut out)?;
        if a.salvage && code == EXIT_FAIL {
            crate::input::salvage::verify_summary(f, g, &mut out)?;
        }
        worst = worst.max(code);
    }
    out.flush()?;
    Ok(worst)
}
