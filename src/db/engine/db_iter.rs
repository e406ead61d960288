//! The database's live view at a snapshot, over a merging cursor (LevelDB's
//! `db/db_iter.cc`): user keys in order, each with its newest version whose sequence is at
//! most the snapshot, unless that version is a deletion; both ways.
//!
//! ```text
//! merged:    (a,5,put) (b,9,del) (b,7,put) (c,12,put) (c,8,put) (c,3,put)
//!            user key ascending, then sequence descending: the newest version first
//! view(10):  a -> (a,5); b: the newest visible version is a deletion, so b is hidden;
//!            c -> (c,8) [12 > 10: not visible]
//! forward:   the merged cursor stays on the version shown (no copy of the value)
//! backward:  a key's versions come oldest first, so the newest visible one is the last
//!            seen before the walk reaches an earlier user key: key and value are copied
//!            (into buffers reused from key to key) and the merged cursor waits before them
//! ```

use std::cmp::Ordering;
use std::sync::Arc;

use crate::cursor::{Cursor, Entries};
use crate::db::engine::MergingCursor;
use crate::error::{Error, Result};
use crate::format::MAX_SEQUENCE;
use crate::internal_key::{self, ValueType};
use crate::util::comparator::Comparator;

/// The live view of a database at a snapshot, over the merge of its sources ([`Cursor`]
/// over user keys; through [`IntoIterator`], a std iterator of owned pairs that starts at
/// the first key unless the cursor was positioned).
pub struct DbIter<'a> {
    inner: MergingCursor<'a>,
    snapshot: u64,
    /// The user-key order (the internal comparator's), taken once.
    user: Arc<dyn Comparator>,
    /// The current user key.
    key: Vec<u8>,
    /// Going forward: the user key whose older versions are skipped (one shown or deleted);
    /// its buffer is swapped with `key`, so stepping allocates nothing once both have grown.
    /// Going backward: the current value (the merged cursor has moved past it).
    other: Vec<u8>,
    sequence: u64,
    valid: bool,
    backward: bool,
    positioned: bool,
    /// An error met before the view could be built (a source that did not open): it stays.
    failed: Option<Error>,
}

impl<'a> DbIter<'a> {
    /// The view of `inner` (every version of every key, merged) at `snapshot`, not
    /// positioned.
    pub fn new(inner: MergingCursor<'a>, snapshot: u64) -> Self {
        let user = inner.comparator().user_comparator().clone();
        DbIter {
            inner,
            snapshot,
            user,
            key: Vec::new(),
            other: Vec::new(),
            sequence: 0,
            valid: false,
            backward: false,
            positioned: false,
            failed: None,
        }
    }

    /// A view that holds no entry and says `error` in its status (a source that could not be
    /// opened).
    pub fn failed(inner: MergingCursor<'a>, error: Error) -> Self {
        let mut it = DbIter::new(inner, 0);
        it.failed = Some(error);
        it
    }

    /// The sequence number of the current value.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The snapshot the view reads at.
    pub fn snapshot(&self) -> u64 {
        self.snapshot
    }

    /// The user-key order.
    pub fn comparator(&self) -> &Arc<dyn Comparator> {
        &self.user
    }

    /// From the merged cursor's position forward, the next user key whose newest visible
    /// version is a value, skipping versions of `self.other` when `skipping` (a key already
    /// shown or deleted). Leaves the merged cursor on the version shown.
    fn find_next(&mut self, mut skipping: bool) {
        self.valid = false;
        while self.inner.valid() {
            let Some(p) = internal_key::parse_internal_key(self.inner.key()) else {
                // A key that is not an internal key: not a version of anything; skip it.
                self.inner.next();
                continue;
            };
            let hidden =
                skipping && self.user.compare(p.user_key, &self.other) != Ordering::Greater;
            if p.sequence <= self.snapshot && !hidden {
                match p.value_type {
                    ValueType::Deletion => {
                        // Later (older) versions of this key are hidden by the deletion.
                        self.other.clear();
                        self.other.extend_from_slice(p.user_key);
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

    /// From the merged cursor's position backward: the versions of one user key, oldest
    /// first; the last visible one decides (a value is shown, a deletion hides the key).
    /// Stops on the last version of an earlier user key once a value is held.
    fn find_prev(&mut self) {
        self.valid = false;
        let mut holding = false; // a visible value of `self.key` is held
        while self.inner.valid() {
            let Some(p) = internal_key::parse_internal_key(self.inner.key()) else {
                // Not an internal key: no version of anything (the forward view skips it).
                self.inner.prev();
                continue;
            };
            if p.sequence <= self.snapshot {
                if holding && self.user.compare(p.user_key, &self.key) == Ordering::Less {
                    break;
                }
                match p.value_type {
                    ValueType::Deletion => holding = false,
                    ValueType::Value => {
                        self.key.clear();
                        self.key.extend_from_slice(p.user_key);
                        self.other.clear();
                        self.other.extend_from_slice(self.inner.value());
                        self.sequence = p.sequence;
                        holding = true;
                    }
                }
            }
            self.inner.prev();
        }
        // A value cut short by an error might be shadowed by a version not read: not shown.
        self.valid = holding && self.inner.status().is_ok();
    }

    /// Marks a seek: the view is positioned, going `backward` or not.
    fn positioned(&mut self, backward: bool) -> bool {
        self.positioned = true;
        self.backward = backward;
        self.valid = false;
        self.failed.is_none()
    }
}

impl Cursor for DbIter<'_> {
    fn valid(&self) -> bool {
        self.valid
    }

    fn seek_to_first(&mut self) {
        if self.positioned(false) {
            self.inner.seek_to_first();
            self.find_next(false);
        }
    }

    fn seek_to_last(&mut self) {
        if self.positioned(true) {
            self.inner.seek_to_last();
            self.find_prev();
        }
    }

    /// Moves to the first live user key `>= target`.
    fn seek(&mut self, target: &[u8]) {
        if self.positioned(false) {
            let mut t = Vec::with_capacity(target.len() + 8);
            internal_key::lookup_key(&mut t, target, self.snapshot);
            self.inner.seek(&t);
            self.find_next(false);
        }
    }

    /// Moves to the last live user key `< target`.
    fn seek_before(&mut self, target: &[u8]) {
        if self.positioned(true) {
            // (target, MAX_SEQUENCE) is the smallest internal key of `target`: everything
            // before it belongs to smaller user keys.
            let mut t = Vec::with_capacity(target.len() + 8);
            internal_key::lookup_key(&mut t, target, MAX_SEQUENCE);
            self.inner.seek_before(&t);
            self.find_prev();
        }
    }

    fn next(&mut self) {
        if !self.valid {
            return;
        }
        if self.backward {
            // The merged cursor waits before the current key's versions (or is off the
            // start): bring it to the first of them, then past them all.
            self.backward = false;
            if self.inner.valid() {
                self.inner.next();
            } else if self.inner.status().is_ok() {
                self.inner.seek_to_first();
            }
        } else {
            self.inner.next();
        }
        std::mem::swap(&mut self.key, &mut self.other);
        self.find_next(true);
    }

    fn prev(&mut self) {
        if !self.valid {
            return;
        }
        if !self.backward {
            // The merged cursor is on the version shown: move it before every version of
            // the current key (newer ones, not visible, come before it).
            self.backward = true;
            loop {
                self.inner.prev();
                if !self.inner.valid() {
                    break;
                }
                let before = internal_key::parse_internal_key(self.inner.key())
                    .is_some_and(|p| self.user.compare(p.user_key, &self.key) == Ordering::Less);
                if before {
                    break;
                }
            }
        }
        self.find_prev();
    }

    /// The current user key.
    fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value (empty when not valid).
    fn value(&self) -> &[u8] {
        match (self.valid, self.backward) {
            (false, _) => &[],
            (true, false) => self.inner.value(),
            (true, true) => &self.other,
        }
    }

    fn status(&self) -> Result<()> {
        match &self.failed {
            Some(e) => Err(e.clone()),
            None => self.inner.status(),
        }
    }
}

/// Every live entry from the first user key (or, when the view was positioned, from there
/// on) as owned `(key, value)` pairs; an error that stops the view is the last item.
impl<'a> IntoIterator for DbIter<'a> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    type IntoIter = Entries<DbIter<'a>>;

    fn into_iter(self) -> Self::IntoIter {
        if self.positioned {
            Entries::from_current(self)
        } else {
            Entries::from_first(self)
        }
    }
}

#[cfg(test)]
mod tests;
