//! The live tables of an open database: each opened on first use (pread or a memory map),
//! found by file number or, from a level's search aid, by its place in the list. Under
//! salvage a table is read past its damaged blocks, and a table that does not open is read
//! from the blocks its checksums find (`salvage_table.rs`).

use std::fs::File;
use std::sync::OnceLock;

use super::level_search::NO_SLOT;
use super::{in_file, Db};
use crate::db::cursor::{TableCursor, TableFile, TableSource};
use crate::db::filename;
use crate::db::salvage_table::{FoundTable, SkipIter};
use crate::error::{Error, Result};
use crate::options::ReadOptions;
use crate::table::TableReader;

/// One live table: its number, file name, and reader once opened (or, under salvage, what
/// its block checksums found when it does not open).
struct Entry {
    number: u64,
    name: String,
    reader: OnceLock<TableReader<TableFile>>,
    found: OnceLock<FoundTable>,
}

/// The live tables present in the directory, sorted by file number.
pub(super) struct Tables(Vec<Entry>);

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

    fn get(&self, number: u64) -> Option<&Entry> {
        self.0.get(self.slot(number) as usize)
    }

    /// Table `number` is read from what salvage found (it does not open).
    pub(super) fn set_found(&self, number: u64, found: FoundTable) {
        if let Some(e) = self.get(number) {
            let _ = e.found.set(found);
        }
    }
}

impl Db {
    /// The table at `slot` of the list (as a level's search aid gives it), which is table
    /// `number`; opened on first use.
    #[inline]
    pub(super) fn table_at(&self, slot: u32, number: u64) -> Result<&TableReader<TableFile>> {
        match self.tables.0.get(slot as usize) {
            Some(e) => match e.reader.get() {
                Some(t) => Ok(t),
                None => self.open_table(e),
            },
            None => Err(Error::MissingFile {
                file: filename::table_file_name(number),
            }),
        }
    }

    #[cold]
    fn open_table<'a>(&'a self, e: &'a Entry) -> Result<&'a TableReader<TableFile>> {
        let name = &e.name;
        let file = File::open(self.dir.join(name)).map_err(|err| in_file(name, err.into()))?;
        let source: TableFile = if self.mmap {
            #[cfg(feature = "mmap")]
            {
                // SAFETY: `Db::open_mmap`'s caller promised the tables are not changed in place.
                #[allow(unsafe_code)]
                let map = unsafe { crate::util::os::map_file(&file) };
                Box::new(map.map_err(|err| in_file(name, err.into()))?)
            }
            #[cfg(not(feature = "mmap"))]
            {
                Box::new(file)
            }
        } else {
            Box::new(file)
        };
        let t = TableReader::open(source, self.reader_opts.clone())
            .map_err(|err| in_file(name, err))?;
        // Another thread may have opened it meanwhile: either copy serves.
        let _ = e.reader.set(t);
        e.reader
            .get()
            .ok_or_else(|| Error::MissingFile { file: name.clone() })
    }
}

impl TableSource for Db {
    fn table(&self, number: u64) -> Result<&TableReader<TableFile>> {
        self.table_at(self.tables.slot(number), number)
    }

    fn cursor(&self, number: u64, opts: ReadOptions) -> Result<TableCursor<'_>> {
        if self.salvage {
            self.walk(number, opts)
        } else {
            Ok(TableCursor::new(self.table(number)?, opts))
        }
    }
}

impl Db {
    /// A walk over table `number`, each entry with its position: under salvage damaged
    /// blocks are skipped (and recorded) and a table that does not open is read from the
    /// blocks its checksums find; otherwise the first damage stops the walk with an error.
    ///
    /// # Errors
    /// The table cannot be read (an I/O error; without salvage, any damage), naming it.
    pub(crate) fn walk(&self, number: u64, opts: ReadOptions) -> Result<TableCursor<'_>> {
        let e = self.tables.get(number).ok_or_else(|| Error::MissingFile {
            file: filename::table_file_name(number),
        })?;
        if let Some(f) = e.found.get() {
            return Ok(TableCursor::found(f, self.icmp.clone()));
        }
        match self.table_at(self.tables.slot(number), number) {
            // Without salvage, the table's own iterator (with its readahead): the first
            // damage stops it with an error.
            Ok(t) if !self.salvage => Ok(TableCursor::new(t, opts)),
            Ok(t) => Ok(TableCursor::skipping(SkipIter::new(
                t,
                &e.name,
                Some(&self.damage),
                opts,
            ))),
            Err(err) if self.salvage && err.is_corruption() => {
                let bytes = std::fs::read(self.dir.join(&e.name))
                    .map_err(|io| in_file(&e.name, io.into()))?;
                let found = FoundTable::salvage(
                    &bytes,
                    &e.name,
                    &err,
                    self.reader_opts.compression_profile,
                    &self.icmp,
                    &self.damage,
                );
                let _ = e.found.set(found);
                let f = e.found.get().ok_or_else(|| Error::MissingFile {
                    file: e.name.clone(),
                })?;
                Ok(TableCursor::found(f, self.icmp.clone()))
            }
            Err(err) => Err(err),
        }
    }
}
