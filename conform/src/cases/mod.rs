//! The kit's cases: what each gives the adapter and what the right answer is.
//!
//! Generated at run time from fixed seeds (the same bytes every run), into the run's work
//! directory: `tables` (generated tables), `dirs` (generated directories) and their damaged
//! copies (`damage`, `dirs_damage`), `writes` (entries to write); plus `fixtures`, the
//! tables and directories real writers made, found in the repository's `testdata/`. Below
//! them: `data` (entry sets) and `filters` (the pre-1.18 bloom policy).

mod damage;
mod data;
mod dir_writer;
mod dirs;
mod dirs_damage;
mod filters;
mod fixtures;
mod tables;
mod writes;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use leveldb_table::Comparator;

use crate::error::{Error, Result};
use crate::protocol::{Entry, Verb, WriteParams, DEFAULT_COMPARATOR};

/// A group of cases: one column of the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Group {
    /// Reading valid tables (`read-table`).
    Tables,
    /// Reading valid directories (`read-db`).
    Directories,
    /// Writing tables (`write-table`).
    Writes,
    /// Reading damaged or hostile tables and directories: the right answer is an error
    /// (a non-zero exit) or every entry exactly; never altered or missing data with exit 0.
    Damaged,
}

impl Group {
    /// Every group, in report order.
    pub const ALL: [Group; 4] = [
        Group::Tables,
        Group::Directories,
        Group::Writes,
        Group::Damaged,
    ];

    /// Its name in rows and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Group::Tables => "tables",
            Group::Directories => "directories",
            Group::Writes => "writes",
            Group::Damaged => "damaged",
        }
    }

    /// The group named `name`.
    pub fn parse(name: &str) -> Option<Group> {
        Group::ALL.into_iter().find(|g| g.as_str() == name)
    }
}

/// What a case gives the adapter.
#[derive(Debug, Clone)]
pub enum Input {
    /// `read-table` of a copy of `file`; `expected` is every entry as stored, in order.
    Table {
        /// The table.
        file: PathBuf,
        /// The right answer (for a damaged table: the entries of the undamaged one).
        expected: Arc<Vec<Entry>>,
    },
    /// `read-db` of a copy of `dir`; `expected` is the live view, in order.
    Dir {
        /// The directory.
        dir: PathBuf,
        /// The right answer (for a damaged directory: the view of the undamaged one).
        expected: Arc<Vec<Entry>>,
    },
    /// `write-table` of `entries` with `params`: the file must read back as `entries`
    /// (this project's reader and the reference's), pass `verify`; with `identical`, it
    /// must also be byte for byte the table the reference (LevelDB's builder) writes.
    Write {
        /// The entries, sorted.
        entries: Arc<Vec<Entry>>,
        /// The flags.
        params: WriteParams,
        /// Compared byte for byte with the reference's table instead.
        identical: bool,
    },
}

/// One case.
#[derive(Debug, Clone)]
pub struct Case {
    /// Its unique name (`--case`).
    pub name: String,
    /// Its group.
    pub group: Group,
    /// What it holds or checks, in a line.
    pub about: String,
    /// What the adapter gets.
    pub input: Input,
    /// The compressions the adapter must list to get the case (`none` is always listed).
    pub compressions: Vec<&'static str>,
    /// The comparator it must list.
    pub comparator: String,
}

impl Case {
    /// The verb the case calls.
    pub fn verb(&self) -> Verb {
        match self.input {
            Input::Table { .. } => Verb::ReadTable,
            Input::Dir { .. } => Verb::ReadDb,
            Input::Write { .. } => Verb::WriteTable,
        }
    }

    fn new(name: impl Into<String>, group: Group, about: impl Into<String>, input: Input) -> Case {
        Case {
            name: name.into(),
            group,
            about: about.into(),
            input,
            compressions: Vec::new(),
            comparator: DEFAULT_COMPARATOR.to_string(),
        }
    }
}

/// Where the cases are made and found.
pub(crate) struct Sources<'a> {
    /// The work directory generated cases are written to.
    pub work: &'a Path,
    /// The repository's testdata/, if there is one.
    pub testdata: Option<&'a Path>,
    /// Comparators besides bytewise this project can read in (for fixtures in other orders).
    pub comparators: &'a [Arc<dyn Comparator>],
}

/// Every case, in a fixed order (tables, directories, writes, damaged), and notes on what
/// was left out.
pub(crate) fn all(src: &Sources) -> Result<(Vec<Case>, Vec<String>)> {
    let mut notes = Vec::new();
    let mkdir = |name: &str| -> Result<PathBuf> {
        let d = src.work.join(name);
        std::fs::create_dir_all(&d).map_err(|e| Error::io(&d, e))?;
        Ok(d)
    };
    let tables_dir = mkdir("tables")?;
    let dirs_dir = mkdir("dirs")?;
    let damage_dir = mkdir("damaged")?;
    let mut out = tables::cases(&tables_dir)?;
    let fixtures = match src.testdata {
        Some(t) => fixtures::cases(t, src.comparators, &mut notes)?,
        None => {
            notes.push("no testdata/ directory: the real writers' fixtures are left out".into());
            Vec::new()
        }
    };
    out.extend(
        fixtures
            .iter()
            .filter(|c| c.group == Group::Tables)
            .cloned(),
    );
    out.extend(dirs::cases(&dirs_dir)?);
    out.extend(
        fixtures
            .iter()
            .filter(|c| c.group == Group::Directories)
            .cloned(),
    );
    out.extend(writes::cases());
    out.extend(damage::cases(&damage_dir)?);
    out.extend(dirs_damage::cases(&damage_dir)?);
    out.extend(fixtures.into_iter().filter(|c| c.group == Group::Damaged));
    let mut seen = BTreeSet::new();
    for c in &out {
        if !seen.insert(c.name.as_str()) {
            return Err(Error::SelfCheck {
                case: c.name.clone(),
                reason: "two cases of this name".into(),
            });
        }
    }
    Ok((out, notes))
}
