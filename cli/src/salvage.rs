//! `--salvage` for `scan` and `verify`: read past damaged data blocks, and find the blocks
//! of a table whose footer or index is lost by their checksums (the library's
//! `leveldb_table::salvage`). Every entry printed comes from a block whose checksum matched.

use std::io::Write;
use std::path::Path;

use leveldb_table::raw::internal_key;
use leveldb_table::salvage::{salvage_bytes, salvage_table, Salvaged};
use leveldb_table::{CompressionProfile, Error, KeyFormat};

use crate::common::{self, CmdResult, Failure, Global, OpenError, EXIT_FAIL, EXIT_OK};
use crate::output::{OutFormat, RowsOut};

/// What a salvage found in one file.
pub struct Salvage {
    /// Entries by block, and damaged stretches, in file order.
    pub items: Vec<Salvaged>,
    /// The keys are internal keys.
    pub internal: bool,
    /// Why the table itself could not be opened, when its blocks were found by checksum.
    pub unopened: Option<String>,
}

impl Salvage {
    /// Number of entries and of data blocks recovered.
    pub fn counts(&self) -> (usize, usize) {
        self.items.iter().fold((0, 0), |(e, b), s| match s {
            Salvaged::Entries { entries, .. } => (e + entries.len(), b + 1),
            Salvaged::Damaged { .. } => (e, b),
        })
    }

    /// One line per damaged block or stretch: `PATH: offset O: what (N bytes skipped)`.
    pub fn damage_lines(&self, path: &Path) -> Vec<String> {
        self.items
            .iter()
            .filter_map(|s| match s {
                Salvaged::Damaged { offset, len, error } => {
                    Some(damage_line(path, *offset, *len, error))
                }
                Salvaged::Entries { .. } => None,
            })
            .collect()
    }
}

fn damage_line(path: &Path, offset: u64, len: Option<u64>, error: &Error) -> String {
    let skipped = match len {
        Some(n) => format!(" ({n} bytes skipped)"),
        None => " (the rest of the index skipped)".into(),
    };
    // The error's own offset is the block's; the stretch's offset is said first.
    format!("{}: offset {offset}: {error}{skipped}", path.display())
}

/// Salvages `path`: through its index when the table opens, else by block checksums.
///
/// # Errors
/// A file that cannot be read, or is not a LevelDB table (RocksDB): exit 2.
pub fn salvage(path: &Path, g: &Global) -> Result<Salvage, Failure> {
    match common::open_table_err(path, g) {
        Ok(t) => Ok(Salvage {
            items: salvage_table(&t, g.read_options()),
            internal: t.is_internal(),
            unopened: None,
        }),
        Err(OpenError::Table(e)) if e.is_corruption() && !matches!(e, Error::RocksDb { .. }) => {
            let bytes = std::fs::read(path)
                .map_err(|io| Failure::error(format!("{}: cannot read: {io}", path.display())))?;
            let items = salvage_bytes(&bytes, CompressionProfile::Auto);
            let internal = match g.keys {
                KeyFormat::Internal => true,
                KeyFormat::Plain => false,
                KeyFormat::Auto => looks_internal(&items),
            };
            Ok(Salvage {
                items,
                internal,
                unopened: Some(common::describe(path, &e)),
            })
        }
        Err(e) => Err(Failure::error(e.message(path))),
    }
}

/// Every recovered key parses as an internal key (and there is one): read them as such.
fn looks_internal(items: &[Salvaged]) -> bool {
    let mut keys = items.iter().flat_map(|s| match s {
        Salvaged::Entries { entries, .. } => entries.as_slice(),
        Salvaged::Damaged { .. } => &[],
    });
    let mut any = false;
    keys.all(|(k, _)| {
        any = true;
        internal_key::parse_internal_key(k).is_some()
    }) && any
}

/// `sst scan --salvage`: every readable entry in file order, the damage on stderr; exit 1
/// when anything was skipped.
pub fn scan(
    g: &Global,
    a: &crate::scan::Args,
    from: Option<&[u8]>,
    to: Option<&[u8]>,
) -> CmdResult {
    if a.reverse {
        return Err(Failure::error(
            "--salvage reads forward only (no --reverse)",
        ));
    }
    let s = salvage(&a.file, g)?;
    if let Some(why) = &s.unopened {
        common::warn(&format!(
            "{why}; salvaging the blocks whose checksums check out"
        ));
    }
    let mut out = RowsOut::new(common::stdout(), a.format);
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
            let uk = if s.internal {
                internal_key::user_key(key)
            } else {
                key.as_slice()
            };
            if from.is_some_and(|f| uk < f) || to.is_some_and(|t| uk >= t) {
                continue;
            }
            line.clear();
            match a.format {
                OutFormat::Jsonl | OutFormat::Json => {
                    crate::scan::push_jsonl(&mut line, s.internal, key, value, false)
                }
                OutFormat::Text => {
                    crate::scan::push_text_line(&mut line, s.internal, key, value, a.hex, false)
                }
            }
            out.write_all(&line)?;
            n += 1;
        }
    }
    out.finish()?;
    let damage = s.damage_lines(&a.file);
    for d in &damage {
        common::warn(d);
    }
    let (entries, blocks) = s.counts();
    if damage.is_empty() && s.unopened.is_none() {
        return Ok(EXIT_OK);
    }
    common::warn(&format!(
        "{}: salvaged {entries} entries from {blocks} data blocks; {} damaged stretch(es) skipped",
        a.file.display(),
        damage.len()
    ));
    Ok(EXIT_FAIL)
}

/// `sst verify --salvage`: after a damaged table's verdict, what a salvage recovers.
pub fn verify_summary(path: &Path, g: &Global, out: &mut impl Write) -> Result<(), Failure> {
    let s = salvage(path, g)?;
    if s.unopened.is_some() {
        for d in s.damage_lines(path) {
            writeln!(out, "{d}")?;
        }
    }
    let (entries, blocks) = s.counts();
    let how = if s.unopened.is_some() {
        "found by their checksums"
    } else {
        "through the index"
    };
    writeln!(
        out,
        "{}: salvage: {entries} entries in {blocks} data blocks readable ({how}; sst scan --salvage prints them)",
        path.display()
    )?;
    Ok(())
}
