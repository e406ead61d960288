//! `sst conform`: run the conformance kit (the `sst-conform` crate) against an
//! implementation's adapter and print a row per case.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use sst_conform::{Adapter, Config, Group, Outcome, Row, Summary};

use crate::exit::{self, CmdResult, Failure, EXIT_FAIL, EXIT_OK};
use crate::render::output::{OutFormat, RowsOut};

const ABOUT: &str = "\
The adapter protocol: each call is `COMMAND VERB ARGS...` (COMMAND is a shell command line;
the verb and its arguments are appended as further words), hex everywhere, stderr for messages:
  capabilities           -> {\"name\", \"verbs\": [..], \"compressions\": [..], \"comparators\": [..]}
  read-table FILE        -> {\"key\": HEX, \"value\": HEX} per entry in table order; non-zero on damage
  read-db DIR            -> {\"key\": HEX, \"value\": HEX} of the live view in order; non-zero on damage
  write-table FILE [--block-size N] [--restart-interval N] [--compression none|snappy]
                   [--bloom-bits N]  <- {\"key\": HEX, \"value\": HEX} per entry on stdin, sorted
  a verb it does not support exits 3 (its cases are skipped).
Groups: tables, directories, writes, damaged (the right answer to a damaged or hostile input
is an error or every entry exactly; never altered or missing data with exit 0). A crash, a
hang past --timeout (the adapter's process group is killed) or altered data fails the case;
the run goes on.

Examples:
  sst conform --impl 'tools/conform/leveldb_cpp/adapter.sh'
  sst conform --impl 'python3 tools/conform/plyvel_adapter.py' --group directories
  sst conform --impl './my-adapter' --reference 'tools/conform/leveldb_cpp/adapter.sh' \\
              --case 'damaged-*' --format jsonl
  sst conform --list

Output: a row per case (text: result, group, verb, case, detail; jsonl: {\"case\", \"group\",
\"verb\", \"result\": \"pass\"|\"fail\"|\"skip\", \"detail\"}), then a summary (on stderr with
json and jsonl). Exit: 0 nothing failed, 1 a case failed, 2 the kit could not run (the
adapter's capabilities failed, a fixture disagrees with its listing, a usage error).
See docs/conformance.md.";

/// `--group`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GroupArg {
    /// Reading generated and real tables.
    Tables,
    /// Reading generated and real directories.
    Directories,
    /// Writing tables.
    Writes,
    /// Reading damaged and hostile tables and directories.
    Damaged,
}

#[derive(clap::Args, Debug)]
#[command(after_help = ABOUT)]
pub struct Args {
    /// The adapter command of the implementation under test.
    #[arg(
        long = "impl",
        value_name = "COMMAND",
        required_unless_present = "list"
    )]
    pub implementation: Option<String>,
    /// An adapter trusted as LevelDB's own (C++ LevelDB's): it reads back every written
    /// table, and `write-*-bytes` cases must equal its tables byte for byte. Without it,
    /// written tables are compared with this project's builder (LevelDB's bytes without
    /// compression) and read back by this project's reader only.
    #[arg(long, value_name = "COMMAND")]
    pub reference: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutFormat,
    /// Seconds an adapter call may take before it (its process group) is killed and the
    /// case fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 20.0)]
    pub timeout: f64,
    /// Run only the cases of this name (`*` matches anything); repeatable.
    #[arg(long = "case", value_name = "PATTERN")]
    pub cases: Vec<String>,
    /// Run only the cases of this group; repeatable.
    #[arg(long = "group", value_enum, value_name = "GROUP")]
    pub groups: Vec<GroupArg>,
    /// The real writers' fixtures (default: the testdata/ of the repository `sst` was built
    /// from, when it is there).
    #[arg(long, value_name = "DIR")]
    pub testdata: Option<PathBuf>,
    /// Keep every case's input and each call's files in DIR (new or empty), to rerun an
    /// adapter by hand.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// List the cases (name, group, verb, what they need, what they hold) and run none.
    #[arg(long)]
    pub list: bool,
}

fn config(a: &Args) -> Result<Config, Failure> {
    if !(a.timeout > 0.0 && a.timeout.is_finite()) {
        return Err(Failure::error(
            "--timeout must be a positive number of seconds",
        ));
    }
    let timeout = Duration::from_secs_f64(a.timeout);
    let built_with = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../testdata"));
    let testdata = match &a.testdata {
        Some(t) if !t.is_dir() => {
            return Err(Failure::error(format!(
                "--testdata {}: not a directory",
                t.display()
            )))
        }
        Some(t) => Some(t.clone()),
        None => built_with.is_dir().then_some(built_with),
    };
    Ok(Config {
        adapter: Adapter::new(a.implementation.clone().unwrap_or_default(), timeout),
        reference: a
            .reference
            .as_ref()
            .map(|r| Adapter::new(r.clone(), timeout)),
        testdata,
        comparators: vec![Arc::new(sst_chrome::idb::IdbComparator)],
        cases: a.cases.clone(),
        groups: a
            .groups
            .iter()
            .map(|g| match g {
                GroupArg::Tables => Group::Tables,
                GroupArg::Directories => Group::Directories,
                GroupArg::Writes => Group::Writes,
                GroupArg::Damaged => Group::Damaged,
            })
            .collect(),
        keep: a.keep.clone(),
    })
}

fn text_row(r: &Row) -> String {
    format!(
        "{:<4}  {:<11}  {:<11}  {:<44}  {}\n",
        r.outcome.as_str(),
        r.group.as_str(),
        r.verb.as_str(),
        r.case,
        r.detail
    )
}

fn summary_text(s: &Summary) -> String {
    let mut t = format!("{}: {:.1} s\n", s.name, s.elapsed.as_secs_f64());
    let mut total = [0usize; 3];
    for g in Group::ALL {
        let n = [Outcome::Pass, Outcome::Fail, Outcome::Skip].map(|o| s.count(g, o));
        for (t, n) in total.iter_mut().zip(n) {
            *t += n;
        }
        t.push_str(&format!(
            "  {:<11}  {:>4} pass  {:>4} fail  {:>4} skip\n",
            g.as_str(),
            n[0],
            n[1],
            n[2]
        ));
    }
    t.push_str(&format!(
        "  {:<11}  {:>4} pass  {:>4} fail  {:>4} skip\n",
        "total", total[0], total[1], total[2]
    ));
    t
}

/// Runs `sst conform`.
pub fn run(a: &Args) -> CmdResult {
    let cfg = config(a)?;
    let kit = |e: sst_conform::Error| Failure::error(e.to_string());
    let mut out = RowsOut::new(std::io::stdout().lock(), a.format);
    if a.list {
        let (cases, notes) = sst_conform::list_cases(&cfg).map_err(kit)?;
        for n in notes {
            exit::warn(&n);
        }
        for c in cases {
            let needs = [c.compressions.join(","), c.comparator.clone()].join(" ");
            match a.format {
                OutFormat::Text => writeln!(
                    out,
                    "{:<44}  {:<11}  {:<11}  {}  [{}]",
                    c.name,
                    c.group.as_str(),
                    c.verb().as_str(),
                    c.about,
                    needs.trim()
                )?,
                _ => writeln!(
                    out,
                    "{}",
                    serde_json::json!({"case": c.name, "group": c.group.as_str(),
                        "verb": c.verb().as_str(), "about": c.about,
                        "compressions": c.compressions, "comparator": c.comparator})
                )?,
            }
        }
        out.finish()?;
        return Ok(EXIT_OK);
    }
    let mut write_err = None;
    let summary = sst_conform::run(&cfg, &mut |r: &Row| {
        let line = match a.format {
            OutFormat::Text => text_row(r),
            _ => format!("{}\n", r.to_json()),
        };
        if write_err.is_none() {
            if let Err(e) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
                write_err = Some(e);
            }
        }
    })
    .map_err(kit)?;
    if let Some(e) = write_err {
        return Err(e.into());
    }
    for n in &summary.notes {
        exit::warn(n);
    }
    if a.format == OutFormat::Text {
        write!(out, "\n{}", summary_text(&summary))?;
    } else {
        eprint!("{}", summary_text(&summary));
    }
    out.finish()?;
    Ok(if summary.failed() { EXIT_FAIL } else { EXIT_OK })
}
