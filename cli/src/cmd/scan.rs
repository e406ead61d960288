//! `sst scan`: the entries of a table, in order.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use leveldb_table::raw::internal_key;
use leveldb_table::table::salvage::Salvaged;
use leveldb_table::Comparator;
use sst_chrome::idb::format::IDB_COMPARATOR_NAME;

use leveldb_table::Cursor;

use crate::exit::{self, CmdResult, Failure, EXIT_FAIL, EXIT_OK};
use crate::input::flags::Global;
use crate::input::keys;
use crate::render::chrome::Decoding;
use crate::render::output::{self, OutFormat, RowsOut};
use crate::render::rows::{Entry, RowWriter};

const EXAMPLES: &str = "\
Examples:
  sst scan 000005.ldb                          every entry, one readable line each
  sst scan 000005.ldb --format jsonl           {\"key\",\"value\"[,\"user_key\",\"seq\",\"kind\"]} per line
  sst scan 000005.ldb --format json            the same rows as one JSON array
  sst scan 000005.ldb --from user: --to user;  user keys in [\"user:\", \"user;\")
  sst scan 000005.ldb --reverse --limit 10     the last 10 entries, last key first
  sst scan t.ldb --hex --from 00ff --to 0100   range given in hex; keys/values shown in hex

Text lines: internal keys as LevelDB's leveldbutil dump prints them,
  'user_key' @ SEQ : val => 'value'      'user_key' @ SEQ : del => ''
plain keys as 'key' => 'value'. Printable ASCII is kept; other bytes are \\xNN, and the
backslash and quote are \\\\ and \\'.
--from is inclusive, --to exclusive; for internal-key tables both are user keys.
On corruption: the entries read so far, then the error on stderr, exit 1.";

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The table file.
    pub file: PathBuf,
    /// First key to print (inclusive; a user key for internal-key tables).
    #[arg(long, value_name = "KEY")]
    pub from: Option<OsString>,
    /// Stop before this key (exclusive; a user key for internal-key tables).
    #[arg(long, value_name = "KEY")]
    pub to: Option<OsString>,
    /// Print in reverse table order (last entry first). In a database table the versions
    /// of one user key are stored newest first, so reversed they come oldest first.
    #[arg(long)]
    pub reverse: bool,
    /// Print at most N entries.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// --from/--to are hex; text output shows keys and values in hex.
    #[arg(long)]
    pub hex: bool,
    /// Read past damaged blocks: skip each (reported on stderr with its offset and reason)
    /// and print the entries of the others, in file order; a table whose footer or index is
    /// lost has its data blocks found by their checksums. Exit 1 when anything was skipped.
    #[arg(long)]
    pub salvage: bool,
}

/// `--from` / `--to`, compared in the table's order.
struct Range {
    from: Option<Vec<u8>>,
    to: Option<Vec<u8>>,
    ucmp: Arc<dyn Comparator>,
}

impl Range {
    /// The user key of a stored key.
    fn user_key(key: &[u8], internal: bool) -> &[u8] {
        if internal {
            internal_key::user_key(key)
        } else {
            key
        }
    }

    /// `uk` is at or past `--to`.
    fn past_to(&self, uk: &[u8]) -> bool {
        self.to
            .as_deref()
            .is_some_and(|t| self.ucmp.compare(uk, t).is_ge())
    }

    /// `uk` is before `--from`.
    fn before_from(&self, uk: &[u8]) -> bool {
        self.from
            .as_deref()
            .is_some_and(|f| self.ucmp.compare(uk, f).is_lt())
    }
}

/// Runs `sst scan`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    let key = |k: &Option<OsString>, what| {
        k.as_deref()
            .map(|k| keys::key_arg(k, a.hex, what))
            .transpose()
    };
    let (ucmp, _) = crate::input::order::comparator_for(&a.file, g).map_err(Failure::error)?;
    let range = Range {
        from: key(&a.from, "--from")?,
        to: key(&a.to, "--to")?,
        ucmp,
    };
    // The table's order says what its keys are: IndexedDB's are decoded.
    let dec = Decoding::for_table(&a.file, range.ucmp.name() == IDB_COMPARATOR_NAME)?;
    let rows = RowWriter {
        format: a.format,
        hex: a.hex,
        dec: &dec,
    };
    if a.salvage {
        return scan_salvage(g, a, &range, &rows);
    }
    let table = crate::input::table_open::open_table(&a.file, g)?;
    if range.from.is_some() || range.to.is_some() {
        crate::input::order::require_order(&table, &a.file, g, "a --from/--to range")?;
    }
    let internal = table.is_internal();
    let mut it = table.iter(&g.read_options());
    if !a.reverse {
        match &range.from {
            Some(f) => it.seek(&keys::seek_key(internal, f)),
            None => it.seek_to_first(),
        }
    } else {
        match &range.to {
            Some(t) => {
                it.seek(&keys::seek_key(internal, t));
                if it.valid() {
                    it.prev();
                } else if it.status().is_ok() {
                    it.seek_to_last();
                }
            }
            None => it.seek_to_last(),
        }
    }
    let mut out = RowsOut::new(output::stdout(), a.format);
    let mut line = Vec::with_capacity(256);
    let mut n = 0u64;
    while it.valid() {
        if a.limit.is_some_and(|l| n >= l) {
            break;
        }
        let key = it.key();
        let uk = Range::user_key(key, internal);
        if !a.reverse {
            if range.past_to(uk) {
                break;
            }
        } else if range.before_from(uk) {
            break;
        }
        line.clear();
        let value = it.value();
        rows.push(
            &mut line,
            Entry::Table {
                key,
                value,
                internal,
            },
        );
        out.write_all(&line)?;
        n += 1;
        if a.reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    if let Err(e) = it.status() {
        out.finish()?;
        let msg = format!("{} (after {n} entries)", exit::describe(&a.file, &e));
        return Err(Failure::Exit(exit::code_for(&e), msg));
    }
    out.finish()?;
    Ok(EXIT_OK)
}

/// `sst scan --salvage`: every readable entry in file order (for an undamaged table, the
/// rows `scan` prints), the damage on stderr; exit 1 when anything was skipped.
fn scan_salvage(g: &Global, a: &Args, range: &Range, rows: &RowWriter<'_, '_>) -> CmdResult {
    if a.reverse {
        return Err(Failure::error(
            "--salvage reads forward only (no --reverse)",
        ));
    }
    let s = crate::input::salvage::salvage(&a.file, g)?;
    if let Some(why) = &s.unopened {
        exit::warn(&format!(
            "{why}; salvaging the blocks whose checksums check out"
        ));
    }
    let mut out = RowsOut::new(output::stdout(), a.format);
    let mut line = Vec::with_capacity(256);
    let mut n = 0u64;
    'items: for item in &s.items {
        let Salvaged::Entries { entries, .. } = item else {
            continue;
        };
        for (key, value) in entries {
            if a.limit.is_some_and(|l| n >= l) {
                break 'items;
            }
            // File order is key order only where nothing was lost: every entry is checked.
            let uk = Range::user_key(key, s.internal);
            if range.before_from(uk) || range.past_to(uk) {
                continue;
            }
            line.clear();
            rows.push(
                &mut line,
                Entry::Table {
                    key,
                    value,
                    internal: s.internal,
                },
            );
            out.write_all(&line)?;
            n += 1;
        }
    }
    out.finish()?;
    let damage = s.damage_lines(&a.file);
    for d in &damage {
        exit::warn(d);
    }
    let (entries, blocks) = s.counts();
    if damage.is_empty() && s.unopened.is_none() {
        return Ok(EXIT_OK);
    }
    exit::warn(&format!(
        "{}: salvaged {entries} entries from {blocks} data blocks; {} damaged stretch(es) skipped",
        a.file.display(),
        damage.len()
    ));
    Ok(EXIT_FAIL)
}
