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

use bytes::Bytes;

use super::readahead::Readahead;
use super::reader::TableReader;
use crate::block::{Block, BlockIter};
use crate::error::{Error, Result};
use crate::format::BlockHandle;
use crate::internal_key::{self, ParsedInternalKey};
use crate::io::RandomAccess;
use crate::options::ReadOptions;

/// A cursor over a table's entries, in key order.
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
}

impl<R: RandomAccess> TableReader<R> {
    /// A cursor over the whole table.
    pub fn iter(&self, opts: &ReadOptions) -> TableIter<'_, R> {
        TableIter::new(self, *opts)
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
        }
    }

    /// Whether the cursor is on an entry.
    #[inline]
    pub fn valid(&self) -> bool {
        self.err.is_none() && self.data.as_ref().is_some_and(|d| d.valid())
    }

    /// The current key (as stored: an internal key for internal-key tables).
    #[inline]
    pub fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    /// The current value.
    #[inline]
    pub fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
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

    /// The error that stopped the cursor, if any.
    pub fn status(&self) -> Result<(), &Error> {
        match &self.err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Takes the error that stopped the cursor, if any.
    pub fn take_error(&mut self) -> Option<Error> {
        self.err.take()
    }

    fn set_error(&mut self, e: Error) {
        if self.err.is_none() {
            self.err = Some(e);
        }
        self.data = None;
    }

    /// Loads the data block the index cursor points at (if not already loaded).
    fn init_data_block(&mut self) {
        if let Some(e) = self.index.take_error() {
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
                    if let Some(e) = d.take_error() {
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

    /// Moves to the first entry.
    pub fn seek_to_first(&mut self) {
        self.err = None;
        self.forward = true;
        self.index.seek_to_first();
        self.init_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek_to_first();
        }
        self.skip_empty(true);
    }

    /// Moves to the last entry.
    pub fn seek_to_last(&mut self) {
        self.err = None;
        self.forward = false;
        self.index.seek_to_last();
        self.init_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek_to_last();
        }
        self.skip_empty(false);
    }

    /// Moves to the first entry whose key is `>= target` (a table key).
    pub fn seek(&mut self, target: &[u8]) {
        self.err = None;
        self.forward = false;
        self.index.seek(target);
        self.init_data_block();
        if let Some(d) = self.data.as_mut() {
            d.seek(target);
        }
        self.skip_empty(true);
    }

    /// Moves to the next entry.
    #[inline]
    pub fn next(&mut self) {
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

    /// Moves to the previous entry.
    pub fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        self.forward = false;
        if let Some(d) = self.data.as_mut() {
            d.prev();
        }
        self.skip_empty(false);
    }

    /// Every entry from the first, as a std iterator of owned pairs. An error is yielded
    /// once, then the iterator ends.
    pub fn entries_from_start(mut self) -> Entries<'a, R> {
        self.seek_to_first();
        self.entries()
    }

    /// The remaining entries as a std iterator of owned pairs, starting at the current
    /// position (call a seek first). An error is yielded once, then the iterator ends.
    pub fn entries(self) -> Entries<'a, R> {
        Entries {
            it: self,
            done: false,
        }
    }
}

/// Owned (key, value) pairs from a [`TableIter`]; see [`TableIter::entries`].
pub struct Entries<'a, R> {
    it: TableIter<'a, R>,
    done: bool,
}

impl<R: RandomAccess> Iterator for Entries<'_, R> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.it.take_error() {
            self.done = true;
            return Some(Err(e));
        }
        if !self.it.valid() {
            self.done = true;
            return None;
        }
        let item = (self.it.key().to_vec(), self.it.value().to_vec());
        self.it.next();
        Some(Ok(item))
    }
}
