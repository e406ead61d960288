//! `--salvage` for `scan` and `verify`: read past damaged data blocks, and find the blocks
//! of a table whose footer or index is lost by their checksums (the library's
//! `leveldb_table::table::salvage`). Every entry recovered comes from a block whose checksum
//! matched. `scan.rs` prints the entries.

use std::io::Write;
use std::path::Path;

use leveldb_table::raw::internal_key;
use leveldb_table::{
    table::salvage::salvage_bytes, table::salvage::salvage_table, table::salvage::Salvaged,
};
use leveldb_table::{table::CompressionProfile, table::KeyFormat, Error};

use crate::exit::{self, Failure};
use crate::input::flags::Global;
use crate::input::table_open::OpenError;

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
    match crate::input::table_open::open_table_err(path, g) {
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
                unopened: Some(exit::describe(path, &e)),
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
