//! `Cursor`: one forward iteration interface over sorted internal-key entries, implemented by
//! the memtable, a table and a whole level; the merging cursor and the database view are
//! built on it (as LevelDB's `Iterator` serves its memtable, tables, levels and merger).
//!
//! ```text
//! entry: (internal key = user key | tag (8, LE: sequence << 8 | type), value)
//! order: the internal-key comparator (user key ascending, then sequence descending)
//! ```

use std::cmp::Ordering;

use crate::db::engine::MemTable;
use crate::db::files::FileMeta;
use crate::db::salvage::{EntryPos, FoundTable, SkipIter};
use crate::error::{Error, Result};
use crate::internal_key::InternalKeyComparator;
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::table::iter::TableIter;
use crate::table::TableReader;
use crate::util::comparator::Comparator;

/// How a database's tables are read: the file with `pread`, or a memory map
/// (`Db::open_mmap`).
pub type TableFile = Box<dyn RandomAccess + Send + Sync>;

/// A forward cursor over sorted internal-key entries.
pub trait Cursor {
    /// Whether the cursor is on an entry.
    fn valid(&self) -> bool;
    /// Moves to the first entry.
    fn seek_to_first(&mut self);
    /// Moves to the first entry at or after internal key `target`.
    fn seek(&mut self, target: &[u8]);
    /// Moves to the next entry (only when valid).
    fn next(&mut self);
    /// The current internal key (only when valid).
    fn key(&self) -> &[u8];
    /// The current value (only when valid).
    fn value(&self) -> &[u8];
    /// The error that stopped the cursor, if any (a stopped cursor is not valid).
    fn error(&self) -> Option<&Error>;
    /// Takes the error that stopped the cursor (cursors that can stop on one override this).
    fn take_error(&mut self) -> Option<Error> {
        None
    }
    /// Whether the cursor also moves backward ([`seek_to_last`](Self::seek_to_last),
    /// [`seek_before`](Self::seek_before), [`prev`](Self::prev)). Cursors that do not
    /// (the default) are never moved backward: a merge that would stops with an error.
    fn can_reverse(&self) -> bool {
        false
    }
    /// Moves to the last entry (only called when [`can_reverse`](Self::can_reverse)).
    fn seek_to_last(&mut self) {}
    /// Moves to the last entry before internal key `target` (strictly less; only called
    /// when [`can_reverse`](Self::can_reverse)).
    fn seek_before(&mut self, _target: &[u8]) {}
    /// Moves to the previous entry (only when valid, and only called when
    /// [`can_reverse`](Self::can_reverse)).
    fn prev(&mut self) {}
}

/// The error of a cursor asked to move backward that cannot.
pub(crate) fn cannot_reverse() -> Error {
    Error::InvalidArgument(
        "reading backward is not supported under salvage (tables are walked forward, past \
         their damage): read forward"
            .into(),
    )
}

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
    fn error(&self) -> Option<&Error> {
        None
    }
    fn can_reverse(&self) -> bool {
        true
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

/// Cursor over one table of internal keys: the table's own iterator, or under salvage a
/// walk that skips damaged blocks, or the entries of a table found by block checksums.
pub struct TableCursor<'a> {
    inner: Inner<'a>,
}

enum Inner<'a> {
    Iter(TableIter<'a, TableFile>),
    Skip(SkipIter<'a, TableFile>),
    Found {
        table: &'a FoundTable,
        cmp: InternalKeyComparator,
        i: usize,
    },
}

impl<'a> TableCursor<'a> {
    /// A cursor over `table`.
    pub fn new(table: &'a TableReader<TableFile>, opts: ReadOptions) -> Self {
        TableCursor {
            inner: Inner::Iter(table.iter(&opts)),
        }
    }

    /// A cursor over a walk of a table's data blocks (skipping damaged ones under salvage).
    pub fn skipping(walk: SkipIter<'a, TableFile>) -> Self {
        TableCursor {
            inner: Inner::Skip(walk),
        }
    }

    /// A cursor over the entries salvage found in a table that does not open.
    pub fn found(table: &'a FoundTable, cmp: InternalKeyComparator) -> Self {
        TableCursor {
            inner: Inner::Found {
                i: table.entries().len(),
                table,
                cmp,
            },
        }
    }

    /// Where the current entry is in the table: its data block and its offset in the
    /// decompressed block.
    pub fn position(&self) -> Option<EntryPos> {
        match &self.inner {
            Inner::Iter(it) => {
                it.block_handle()
                    .zip(it.entry_offset())
                    .map(|(block, o)| EntryPos {
                        block,
                        offset_in_block: o,
                    })
            }
            Inner::Skip(w) => w.position(),
            Inner::Found { table, i, .. } => table.entries().get(*i).map(|e| e.pos),
        }
    }
}

impl Cursor for TableCursor<'_> {
    fn valid(&self) -> bool {
        match &self.inner {
            Inner::Iter(it) => it.valid(),
            Inner::Skip(w) => w.valid(),
            Inner::Found { table, i, .. } => *i < table.entries().len(),
        }
    }
    fn seek_to_first(&mut self) {
        match &mut self.inner {
            Inner::Iter(it) => it.seek_to_first(),
            Inner::Skip(w) => w.seek_to_first(),
            Inner::Found { i, .. } => *i = 0,
        }
    }
    fn seek(&mut self, target: &[u8]) {
        match &mut self.inner {
            Inner::Iter(it) => it.seek(target),
            Inner::Skip(w) => w.seek(target),
            Inner::Found { table, cmp, i } => *i = table.lower_bound(cmp, target),
        }
    }
    fn next(&mut self) {
        match &mut self.inner {
            Inner::Iter(it) => it.next(),
            Inner::Skip(w) => w.next(),
            Inner::Found { table, i, .. } => *i = (*i + 1).min(table.entries().len()),
        }
    }
    fn key(&self) -> &[u8] {
        match &self.inner {
            Inner::Iter(it) => it.key(),
            Inner::Skip(w) => w.key(),
            Inner::Found { table, i, .. } => table.entries().get(*i).map_or(&[], |e| &e.key),
        }
    }
    fn value(&self) -> &[u8] {
        match &self.inner {
            Inner::Iter(it) => it.value(),
            Inner::Skip(w) => w.value(),
            Inner::Found { table, i, .. } => table.entries().get(*i).map_or(&[], |e| &e.value),
        }
    }
    fn error(&self) -> Option<&Error> {
        match &self.inner {
            Inner::Iter(it) => it.status().err(),
            Inner::Skip(w) => w.error(),
            Inner::Found { .. } => None,
        }
    }
    fn take_error(&mut self) -> Option<Error> {
        match &mut self.inner {
            Inner::Iter(it) => it.take_error(),
            Inner::Skip(w) => w.take_error(),
            Inner::Found { .. } => None,
        }
    }
    fn can_reverse(&self) -> bool {
        // The salvage walk goes forward only.
        !matches!(self.inner, Inner::Skip(_))
    }
    fn seek_to_last(&mut self) {
        match &mut self.inner {
            Inner::Iter(it) => it.seek_to_last(),
            Inner::Skip(_) => {}
            Inner::Found { table, i, .. } => *i = table.entries().len().saturating_sub(1),
        }
    }
    fn seek_before(&mut self, target: &[u8]) {
        match &mut self.inner {
            Inner::Iter(it) => {
                it.seek(target);
                if it.valid() {
                    it.prev();
                } else if it.status().is_ok() {
                    it.seek_to_last();
                }
            }
            Inner::Skip(_) => {}
            Inner::Found { table, cmp, i } => {
                *i = match table.lower_bound(cmp, target) {
                    0 => table.entries().len(),
                    n => n - 1,
                }
            }
        }
    }
    fn prev(&mut self) {
        match &mut self.inner {
            Inner::Iter(it) => it.prev(),
            Inner::Skip(_) => {}
            Inner::Found { table, i, .. } => {
                *i = match *i {
                    0 => table.entries().len(),
                    n => n - 1,
                }
            }
        }
    }
}

/// Gives the tables of a database by file number (opened on first use).
pub trait TableSource {
    /// Table `number`.
    ///
    /// # Errors
    /// It cannot be opened; the error names the file.
    fn table(&self, number: u64) -> Result<&TableReader<TableFile>>;

    /// A cursor over table `number` (not positioned): the table's own iterator, unless the
    /// source reads another way (a database under salvage skips damaged blocks).
    ///
    /// # Errors
    /// As [`table`](Self::table).
    fn cursor(&self, number: u64, opts: ReadOptions) -> Result<TableCursor<'_>> {
        Ok(TableCursor::new(self.table(number)?, opts))
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
    current: Option<TableCursor<'a>>,
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
            if let Some(e) = c.take_error() {
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
            if !c.can_reverse() {
                self.err = Some(in_table(number, cannot_reverse()));
                break;
            }
            match target.take() {
                Some(k) => c.seek_before(k),
                None => c.seek_to_last(),
            }
            if let Some(e) = c.take_error() {
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
        if let Some(e) = c.take_error() {
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
    fn error(&self) -> Option<&Error> {
        self.err.as_ref()
    }
    fn take_error(&mut self) -> Option<Error> {
        self.err.take()
    }
    fn can_reverse(&self) -> bool {
        // Each table is checked as it is opened (an error names one that cannot).
        true
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
        if let Some(e) = c.take_error() {
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
