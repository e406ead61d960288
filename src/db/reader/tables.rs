//! The live tables of an open database: each file held open from the moment the database
//! is opened (so that a compaction deleting it cannot take it from under a read: on Unix a
//! deleted file stays readable through a descriptor that holds it), its reader built on
//! first use (pread or a memory map), found by file number or, from a level's search aid,
//! by its place in the list. Under salvage a table is read past its damaged blocks, and a
//! table that does not open is read from the blocks its checksums find (`salvage_table.rs`).

use std::fs::File;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use super::level_search::NO_SLOT;
use super::listing::Listing;
use crate::db::engine::TableFile;
use crate::db::files;
use crate::db::salvage::FoundTable;
use crate::table::TableReader;

/// One live table: its number, file name, the file held open (unless there were more
/// tables than the process may hold open), and reader once opened (or, under salvage, what
/// its block checksums found when it does not open).
pub(super) struct Entry {
    pub(super) number: u64,
    pub(super) name: String,
    pub(super) file: Option<Arc<File>>,
    pub(super) reader: OnceLock<TableReader<TableFile>>,
    pub(super) found: OnceLock<FoundTable>,
}

/// The live tables present in the directory, sorted by file number.
pub(super) struct Tables(pub(super) Vec<Entry>);

impl Tables {
    /// The tables numbered `numbers`, each file held open: the one `listing` holds, or (a
    /// table new since the listing) opened now; one listed beyond what the process may hold
    /// open is opened on first use. Also returns the tables that are not there (deleted by a
    /// compaction since they were listed, or missing), by their `.ldb` name, and leaves
    /// them out.
    pub(super) fn hold(
        dir: &Path,
        numbers: &[u64],
        listing: &mut Listing,
    ) -> (Tables, Vec<(u64, String)>) {
        let mut v = Vec::with_capacity(numbers.len());
        let mut gone = Vec::new();
        for &number in numbers {
            let ldb = files::table_file_name(number);
            let found = match listing.table_name(number).map(str::to_string) {
                Some(name) if listing.is_held(&name) => match listing.file(dir, &name) {
                    Ok(Some(f)) => Some((name, Some(f))),
                    _ => None,
                },
                Some(name) => Some((name, None)),
                None => [ldb.clone(), format!("{number:06}.sst")]
                    .into_iter()
                    .find_map(|name| match listing.file(dir, &name) {
                        Ok(Some(f)) => Some((name, Some(f))),
                        Ok(None) => None,
                        Err(_) => Some((name, None)),
                    }),
            };
            match found {
                Some((name, file)) => v.push(Entry {
                    number,
                    name,
                    file,
                    reader: OnceLock::new(),
                    found: OnceLock::new(),
                }),
                None => gone.push((number, ldb)),
            }
        }
        v.sort_by_key(|e| e.number);
        (Tables(v), gone)
    }

    /// Whether table `number` is among them.
    pub(super) fn contains(&self, number: u64) -> bool {
        self.get(number).is_some()
    }

    /// How many tables are held open.
    pub(super) fn pinned(&self) -> usize {
        self.0.iter().filter(|e| e.file.is_some()).count()
    }

    /// The place of table `number` in the list ([`NO_SLOT`] when it is not there).
    pub(super) fn slot(&self, number: u64) -> u32 {
        self.0
            .binary_search_by_key(&number, |e| e.number)
            .ok()
            .and_then(|i| u32::try_from(i).ok())
            .unwrap_or(NO_SLOT)
    }

    /// The file name of table `number`.
    pub(super) fn name(&self, number: u64) -> Option<&str> {
        self.get(number).map(|e| e.name.as_str())
    }

    pub(super) fn get(&self, number: u64) -> Option<&Entry> {
        self.0.get(self.slot(number) as usize)
    }

    /// Table `number` is read from what salvage found (it does not open).
    pub(super) fn set_found(&self, number: u64, found: FoundTable) {
        if let Some(e) = self.get(number) {
            let _ = e.found.set(found);
        }
    }
}
