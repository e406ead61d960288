//! Cursors that own what they read, so an iterator or a compaction holds only the tables it
//! is on (the table cache may close the others):
//!
//! ```text
//! OwnedTableCursor: Arc<Table> + the library's TableIter borrowing it (self_cell)
//! FilesCursor:      the sorted, disjoint tables of one level (LevelDB's concatenating
//!                   "two-level" iterator): one OwnedTableCursor at a time, opened through
//!                   the table cache when the cursor reaches its table; both directions
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use leveldb_table::db::engine::TableFile;
use leveldb_table::db::files::table_file_name;
use leveldb_table::table::TableIter;
use leveldb_table::{Comparator, Cursor, Error, ReadOptions, Result};

use crate::table_cache::{Table, TableCache};
use crate::version::{icmp, FileInfo};

type Borrowing<'a> = TableIter<'a, TableFile>;

self_cell::self_cell!(
    struct TableCell {
        owner: Arc<Table>,
        #[covariant]
        dependent: Borrowing,
    }
);

/// A cursor over one table that keeps the table open while it lives; its errors name the
/// table's file.
pub struct OwnedTableCursor {
    cell: TableCell,
}

impl OwnedTableCursor {
    /// A cursor over `table`, not positioned.
    pub fn new(table: Arc<Table>, read: ReadOptions) -> OwnedTableCursor {
        OwnedTableCursor {
            cell: TableCell::new(table, |t| t.reader.iter(&read)),
        }
    }
}

/// An error of table `number`, naming its file.
pub fn in_table(number: u64, e: Error) -> Error {
    match e {
        e @ Error::InFile { .. } => e,
        e => Error::InFile {
            file: table_file_name(number),
            source: Box::new(e),
        },
    }
}

impl Cursor for OwnedTableCursor {
    fn valid(&self) -> bool {
        self.cell.borrow_dependent().valid()
    }
    fn seek_to_first(&mut self) {
        self.cell.with_dependent_mut(|_, c| c.seek_to_first());
    }
    fn seek(&mut self, target: &[u8]) {
        self.cell.with_dependent_mut(|_, c| c.seek(target));
    }
    fn next(&mut self) {
        self.cell.with_dependent_mut(|_, c| c.next());
    }
    fn key(&self) -> &[u8] {
        self.cell.borrow_dependent().key()
    }
    fn value(&self) -> &[u8] {
        self.cell.borrow_dependent().value()
    }
    fn status(&self) -> Result<()> {
        let number = self.cell.borrow_owner().number;
        self.cell
            .borrow_dependent()
            .status()
            .map_err(|e| in_table(number, e))
    }
    fn seek_to_last(&mut self) {
        self.cell.with_dependent_mut(|_, c| c.seek_to_last());
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.cell.with_dependent_mut(|_, c| c.seek_before(target));
    }
    fn prev(&mut self) {
        self.cell.with_dependent_mut(|_, c| c.prev());
    }
}

/// A cursor over the tables of one level (sorted by key, disjoint), opening one table at a
/// time through the table cache.
pub struct FilesCursor {
    files: Vec<Arc<FileInfo>>,
    cache: Arc<TableCache>,
    read: ReadOptions,
    index: usize,
    current: Option<OwnedTableCursor>,
    err: Option<Error>,
}

impl FilesCursor {
    /// A cursor over `files`, not positioned.
    pub fn new(files: Vec<Arc<FileInfo>>, cache: Arc<TableCache>, read: ReadOptions) -> Self {
        FilesCursor {
            index: files.len(),
            files,
            cache,
            read,
            current: None,
            err: None,
        }
    }

    fn open(&mut self, i: usize) -> Option<OwnedTableCursor> {
        let f = self.files.get(i)?;
        match self.cache.get(f.meta.number) {
            Ok(t) => Some(OwnedTableCursor::new(t, self.read)),
            Err(e) => {
                self.err = Some(e);
                None
            }
        }
    }

    /// Opens table `index` positioned at `target` (or its start), then later tables from
    /// their start while the cursor is not on an entry.
    fn forward_from(&mut self, mut i: usize, mut target: Option<&[u8]>) {
        self.current = None;
        while i < self.files.len() {
            let Some(mut c) = self.open(i) else { break };
            match target.take() {
                Some(k) => c.seek(k),
                None => c.seek_to_first(),
            }
            if let Err(e) = c.status() {
                self.err = Some(e);
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

    /// Opens table `index - 1` positioned before `target` (or at its end), then earlier
    /// tables from their end while the cursor is not on an entry.
    fn backward_from(&mut self, mut i: usize, mut target: Option<&[u8]>) {
        self.current = None;
        i = i.min(self.files.len());
        while i > 0 {
            i -= 1;
            let Some(mut c) = self.open(i) else { break };
            match target.take() {
                Some(k) => c.seek_before(k),
                None => c.seek_to_last(),
            }
            if let Err(e) = c.status() {
                self.err = Some(e);
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

    /// The first table whose largest key is >= `target`.
    fn find(&self, target: &[u8]) -> usize {
        let cmp = icmp();
        self.files
            .partition_point(|f| cmp.compare(&f.meta.largest, target) == Ordering::Less)
    }

    fn after_move(&mut self, forward: bool) {
        let Some(c) = self.current.as_mut() else {
            return;
        };
        if let Err(e) = c.status() {
            self.err = Some(e);
            self.current = None;
        } else if !c.valid() {
            match forward {
                true => self.forward_from(self.index + 1, None),
                false => self.backward_from(self.index, None),
            }
        }
    }
}

impl Cursor for FilesCursor {
    fn valid(&self) -> bool {
        self.err.is_none() && self.current.as_ref().is_some_and(|c| c.valid())
    }
    fn seek_to_first(&mut self) {
        self.err = None;
        self.forward_from(0, None);
    }
    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        let i = self.find(target);
        self.forward_from(i, Some(target));
    }
    fn next(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.next();
        }
        self.after_move(true);
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
        self.backward_from(self.files.len(), None);
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.err = None;
        // The first table whose largest key is >= target holds the entries just before it
        // (or none: then the tables before it do).
        let i = self.find(target);
        if i < self.files.len() {
            self.backward_from(i + 1, Some(target));
        } else {
            self.backward_from(i, None);
        }
    }
    fn prev(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.prev();
        }
        self.after_move(false);
    }
}
