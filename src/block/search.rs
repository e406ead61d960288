//! The search of a point lookup inside one block ([`Block::seek`]): the restart points'
//! binary search (or the block's [`RestartHints`], kept beside a cached block), then a walk
//! along the entries of one restart interval, comparing bytewise keys from their common
//! prefix on. No iterator, no allocation beyond the key buffer's growth.

use std::cmp::Ordering;

use super::Block;
use crate::error::Result;
use crate::format::coding;
use crate::util::comparator::Comparator;

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
    pub(super) n: u8,
    /// `at` holds restart indices of sampled points instead of entry offsets.
    pub(super) sampled: bool,
    pub(super) prefixes: [u64; RESTART_HINTS],
    /// Entry offset of each restart point, then the offset of the restart array; or, when
    /// `sampled`, the restart index of each sampled point, then the number of points.
    pub(super) at: [u32; RESTART_HINTS + 1],
}

/// Where a point lookup's search of a block starts ([`Block::seek`]).
enum Interval {
    /// Walk the entries from this restart point's offset; the interval ends at the second.
    Entries(usize, usize),
    /// Binary-search the restart points `lo..=hi`.
    Restarts(u32, u32),
}

impl Block {
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
    pub(super) fn find_restart_in(
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

// The size the documentation (and docs/performance.md) gives for the hints.
const _: () = assert!(std::mem::size_of::<Option<RestartHints>>() == 56);
