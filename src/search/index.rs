//! The index decoded for point lookups: an in-memory search aid (not a disk structure), built
//! from the index block on first use.
//!
//! ```text
//! lcp        bytes the (user) keys in the middle of the index start with
//! prefixes   [u64; N]  big-endian value of the 8 key bytes after lcp, zero-padded
//!                      (0 for keys below the lcp range, u64::MAX above it)
//! top        [u64; N / 32]  every 32nd prefix
//! entries    [(key offset, key length, block handle); N]   into the index block's bytes
//! ```
//!
//! Keys ordered bytewise (plain, or internal keys over a bytewise user order) map to
//! non-decreasing prefixes, so a lookup binary-searches a compact `u64` array (8 bytes per
//! data block) and compares whole keys only among entries whose prefix equals the target's.
//! The search starts in `top` (a quarter of a byte per block, so it stays in the CPU cache
//! between lookups) and ends in one group of 32 prefixes (four cache lines): about two
//! memory misses instead of one per halving step once the prefixes outgrow the cache. The index block of a 1M-entry table is 0.7 MB of varint-framed entries; its
//! prefix array is 0.2 MB. Built once, on the first lookup, and only for index blocks whose
//! keys are stored whole (restart interval 1, as every LevelDB writer does). A damaged,
//! unsorted index can misroute a lookup (to "not found"), never make it read out of bounds.

use std::cmp::Ordering;

use crate::block::Block;
use crate::format::{BlockHandle, INTERNAL_TAG_LEN};
use crate::util::comparator::Comparator;

/// Prefixes per group of the two-level search.
const GROUP: usize = 32;

struct Entry {
    key_at: u32,
    key_len: u32,
    handle: BlockHandle,
}

pub(crate) struct ParsedIndex {
    lcp: Vec<u8>,
    prefixes: Vec<u64>,
    top: Vec<u64>,
    entries: Vec<Entry>,
    internal: bool,
}

/// The part of a key the prefixes are computed from.
#[inline]
fn ordered_part(key: &[u8], internal: bool) -> &[u8] {
    if internal {
        &key[..key.len().saturating_sub(INTERNAL_TAG_LEN)]
    } else {
        key
    }
}

#[inline]
fn prefix_after(key: &[u8], skip: usize) -> u64 {
    let mut b = [0u8; 8];
    if let Some(rest) = key.get(skip..) {
        let n = rest.len().min(8);
        b[..n].copy_from_slice(&rest[..n]);
    }
    u64::from_be_bytes(b)
}

/// Monotone map of a key to a u64 for keys sorted bytewise around a common prefix `lcp`: 0
/// below the keys that start with `lcp`, the 8 bytes after `lcp` (big-endian, zero-padded)
/// for those, `u64::MAX` above them. `a < b` implies `map(a) <= map(b)`, and
/// `map(a) < map(b)` implies `a < b`.
#[inline]
pub(crate) fn prefix_map(k: &[u8], lcp: &[u8]) -> u64 {
    let n = lcp.len();
    let m = k.len().min(n);
    // Empty slices are not compared: libc's memcmp makes a fully masked vector load even
    // for length 0, and from an empty `Vec`'s dangling pointer that load takes a
    // fault-suppression assist on AMD Zen (measured: it tripled the database miss time).
    let order = if m == 0 {
        Ordering::Equal
    } else {
        k[..m].cmp(&lcp[..m])
    };
    match order {
        Ordering::Less => 0,
        Ordering::Greater => u64::MAX,
        Ordering::Equal if k.len() < n => 0,
        Ordering::Equal => prefix_after(k, n),
    }
}

impl ParsedIndex {
    /// Decodes `index`; `None` if an entry does not decode, does not store its key whole,
    /// or its value is not a handle (lookups then use the block itself).
    pub(crate) fn build(index: &Block, internal: bool) -> Option<ParsedIndex> {
        let data = index.data();
        let mut entries = Vec::new();
        for e in index.raw_entries() {
            let e = e?;
            if e.shared != 0 {
                return None;
            }
            let mut v = &data[e.value.clone()];
            let handle = BlockHandle::decode_from(&mut v)?;
            entries.push(Entry {
                key_at: u32::try_from(e.key.start).ok()?,
                key_len: u32::try_from(e.key.len()).ok()?,
                handle,
            });
        }
        let key =
            |e: &Entry| ordered_part(&data[e.key_at as usize..][..e.key_len as usize], internal);
        // The common prefix of the middle of the index: the ends are often outliers (the
        // last separator is a short successor such as "l" after "k0000...").
        let n = entries.len();
        let lcp = match (
            entries.get(n / 16),
            entries.get((n - n / 16).saturating_sub(1)),
        ) {
            (Some(a), Some(b)) => {
                let (a, b) = (key(a), key(b));
                let len = a.iter().zip(b).take_while(|(x, y)| x == y).count();
                a[..len].to_vec()
            }
            _ => Vec::new(),
        };
        let mut index = ParsedIndex {
            lcp,
            prefixes: Vec::new(),
            top: Vec::new(),
            entries,
            internal,
        };
        index.prefixes = index.entries.iter().map(|e| index.prefix(key(e))).collect();
        index.top = index.prefixes.iter().step_by(GROUP).copied().collect();
        Some(index)
    }

    /// Monotone map of a key's ordered part to a u64 ([`prefix_map`] under `lcp`).
    #[inline]
    fn prefix(&self, k: &[u8]) -> u64 {
        prefix_map(k, &self.lcp)
    }

    /// Index of the first prefix `>= tp` (the prefix count if none): first in `top`, then
    /// within one group.
    #[inline]
    fn first_prefix_at_least(&self, tp: u64) -> usize {
        let g = self.top.partition_point(|&p| p < tp);
        if g == 0 {
            return 0;
        }
        // prefixes[GROUP * (g - 1)] < tp, and prefixes[GROUP * g] >= tp if it exists.
        let start = GROUP * (g - 1) + 1;
        let end = (GROUP * g).min(self.prefixes.len());
        let group = &self.prefixes[start..end];
        // Load the group's lines together (independent loads) before the dependent steps of
        // the binary search: one memory miss instead of one per step.
        let acc = group.iter().step_by(8).fold(0u64, |a, &p| a ^ p);
        std::hint::black_box(acc);
        start + group.partition_point(|&p| p < tp)
    }

    /// Handle of the first entry whose key is `>= target` under `cmp`, if any.
    pub(crate) fn seek(
        &self,
        data: &[u8],
        cmp: &dyn Comparator,
        target: &[u8],
    ) -> Option<BlockHandle> {
        self.handle(self.seek_position(data, cmp, target)?)
    }

    /// The prefix of `key` (a table key) that the search compares: a monotone map of keys
    /// to `u64`, also used by [`RestartHints`](crate::block::RestartHints).
    #[inline]
    pub(crate) fn key_prefix(&self, key: &[u8]) -> u64 {
        self.prefix(ordered_part(key, self.internal))
    }

    /// Handle of the block at index position `i`.
    pub(crate) fn handle(&self, i: usize) -> Option<BlockHandle> {
        self.entries.get(i).map(|e| e.handle)
    }

    /// Number of entries (data blocks).
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Position of the first entry whose key is `>= target` under `cmp`, if any (`< len()`).
    /// Reads the entries' keys only where prefixes are equal.
    pub(crate) fn seek_position(
        &self,
        data: &[u8],
        cmp: &dyn Comparator,
        target: &[u8],
    ) -> Option<usize> {
        let tp = self.prefix(ordered_part(target, self.internal));
        let lo = self.first_prefix_at_least(tp);
        // Equal-prefix runs are usually 0 or 1 entries long: walk a few, then search.
        let mut hi = lo;
        while hi < self.prefixes.len() && self.prefixes[hi] == tp && hi - lo < 8 {
            hi += 1;
        }
        if hi - lo == 8 {
            hi = lo + self.prefixes[lo..].partition_point(|&p| p == tp);
        }
        // Entries before lo sort below the target, entries from hi above it; search the
        // equal-prefix run with whole keys.
        let (mut l, mut r) = (lo, hi);
        while l < r {
            let mid = l + (r - l) / 2;
            let e = &self.entries[mid];
            let k = &data[e.key_at as usize..][..e.key_len as usize];
            if cmp.compare(k, target) == Ordering::Less {
                l = mid + 1;
            } else {
                r = mid;
            }
        }
        (l < self.entries.len()).then_some(l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two-level search finds what one binary search over all prefixes finds, for
    /// group-boundary sizes, runs of equal prefixes and targets between and outside them.
    #[test]
    fn two_level_search_equals_a_flat_binary_search() {
        for n in [0usize, 1, 2, 31, 32, 33, 63, 64, 65, 100, 1000] {
            for dup in [1u64, 3, 40] {
                let prefixes: Vec<u64> = (0..n as u64).map(|i| 10 + (i / dup) * 2).collect();
                let index = ParsedIndex {
                    lcp: Vec::new(),
                    top: prefixes.iter().step_by(GROUP).copied().collect(),
                    prefixes,
                    entries: Vec::new(),
                    internal: false,
                };
                let max = index.prefixes.last().copied().unwrap_or(10) + 3;
                for tp in (0..=max).chain([u64::MAX]) {
                    let want = index.prefixes.partition_point(|&p| p < tp);
                    assert_eq!(
                        index.first_prefix_at_least(tp),
                        want,
                        "n {n} dup {dup} tp {tp}"
                    );
                }
            }
        }
    }
}
