//! The merged view: a merging cursor over any number of sorted cursors (LevelDB's
//! `table/merger.cc`), and on top of it the database view at a snapshot (`db/db_iter.cc`):
//! for each user key, the newest version with a sequence <= the snapshot, unless that
//! version is a deletion.
//!
//! ```text
//! children:  memtable (logs) | L0 tables, newest first | level 1 | ... | level 6
//! merged:    every internal key of every child in internal-key order
//!            (user key ascending, sequence descending: the newest version first)
//! view(S):   per user key, the first entry with sequence <= S; hidden if a deletion
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use crate::db::engine::Cursor;
use crate::error::Error;
use crate::internal_key::{self, InternalKeyComparator, ValueType};
use crate::util::comparator::Comparator;

/// Merges sorted cursors into one sorted cursor, in either direction (as LevelDB's
/// merger: turning around re-positions every other child next to the current key).
pub struct MergingCursor<'a> {
    children: Vec<Box<dyn Cursor + 'a>>,
    cmp: InternalKeyComparator,
    current: Option<usize>,
    /// Whether the last move went backward (`seek_to_last`, `seek_before`, `prev`).
    backward: bool,
    /// A child asked to move backward that cannot.
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

    /// Whether every child moves backward; if not, the merge stops with an error.
    fn check_reverse(&mut self) -> bool {
        if self.err.is_none() && !self.children.iter().all(|c| c.can_reverse()) {
            self.err = Some(crate::db::engine::cannot_reverse());
        }
        self.err.is_none()
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
        self.current.is_some() && self.error().is_none()
    }
    fn seek_to_first(&mut self) {
        self.backward = false;
        self.err = None;
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.find_smallest();
    }
    fn seek(&mut self, target: &[u8]) {
        self.backward = false;
        self.err = None;
        for c in &mut self.children {
            c.seek(target);
        }
        self.find_smallest();
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
        self.find_smallest();
    }
    fn can_reverse(&self) -> bool {
        // A child that cannot is reported as an error when the merge turns back.
        true
    }
    fn seek_to_last(&mut self) {
        self.backward = true;
        self.current = None;
        if self.check_reverse() {
            for c in &mut self.children {
                c.seek_to_last();
            }
            self.find_largest();
        }
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.backward = true;
        self.current = None;
        if self.check_reverse() {
            for c in &mut self.children {
                c.seek_before(target);
            }
            self.find_largest();
        }
    }
    fn prev(&mut self) {
        let Some(i) = self.current else {
            return;
        };
        if !self.backward {
            if !self.check_reverse() {
                self.current = None;
                return;
            }
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
        self.find_largest();
    }
    fn key(&self) -> &[u8] {
        self.current.map_or(&[], |i| self.children[i].key())
    }
    fn value(&self) -> &[u8] {
        self.current.map_or(&[], |i| self.children[i].value())
    }
    fn error(&self) -> Option<&Error> {
        // A child that stopped on an error stops the merge: entries after it could be
        // missing, and a view without them would be silently wrong.
        self.err
            .as_ref()
            .or_else(|| self.children.iter().find_map(|c| c.error()))
    }
    fn take_error(&mut self) -> Option<Error> {
        self.err
            .take()
            .or_else(|| self.children.iter_mut().find_map(|c| c.take_error()))
    }
}

/// The live view of a merged cursor at snapshot `sequence`: user keys in order, each with
/// its newest visible value; deleted and shadowed versions are skipped.
pub struct ViewCursor<'a> {
    inner: MergingCursor<'a>,
    snapshot: u64,
    /// The user-key order (the internal comparator's), taken once.
    user: Arc<dyn Comparator>,
    /// The current user key (the value is read from the inner cursor, which stays on the
    /// version shown: no copy per entry).
    key: Vec<u8>,
    /// The user key whose older versions are skipped (one shown or deleted); its buffer is
    /// swapped with `key`, so stepping allocates nothing once both have grown.
    skip: Vec<u8>,
    sequence: u64,
    valid: bool,
}

impl<'a> ViewCursor<'a> {
    /// The view of `inner` at `snapshot`.
    pub fn new(inner: MergingCursor<'a>, snapshot: u64) -> Self {
        let user = inner.comparator().user_comparator().clone();
        ViewCursor {
            inner,
            snapshot,
            user,
            key: Vec::new(),
            skip: Vec::new(),
            sequence: 0,
            valid: false,
        }
    }

    /// Whether the view is on a user key.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// Moves to the first live user key.
    pub fn seek_to_first(&mut self) {
        self.inner.seek_to_first();
        self.settle(false);
    }

    /// Moves to the first live user key >= `user_key`.
    pub fn seek(&mut self, user_key: &[u8]) {
        let mut target = Vec::with_capacity(user_key.len() + 8);
        internal_key::lookup_key(&mut target, user_key, self.snapshot);
        self.inner.seek(&target);
        self.settle(false);
    }

    /// Moves to the next live user key.
    pub fn next(&mut self) {
        if !self.valid {
            return;
        }
        std::mem::swap(&mut self.key, &mut self.skip);
        self.inner.next();
        self.settle(true);
    }

    /// The current user key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value (empty when not valid).
    pub fn value(&self) -> &[u8] {
        if self.valid {
            self.inner.value()
        } else {
            &[]
        }
    }

    /// The sequence number of the current value.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The error that stopped the view, if any.
    pub fn error(&self) -> Option<&Error> {
        self.inner.error()
    }

    /// Takes the error that stopped the view, if any (to return it, owned).
    pub fn take_error(&mut self) -> Option<Error> {
        self.inner.take_error()
    }

    /// From the inner cursor's position, finds the next user key whose newest visible
    /// version is a value, skipping versions of `self.skip` when `skipping` (a key already
    /// shown or deleted). Leaves the inner cursor on the version shown.
    fn settle(&mut self, mut skipping: bool) {
        self.valid = false;
        while self.inner.valid() {
            let Some(p) = internal_key::parse_internal_key(self.inner.key()) else {
                // A key that is not an internal key: not a version of anything; skip it.
                self.inner.next();
                continue;
            };
            let hidden = skipping && self.user.compare(p.user_key, &self.skip) != Ordering::Greater;
            if p.sequence <= self.snapshot && !hidden {
                match p.value_type {
                    ValueType::Deletion => {
                        // Later (older) versions of this key are hidden by the deletion.
                        self.skip.clear();
                        self.skip.extend_from_slice(p.user_key);
                        skipping = true;
                    }
                    ValueType::Value => {
                        self.key.clear();
                        self.key.extend_from_slice(p.user_key);
                        self.sequence = p.sequence;
                        self.valid = true;
                        return;
                    }
                }
            }
            self.inner.next();
        }
    }
}
