//! The database view read backward: user keys from the last to the first, each with its
//! newest version at a snapshot, deleted and shadowed versions skipped (LevelDB's
//! `DBIter::Prev`).
//!
//! ```text
//! merged (backward):  ... (b,7,put) (b,9,del) | (c,3,put) (c,8,put) (c,12,put)
//!                     a key's versions come oldest first, so the newest visible one is the
//!                     last seen before the walk reaches an earlier user key
//! view(S=10):         c -> (c,8) [12 > S: not visible]; b: newest visible is a deletion,
//!                     so b is skipped; then a...
//! ```
//!
//! The value shown is copied out of the merged cursor (it has moved on to the previous key
//! by the time the version is known to be the newest), into buffers reused from key to key.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::db::engine::Cursor;
use crate::db::engine::MergingCursor;
use crate::error::Error;
use crate::format::MAX_SEQUENCE;
use crate::internal_key::{self, ValueType};
use crate::util::comparator::Comparator;

/// The live view of a merged cursor at snapshot `sequence`, read from the last user key to
/// the first.
pub struct ReverseView<'a> {
    inner: MergingCursor<'a>,
    snapshot: u64,
    user: Arc<dyn Comparator>,
    key: Vec<u8>,
    value: Vec<u8>,
    sequence: u64,
    valid: bool,
}

impl<'a> ReverseView<'a> {
    /// The backward view of `inner` at `snapshot` (not positioned).
    pub fn new(inner: MergingCursor<'a>, snapshot: u64) -> Self {
        let user = inner.comparator().user_comparator().clone();
        ReverseView {
            inner,
            snapshot,
            user,
            key: Vec::new(),
            value: Vec::new(),
            sequence: 0,
            valid: false,
        }
    }

    /// Whether the view is on a user key.
    pub fn valid(&self) -> bool {
        self.valid
    }

    /// Moves to the last live user key.
    pub fn seek_to_last(&mut self) {
        self.inner.seek_to_last();
        self.find_prev();
    }

    /// Moves to the last live user key before `user_key` (strictly less).
    pub fn seek_before(&mut self, user_key: &[u8]) {
        // (user_key, MAX_SEQUENCE, value) is the smallest internal key of `user_key`:
        // everything before it belongs to smaller user keys.
        let mut target = Vec::with_capacity(user_key.len() + 8);
        internal_key::lookup_key(&mut target, user_key, MAX_SEQUENCE);
        self.inner.seek_before(&target);
        self.find_prev();
    }

    /// Moves to the previous live user key.
    pub fn prev(&mut self) {
        if self.valid {
            // The merged cursor already sits on the last version of the previous user key.
            self.find_prev();
        }
    }

    /// The current user key.
    pub fn key(&self) -> &[u8] {
        &self.key
    }

    /// The current value (empty when not valid).
    pub fn value(&self) -> &[u8] {
        if self.valid {
            &self.value
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

    /// Takes the error that stopped the view, if any.
    pub fn take_error(&mut self) -> Option<Error> {
        self.inner.take_error()
    }

    /// From the merged cursor's position backward: the versions of one user key, oldest
    /// first; the last visible one decides (a value is shown, a deletion hides the key).
    /// Stops on the first version of an earlier user key once a value is held.
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
                        self.value.clear();
                        self.value.extend_from_slice(self.inner.value());
                        self.sequence = p.sequence;
                        holding = true;
                    }
                }
            }
            self.inner.prev();
        }
        // A value cut short by an error might be shadowed by a version not read: not shown.
        self.valid = holding && self.inner.error().is_none();
    }
}

#[cfg(test)]
mod tests;
