//! Cursors ([`Cursor`]) over a database's sources of internal-key entries: the memtable
//! and a whole level of tables (opened as the cursor reaches them, from a
//! [`TableSource`]); a table's own cursor is its [`TableIter`](crate::table::TableIter).
//!
//! ```text
//! entry: (internal key = user key | tag (8, LE: sequence << 8 | type), value)
//! order: the internal-key comparator (user key ascending, then sequence descending)
//! ```

use std::cmp::Ordering;

use crate::cursor::Cursor;
use crate::db::engine::MemTable;
use crate::db::files::FileMeta;
use crate::error::{Error, Result};
use crate::internal_key::InternalKeyComparator;
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::table::TableReader;
use crate::util::comparator::Comparator;

/// How a database's tables are read: the file with `pread`, or a memory map
/// (`Db::open_mmap`).
pub type TableFile = Box<dyn RandomAccess + Send + Sync>;

/// Cursor over a memtable.
pub struct MemCursor<'a> {
    mem: &'a MemTable,
    i: usize,
}

impl<'a> MemCursor<'a> {
    /// A cursor over `mem`, not positioned.
    pub fn new(mem: &'a MemTable) -> Self {
        MemCursor { mem, i: mem.len() }
    }
}

impl Cursor for MemCursor<'_> {
    fn valid(&self) -> bool {
        self.i < self.mem.len()
    }
    fn seek_to_first(&mut self) {
        self.i = 0;
    }
    fn seek(&mut self, target: &[u8]) {
        self.i = self.mem.lower_bound(target);
    }
    fn next(&mut self) {
        self.i += 1;
    }
    fn key(&self) -> &[u8] {
        self.mem.entries().get(self.i).map_or(&[], |e| &e.0)
    }
    fn value(&self) -> &[u8] {
        self.mem.entries().get(self.i).map_or(&[], |e| &e.1)
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
    fn seek_to_last(&mut self) {
        // An empty memtable leaves `i` at 0 = len: not valid.
        self.i = self.mem.len().saturating_sub(1);
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.i = match self.mem.lower_bound(target) {
            0 => self.mem.len(),
            i => i - 1,
        };
    }
    fn prev(&mut self) {
        self.i = match self.i {
            0 => self.mem.len(),
            i => i - 1,
        };
    }
}

/// Gives the tables of a database by file number (opened on first use).
pub trait TableSource {
    /// Table `number`.
    ///
    /// # Errors
    /// It cannot be opened; the error names the file.
    fn table(&self, number: u64) -> Result<&TableReader<TableFile>>;

    /// A cursor over table `number` (not positioned): the table's own cursor, unless the
    /// source reads another way (a database under salvage skips damaged blocks).
    ///
    /// # Errors
    /// As [`table`](Self::table).
    fn cursor(&self, number: u64, opts: ReadOptions) -> Result<Box<dyn Cursor + '_>> {
        Ok(Box::new(self.table(number)?.iter(&opts)))
    }
}

/// Cursor over the tables of one level >= 1 (sorted, not overlapping), opening each table
/// only when the cursor reaches it.
pub struct LevelCursor<'a> {
    files: &'a [FileMeta],
    source: &'a dyn TableSource,
    cmp: InternalKeyComparator,
    opts: ReadOptions,
    index: usize,
    current: Option<Box<dyn Cursor + 'a>>,
    err: Option<Error>,
}

impl<'a> LevelCursor<'a> {
    /// A cursor over `files` (sorted by smallest key), not positioned.
    pub fn new(
        files: &'a [FileMeta],
        source: &'a dyn TableSource,
        cmp: InternalKeyComparator,
        opts: ReadOptions,
    ) -> Self {
        LevelCursor {
            files,
            source,
            cmp,
            opts,
            index: files.len(),
            current: None,
            err: None,
        }
    }

    /// Opens file `index` positioned at `target` (or its start), then later files from
    /// their start while the cursor is not on an entry.
    fn open_from(&mut self, index: usize, target: Option<&[u8]>) {
        self.current = None;
        let mut i = index;
        let mut target = target;
        while let Some(f) = self.files.get(i) {
            let mut c = match self.source.cursor(f.number, self.opts) {
                Ok(c) => c,
                Err(e) => {
                    self.err = Some(e);
                    break;
                }
            };
            match target.take() {
                Some(k) => c.seek(k),
                None => c.seek_to_first(),
            }
            if let Err(e) = c.status() {
                self.err = Some(in_table(f.number, e));
                break;
            }
            if c.valid() {
                self.index = i;
                self.current = Some(c);
                return;
            }
            i += 1;
        }
        self.index = self.files.len();
    }

    /// Opens file `index` positioned before `target` (or at its end), then earlier files
    /// from their end while the cursor is not on an entry.
    fn open_back_from(&mut self, index: usize, target: Option<&[u8]>) {
        self.current = None;
        let mut i = index.min(self.files.len());
        let mut target = target;
        while i > 0 {
            i -= 1;
            let number = self.files[i].number;
            let mut c = match self.source.cursor(number, self.opts) {
                Ok(c) => c,
                Err(e) => {
                    self.err = Some(e);
                    break;
                }
            };
            match target.take() {
                Some(k) => c.seek_before(k),
                None => c.seek_to_last(),
            }
            if let Err(e) = c.status() {
                self.err = Some(in_table(number, e));
                break;
            }
            if c.valid() {
                self.index = i;
                self.current = Some(c);
                return;
            }
        }
        self.index = self.files.len();
    }
}

/// An error of table `number`, naming it.
pub(crate) fn in_table(number: u64, e: Error) -> Error {
    match e {
        e @ Error::InFile { .. } => e,
        e => Error::InFile {
            file: crate::db::files::table_file_name(number),
            source: Box::new(e),
        },
    }
}

impl Cursor for LevelCursor<'_> {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }
    fn seek_to_first(&mut self) {
        self.err = None;
        self.open_from(0, None);
    }
    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        // The first file whose largest key is >= target.
        let i = self
            .files
            .partition_point(|f| self.cmp.compare(&f.largest, target) == Ordering::Less);
        self.open_from(i, Some(target));
    }
    fn next(&mut self) {
        let Some(c) = self.current.as_mut() else {
            return;
        };
        c.next();
        if let Err(e) = c.status() {
            let n = self.files.get(self.index).map_or(0, |f| f.number);
            self.err = Some(in_table(n, e));
            self.current = None;
            return;
        }
        if !c.valid() {
            self.open_from(self.index + 1, None);
        }
    }
    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |c| c.key())
    }
    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |c| c.value())
    }
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
    fn seek_to_last(&mut self) {
        self.err = None;
        self.open_back_from(self.files.len(), None);
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.err = None;
        // The first file whose largest key is >= target holds the entries just before it
        // (or none, then the files before it do).
        let i = self
            .files
            .partition_point(|f| self.cmp.compare(&f.largest, target) == Ordering::Less);
        if i < self.files.len() {
            self.open_back_from(i + 1, Some(target));
        } else {
            self.open_back_from(i, None);
        }
    }
    fn prev(&mut self) {
        let Some(c) = self.current.as_mut() else {
            return;
        };
        c.prev();
        if let Err(e) = c.status() {
            let n = self.files.get(self.index).map_or(0, |f| f.number);
            self.err = Some(in_table(n, e));
            self.current = None;
            return;
        }
        if !c.valid() {
            self.open_back_from(self.index, None);
        }
    }
}
