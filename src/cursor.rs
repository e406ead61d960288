//! One cursor contract for every sorted run of entries the crate reads, as LevelDB has one
//! `Iterator`: a block's entries (`raw::BlockIter`), a table's (`table::TableIter`), a
//! merge of cursors and a database's live view at a snapshot (`db::engine`), and the walks
//! under salvage (`db::salvage`). [`Entries`] turns any of them into a std [`Iterator`] of
//! `Result` items, bounded or not.
//!
//! ```text
//! position: seek_to_first | seek_to_last | seek(k): first key >= k | seek_before(k): last key < k
//! step:     next | prev                       (only when valid)
//! read:     key, value                        (only when valid)
//! end:      !valid() and status() is Ok       the entries ran out
//! stopped:  !valid() and status() is Err      an error ended the walk: never a silent end
//! ```
//!
//! A seek clears an earlier error (the cursor tries again); an error never skips entries:
//! a cursor that cannot read a block stops on it.

use std::cmp::Ordering;
use std::ops::Bound;
use std::sync::Arc;

use crate::error::Result;
use crate::util::comparator::Comparator;

/// A cursor over sorted entries (LevelDB's `Iterator`).
///
/// Moves (`next`, `prev`) are only made on a valid cursor; `key` and `value` are only
/// meaningful on one (they are empty otherwise). A cursor that stops on an error is not
/// valid and says why in [`status`](Self::status) until it is positioned again.
pub trait Cursor {
    /// Whether the cursor is on an entry.
    fn valid(&self) -> bool;
    /// Moves to the first entry.
    fn seek_to_first(&mut self);
    /// Moves to the last entry.
    fn seek_to_last(&mut self);
    /// Moves to the first entry whose key is `>= target`.
    fn seek(&mut self, target: &[u8]);
    /// Moves to the last entry whose key is `< target` (LevelDB's `Seek` then `Prev`, or
    /// `SeekToLast` when the seek runs off the end).
    fn seek_before(&mut self, target: &[u8]) {
        self.seek(target);
        if self.valid() {
            self.prev();
        } else if self.status().is_ok() {
            self.seek_to_last();
        }
    }
    /// Moves to the next entry.
    fn next(&mut self);
    /// Moves to the previous entry.
    fn prev(&mut self);
    /// The current key.
    fn key(&self) -> &[u8];
    /// The current value.
    fn value(&self) -> &[u8];
    /// `Err` with the error that stopped the cursor, `Ok` otherwise.
    ///
    /// # Errors
    /// The error that stopped the cursor (a cursor that cannot go backward says so here
    /// when it is moved backward).
    fn status(&self) -> Result<()>;
}

impl<C: Cursor + ?Sized> Cursor for Box<C> {
    #[inline]
    fn valid(&self) -> bool {
        (**self).valid()
    }
    fn seek_to_first(&mut self) {
        (**self).seek_to_first()
    }
    fn seek_to_last(&mut self) {
        (**self).seek_to_last()
    }
    fn seek(&mut self, target: &[u8]) {
        (**self).seek(target)
    }
    fn seek_before(&mut self, target: &[u8]) {
        (**self).seek_before(target)
    }
    #[inline]
    fn next(&mut self) {
        (**self).next()
    }
    fn prev(&mut self) {
        (**self).prev()
    }
    #[inline]
    fn key(&self) -> &[u8] {
        (**self).key()
    }
    #[inline]
    fn value(&self) -> &[u8] {
        (**self).value()
    }
    fn status(&self) -> Result<()> {
        (**self).status()
    }
}

/// Key bounds in a cursor's order.
struct Range {
    cmp: Arc<dyn Comparator>,
    start: Bound<Vec<u8>>,
    end: Bound<Vec<u8>>,
}

/// A cursor's entries as a std iterator of owned `(key, value)` pairs, forward: every
/// entry from where it starts (the first entry, the cursor's position, or a range's start)
/// to the end of the cursor or of the range. An error is yielded once, as the last item:
/// entries are never cut short silently.
///
/// The first call to `next` positions the cursor (so building one reads nothing).
pub struct Entries<C> {
    cursor: C,
    /// The first call positions the cursor at the first entry (or the range's start).
    from_start: bool,
    range: Option<Range>,
    done: bool,
}

impl<C: Cursor> Entries<C> {
    /// Every entry of `cursor`, from its first.
    pub fn from_first(cursor: C) -> Self {
        Entries {
            cursor,
            from_start: true,
            range: None,
            done: false,
        }
    }

    /// The entries of `cursor` from where it is positioned (nothing when it is not valid,
    /// or the error that stopped it).
    pub fn from_current(cursor: C) -> Self {
        Entries {
            cursor,
            from_start: false,
            range: None,
            done: false,
        }
    }

    /// The entries of `cursor` between `start` and `end`, keys in `cmp`'s order (the
    /// cursor's own).
    pub fn in_range(
        cursor: C,
        cmp: Arc<dyn Comparator>,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
    ) -> Self {
        Entries {
            cursor,
            from_start: true,
            range: Some(Range {
                cmp,
                start: start.map(<[u8]>::to_vec),
                end: end.map(<[u8]>::to_vec),
            }),
            done: false,
        }
    }

    /// The cursor, where the entries stopped.
    pub fn into_cursor(self) -> C {
        self.cursor
    }

    /// Positions the cursor at the first entry of the range (or of the cursor).
    fn start(&mut self) {
        let c = &mut self.cursor;
        match &self.range {
            None => c.seek_to_first(),
            Some(r) => match &r.start {
                Bound::Unbounded => c.seek_to_first(),
                Bound::Included(k) => c.seek(k),
                Bound::Excluded(k) => {
                    c.seek(k);
                    while c.valid() && r.cmp.compare(c.key(), k) != Ordering::Greater {
                        c.next();
                    }
                }
            },
        }
    }

    /// Whether the cursor's key is past the range's end.
    fn past_end(&self) -> bool {
        let Some(r) = &self.range else {
            return false;
        };
        let key = self.cursor.key();
        match &r.end {
            Bound::Unbounded => false,
            Bound::Included(k) => r.cmp.compare(key, k) == Ordering::Greater,
            Bound::Excluded(k) => r.cmp.compare(key, k) != Ordering::Less,
        }
    }
}

impl<C: Cursor> Iterator for Entries<C> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.from_start {
            self.from_start = false;
            self.start();
        }
        if let Err(e) = self.cursor.status() {
            self.done = true;
            return Some(Err(e));
        }
        if !self.cursor.valid() || self.past_end() {
            self.done = true;
            return None;
        }
        let item = (self.cursor.key().to_vec(), self.cursor.value().to_vec());
        self.cursor.next();
        Some(Ok(item))
    }
}
