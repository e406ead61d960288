//! The merging cursor over any number of sorted cursors (LevelDB's `table/merger.cc`); the
//! database view at a snapshot is built on it ([`DbIter`](super::DbIter)).
//!
//! ```text
//! children:  memtable (logs) | L0 tables, newest first | level 1 | ... | level 6
//! merged:    every internal key of every child in internal-key order
//!            (user key ascending, sequence descending: the newest version first)
//! view(S):   per user key, the first entry with sequence <= S; hidden if a deletion
//! ```

use std::cmp::Ordering;

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::internal_key::InternalKeyComparator;
use crate::util::comparator::Comparator;

/// Merges sorted cursors into one sorted cursor, in either direction (as LevelDB's
/// merger: turning around re-positions every other child next to the current key).
pub struct MergingCursor<'a> {
    children: Vec<Box<dyn Cursor + 'a>>,
    cmp: InternalKeyComparator,
    current: Option<usize>,
    /// Whether the last move went backward (`seek_to_last`, `seek_before`, `prev`).
    backward: bool,
    /// The error of a child that stopped: it stops the merge (entries after it could be
    /// missing, and a view without them would be silently wrong).
    err: Option<Error>,
}

impl<'a> MergingCursor<'a> {
    /// Merges `children` (each sorted by `cmp`).
    pub fn new(children: Vec<Box<dyn Cursor + 'a>>, cmp: InternalKeyComparator) -> Self {
        MergingCursor {
            children,
            cmp,
            current: None,
            backward: false,
            err: None,
        }
    }

    /// The internal-key order of the merge.
    pub fn comparator(&self) -> &InternalKeyComparator {
        &self.cmp
    }

    /// After a move: the error of a child that stopped, if one did; else the current child,
    /// the largest (`backward`) or the smallest.
    fn settle(&mut self) {
        self.current = None;
        if let Some(e) = self.children.iter().find_map(|c| c.status().err()) {
            self.err = Some(e);
            return;
        }
        if self.backward {
            self.find_largest();
        } else {
            self.find_smallest();
        }
    }

    /// The largest valid child; ties go to the later child.
    fn find_largest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate().rev() {
            if !c.valid() {
                continue;
            }
            best = match best {
                Some(b)
                    if self.cmp.compare(c.key(), self.children[b].key()) != Ordering::Greater =>
                {
                    Some(b)
                }
                _ => Some(i),
            };
        }
        self.current = best;
    }

    /// The smallest valid child; ties go to the earlier child (newer data comes first in
    /// the children's order, though internal keys of one database never tie).
    fn find_smallest(&mut self) {
        let mut best: Option<usize> = None;
        for (i, c) in self.children.iter().enumerate() {
            if !c.valid() {
                continue;
            }
            best = match best {
                Some(b) if self.cmp.compare(c.key(), self.children[b].key()) != Ordering::Less => {
                    Some(b)
                }
                _ => Some(i),
            };
        }
        self.current = best;
    }
}

impl Cursor for MergingCursor<'_> {
    fn valid(&self) -> bool {
        self.current.is_some() && self.err.is_none()
    }
    fn seek_to_first(&mut self) {
        self.backward = false;
        self.err = None;
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.settle();
    }
    fn seek(&mut self, target: &[u8]) {
        self.backward = false;
        self.err = None;
        for c in &mut self.children {
            c.seek(target);
        }
        self.settle();
    }
    fn next(&mut self) {
        let Some(i) = self.current else {
            return;
        };
        if self.backward {
            // Every other child moves to its first entry after the current key.
            let key = self.children[i].key().to_vec();
            for (j, c) in self.children.iter_mut().enumerate() {
                if j != i {
                    c.seek(&key);
                    if c.valid() && self.cmp.compare(&key, c.key()) == Ordering::Equal {
                        c.next();
                    }
                }
            }
            self.backward = false;
        }
        self.children[i].next();
        self.settle();
    }
    fn seek_to_last(&mut self) {
        self.backward = true;
        self.err = None;
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.settle();
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.backward = true;
        self.err = None;
        for c in &mut self.children {
            c.seek_before(target);
        }
        self.settle();
    }
    fn prev(&mut self) {
        let Some(i) = self.current else {
            return;
        };
        if !self.backward {
            // Every other child moves to its last entry before the current key.
            let key = self.children[i].key().to_vec();
            for (j, c) in self.children.iter_mut().enumerate() {
                if j != i {
                    c.seek_before(&key);
                }
            }
            self.backward = true;
        }
        self.children[i].prev();
        self.settle();
    }
    fn key(&self) -> &[u8] {
        self.current.map_or(&[], |i| self.children[i].key())
    }
    fn value(&self) -> &[u8] {
        self.current.map_or(&[], |i| self.children[i].value())
    }
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}
