//! The live tables of an open database: each opened on first use (pread or a memory map),
//! found by file number or, from a level's search aid, by its place in the list. Under
//! salvage a table is read past its damaged blocks, and a table that does not open is read
//! from the blocks its checksums find (`salvage_table.rs`).

use std::sync::OnceLock;

use super::level_search::NO_SLOT;
use crate::db::engine::TableFile;
use crate::db::salvage::FoundTable;
use crate::table::TableReader;

/// One live table: its number, file name, and reader once opened (or, under salvage, what
/// its block checksums found when it does not open).
pub(super) struct Entry {
    pub(super) number: u64,
    pub(super) name: String,
    pub(super) reader: OnceLock<TableReader<TableFile>>,
    pub(super) found: OnceLock<FoundTable>,
}

/// The live tables present in the directory, sorted by file number.
pub(super) struct Tables(pub(super) Vec<Entry>);

impl Tables {
    /// The list of `(number, file name)` pairs (any order).
    pub(super) fn new(files: impl Iterator<Item = (u64, String)>) -> Tables {
        let mut v: Vec<Entry> = files
            .map(|(number, name)| Entry {
                number,
                name,
                reader: OnceLock::new(),
                found: OnceLock::new(),
            })
            .collect();
        v.sort_by_key(|e| e.number);
        Tables(v)
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
