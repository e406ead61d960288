//! Ordered iteration over a snapshot, both ways (LevelDB's `DBIter`): a merging cursor over
//! the memtable, the immutable memtable, every level-0 table and one concatenating cursor
//! per deeper level, seen through the library's snapshot views (the newest version of each
//! key with sequence <= the snapshot, deletions hidden), cut to a key range.
//!
//! ```text
//! DbIter: Sources (memtables, Version, table cache: all Arc, owned)
//!         forward view:  View(MergingCursor(children))    seek / next
//!         backward view: View(MergingCursor(children))    seek_before / prev
//!         (View: the library's `DbIter`, one per direction)
//!         range [lower, upper): a key outside it is not valid
//! ```
//!
//! Each view is built (its cursors over the same sources) the first time the iterator moves
//! its way; switching direction seeks the other view next to the current key.

use std::sync::Arc;

use leveldb_table::db::engine::{DbIter as View, MergingCursor};
use leveldb_table::Cursor;
use leveldb_table::ReadOptions;

use crate::cursors::{FilesCursor, OwnedTableCursor};
use crate::error::{Error, Result};
use crate::memtable::{MemCursor, MemTable};
use crate::table_cache::TableCache;
use crate::version::{icmp, Version};

/// What an iterator reads: kept alive as long as it is.
pub struct Sources {
    /// The memtable (still being written: the snapshot hides newer writes).
    pub mem: Arc<MemTable>,
    /// The memtable being flushed, if any.
    pub imm: Option<Arc<MemTable>>,
    /// The tables.
    pub version: Arc<Version>,
    /// Where tables are opened.
    pub tables: Arc<TableCache>,
    /// How table blocks are read.
    pub read: ReadOptions,
}

impl Sources {
    /// A merging cursor over every source.
    fn merged(&self) -> leveldb_table::Result<MergingCursor<'static>> {
        let mut children: Vec<Box<dyn Cursor>> = vec![Box::new(MemCursor::new(self.mem.clone()))];
        if let Some(imm) = &self.imm {
            children.push(Box::new(MemCursor::new(imm.clone())));
        }
        for f in &self.version.levels[0] {
            let t = self.tables.get(f.meta.number)?;
            children.push(Box::new(OwnedTableCursor::new(t, self.read)));
        }
        for files in self.version.levels.iter().skip(1) {
            if !files.is_empty() {
                let c = FilesCursor::new(files.clone(), self.tables.clone(), self.read);
                children.push(Box::new(c));
            }
        }
        Ok(MergingCursor::new(children, icmp()))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// A cursor over live keys in key order (LevelDB's `DB::NewIterator`), bounded to a range
/// `[lower, upper)`, moving both ways.
///
/// Use it as a cursor (`valid`, `key`, `value`, `next`, `prev`, `seek`, `seek_before`,
/// `seek_to_first`, `seek_to_last`, `status`), without a copy per entry, or as an
/// `Iterator` of owned `(key, value)` pairs in the direction it was created for
/// ([`Db::iter`](crate::Db::iter) forward, [`Db::iter_rev`](crate::Db::iter_rev) backward).
/// An error (a damaged or unreadable table) stops it: the cursor is then not valid and
/// `status` returns the error; the `Iterator` yields it as its last item.
pub struct DbIter {
    src: Sources,
    snapshot: u64,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    fwd: Option<View<'static>>,
    bwd: Option<View<'static>>,
    dir: Direction,
    err: Option<Error>,
    /// The direction the `Iterator` walks.
    iter_dir: Direction,
    /// The `Iterator` has yielded the error.
    reported: bool,
}

impl DbIter {
    /// An iterator over `src` at `snapshot`, over `[lower, upper)`, not positioned.
    pub(crate) fn new(
        src: Sources,
        snapshot: u64,
        lower: Option<&[u8]>,
        upper: Option<&[u8]>,
        backward: bool,
    ) -> DbIter {
        DbIter {
            src,
            snapshot,
            lower: lower.map(<[u8]>::to_vec),
            upper: upper.map(<[u8]>::to_vec),
            fwd: None,
            bwd: None,
            dir: Direction::Forward,
            err: None,
            iter_dir: if backward {
                Direction::Backward
            } else {
                Direction::Forward
            },
            reported: false,
        }
    }

    fn forward(&mut self) -> Option<&mut View<'static>> {
        self.dir = Direction::Forward;
        if self.fwd.is_none() && self.err.is_none() {
            match self.src.merged() {
                Ok(m) => self.fwd = Some(View::new(m, self.snapshot)),
                Err(e) => self.err = Some(e.into()),
            }
        }
        self.fwd.as_mut()
    }

    fn backward(&mut self) -> Option<&mut View<'static>> {
        self.dir = Direction::Backward;
        if self.bwd.is_none() && self.err.is_none() {
            match self.src.merged() {
                Ok(m) => self.bwd = Some(View::new(m, self.snapshot)),
                Err(e) => self.err = Some(e.into()),
            }
        }
        self.bwd.as_mut()
    }

    /// Whether the cursor is on a key inside the range.
    pub fn valid(&self) -> bool {
        if self.err.is_some() {
            return false;
        }
        match self.dir {
            Direction::Forward => self
                .fwd
                .as_ref()
                .is_some_and(|v| v.valid() && self.upper.as_deref().is_none_or(|u| v.key() < u)),
            Direction::Backward => self
                .bwd
                .as_ref()
                .is_some_and(|v| v.valid() && self.lower.as_deref().is_none_or(|l| v.key() >= l)),
        }
    }

    /// The current key (empty when not valid).
    pub fn key(&self) -> &[u8] {
        match self.dir {
            Direction::Forward => self.fwd.as_ref().map_or(&[], |v| v.key()),
            Direction::Backward => self.bwd.as_ref().map_or(&[], |v| v.key()),
        }
    }

    /// The current value (empty when not valid).
    pub fn value(&self) -> &[u8] {
        match self.dir {
            Direction::Forward => self.fwd.as_ref().map_or(&[], |v| v.value()),
            Direction::Backward => self.bwd.as_ref().map_or(&[], |v| v.value()),
        }
    }

    /// Moves to the first key of the range.
    pub fn seek_to_first(&mut self) {
        let lower = self.lower.clone();
        if let Some(v) = self.forward() {
            match &lower {
                Some(k) => v.seek(k),
                None => v.seek_to_first(),
            }
        }
        self.capture();
    }

    /// Moves to the last key of the range.
    pub fn seek_to_last(&mut self) {
        let upper = self.upper.clone();
        if let Some(v) = self.backward() {
            match &upper {
                Some(k) => v.seek_before(k),
                None => v.seek_to_last(),
            }
        }
        self.capture();
    }

    /// Moves to the first key >= `key` (and inside the range).
    pub fn seek(&mut self, key: &[u8]) {
        let target = match &self.lower {
            Some(l) if l.as_slice() > key => l.clone(),
            _ => key.to_vec(),
        };
        if let Some(v) = self.forward() {
            v.seek(&target);
        }
        self.capture();
    }

    /// Moves to the last key < `key` (and inside the range).
    pub fn seek_before(&mut self, key: &[u8]) {
        let target = match &self.upper {
            Some(u) if u.as_slice() < key => u.clone(),
            _ => key.to_vec(),
        };
        if let Some(v) = self.backward() {
            v.seek_before(&target);
        }
        self.capture();
    }

    /// Moves to the next key (only when valid).
    pub fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if self.dir == Direction::Forward {
            if let Some(v) = self.fwd.as_mut() {
                v.next();
            }
        } else {
            let current = self.key().to_vec();
            if let Some(v) = self.forward() {
                v.seek(&current);
                if v.valid() && v.key() == current.as_slice() {
                    v.next();
                }
            }
        }
        self.capture();
    }

    /// Moves to the previous key (only when valid).
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if self.dir == Direction::Backward {
            if let Some(v) = self.bwd.as_mut() {
                v.prev();
            }
        } else {
            let current = self.key().to_vec();
            if let Some(v) = self.backward() {
                v.seek_before(&current);
            }
        }
        self.capture();
    }

    /// The error that stopped the cursor, if any (a damaged or unreadable table).
    ///
    /// # Errors
    /// That error, naming the table file and block.
    pub fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Keeps the error the current view stopped on, if any.
    fn capture(&mut self) {
        let e = match self.dir {
            Direction::Forward => self.fwd.as_ref().and_then(|v| v.status().err()),
            Direction::Backward => self.bwd.as_ref().and_then(|v| v.status().err()),
        };
        if let Some(e) = e {
            self.err.get_or_insert(e.into());
        }
    }
}

impl Iterator for DbIter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.valid() {
            // The error once, then the end.
            if self.reported {
                return None;
            }
            self.reported = true;
            return self.err.clone().map(Err);
        }
        let kv = (self.key().to_vec(), self.value().to_vec());
        match self.iter_dir {
            Direction::Forward => DbIter::next(self),
            Direction::Backward => self.prev(),
        }
        Some(Ok(kv))
    }
}
