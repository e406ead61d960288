//! A cursor over a whole table: index cursor -> data-block cursor (LevelDB's
//! `table/two_level_iterator.cc`).
//!
//! ```text
//! index:  [sep0 -> block0] [sep1 -> block1] ... [sepN -> blockN]
//!            |                 |
//!         block0 entries    block1 entries ...
//! ```
//!
//! Empty data blocks are skipped, as LevelDB does. A block that cannot be read or decoded
//! stops the cursor with an error; it is never skipped silently.
//!
//! As a std iterator (`for entry in table.iter(&read)`), a cursor that was not positioned
//! starts at the first entry; [`TableReader::range`] gives the entries between two keys.

use std::ops::{Bound, RangeBounds};

use bytes::Bytes;

use super::readahead::Readahead;
use super::reader::TableReader;
use crate::block::{Block, BlockIter};
use crate::cursor::{Cursor, Entries};
use crate::error::{Error, Result};
use crate::format::BlockHandle;
use crate::internal_key::{self, ParsedInternalKey};
use crate::io::RandomAccess;
use crate::options::ReadOptions;

/// A cursor over a table's entries, in key order ([`Cursor`]), and through
/// [`IntoIterator`] a std iterator of owned `(key, value)` pairs ([`Entries`]).
pub struct TableIter<'a, R> {
    table: &'a TableReader<R>,
    opts: ReadOptions,
    index: BlockIter<'a>,
    data: Option<BlockIter<'a>>,
    data_handle: Option<BlockHandle>,
    err: Option<Error>,
    /// Window of file bytes for forward scans (used once the cursor moves forward across
    /// a block boundary).
    readahead: Readahead,
    forward: bool,
    /// A seek was made (as a std iterator, an unpositioned cursor starts at the first entry).
    positioned: bool,
}

impl<R: RandomAccess> TableReader<R> {
    /// A cursor over the whole table, not positioned (as a std iterator it starts at the
    /// first entry).
    pub fn iter(&self, opts: &ReadOptions) -> TableIter<'_, R> {
        TableIter::new(self, *opts)
    }

    /// The entries whose keys lie in `range`, in order, as a std iterator (ending with the
    /// error that stops it, if one does). Bounds are user keys: in a database's table (keys
    /// stored as internal keys) every version of a user key in the range is yielded, as
    /// stored.
    ///
    /// ```
    /// # use leveldb_table::{Options, OpenOptions, ReadOptions, TableBuilder, TableReader};
    /// # fn main() -> leveldb_table::Result<()> {
    /// # let mut b = TableBuilder::new(Vec::new(), &Options::default())?;
    /// # for k in [&b"a"[..], b"b", b"c", b"d"] { b.add(k, b"v")?; }
    /// # let table = TableReader::open(b.finish()?.0, OpenOptions::default())?;
    /// let keys: Vec<Vec<u8>> = table
    ///     .range(b"b".as_slice()..b"d".as_slice(), &ReadOptions::default())
    ///     .map(|e| e.map(|(k, _)| k))
    ///     .collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [b"b".to_vec(), b"c".to_vec()]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn range<K: AsRef<[u8]>>(
        &self,
        range: impl RangeBounds<K>,
        opts: &ReadOptions,
    ) -> Entries<TableIter<'_, R>> {
        // A user key's versions run from (key, newest) to (key, sequence 0, deletion).
        let internal = self.is_internal();
        let key = |k: &[u8], first: bool| -> Vec<u8> {
            if !internal {
                return k.to_vec();
            }
            let mut t = Vec::with_capacity(k.len() + 8);
            let (sequence, kind) = if first {
                (crate::format::MAX_SEQUENCE, internal_key::ValueType::Value)
            } else {
                (0, internal_key::ValueType::Deletion)
            };
            internal_key::append_internal_key(&mut t, k, sequence, kind);
            t
        };
        let start = match range.start_bound() {
            Bound::Included(k) => Bound::Included(key(k.as_ref(), true)),
            Bound::Excluded(k) => Bound::Excluded(key(k.as_ref(), false)),
            Bound::Unbounded => Bound::Unbounded,
        };
        let end = match range.end_bound() {
            Bound::Included(k) => Bound::Included(key(k.as_ref(), false)),
            Bound::Excluded(k) => Bound::Excluded(key(k.as_ref(), true)),
            Bound::Unbounded => Bound::Unbounded,
        };
        Entries::in_range(
            self.iter(opts),
            self.comparator.clone(),
            start.as_ref().map(Vec::as_slice),
            end.as_ref().map(Vec::as_slice),
        )
    }
}

impl<'a, R: RandomAccess> TableIter<'a, R> {
    pub(crate) fn new(table: &'a TableReader<R>, opts: ReadOptions) -> Self {
        TableIter {
            table,
            opts,
            index: table.index_block().iter(table.comparator()),
            data: None,
            data_handle: None,
            err: None,
            readahead: Readahead::default(),
            forward: false,
            positioned: false,
        }
    }

    /// The current value as a shared, zero-copy slice of its block.
    pub fn value_bytes(&self) -> Bytes {
        self.data
            .as_ref()
            .map_or_else(Bytes::new, |d| d.value_bytes())
    }

    /// The current key split into user key, sequence and type (internal-key tables).
    pub fn parsed_key(&self) -> Option<ParsedInternalKey<'_>> {
        internal_key::parse_internal_key(self.key())
    }

    /// Handle of the data block the cursor is in.
    pub fn block_handle(&self) -> Option<BlockHandle> {
        self.data_handle
    }

    /// Offset of the current entry in its decompressed data block.
    pub fn entry_offset(&self) -> Option<usize> {
        self.data
            .as_ref()
            .filter(|d| d.valid())
            .map(|d| d.entry_offset())
    }

    fn set_error(&mut self, e: Error) {
        if self.err.is_none() {
            self.err = Some(e);
        }
        self.data = None;
    }

    /// Loads the data block the index cursor points at (if not already loaded).
    fn init_data_block(&mut self) {
        if let Err(e) = self.index.status() {
            self.set_error(e);
            return;
        }
        if !self.index.valid() {
            self.data = None;
            self.data_handle = None;
            return;
        }
        let mut v = self.index.value();
        let Some(handle) = BlockHandle::decode_from(&mut v) else {
            let e = Error::BadIndexValue {
                kind: crate::error::BlockKind::Index,
                handle: self.table.footer().index,
            };
            self.set_error(e);
            return;
        };
        if self.data.is_some() && self.data_handle == Some(handle) {
            return;
        }
        let ra = if self.forward {
            Some(&mut self.readahead)
        } else {
            None
        };
        match self.table.read_data_block_ra(handle, self.opts, ra) {
            Ok(block) => self.set_data_block(block, handle),
            Err(e) => self.set_error(e),
        }
    }

    fn set_data_block(&mut self, block: Block, handle: BlockHandle) {
        if self.forward {
            block.touch_lines();
        }
        self.data = Some(BlockIter::new(block, self.table.comparator()));
        self.data_handle = Some(handle);
    }

    /// After a data-cursor move: picks up its error, or moves on past empty blocks, to the
    /// next block's first entry (`forward`) or the previous block's last.
    #[inline]
    fn skip_empty(&mut self, forward: bool) {
        loop {
            if self.err.is_some() {
                return;
            }
            match self.data.as_mut() {
                Some(d) if d.valid() => return,
                Some(d) => {
                    if let Err(e) = d.status() {
                        self.set_error(e);
                        return;
                    }
                }
                None => {}
            }
            if !self.index.valid() {
                self.data = None;
                return;
            }
            if forward {
                self.index.next();
            } else {
                self.index.prev();
            }
            self.init_data_block();
            if let Some(d) = self.data.as_mut() {
                if forward {
                    d.seek_to_first();
                } else {
                    d.seek_to_last();
                }
            }
        }
    }
}

impl<R: RandomAccess> Cursor for TableIter<'_, R> {
    #[inline]
    fn valid(&self) -> bool {
        self.err.is_none() && self.data.as_ref().is_some_and(|d| d.valid())
    }

    /// The current key (as stored: an internal key for internal-key tables).
    #[inline]
    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    #[inline]
    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn seek_to_first(&mut self) {
        self.err = None;
        self.positioned = true;
        self.forward = true;
        self.index.seek_to_first();
        self.init_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek_to_first();
        }
        self.skip_empty(true);
    }

    fn seek_to_last(&mut self) {
        self.err = None;
        self.positioned = true;
        self.forward = false;
        self.index.seek_to_last();
        self.init_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek_to_last();
        }
        self.skip_empty(false);
    }

    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        self.positioned = true;
        self.forward = false;
        self.index.seek(target);
        self.init_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek(target);
        }
        self.skip_empty(true);
    }

    #[inline]
    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        self.forward = true;
        if let Some(d) = self.data.as_mut() {
            d.next();
            // The common case, inline: still inside the block.
            if d.valid() && self.err.is_none() {
                return;
            }
        }
        self.skip_empty(true);
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        self.forward = false;
        if let Some(d) = self.data.as_mut() {
            d.prev();
        }
        self.skip_empty(false);
    }
}

/// Every entry from the first (or, when the cursor was positioned, from there on) as owned
/// `(key, value)` pairs; an error that stops the cursor is the last item.
impl<'a, R: RandomAccess> IntoIterator for TableIter<'a, R> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;
    type IntoIter = Entries<TableIter<'a, R>>;

    fn into_iter(self) -> Self::IntoIter {
        if self.positioned {
            Entries::from_current(self)
        } else {
            Entries::from_first(self)
        }
    }
}
