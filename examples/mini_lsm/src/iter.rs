//! Ordered iteration over a snapshot: a merging cursor over the memtable, the immutable
//! memtable, every level-0 table and one concatenating cursor per deeper level, seen through
//! the crate's snapshot view (the newest version of each key with sequence <= the
//! snapshot, deletions hidden), cut to a key range.
//!
//! ```text
//! DbIter owns:  Sources { memtables (Arc), Version (Arc: its tables stay open) }
//!         and:  ViewCursor borrowing them (a self-referential pair, built by self_cell)
//! ```

use std::sync::Arc;

use leveldb_table::{db::engine::Cursor, db::engine::LevelCursor, db::engine::TableCursor};
use leveldb_table::{db::engine::MergingCursor, db::engine::ViewCursor};
use leveldb_table::{Error, ReadOptions, Result};

use super::memtable::{MemCursor, MemTable};
use super::version::{icmp, Version};

/// What an iterator reads: kept alive as long as it is.
pub struct Sources {
    /// The memtable (still being written: the snapshot hides newer writes).
    pub mem: Arc<MemTable>,
    /// The memtable being flushed, if any.
    pub imm: Option<Arc<MemTable>>,
    /// The tables.
    pub version: Arc<Version>,
    /// How table blocks are read.
    pub read: ReadOptions,
}

type View<'a> = ViewCursor<'a>;

self_cell::self_cell!(
    struct Cell {
        owner: Sources,
        #[not_covariant]
        dependent: View,
    }
);

/// A cursor over live keys in key order (LevelDB's `DB::NewIterator`), bounded to a range.
///
/// Use it as a cursor (`valid`, `key`, `value`, `advance`, `seek`), without a copy per
/// entry, or as an `Iterator` of owned `(key, value)` pairs.
pub struct DbIter {
    cell: Cell,
    to: Option<Vec<u8>>,
}

impl DbIter {
    pub(super) fn new(
        sources: Sources,
        snapshot: u64,
        from: Option<&[u8]>,
        to: Option<&[u8]>,
    ) -> Result<DbIter> {
        let cell = Cell::new(sources, |s| {
            let mut children: Vec<Box<dyn Cursor + '_>> =
                vec![Box::new(MemCursor::new(s.mem.clone()))];
            if let Some(imm) = &s.imm {
                children.push(Box::new(MemCursor::new(imm.clone())));
            }
            for t in &s.version.levels[0] {
                children.push(Box::new(TableCursor::new(&t.reader, s.read)));
            }
            for metas in s.version.metas.iter().skip(1) {
                if !metas.is_empty() {
                    let v: &Version = &s.version;
                    children.push(Box::new(LevelCursor::new(metas, v, icmp(), s.read)));
                }
            }
            ViewCursor::new(MergingCursor::new(children, icmp()), snapshot)
        });
        let mut it = DbIter {
            cell,
            to: to.map(<[u8]>::to_vec),
        };
        match from {
            Some(k) => it.seek(k),
            None => it.cell.with_dependent_mut(|_, v| v.seek_to_first()),
        }
        it.status()?;
        Ok(it)
    }

    /// Whether the cursor is on a key inside the range.
    pub fn valid(&self) -> bool {
        self.cell
            .with_dependent(|_, v| v.valid() && self.to.as_deref().is_none_or(|to| v.key() < to))
    }

    /// The current key (only when valid).
    pub fn key(&self) -> &[u8] {
        self.cell.with_dependent(|_, v| v.key())
    }

    /// The current value (only when valid).
    pub fn value(&self) -> &[u8] {
        self.cell.with_dependent(|_, v| v.value())
    }

    /// Moves to the next key.
    pub fn advance(&mut self) {
        self.cell.with_dependent_mut(|_, v| v.next());
    }

    /// Moves to the first key >= `key`.
    pub fn seek(&mut self, key: &[u8]) {
        self.cell.with_dependent_mut(|_, v| v.seek(key));
    }

    /// The error that stopped the cursor, if any (a damaged or unreadable table).
    pub fn status(&self) -> Result<()> {
        self.cell.with_dependent(|_, v| match v.error() {
            Some(e) => Err(Error::InvalidArgument(format!("iteration stopped: {e}"))),
            None => Ok(()),
        })
    }
}

impl Iterator for DbIter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if !self.valid() {
            return self.status().err().map(Err);
        }
        let kv = (self.key().to_vec(), self.value().to_vec());
        self.advance();
        Some(Ok(kv))
    }
}
