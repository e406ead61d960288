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

use crate::coding;
use crate::comparator::Comparator;
use crate::error::{BlockKind, Error, Result};
use crate::format::BlockHandle;

/// An immutable, validated block. Cloning is cheap (the bytes are shared).
#[derive(Clone, Debug)]
pub struct Block {
    data: Bytes,
    /// Offset of the restart array (= end of the entries).
    restarts: usize,
    num_restarts: u32,
    kind: BlockKind,
    handle: BlockHandle,
}

/// Restart points a [`RestartHints`] holds: a 4 KiB block of 100-byte entries at LevelDB's
/// restart interval 16 has 3. Blocks with more get this many, evenly sampled.
pub(crate) const RESTART_HINTS: usize = 4;

/// A block's restart points and a monotone `u64` prefix of each restart key (the table's
/// decoded-index prefix), kept beside a cached block (56 bytes): a point lookup picks its
/// restart interval from them without loading the block's restart array and restart keys,
/// two dependent cache misses of every warm lookup (docs/performance.md). A block with more
/// restart points than the hints hold gets a sample of them, which narrows the restart
/// search to the points between two samples.
#[derive(Clone, Debug)]
pub(crate) struct RestartHints {
    n: u8,
    /// `at` holds restart indices of sampled points instead of entry offsets.
    sampled: bool,
    prefixes: [u64; RESTART_HINTS],
    /// Entry offset of each restart point, then the offset of the restart array; or, when
    /// `sampled`, the restart index of each sampled point, then the number of points.
    at: [u32; RESTART_HINTS + 1],
}

/// Where a point lookup's search of a block starts ([`Block::seek`]).
enum Interval {
    /// Walk the entries from this restart point's offset; the interval ends at the second.
    Entries(usize, usize),
    /// Binary-search the restart points `lo..=hi`.
    Restarts(u32, u32),
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
struct EntryHeader {
    shared: usize,
    non_shared: usize,
    value_len: usize,
    /// Offset of the key delta.
    key_at: usize,
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
    fn restart_point(&self, i: u32) -> usize {
        let at = self.restarts + 4 * i as usize;
        // ok: Block::new checked that the whole restart array is inside the block.
        coding::decode_fixed32(&self.data[at..at + 4]) as usize
    }

    /// LevelDB's `DecodeEntry`: the header of the entry at `p`, or `None` if it does not
    /// fit before the restart array.
    #[inline]
    fn decode_entry(&self, p: usize) -> Option<EntryHeader> {
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
    fn touch_range(&self, from: usize, to: usize) {
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

    /// Finds the first entry whose key is `>= target`, rebuilding its key into `key`.
    /// Returns the value's byte range, or `None` if every key is smaller.
    /// The search of a point lookup: no iterator, no allocation beyond `key`'s growth.
    ///
    /// # Errors
    /// [`Error::BadEntry`] if an entry on the way does not decode.
    pub fn seek_value_range(
        &self,
        cmp: &dyn Comparator,
        target: &[u8],
        key: &mut Vec<u8>,
    ) -> Result<Option<std::ops::Range<usize>>> {
        self.seek(cmp, target, None, key)
    }

    /// [`seek_value_range`](Self::seek_value_range), with the restart interval chosen from
    /// `hints` when given: the block's [`RestartHints`] and `target`'s prefix by the same
    /// prefix map that built them. With hints, the block's restart array and restart keys
    /// are loaded only for restart keys whose prefix equals the target's. Starting at an
    /// earlier restart point than needed is always correct (the walk goes on past its
    /// interval), so the hints only have to be right about never starting too late: a
    /// restart point is skipped only when its key is known to be below the target.
    ///
    /// # Errors
    /// As [`seek_value_range`](Self::seek_value_range).
    #[inline]
    pub(crate) fn seek(
        &self,
        cmp: &dyn Comparator,
        target: &[u8],
        hints: Option<(&RestartHints, u64)>,
        key: &mut Vec<u8>,
    ) -> Result<Option<std::ops::Range<usize>>> {
        if self.num_restarts == 0 {
            return Ok(None);
        }
        let (lo, hi) = match hints {
            None => (0, self.num_restarts - 1),
            Some((hints, tp)) => match self.hinted_interval(cmp, target, tp, hints)? {
                Interval::Entries(p, end) => return self.walk_to(cmp, target, p, end, key),
                Interval::Restarts(lo, hi) => (lo, hi),
            },
        };
        let r = self.find_restart_in(cmp, target, lo, hi)?;
        // The walk below stays within this restart interval unless the target is past it:
        // load its lines together rather than one entry (one miss) at a time.
        let end = if r + 1 < self.num_restarts {
            self.restart_point(r + 1)
        } else {
            self.restarts
        };
        self.walk_to(cmp, target, self.restart_point(r), end, key)
    }

    /// Where `hints` place `target` (prefix `tp`): the entries of one restart interval, or
    /// (for sampled hints) the restart points between two samples.
    fn hinted_interval(
        &self,
        cmp: &dyn Comparator,
        target: &[u8],
        tp: u64,
        hints: &RestartHints,
    ) -> Result<Interval> {
        let n = usize::from(hints.n);
        // Prefixes are a monotone map of keys: a smaller prefix means a smaller key.
        let below = hints.prefixes[..n].iter().take_while(|&&p| p < tp).count();
        let mut start = below.saturating_sub(1);
        // Equal prefixes decide nothing: compare those restart keys themselves.
        for i in below..n {
            if hints.prefixes[i] != tp {
                break;
            }
            let off = if hints.sampled {
                self.restart_point(hints.at[i])
            } else {
                hints.at[i] as usize
            };
            let h = match self.decode_entry(off) {
                Some(h) if h.shared == 0 => h,
                _ => return Err(self.bad_entry(off)),
            };
            if cmp.compare(&self.data[h.key_at..h.key_at + h.non_shared], target) != Ordering::Less
            {
                break;
            }
            start = i;
        }
        let (lo, hi) = (hints.at[start], hints.at[start + 1]);
        Ok(if hints.sampled {
            // The target's restart point lies between this sample and the next.
            Interval::Restarts(lo, hi.saturating_sub(1).max(lo))
        } else {
            Interval::Entries(lo as usize, hi as usize)
        })
    }

    /// Up to [`RESTART_HINTS`] restart points (all of them, or an even sample) with `prefix`
    /// of their keys; `None` if a restart entry does not decode (the lookup then reports it)
    /// or the block is too large to describe.
    pub(crate) fn restart_hints(&self, prefix: impl Fn(&[u8]) -> u64) -> Option<RestartHints> {
        let total = self.num_restarts as usize;
        if total == 0 || u32::try_from(self.restarts).is_err() {
            return None;
        }
        let sampled = total > RESTART_HINTS;
        let n = total.min(RESTART_HINTS);
        let mut hints = RestartHints {
            n: n as u8,
            sampled,
            prefixes: [0; RESTART_HINTS],
            at: [0; RESTART_HINTS + 1],
        };
        for i in 0..n {
            // ok: i * total / n < total <= u32::MAX (num_restarts is a u32).
            let r = (i * total / n) as u32;
            let off = self.restart_point(r);
            let h = self.decode_entry(off).filter(|h| h.shared == 0)?;
            hints.prefixes[i] = prefix(&self.data[h.key_at..h.key_at + h.non_shared]);
            // ok: off < restarts, checked above to fit in u32.
            hints.at[i] = if sampled { r } else { off as u32 };
        }
        hints.at[n] = if sampled {
            self.num_restarts
        } else {
            self.restarts as u32
        };
        // Offsets (or indices) must rise for the bounds to mean anything.
        hints.at[..=n]
            .windows(2)
            .all(|w| w[0] <= w[1])
            .then_some(hints)
    }

    /// The walk of a point lookup: entries from `p` (a restart point, whose key is below
    /// `target` unless it is the block's first) on, until one at or after `target`; `end`
    /// is where the restart interval ends (its lines are loaded together).
    fn walk_to(
        &self,
        cmp: &dyn Comparator,
        target: &[u8],
        mut p: usize,
        end: usize,
        key: &mut Vec<u8>,
    ) -> Result<Option<std::ops::Range<usize>>> {
        key.clear();
        let bytewise = cmp.is_bytewise();
        // For bytewise order: length of the common prefix of the current key and the
        // target, while the current key is smaller than the target.
        let mut m = 0usize;
        self.touch_range(p, end);
        while p < self.restarts {
            let h = self.decode_entry(p).ok_or_else(|| self.bad_entry(p))?;
            if key.len() < h.shared {
                return Err(self.bad_entry(p));
            }
            key.truncate(h.shared);
            key.extend_from_slice(&self.data[h.key_at..h.key_at + h.non_shared]);
            let v = h.key_at + h.non_shared;
            let at_or_after = if !bytewise {
                cmp.compare(key, target) != Ordering::Less
            } else if h.shared > m {
                // The key keeps the previous key's byte at m, which is below the target's.
                false
            } else {
                // Its first `shared` bytes are the previous key's, equal to the target's
                // up to m: compare from there on.
                let from = h.shared;
                let l = from + coding::common_prefix_len(&key[from..], &target[from..]);
                m = l;
                match (key.get(l), target.get(l)) {
                    (None, _) if key.len() == target.len() => true,
                    (None, _) => false,
                    (Some(_), None) => true,
                    (Some(a), Some(b)) => a > b,
                }
            };
            if at_or_after {
                return Ok(Some(v..v + h.value_len));
            }
            p = v + h.value_len;
        }
        Ok(None)
    }

    /// Binary search over the restart points `left..=right` (`right < num_restarts`) for the
    /// last one whose key is `< target`, or `left` if none is. Restart entries must have
    /// `shared == 0`.
    fn find_restart_in(
        &self,
        cmp: &dyn Comparator,
        target: &[u8],
        mut left: u32,
        mut right: u32,
    ) -> Result<u32> {
        if right - left <= 8 {
            // Few restart points (a 4 KiB block of 100-byte entries has 3): load the lines
            // of all their keys at once rather than one miss per halving step.
            let acc = (left + 1..=right)
                .map(|i| self.data.get(self.restart_point(i)).copied().unwrap_or(0))
                .fold(0u8, |a, b| a ^ b);
            std::hint::black_box(acc);
        }
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            let off = self.restart_point(mid);
            let h = match self.decode_entry(off) {
                Some(h) if h.shared == 0 => h,
                _ => return Err(self.bad_entry(off)),
            };
            let mid_key = &self.data[h.key_at..h.key_at + h.non_shared];
            if cmp.compare(mid_key, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        Ok(left)
    }
}

mod iter;
mod outline;
pub use iter::BlockIter;
pub(crate) use outline::{BlockOutline, OutlineError};

// The size the documentation (and docs/performance.md) gives for the hints.
const _: () = assert!(std::mem::size_of::<Option<RestartHints>>() == 56);
