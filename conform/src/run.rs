//! The run: the adapter's capabilities, the cases (made in a work directory), one adapter
//! call per case on a fresh copy of its input, a verdict per case, a summary.
//!
//! ```text
//! capabilities (impl, reference) -> cases::all -> select (--case, --group)
//!   -> per case: listed? (verb, compressions, comparator) else skip
//!                copy the input to <work>/run/<case>/ -> call -> judge -> Row (reported at once)
//!   -> Summary: counts per group and outcome
//! ```

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use leveldb_table::{Comparator, Compression, Options, TableBuilder};

use crate::adapter::{describe, Adapter, Exit};
use crate::cases::{self, Case, Group, Input, Sources};
use crate::error::{Error, Result};
use crate::judge::{self, Outcome, Verdict};
use crate::protocol::{encode_rows, Capabilities, Entry, Verb, WriteCompression, WriteParams};

/// What to run, against what.
pub struct Config {
    /// The implementation under test.
    pub adapter: Adapter,
    /// An adapter of C++ LevelDB (or another trusted writer): it reads back every written
    /// table, and its `write-table` output is what `write-X-bytes` cases must equal. Without
    /// one, written tables are read back by this project's reader only and compared with
    /// this project's builder's tables.
    pub reference: Option<Adapter>,
    /// The repository's testdata/ (the real writers' fixtures); none: generated cases only.
    pub testdata: Option<PathBuf>,
    /// Comparators besides bytewise this project reads in (for fixtures in other orders).
    pub comparators: Vec<Arc<dyn Comparator>>,
    /// Case names to run (`*` matches any run of characters); empty: every case.
    pub cases: Vec<String>,
    /// Groups to run; empty: every group.
    pub groups: Vec<Group>,
    /// Keep the cases and what each call was given here (a new or empty directory).
    pub keep: Option<PathBuf>,
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The case's name.
    pub case: String,
    /// Its group.
    pub group: Group,
    /// The verb it calls.
    pub verb: Verb,
    /// Pass, fail or skip.
    pub outcome: Outcome,
    /// Why, in a line.
    pub detail: String,
}

impl Row {
    /// The row as `sst conform --format jsonl` prints it.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "case": self.case,
            "group": self.group.as_str(),
            "verb": self.verb.as_str(),
            "result": self.outcome.as_str(),
            "detail": self.detail,
        })
    }
}

/// What a run found.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// The implementation's name (from its capabilities).
    pub name: String,
    /// Cases per group and outcome.
    pub counts: BTreeMap<(Group, Outcome), usize>,
    /// What was left out and why (e.g. no testdata/).
    pub notes: Vec<String>,
    /// How long the run took.
    pub elapsed: Duration,
}

impl Summary {
    /// The number of cases of `group` with `outcome`.
    pub fn count(&self, group: Group, outcome: Outcome) -> usize {
        self.counts.get(&(group, outcome)).copied().unwrap_or(0)
    }

    /// Whether some case failed.
    pub fn failed(&self) -> bool {
        Group::ALL.iter().any(|&g| self.count(g, Outcome::Fail) > 0)
    }
}

/// `*` matches any run of characters, everything else itself.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len()).any(|i| tail.is_char_boundary(i) && matches(rest, &tail[i..]))
        }
    }
}

fn work_dir(keep: Option<&Path>) -> Result<(Option<tempfile::TempDir>, PathBuf)> {
    match keep {
        Some(dir) => {
            let empty = std::fs::read_dir(dir).map_or(true, |mut d| d.next().is_none());
            if !empty {
                let msg = format!("--keep {}: not empty", dir.display());
                return Err(Error::Usage(msg));
            }
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            Ok((None, dir.to_path_buf()))
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("sst-conform-")
                .tempdir()
                .map_err(|e| Error::io(std::env::temp_dir(), e))?;
            let p = t.path().to_path_buf();
            Ok((Some(t), p))
        }
    }
}

/// The selected cases, made in `work`, and notes on what was left out.
fn selected(config: &Config, work: &Path) -> Result<(Vec<Case>, Vec<String>)> {
    let src = Sources {
        work,
        testdata: config.testdata.as_deref(),
        comparators: &config.comparators,
    };
    let (all, notes) = cases::all(&src)?;
    let chosen: Vec<Case> = all
        .into_iter()
        .filter(|c| config.groups.is_empty() || config.groups.contains(&c.group))
        .filter(|c| config.cases.is_empty() || config.cases.iter().any(|p| matches(p, &c.name)))
        .collect();
    if chosen.is_empty() {
        return Err(Error::Usage(
            "no case matches the --case and --group given".into(),
        ));
    }
    Ok((chosen, notes))
}

/// Every case (after `--case` and `--group`), without running any: for listings.
///
/// # Errors
/// As [`run`], except that no adapter is called.
pub fn list_cases(config: &Config) -> Result<(Vec<Case>, Vec<String>)> {
    let (_tmp, work) = work_dir(config.keep.as_deref())?;
    selected(config, &work)
}

/// Runs the cases against `config.adapter`, calling `on_row` with each row as it is known.
///
/// # Errors
/// The adapter's (or reference's) capabilities fail or do not parse; the kit cannot
/// write its work directory; a fixture disagrees with its listing. Never an adapter's
/// failure on a case: that is a `fail` row.
pub fn run(config: &Config, on_row: &mut dyn FnMut(&Row)) -> Result<Summary> {
    let start = Instant::now();
    let caps = config.adapter.capabilities()?;
    let reference = match &config.reference {
        None => None,
        Some(r) => {
            let rc = r.capabilities()?;
            if !rc.has_verb(Verb::ReadTable) || !rc.has_verb(Verb::WriteTable) {
                let msg = format!(
                    "--reference {}: it lists no read-table and write-table",
                    r.command()
                );
                return Err(Error::Usage(msg));
            }
            Some((r, rc.name))
        }
    };
    let (_tmp, work) = work_dir(config.keep.as_deref())?;
    let (chosen, notes) = selected(config, &work)?;
    let mut summary = Summary {
        name: caps.name.clone(),
        notes,
        ..Summary::default()
    };
    let writes = chosen.iter().any(|c| c.verb() == Verb::WriteTable);
    if writes && reference.is_none() && caps.has_verb(Verb::WriteTable) {
        summary.notes.push(
            "no --reference: written tables were compared with this project's builder and read \
             back by this project's reader only (--reference tools/conform/leveldb_cpp/adapter.sh \
             adds C++ LevelDB)"
                .into(),
        );
    }
    let runs = work.join("run");
    for case in &chosen {
        let scratch = runs.join(&case.name);
        std::fs::create_dir_all(&scratch).map_err(|e| Error::io(&scratch, e))?;
        let v = match unlisted(&caps, case) {
            Some(why) => Verdict::skip(why),
            None => run_case(
                config,
                reference.as_ref().map(|(a, n)| (*a, n.as_str())),
                case,
                &scratch,
            )?,
        };
        if config.keep.is_none() {
            let _ = std::fs::remove_dir_all(&scratch);
        }
        *summary.counts.entry((case.group, v.outcome)).or_default() += 1;
        on_row(&Row {
            case: case.name.clone(),
            group: case.group,
            verb: case.verb(),
            outcome: v.outcome,
            detail: v.detail,
        });
    }
    summary.elapsed = start.elapsed();
    Ok(summary)
}

/// Why the adapter does not get `case`, from its capabilities; `None` if it does.
fn unlisted(caps: &Capabilities, case: &Case) -> Option<String> {
    let verb = case.verb();
    if !caps.has_verb(verb) {
        return Some(format!("{} not listed", verb.as_str()));
    }
    if let Some(c) = case.compressions.iter().find(|c| !caps.has_compression(c)) {
        return Some(format!("{c} compression not listed"));
    }
    if !caps.has_comparator(&case.comparator) {
        return Some(format!("comparator {} not listed", case.comparator));
    }
    None
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    for e in std::fs::read_dir(from).map_err(|e| Error::io(from, e))? {
        let e = e.map_err(|e| Error::io(from, e))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_dir(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst).map_err(|e| Error::io(&src, e))?;
        }
    }
    Ok(())
}

fn run_case(
    config: &Config,
    reference: Option<(&Adapter, &str)>,
    case: &Case,
    scratch: &Path,
) -> Result<Verdict> {
    let a = &config.adapter;
    Ok(match &case.input {
        Input::Table { file, expected } => {
            let copy = scratch.join(file.file_name().unwrap_or("table.ldb".as_ref()));
            std::fs::copy(file, &copy).map_err(|e| Error::io(file, e))?;
            let out = a.call(Verb::ReadTable.as_str(), &[copy.into_os_string()], None);
            judge::read(case.group, expected, &out)
        }
        Input::Dir { dir, expected } => {
            let copy = scratch.join("db");
            copy_dir(dir, &copy)?;
            let out = a.call(Verb::ReadDb.as_str(), &[copy.into_os_string()], None);
            judge::read(case.group, expected, &out)
        }
        Input::Write {
            entries,
            params,
            identical,
        } => {
            let file = scratch.join("written.ldb");
            let out = write(a, &file, entries, params);
            if *identical {
                let wanted = match reference {
                    Some((r, name)) => (
                        name,
                        reference_table(r, &scratch.join("reference.ldb"), entries, params),
                    ),
                    None => ("this project's builder", our_table(entries, params)),
                };
                judge::identical(&out, &file, wanted)
            } else {
                let read_back = match reference {
                    Some((r, name)) if out.exit == Exit::Code(0) && file.exists() => {
                        let copy = scratch.join("for-reference.ldb");
                        std::fs::copy(&file, &copy).map_err(|e| Error::io(&file, e))?;
                        Some((
                            name,
                            r.call(Verb::ReadTable.as_str(), &[copy.into_os_string()], None),
                        ))
                    }
                    _ => None,
                };
                judge::written(
                    &out,
                    &file,
                    entries,
                    read_back.as_ref().map(|(n, o)| (*n, o)),
                )
            }
        }
    })
}

fn write(
    a: &Adapter,
    file: &Path,
    entries: &Arc<Vec<Entry>>,
    params: &WriteParams,
) -> crate::adapter::Output {
    let mut args: Vec<OsString> = vec![file.as_os_str().to_os_string()];
    args.extend(params.args().into_iter().map(OsString::from));
    a.call(
        Verb::WriteTable.as_str(),
        &args,
        Some(Arc::new(encode_rows(entries))),
    )
}

/// The table the reference writes from the same input and flags.
fn reference_table(
    r: &Adapter,
    file: &Path,
    entries: &Arc<Vec<Entry>>,
    params: &WriteParams,
) -> Result<Vec<u8>, String> {
    let out = write(r, file, entries, params);
    match &out.exit {
        Exit::Code(0) => std::fs::read(file).map_err(|e| e.to_string()),
        e => Err(format!("{}: {}", describe(e), out.message())),
    }
}

/// The table this project's builder writes (LevelDB's bytes, without compression).
fn our_table(entries: &[Entry], params: &WriteParams) -> Result<Vec<u8>, String> {
    let mut opts = Options::default()
        .block_size(params.block_size)
        .block_restart_interval(params.restart_interval)
        .compression(match params.compression {
            WriteCompression::None => Compression::None,
            WriteCompression::Snappy => Compression::Snappy,
        });
    if let Some(b) = params.bloom_bits {
        opts = opts.bloom(b as usize);
    }
    let mut b = TableBuilder::new(Vec::new(), &opts).map_err(|e| e.to_string())?;
    for (k, v) in entries {
        b.add(k, v).map_err(|e| e.to_string())?;
    }
    b.finish()
        .map(|(bytes, _)| bytes)
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn patterns_match_whole_names_with_stars() {
        assert!(matches("table-none", "table-none"));
        assert!(!matches("table-none", "table-none-x"));
        assert!(matches("table-*", "table-none"));
        assert!(matches("*-bytes", "write-none-bytes"));
        assert!(matches("*flip*", "damaged-db-table-flip"));
        assert!(!matches("damaged-*-x", "damaged-db"));
    }
}
