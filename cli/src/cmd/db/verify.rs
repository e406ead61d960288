//! `sst db verify DIR`: the whole directory checked (the library's `db::verify`): every
//! block of every live table, the live logs, the MANIFEST against the files present; one
//! line per problem naming file and offset, then a summary; exit 0 intact, 1 damaged, 2
//! unusable.

use std::io::Write;
use std::path::PathBuf;

use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::db::verify::{self, Problem, Severity, VerifyReport};
use leveldb_table::ReadOptions;
use serde_json::json;

use leveldb_table::Cursor;

use crate::exit::{CmdResult, Failure, EXIT_FAIL, EXIT_OK};
use crate::input::flags::Global;
use crate::render::output::{self, OutFormat};

/// `sst db verify DIR`
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  sst db verify db/                      every table, log and the MANIFEST; a summary
  sst db verify db/ --format jsonl       one row per problem, then the summary row
  sst db verify db/ --salvage            also what `sst db scan --salvage` reads of it

Checks, as one consistent state of the directory (as the readers read it while its owner
writes): every live table's footer, index, metaindex, filter and data blocks (checksums,
decompression, entries), key order within and across blocks and against the index, that
every key passes its table's filter, the first and last keys and the size the MANIFEST
records, that tables of a level above 0 do not overlap; the live logs (damaged records,
batches that do not decode); the MANIFEST against the files present (a table it lists
missing; tables, logs and MANIFESTs it does not list).
Prints 'FILE: offset O: what' per problem (at most 10 per file; --all prints them all),
notes as 'FILE: note: what' (a torn last record, a file left for deletion: LevelDB ignores
them), then 'DIR: N tables (E entries, B data blocks), L logs (K batches), MANIFEST-M at
sequence S: intact' or ': damaged: D problem(s)'.
Exit: 0 intact (notes aside); 1 damaged; 2 unusable: not a database directory, no or a bad
CURRENT, a missing or damaged MANIFEST, an order sst does not have (LevelDB would not open
it either).")]
pub struct Args {
    /// The database directory.
    pub dir: PathBuf,
    /// Output format: text, or jsonl (`{"file", "offset", "severity": "damage"|"note",
    /// "what"}` per problem, then `{"summary": {...}}`).
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// Print every problem (by default at most 10 per file, then how many more).
    #[arg(long)]
    pub all: bool,
    /// When damaged, also read the live view as `sst db scan --salvage` does and say how
    /// many keys it reads past how many damaged ranges.
    #[arg(long)]
    pub salvage: bool,
}

/// Problems printed per file unless `--all`.
const PER_FILE: usize = 10;

/// Runs `sst db verify`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    super::open::refuse_non_directory(&a.dir)?;
    // Chrome's orders are among those a MANIFEST may name.
    let opts = sst_chrome::db_options().order(g.comparator.map(|c| c.comparator()));
    let r = verify::verify(&a.dir, opts.clone())
        .map_err(|e| Failure::error(super::open::unusable(&a.dir, &e)))?;
    let salvaged = (a.salvage && !r.is_intact())
        .then(|| salvage_read(&a.dir, opts))
        .transpose()?;
    let mut out = output::stdout();
    match a.format {
        OutFormat::Text => text(&mut out, a, &r, salvaged)?,
        OutFormat::Json | OutFormat::Jsonl => jsonl(&mut out, a, &r, salvaged)?,
    }
    out.flush()?;
    Ok(if r.is_intact() { EXIT_OK } else { EXIT_FAIL })
}

/// What a salvage read of the live view reads: (keys, damaged ranges skipped).
fn salvage_read(dir: &std::path::Path, opts: DbOptions) -> Result<(u64, usize), Failure> {
    let db = Db::open(dir, opts.salvage(true))
        .map_err(|e| Failure::error(format!("{}: {e}", dir.display())))?;
    let mut v = db.iter(&ReadOptions::default().fill_cache(false));
    v.seek_to_first();
    let mut n = 0;
    while v.valid() {
        n += 1;
        v.next();
    }
    if let Err(e) = v.status() {
        return Err(Failure::error(format!("{}: {e}", dir.display())));
    }
    Ok((n, db.damage().len()))
}

fn line(a: &Args, p: &Problem) -> String {
    let path = a.dir.join(&p.file);
    match (p.severity, p.offset) {
        (Severity::Note, _) => format!("{}: note: {}", path.display(), p.what),
        (Severity::Damage, Some(o)) => format!("{}: offset {o}: {}", path.display(), p.what),
        (Severity::Damage, None) => format!("{}: {}", path.display(), p.what),
    }
}

fn summary(r: &VerifyReport) -> String {
    let damage = r.damage_count();
    let notes = r.problems.len() - damage;
    format!(
        "{} table(s) ({} entries, {} data blocks{}), {} log(s) ({} batches), {} at sequence \
         {}: {}{}",
        r.tables,
        r.entries,
        r.data_blocks,
        if r.tables > 0 && r.filtered_tables == r.tables {
            ", every key checked against its filter"
        } else {
            ""
        },
        r.logs,
        r.batches,
        r.manifest,
        r.last_sequence,
        if damage == 0 {
            "intact".to_string()
        } else {
            format!("damaged: {damage} problem(s)")
        },
        if notes > 0 {
            format!(" ({notes} note(s))")
        } else {
            String::new()
        }
    )
}

fn text(
    out: &mut impl Write,
    a: &Args,
    r: &VerifyReport,
    salvaged: Option<(u64, usize)>,
) -> std::io::Result<()> {
    let mut shown: Vec<(&str, usize)> = Vec::new();
    for p in &r.problems {
        let i = match shown.iter().position(|(f, _)| *f == p.file) {
            Some(i) => i,
            None => {
                shown.push((&p.file, 0));
                shown.len() - 1
            }
        };
        shown[i].1 += 1;
        if a.all || shown[i].1 <= PER_FILE {
            writeln!(out, "{}", line(a, p))?;
        }
    }
    for (file, n) in shown {
        if !a.all && n > PER_FILE {
            writeln!(
                out,
                "{}: ... and {} more (--all prints every problem)",
                a.dir.join(file).display(),
                n - PER_FILE
            )?;
        }
    }
    if let Some((keys, ranges)) = salvaged {
        writeln!(
            out,
            "{}: salvage: `sst db scan --salvage` reads {keys} key(s), {ranges} damaged \
             range(s) skipped",
            a.dir.display()
        )?;
    }
    writeln!(out, "{}: {}", a.dir.display(), summary(r))
}

fn jsonl(
    out: &mut impl Write,
    a: &Args,
    r: &VerifyReport,
    salvaged: Option<(u64, usize)>,
) -> std::io::Result<()> {
    for p in &r.problems {
        let row = json!({
            "file": p.file,
            "offset": p.offset,
            "severity": p.severity.as_str(),
            "what": p.what,
        });
        writeln!(out, "{row}")?;
    }
    let mut s = json!({
        "dir": a.dir.display().to_string(),
        "intact": r.is_intact(),
        "damage": r.damage_count(),
        "notes": r.problems.len() - r.damage_count(),
        "tables": r.tables,
        "entries": r.entries,
        "data_blocks": r.data_blocks,
        "filtered_tables": r.filtered_tables,
        "logs": r.logs,
        "batches": r.batches,
        "manifest": r.manifest,
        "last_sequence": r.last_sequence,
    });
    if let Some((keys, ranges)) = salvaged {
        s["salvage"] = json!({"keys": keys, "damaged_ranges": ranges});
    }
    writeln!(out, "{}", json!({ "summary": s }))
}
