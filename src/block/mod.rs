//! Reads blocks written by [`BlockBuilder`](crate::raw::BlockBuilder) (LevelDB's `table/block.cc`).
//!
//! ```text
//! entry   = shared: varint32 | non_shared: varint32 | value_len: varint32
//!           | key[shared..] | value
//! block   = entry* | restart: fixed32 * num_restarts | num_restarts: fixed32
//! ```
//!
//! A block is validated once, when built: it must hold the restart count and the whole restart
//! array. A block whose restart count is 0 is empty (as LevelDB's `ZeroRestartPointsInBlock`).
//! Entries are decoded with checked access; a bad entry stops the iterator with
//! [`Error::BadEntry`], never a panic.

use std::cmp::Ordering;

use bytes::Bytes;

use crate::error::{BlockKind, Error, Result};
use crate::format::coding;
use crate::format::BlockHandle;
use crate::util::comparator::Comparator;

/// An immutable, validated block. Cloning is cheap (the bytes are shared).
#[derive(Clone, Debug)]
pub struct Block {
    pub(super) data: Bytes,
    /// Offset of the restart array (= end of the entries).
    pub(super) restarts: usize,
    pub(super) num_restarts: u32,
    kind: BlockKind,
    handle: BlockHandle,
}

/// Where one entry's parts are in a block's bytes.
pub(crate) struct RawEntry {
    /// Bytes shared with the previous key.
    pub shared: usize,
    /// The key bytes stored in this entry (all of the key when `shared` is 0).
    pub key: std::ops::Range<usize>,
    /// The value.
    pub value: std::ops::Range<usize>,
}

/// LevelDB's `DecodeEntry` over `entries` (a block's bytes up to its restart array): the
/// header of the entry at `p`, or `None` if it does not fit.
#[inline]
fn decode_entry_in(entries: &[u8], p: usize) -> Option<EntryHeader> {
    let d = entries.get(p..)?;
    if d.len() < 3 {
        return None;
    }
    let (shared, non_shared, value_len, n) = if (d[0] | d[1] | d[2]) < 0x80 {
        (d[0] as u32, d[1] as u32, d[2] as u32, 3)
    } else {
        let (a, n1) = coding::decode_varint32(d)?;
        let (b, n2) = coding::decode_varint32(&d[n1..])?;
        let (c, n3) = coding::decode_varint32(&d[n1 + n2..])?;
        (a, b, c, n1 + n2 + n3)
    };
    let (non_shared, value_len) = (non_shared as usize, value_len as usize);
    if d.len() - n < non_shared.checked_add(value_len)? {
        return None;
    }
    Some(EntryHeader {
        shared: shared as usize,
        non_shared,
        value_len,
        key_at: p + n,
    })
}

/// The value's byte range of the entry at `p` in `block` (a whole block's bytes), if it
/// decodes inside the block.
#[inline]
pub(crate) fn value_range_in(block: &[u8], p: usize) -> Option<std::ops::Range<usize>> {
    let h = decode_entry_in(block, p)?;
    let v = h.key_at + h.non_shared;
    Some(v..v + h.value_len)
}

/// Decoded header of one entry.
#[derive(Clone, Copy)]
pub(super) struct EntryHeader {
    pub(super) shared: usize,
    pub(super) non_shared: usize,
    pub(super) value_len: usize,
    /// Offset of the key delta.
    pub(super) key_at: usize,
}

/// Reads one byte of every 64-byte line of `bytes`: independent loads, which the memory
/// system serves together, where a sequential pass (a checksum, a walk along entries) would
/// wait for one line at a time. A software prefetch without `unsafe`.
#[inline]
pub(crate) fn touch_lines(bytes: &[u8]) {
    let acc = bytes.iter().step_by(64).fold(0u8, |a, &b| a ^ b);
    std::hint::black_box(acc);
}

impl Block {
    /// Validates `data` as a block; `kind` and `handle` name it in errors.
    ///
    /// # Errors
    /// [`Error::BadBlockContents`] if the block is under 4 bytes or its restart array does
    /// not fit.
    pub fn new(data: Bytes, kind: BlockKind, handle: BlockHandle) -> Result<Block> {
        let size = data.len();
        if size < 4 {
            return Err(Error::BadBlockContents {
                kind,
                handle,
                reason: "block shorter than 4 bytes",
            });
        }
        let num_restarts = coding::decode_fixed32(&data[size - 4..]);
        let max_restarts = (size - 4) / 4;
        if num_restarts as usize > max_restarts {
            return Err(Error::BadBlockContents {
                kind,
                handle,
                reason: "restart array does not fit",
            });
        }
        let restarts = size - (1 + num_restarts as usize) * 4;
        // Every writer's block has a restart point at its first entry (an empty one too:
        // restart 0, count 1). Entry bytes that no restart point reaches cannot be read;
        // LevelDB reads such a block as empty, which would drop its entries without a word.
        // (Only the bare 4-byte count reads as an empty block, as in LevelDB's tests.)
        if num_restarts == 0 && restarts > 0 {
            return Err(Error::BadBlockContents {
                kind,
                handle,
                reason: "no restart point for the block's entries",
            });
        }
        Ok(Block {
            data,
            restarts,
            num_restarts,
            kind,
            handle,
        })
    }

    /// A block from bytes that are not part of a file (tests, tools).
    ///
    /// # Errors
    /// As [`Block::new`].
    pub fn from_bytes(data: impl Into<Bytes>) -> Result<Block> {
        Block::new(data.into(), BlockKind::Data, BlockHandle::default())
    }

    /// Size of the uncompressed block in bytes.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    /// Number of restart points.
    pub fn num_restarts(&self) -> u32 {
        self.num_restarts
    }

    /// The handle this block was read from.
    pub fn handle(&self) -> BlockHandle {
        self.handle
    }

    /// Which kind of block this is.
    pub fn kind(&self) -> BlockKind {
        self.kind
    }

    /// The raw block bytes.
    pub fn data(&self) -> &Bytes {
        &self.data
    }

    /// A cursor over the block's entries, ordered by `cmp`.
    pub fn iter<'c>(&self, cmp: &'c dyn Comparator) -> BlockIter<'c> {
        BlockIter::new(self.clone(), cmp)
    }

    #[inline]
    pub(super) fn restart_point(&self, i: u32) -> usize {
        let at = self.restarts + 4 * i as usize;
        // ok: Block::new checked that the whole restart array is inside the block.
        coding::decode_fixed32(&self.data[at..at + 4]) as usize
    }

    /// LevelDB's `DecodeEntry`: the header of the entry at `p`, or `None` if it does not
    /// fit before the restart array.
    #[inline]
    pub(super) fn decode_entry(&self, p: usize) -> Option<EntryHeader> {
        decode_entry_in(&self.data[..self.restarts], p)
    }

    /// The value's byte range of the entry that starts at `p`, if it decodes.
    #[inline]
    pub(crate) fn value_at(&self, p: usize) -> Option<std::ops::Range<usize>> {
        let h = self.decode_entry(p)?;
        let v = h.key_at + h.non_shared;
        Some(v..v + h.value_len)
    }

    /// [`touch_lines`] over the whole block: a forward scan calls it when it enters a block,
    /// whose entries it would otherwise fetch one miss at a time (docs/performance.md).
    #[inline]
    pub(crate) fn touch_lines(&self) {
        self.touch_range(0, self.data.len());
    }

    /// [`touch_lines`](Self::touch_lines) for the bytes `from..to` (clamped to the block).
    #[inline]
    pub(super) fn touch_range(&self, from: usize, to: usize) {
        let to = to.min(self.data.len());
        touch_lines(self.data.get(from..to).unwrap_or_default());
    }

    /// The entries of the block in order, as (shared, key delta range, value range) in
    /// the block's bytes; `None` at the first entry that does not decode.
    pub(crate) fn raw_entries(&self) -> impl Iterator<Item = Option<RawEntry>> + '_ {
        self.raw_entries_from(0)
    }

    /// The offset of the last restart point (0 for an empty block).
    pub(crate) fn last_restart_offset(&self) -> usize {
        match self.num_restarts {
            0 => 0,
            n => self.restart_point(n - 1),
        }
    }

    /// [`raw_entries`](Self::raw_entries) from the entry at offset `start` (a restart point,
    /// for the keys to be whole).
    pub(crate) fn raw_entries_from(
        &self,
        start: usize,
    ) -> impl Iterator<Item = Option<RawEntry>> + '_ {
        let mut p = start;
        let mut done = self.num_restarts == 0;
        std::iter::from_fn(move || {
            if done || p >= self.restarts {
                return None;
            }
            match self.decode_entry(p) {
                Some(h) => {
                    let v = h.key_at + h.non_shared;
                    p = v + h.value_len;
                    Some(Some(RawEntry {
                        shared: h.shared,
                        key: h.key_at..v,
                        value: v..p,
                    }))
                }
                None => {
                    done = true;
                    Some(None)
                }
            }
        })
    }

    pub(crate) fn bad_entry(&self, at: usize) -> Error {
        Error::BadEntry {
            kind: self.kind,
            handle: self.handle,
            entry_offset: at,
        }
    }
}

pub(crate) mod builder;
mod iter;
mod search;
pub(crate) mod stored;

pub use iter::BlockIter;
pub(crate) use search::RestartHints;
