//! The options that say how tables are read: `--keys`, `--comparator`, `--no-verify`.
//!
//! They were once global options, shown in every subcommand's help. Each subcommand now
//! lists those it uses (the table in [`uses`]); every other place still accepts them, so
//! that no invocation that worked stops working (`sst --comparator idb_cmp1 log F` and
//! `sst log F --comparator idb_cmp1` alike), with a note when one changes nothing, and
//! an error where giving it shows a misunderstanding (`--no-verify` to `verify`).

use std::sync::Arc;

use leveldb_table::{table::KeyFormat, BytewiseComparator, Comparator, OpenOptions, ReadOptions};
use sst_chrome::idb::IdbComparator;

/// The reading options (`--keys`, `--comparator`, `--no-verify`, wherever given; see
/// this module), for every subcommand that reads tables.
#[derive(Debug, Clone, Copy)]
pub struct Global {
    /// Verify block checksums (true unless `--no-verify`).
    pub verify: bool,
    /// Key format (`--keys`).
    pub keys: KeyFormat,
    /// `--comparator`, for tables outside a database directory.
    pub comparator: Option<ComparatorArg>,
}

impl Global {
    /// Reader options for opening a table.
    pub fn reader_options(&self) -> OpenOptions {
        OpenOptions::default()
            .keys(self.keys)
            .verify_checksums(self.verify)
    }

    /// Per-read options (no cache filling; checksums are the reader's,
    /// [`reader_options`](Self::reader_options)).
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions::default().fill_cache(false)
    }
}

/// `--keys`: how a table's keys are read.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KeysArg {
    /// Detect: internal keys (a LevelDB database's tables) or plain keys.
    Auto,
    /// Internal keys: user key + 8-byte sequence/type tag.
    Internal,
    /// Plain keys, as stored.
    Plain,
}

/// The orders `--comparator` names.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ComparatorArg {
    /// `leveldb.BytewiseComparator`: keys as unsigned bytes (LevelDB's default).
    Bytewise,
    /// Chrome IndexedDB's `idb_cmp1`.
    #[value(name = "idb_cmp1")]
    IdbCmp1,
}

impl ComparatorArg {
    /// The comparator's registered name.
    pub fn name(self) -> &'static str {
        match self {
            ComparatorArg::Bytewise => "leveldb.BytewiseComparator",
            ComparatorArg::IdbCmp1 => sst_chrome::idb::format::IDB_COMPARATOR_NAME,
        }
    }

    /// The order itself.
    pub fn comparator(self) -> Arc<dyn Comparator> {
        match self {
            ComparatorArg::Bytewise => Arc::new(BytewiseComparator),
            ComparatorArg::IdbCmp1 => Arc::new(IdbComparator),
        }
    }

    /// The order a MANIFEST names `name`, if this tool has it.
    pub fn named(name: &str) -> Option<ComparatorArg> {
        [ComparatorArg::Bytewise, ComparatorArg::IdbCmp1]
            .into_iter()
            .find(|c| c.name() == name)
    }
}

/// How a subcommand treats one of the reading options.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Use {
    /// Used, and listed in the subcommand's `--help`.
    Yes,
    /// Not used: not listed, but accepted as it always was (the options were once global),
    /// with a note on stderr that it changes nothing.
    Ignored,
    /// Refused (exit 2) for this reason ("it reads no table"): giving it shows a
    /// misunderstanding.
    Refused(&'static str),
    /// `--comparator` of a command that writes: bytewise is what it writes (accepted);
    /// idb_cmp1 is refused.
    WritesBytewise,
}

/// Which reading options a subcommand uses: `--keys`, `--comparator`, `--no-verify`.
struct Uses {
    keys: Use,
    comparator: Use,
    no_verify: Use,
    /// The `--help` text of `--comparator` for it (what the order is used for).
    comparator_help: &'static str,
}

const TABLE_ORDER: &str =
    "The order of the table's keys, for a table outside a database directory \
    (one inside is read in the order its MANIFEST names): bytewise (LevelDB's default) or \
    idb_cmp1 (Chrome IndexedDB: keys and values are then decoded). get, filter and \
    --from/--to first check that every key is in that order and refuse otherwise.";
const DB_ORDER: &str = "The directory's order when no MANIFEST names one (a directory read \
    with --salvage whose MANIFEST is lost): bytewise or idb_cmp1. Refused when it \
    contradicts the MANIFEST.";
const LOG_ORDER: &str = "idb_cmp1: the log is Chrome IndexedDB's; decode its keys and values \
    (done without the flag when the log's directory has a MANIFEST naming idb_cmp1).";
const VERIFY_ORDER: &str = "The order the table's keys must be in (see scan --help): \
    bytewise or idb_cmp1; a table inside a database directory is checked in its MANIFEST's.";

/// What subcommand `path` (`["db", "scan"]`, `["bloom", "add"]`; `[]` is `sst` itself)
/// does with the reading options.
fn uses(path: &[&str]) -> Uses {
    use Use::{Ignored, Refused, WritesBytewise, Yes};
    let no_table = "it reads no table";
    let u = |keys, comparator, no_verify, comparator_help| Uses {
        keys,
        comparator,
        no_verify,
        comparator_help,
    };
    match path {
        ["scan" | "get" | "stats" | "filter"] => u(Yes, Yes, Yes, TABLE_ORDER),
        ["verify"] => u(
            Yes,
            Yes,
            Refused("it always verifies every checksum"),
            VERIFY_ORDER,
        ),
        ["blocks"] => u(Yes, Ignored, Yes, TABLE_ORDER),
        ["refilter"] => u(Yes, Yes, Ignored, TABLE_ORDER),
        ["build"] => u(Yes, WritesBytewise, Refused(no_table), TABLE_ORDER),
        ["bloom", ..] => u(Ignored, WritesBytewise, Refused(no_table), TABLE_ORDER),
        ["db", "build"] => u(Ignored, WritesBytewise, Ignored, DB_ORDER),
        ["db", "verify"] => u(
            Ignored,
            Yes,
            Refused("it always verifies every checksum"),
            DB_ORDER,
        ),
        ["db", _] => u(Ignored, Yes, Yes, DB_ORDER),
        ["log"] => u(
            Ignored,
            Yes,
            Refused("its records are always checked"),
            LOG_ORDER,
        ),
        ["manifest"] => u(
            Ignored,
            Ignored,
            Refused("its records are always checked"),
            TABLE_ORDER,
        ),
        // `sst` itself and the groups (`db`, `bloom`): accepted, not listed.
        _ => u(Ignored, Ignored, Ignored, TABLE_ORDER),
    }
}

const KEYS: &str = "flag_keys";
const COMPARATOR: &str = "flag_comparator";
const NO_VERIFY: &str = "flag_no_verify";

/// Adds `--keys`, `--comparator` and `--no-verify` to `cmd` and every subcommand under it:
/// listed in the `--help` of `sst` and of the subcommands that use them, accepted (not
/// listed) everywhere else, so that every invocation that worked when they were global
/// options (before or after any subcommand) still works.
pub fn add(cmd: clap::Command) -> clap::Command {
    add_at(cmd, &[], true)
}

fn add_at(mut cmd: clap::Command, path: &[&str], top: bool) -> clap::Command {
    use clap::builder::EnumValueParser;
    use clap::{Arg, ArgAction};
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in &names {
        let mut p = path.to_vec();
        p.push(name.as_str());
        cmd = cmd.mut_subcommand(name, |c| add_at(c, &p, false));
    }
    let u = uses(path);
    let shown = |x: Use| top || matches!(x, Use::Yes);
    let keys_help = if path == ["build"] {
        "Key format: auto, internal or plain. auto means internal when the jsonl rows carry \
         \"seq\" (as scan prints them for internal-key tables), else plain; with internal \
         every key is an internal key and the filter is built over user keys."
    } else {
        "Key format: auto (detect), internal (a LevelDB database's tables: user key + 8-byte \
         sequence/type tag) or plain."
    };
    cmd.arg(
        Arg::new(KEYS)
            .long("keys")
            .value_name("FORMAT")
            .value_parser(EnumValueParser::<KeysArg>::new())
            .help(keys_help)
            .hide(!shown(u.keys)),
    )
    .arg(
        Arg::new(COMPARATOR)
            .long("comparator")
            .value_name("ORDER")
            .value_parser(EnumValueParser::<ComparatorArg>::new())
            .help(if top {
                "The order of the keys: bytewise or idb_cmp1 (see the --help of the subcommand \
                 using it)."
            } else {
                u.comparator_help
            })
            .hide(!shown(u.comparator)),
    )
    .arg(
        Arg::new(NO_VERIFY)
            .long("no-verify")
            .action(ArgAction::SetTrue)
            .help("Do not verify block checksums (they are verified by default).")
            .hide(!shown(u.no_verify)),
    )
}

/// The reading options given on a command line, wherever they were given (the most
/// specific place wins: after the subcommand over before it).
#[derive(Debug, Clone, Copy, Default)]
pub struct Given {
    /// `--keys`.
    pub keys: Option<KeysArg>,
    /// `--comparator`.
    pub comparator: Option<ComparatorArg>,
    /// `--no-verify`.
    pub no_verify: bool,
}

impl Given {
    /// The reading options these flags make.
    pub fn global(&self) -> Global {
        let keys = match self.keys {
            None | Some(KeysArg::Auto) => KeyFormat::Auto,
            Some(KeysArg::Internal) => KeyFormat::Internal,
            Some(KeysArg::Plain) => KeyFormat::Plain,
        };
        Global {
            verify: !self.no_verify,
            keys,
            comparator: self.comparator,
        }
    }
}

/// The reading options in `m` (the matches of [`add`]'s command), checked against what the
/// subcommand does with them: a refused one is an error (exit 2), an unused one a note to
/// print (returned with them).
///
/// # Errors
/// The reason an option is refused.
pub fn given(m: &clap::ArgMatches) -> Result<(Given, Vec<String>), String> {
    let mut g = Given::default();
    let mut path: Vec<String> = Vec::new();
    let mut at = Some(m);
    while let Some(level) = at {
        if let Ok(Some(k)) = level.try_get_one::<KeysArg>(KEYS) {
            g.keys = Some(*k);
        }
        if let Ok(Some(c)) = level.try_get_one::<ComparatorArg>(COMPARATOR) {
            g.comparator = Some(*c);
        }
        g.no_verify |= level.try_get_one::<bool>(NO_VERIFY).ok().flatten() == Some(&true);
        at = level.subcommand().map(|(name, sub)| {
            path.push(name.to_string());
            sub
        });
    }
    let path: Vec<&str> = path.iter().map(String::as_str).collect();
    let u = uses(&path);
    let name = path.join(" ");
    let mut notes = Vec::new();
    let mut check = |flag: &str, given: bool, how: Use| -> Result<(), String> {
        match how {
            _ if !given => Ok(()),
            Use::Refused(why) => Err(format!("{flag} does not apply to {name}: {why}")),
            Use::Ignored => {
                notes.push(format!("note: {flag} changes nothing for `sst {name}`"));
                Ok(())
            }
            Use::Yes | Use::WritesBytewise => Ok(()),
        }
    };
    check("--keys", g.keys.is_some(), u.keys)?;
    check("--no-verify", g.no_verify, u.no_verify)?;
    match (u.comparator, g.comparator) {
        (Use::WritesBytewise, Some(ComparatorArg::IdbCmp1)) => {
            return Err(format!(
                "--comparator idb_cmp1 does not apply to {name}: it writes bytewise-ordered data"
            ))
        }
        (Use::WritesBytewise, _) => {}
        (how, c) => check("--comparator", c.is_some(), how)?,
    }
    Ok((g, notes))
}
