//! Opening the database's live tables on first use ([`Tables`](super::tables::Tables) holds
//! their files from the moment the database is opened): by file number or by place in the
//! list, through pread or a memory map, and under salvage past their damaged blocks.

use std::fs::File;
use std::io::ErrorKind;
use std::sync::Arc;

use super::tables::Entry;
use super::{in_file, Db};
use crate::cursor::Cursor;
use crate::db::engine::{TableFile, TableSource};
use crate::db::files;
use crate::db::salvage::{FoundCursor, FoundTable, SkipIter};
use crate::error::{Error, Result};
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::table::{TableIter, TableReader};

/// A walk over one table ([`Db::walk`]), one of three ways.
pub(super) enum Walk<'a> {
    /// The table's own cursor: the first damage stops it.
    Table(TableIter<'a, TableFile>),
    /// Under salvage: past damaged blocks.
    Skip(SkipIter<'a, TableFile>),
    /// Under salvage, a table that does not open: the entries its blocks' checksums found.
    Found(FoundCursor<'a>),
}

impl<'a> Walk<'a> {
    /// The walk as a cursor.
    pub(super) fn into_cursor(self) -> Box<dyn Cursor + 'a> {
        match self {
            Walk::Table(c) => Box::new(c),
            Walk::Skip(c) => Box::new(c),
            Walk::Found(c) => Box::new(c),
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
                file: files::table_file_name(number),
            }),
        }
    }

    #[cold]
    fn open_table<'a>(&'a self, e: &'a Entry) -> Result<&'a TableReader<TableFile>> {
        let name = &e.name;
        let file = self.table_file(e)?;
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

    /// The file of table `e`: the one held since the database was opened, or (when there
    /// were more tables than the process may hold open) opened now, when a compaction may
    /// have deleted it.
    fn table_file(&self, e: &Entry) -> Result<Arc<File>> {
        if let Some(f) = &e.file {
            return Ok(f.clone());
        }
        match File::open(self.dir.join(&e.name)) {
            Ok(f) => Ok(Arc::new(f)),
            Err(err) if err.kind() == ErrorKind::NotFound => Err(in_file(
                &e.name,
                Error::OwnerRewriting {
                    reason: format!(
                        "deleted while the database was read (of its {} tables, the {} held \
                         open since it was opened are safe from deletion, this one was not: \
                         the process may not hold more files open; raise `ulimit -n`)",
                        self.tables.0.len(),
                        self.tables.pinned()
                    ),
                },
            )),
            Err(err) => Err(in_file(&e.name, err.into())),
        }
    }

    /// The length of live table `number`'s file (the file held open since the database was
    /// opened), if it can be read; the MANIFEST records what it should be
    /// ([`FileMeta::size`](crate::db::files::FileMeta)).
    pub fn table_file_len(&self, number: u64) -> Option<u64> {
        let e = self.tables.get(number)?;
        self.table_file(e).ok()?.size().ok()
    }

    /// All of table `e`'s bytes, from the file held open.
    fn table_bytes(&self, e: &Entry) -> Result<Vec<u8>> {
        let f = self.table_file(e)?;
        let len = f.size().map_err(|io| in_file(&e.name, io.into()))?;
        let bytes = f
            .read_at(0, usize::try_from(len).unwrap_or(usize::MAX))
            .map_err(|io| in_file(&e.name, io.into()))?;
        Ok(Vec::from(bytes))
    }
}

impl TableSource for Db {
    fn table(&self, number: u64) -> Result<&TableReader<TableFile>> {
        self.table_at(self.tables.slot(number), number)
    }

    fn cursor(&self, number: u64, opts: ReadOptions) -> Result<Box<dyn Cursor + '_>> {
        if self.salvage {
            Ok(self.walk(number, opts)?.into_cursor())
        } else {
            Ok(Box::new(self.table(number)?.iter(&opts)))
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
    pub(super) fn walk(&self, number: u64, opts: ReadOptions) -> Result<Walk<'_>> {
        let e = self.tables.get(number).ok_or_else(|| Error::MissingFile {
            file: files::table_file_name(number),
        })?;
        if let Some(f) = e.found.get() {
            return Ok(Walk::Found(f.cursor(self.icmp.clone())));
        }
        match self.table_at(self.tables.slot(number), number) {
            // Without salvage, the table's own iterator (with its readahead): the first
            // damage stops it with an error.
            Ok(t) if !self.salvage => Ok(Walk::Table(t.iter(&opts))),
            Ok(t) => Ok(Walk::Skip(SkipIter::new(
                t,
                &e.name,
                Some(&self.damage),
                opts,
            ))),
            Err(err) if self.salvage && err.is_corruption() => {
                let bytes = self.table_bytes(e)?;
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
                Ok(Walk::Found(f.cursor(self.icmp.clone())))
            }
            Err(err) => Err(err),
        }
    }
}
