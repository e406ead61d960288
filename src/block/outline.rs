//! A block's outline: where its entries lie, kept in memory after the block itself is gone,
//! so that a later point lookup can decode a compressed block only up to its key.
//!
//! ```text
//! uncompressed block: | entry | entry | ... | entry | restart array | n (u32) |
//!                     ^at[0]  ^at[1] (sampled restart points)       ^at[n]: end of entries
//! outline: len (the block's uncompressed length), up to RESTART_HINTS restart points as
//! (monotone u64 prefix of the restart key, entry offset), and the end of the entries
//! ```
//!
//! Without the outline a reader must decode the whole block to find its restart array at
//! the end. With it, a lookup picks the restart point below its key by prefix, decodes the
//! snappy stream as far as the entries it walks ([`SnappyPrefix`]) and stops at the first key
//! `>=` its target, never past the end of the entries (the outline says where it is).
//! Outlines are built from a whole block read earlier and trusted as the cache trusts its
//! blocks: a table's file does not change while it is open. The stated length must still
//! match, or the caller reads the block whole.

use std::cmp::Ordering;
use std::ops::Range;

use super::{Block, RestartHints, RESTART_HINTS};
use crate::compress::snappy_prefix::SnappyPrefix;
use crate::compress::DecompressError;
use crate::format::coding;
use crate::util::comparator::Comparator;

/// Where a block's entries lie (see the module docs); 64 bytes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockOutline {
    /// Uncompressed length of the block.
    len: u32,
    n: u8,
    prefixes: [u64; RESTART_HINTS],
    /// Entry offsets of the restart points, then the end of the entries.
    at: [u32; RESTART_HINTS + 1],
}

/// Why a lookup through an outline stopped.
#[derive(Debug)]
pub(crate) enum OutlineError {
    /// The snappy stream is corrupt.
    Decompress(DecompressError),
    /// The entry at this offset does not decode inside the entries.
    BadEntry(usize),
    /// The block states another length than the outline was made for: read it whole.
    Stale,
}

impl From<DecompressError> for OutlineError {
    fn from(e: DecompressError) -> OutlineError {
        OutlineError::Decompress(e)
    }
}

impl Block {
    /// The outline of this block with `prefix` of its restart keys: up to
    /// [`RESTART_HINTS`] restart points (all, or an even sample). `None` if a restart entry
    /// does not decode or the block is too large to outline.
    pub(crate) fn outline(&self, prefix: impl Fn(&[u8]) -> u64) -> Option<BlockOutline> {
        let total = self.num_restarts as usize;
        let len = u32::try_from(self.data.len()).ok()?;
        if total == 0 {
            return None;
        }
        let n = total.min(RESTART_HINTS);
        let mut o = BlockOutline {
            len,
            n: n as u8, // ok: n <= RESTART_HINTS
            prefixes: [0; RESTART_HINTS],
            at: [0; RESTART_HINTS + 1],
        };
        for i in 0..n {
            // ok: i * total / n < total, a u32.
            let off = self.restart_point((i * total / n) as u32);
            let h = self.decode_entry(off).filter(|h| h.shared == 0)?;
            o.prefixes[i] = prefix(&self.data[h.key_at..h.key_at + h.non_shared]);
            o.at[i] = off as u32; // ok: off < restarts < len, a u32
        }
        o.at[n] = self.restarts as u32; // ok: as above
        o.is_sound().then_some(o)
    }
}

impl RestartHints {
    /// The outline these hints (made for `block`) already hold: when they hold every
    /// restart point by offset (not a sample by index).
    pub(crate) fn outline(&self, block: &Block) -> Option<BlockOutline> {
        if self.sampled {
            return None;
        }
        let o = BlockOutline {
            len: u32::try_from(block.data.len()).ok()?,
            n: self.n,
            prefixes: self.prefixes,
            at: self.at,
        };
        o.is_sound().then_some(o)
    }
}

impl BlockOutline {
    /// Offsets rise, the first point is the first entry, and the entries end before the
    /// restart array's count.
    fn is_sound(&self) -> bool {
        let n = usize::from(self.n);
        n > 0
            && n <= RESTART_HINTS
            && self.at[0] == 0
            && self.at[..=n].windows(2).all(|w| w[0] < w[1])
            && u64::from(self.at[n]) + 4 <= u64::from(self.len)
    }

    /// The uncompressed length of the block.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// Finds the first entry whose key is `>= target` (whose monotone prefix is `tp`) in
    /// the block `dec` decodes into `out`, decoding no further than that entry; rebuilds its
    /// key into `key` and returns its value's range in `out`, or `None` if every key is
    /// smaller.
    ///
    /// # Errors
    /// A corrupt stream, an entry that does not decode, or a block of another length.
    pub(crate) fn seek(
        &self,
        dec: &mut SnappyPrefix<'_>,
        out: &mut [u8],
        cmp: &dyn Comparator,
        target: &[u8],
        tp: u64,
        key: &mut Vec<u8>,
    ) -> Result<Option<Range<usize>>, OutlineError> {
        if dec.stated_len() != self.len as usize || !self.is_sound() {
            return Err(OutlineError::Stale);
        }
        let n = usize::from(self.n);
        let end = self.at[n] as usize;
        // Prefixes order keys: a smaller prefix means a smaller key.
        let below = self.prefixes[..n].iter().take_while(|&&p| p < tp).count();
        let mut start = below.saturating_sub(1);
        // Equal prefixes decide nothing: compare those restart keys themselves.
        for i in below..n {
            if self.prefixes[i] != tp {
                break;
            }
            let e = entry(dec, out, self.at[i] as usize, end)?;
            if cmp.compare(&out[e.key], target) != Ordering::Less {
                break;
            }
            start = i;
        }
        key.clear();
        let mut p = self.at[start] as usize;
        while p < end {
            let e = entry(dec, out, p, end)?;
            if key.len() < e.shared {
                return Err(OutlineError::BadEntry(p));
            }
            key.truncate(e.shared);
            key.extend_from_slice(&out[e.key]);
            if cmp.compare(key, target) != Ordering::Less {
                return Ok(Some(e.value));
            }
            p = e.value.end;
        }
        Ok(None)
    }
}

/// One entry's parts in the decoded bytes.
struct Parts {
    shared: usize,
    key: Range<usize>,
    value: Range<usize>,
}

/// The entry at `p`, which must end by `end` (the end of the entries), with the stream
/// decoded at least to its end.
fn entry(
    dec: &mut SnappyPrefix<'_>,
    out: &mut [u8],
    p: usize,
    end: usize,
) -> Result<Parts, OutlineError> {
    let bad = || OutlineError::BadEntry(p);
    // The header: three varint32s, at most 15 bytes.
    dec.fill(out, p.saturating_add(15).min(end))?;
    let h = out.get(p..dec.decoded().min(end)).ok_or_else(bad)?;
    let (shared, a) = coding::decode_varint32(h).ok_or_else(bad)?;
    let (non_shared, b) = coding::decode_varint32(&h[a..]).ok_or_else(bad)?;
    let (value_len, c) = coding::decode_varint32(&h[a + b..]).ok_or_else(bad)?;
    let key_at = p + a + b + c;
    let value_at = key_at.checked_add(non_shared as usize).ok_or_else(bad)?;
    let stop = value_at.checked_add(value_len as usize).ok_or_else(bad)?;
    if stop > end {
        return Err(bad());
    }
    dec.fill(out, stop)?;
    Ok(Parts {
        shared: shared as usize,
        key: key_at..value_at,
        value: value_at..stop,
    })
}
