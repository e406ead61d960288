//! The live tables of an open database: each opened on first use (pread or a memory map),
//! found by file number or, from a level's search aid, by its place in the list.

use std::fs::File;
use std::sync::OnceLock;

use super::level_search::NO_SLOT;
use super::{in_file, Db};
use crate::db::cursor::{TableFile, TableSource};
use crate::db::filename;
use crate::error::{Error, Result};
use crate::table::TableReader;

/// One live table: its number, file name, and reader once opened.
struct Entry {
    number: u64,
    name: String,
    reader: OnceLock<TableReader<TableFile>>,
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
}
