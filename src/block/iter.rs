//! The cursor over one block's entries (LevelDB's `Block::Iter`): restart-point binary
//! search for seeks, prefix-decoded keys, backward steps through the restart before.

use super::*;
use crate::cursor::Cursor;

/// A cursor over one block ([`Cursor`]); it stops on a bad entry with
/// [`Error::BadEntry`] in its status.
pub struct BlockIter<'c> {
    block: Block,
    cmp: &'c dyn Comparator,
    /// Offset of the current entry; `block.restarts` when not valid.
    current: usize,
    restart_index: u32,
    key: Vec<u8>,
    value_start: usize,
    value_len: usize,
    err: Option<Error>,
}

impl<'c> BlockIter<'c> {
    /// A cursor over `block`, not yet positioned.
    pub fn new(block: Block, cmp: &'c dyn Comparator) -> Self {
        let restarts = block.restarts;
        let num = block.num_restarts;
        BlockIter {
            block,
            cmp,
            current: restarts,
            restart_index: num,
            key: Vec::new(),
            value_start: restarts,
            value_len: 0,
            err: None,
        }
    }

    /// The block this cursor walks.
    pub fn block(&self) -> &Block {
        &self.block
    }

    /// The current value as a shared, zero-copy slice of the block.
    pub fn value_bytes(&self) -> Bytes {
        if self.valid() {
            self.block
                .data
                .slice(self.value_start..self.value_start + self.value_len)
        } else {
            Bytes::new()
        }
    }

    /// Offset of the current entry inside the block.
    pub fn entry_offset(&self) -> usize {
        self.current
    }

    #[inline]
    fn next_entry_offset(&self) -> usize {
        self.value_start + self.value_len
    }

    fn invalidate(&mut self) {
        self.current = self.block.restarts;
        self.restart_index = self.block.num_restarts;
    }

    fn corrupt(&mut self, at: usize) {
        self.err = Some(self.block.bad_entry(at));
        self.invalidate();
        self.key.clear();
        self.value_start = self.block.restarts;
        self.value_len = 0;
    }

    fn seek_to_restart_point(&mut self, index: u32) {
        self.key.clear();
        self.restart_index = index;
        self.value_start = self.block.restart_point(index);
        self.value_len = 0;
    }

    /// Decodes the entry after the current one. False at the end or on corruption.
    #[inline]
    fn parse_next_key(&mut self) -> bool {
        self.current = self.next_entry_offset();
        if self.current >= self.block.restarts {
            if self.current > self.block.restarts {
                // Only a restart point past the entries gets here.
                let at = self.current;
                self.corrupt(at);
            } else {
                self.invalidate();
            }
            return false;
        }
        let p = self.current;
        match self.block.decode_entry(p) {
            Some(h) if self.key.len() >= h.shared => {
                self.key.truncate(h.shared);
                self.key
                    .extend_from_slice(&self.block.data[h.key_at..h.key_at + h.non_shared]);
                self.value_start = h.key_at + h.non_shared;
                self.value_len = h.value_len;
                // `restart_index` is brought up to date by `prev`, the only user: a forward
                // walk does not read the restart array at every entry.
                true
            }
            _ => {
                self.corrupt(p);
                false
            }
        }
    }
}

impl Cursor for BlockIter<'_> {
    #[inline]
    fn valid(&self) -> bool {
        self.current < self.block.restarts && self.err.is_none()
    }

    #[inline]
    fn key(&self) -> &[u8] {
        &self.key
    }

    #[inline]
    fn value(&self) -> &[u8] {
        self.block
            .data
            .get(self.value_start..self.value_start + self.value_len)
            .unwrap_or(&[])
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn seek_to_first(&mut self) {
        self.err = None;
        if self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        self.seek_to_restart_point(0);
        self.parse_next_key();
    }

    fn seek_to_last(&mut self) {
        self.err = None;
        if self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        self.seek_to_restart_point(self.block.num_restarts - 1);
        while self.parse_next_key() && self.next_entry_offset() < self.block.restarts {}
    }

    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        if self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        let last = self.block.num_restarts - 1;
        match self.block.find_restart_in(self.cmp, target, 0, last) {
            Ok(i) => self.seek_to_restart_point(i),
            Err(e) => {
                self.err = Some(e);
                self.invalidate();
                return;
            }
        }
        while self.parse_next_key() {
            if self.cmp.compare(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    #[inline]
    fn next(&mut self) {
        if self.valid() {
            self.parse_next_key();
        }
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        let original = self.current;
        // Forward moves leave `restart_index` at or before the restart of the current entry.
        while self.restart_index + 1 < self.block.num_restarts
            && self.block.restart_point(self.restart_index + 1) < original
        {
            self.restart_index += 1;
        }
        while self.block.restart_point(self.restart_index) >= original {
            if self.restart_index == 0 {
                self.invalidate();
                return;
            }
            self.restart_index -= 1;
        }
        let index = self.restart_index;
        self.seek_to_restart_point(index);
        while self.parse_next_key() && self.next_entry_offset() < original {}
    }
}
