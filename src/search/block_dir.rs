//! A search directory for a cached data block of a bytewise-ordered (plain) table: an
//! in-memory search aid built from the block, never written to disk.
//!
//! ```text
//! words[0]      length of the prefix
//! words[1..4]   up to 24 bytes every key of the block starts with, big-endian packed
//! words[4..]    one u64 per entry, in key order:
//!                     bits 63..32  window: big-endian value of the key bytes after the
//!                                  prefix, zero-padded (every key has at most 4 of them)
//!                     bits 31..16  offset of the entry in the block
//!                     bits  7..0   key length
//! ```
//!
//! It is an in-memory structure, not part of the file format. A point lookup in a block
//! searches the restart array and then walks up to a restart interval of entries, each one
//! new cache lines; with 100-byte values that walk is most of a warm lookup (profile in
//! docs/performance.md). The directory answers the same question from a dense `u64` array
//! and touches the block only at the entry found.
//!
//! Since every key is the prefix plus at most 4 bytes, comparing (window, key length) pairs
//! lexicographically orders keys exactly as bytewise comparison does (zero padding sorts
//! below every byte, and a shorter key with an equal window is a prefix of the longer one),
//! including against a target of any length. Entries are in key order, so equal windows
//! come in increasing offset, and the packed words are sorted: the search is a binary search
//! over `u64`s, exact, never a heuristic.
//!
//! The directory is built once, when a point lookup brings a block into the block cache, for
//! blocks read in place from a memory map or buffer (whose cache entry costs nothing else), and
//! only when it pays:
//! blocks under 64 KiB whose keys fit the shape above (typical of sequential or numeric keys),
//! costing at most one directory byte per [`MAX_OVERHEAD_DIVISOR`] block bytes (the cache
//! charges those bytes too).

use std::cmp::Ordering;

use crate::block::Block;

/// Longest common prefix kept inline.
const MAX_PREFIX: usize = 24;

/// Key bytes after the prefix that a window holds.
const WINDOW: usize = 4;

/// The directory may cost at most 1/8 of the block's bytes (8 bytes per entry: entries of
/// 64 bytes or more). Smaller entries pack many to a cache line, so walking them is cheap.
pub(crate) const MAX_OVERHEAD_DIVISOR: usize = 8;

/// Bytes per directory entry.
const ENTRY_BYTES: usize = 8;

/// See the module documentation. One allocation: the header and the entries share cache
/// lines, so a lookup usually touches two or three.
pub(crate) struct BlockDir {
    words: Box<[u64]>,
}

/// Words before the entries.
const HEADER_WORDS: usize = 1 + MAX_PREFIX / 8;

#[inline]
fn window_after(key: &[u8], skip: usize) -> u64 {
    let mut b = [0u8; WINDOW];
    if let Some(rest) = key.get(skip..) {
        let n = rest.len().min(WINDOW);
        b[..n].copy_from_slice(&rest[..n]);
    }
    u64::from(u32::from_be_bytes(b))
}

/// Where a target falls relative to the prefix shared by every key of the block.
enum Placement {
    /// Below every key.
    Before,
    /// Above every key.
    After,
    /// Starts with the prefix: compare windows.
    Within(u64),
}

/// A key of at most `MAX_PREFIX + WINDOW` bytes, rebuilt entry by entry without allocating.
struct SmallKey {
    buf: [u8; MAX_PREFIX + WINDOW],
    len: usize,
}

impl SmallKey {
    /// Applies an entry (`shared` bytes kept, `delta` appended); `None` if it does not fit.
    #[inline]
    fn apply(&mut self, shared: usize, delta: &[u8]) -> Option<&[u8]> {
        if shared > self.len {
            return None;
        }
        let len = shared.checked_add(delta.len())?;
        self.buf.get_mut(shared..len)?.copy_from_slice(delta);
        self.len = len;
        Some(&self.buf[..len])
    }
}

impl BlockDir {
    /// Builds the directory of `block`, or `None` when the block does not have the shape
    /// described in the module documentation or a directory would cost too much.
    pub(crate) fn build(block: &Block) -> Option<BlockDir> {
        if block.num_restarts() == 0 || block.size() > usize::from(u16::MAX) {
            return None;
        }
        let data = block.data();
        let max_entries = block.size() / MAX_OVERHEAD_DIVISOR / ENTRY_BYTES;
        // The first key is stored whole; the last one is rebuilt from the last restart
        // point. Keys are sorted, so every key starts with their common prefix.
        let first = block.raw_entries().next()??;
        let first = &data[first.key];
        let mut last = SmallKey {
            buf: [0; MAX_PREFIX + WINDOW],
            len: 0,
        };
        for e in block.raw_entries_from(block.last_restart_offset()) {
            let e = e?;
            last.apply(e.shared, &data[e.key])?;
        }
        let lcp = first
            .iter()
            .zip(&last.buf[..last.len])
            .take_while(|(a, b)| a == b)
            .count()
            .min(MAX_PREFIX);
        let mut prefix = [0u8; MAX_PREFIX];
        prefix[..lcp].copy_from_slice(&first[..lcp]);
        let mut entries = Vec::with_capacity(max_entries.min(64));
        let mut key = SmallKey {
            buf: [0; MAX_PREFIX + WINDOW],
            len: 0,
        };
        let mut at = 0usize;
        for e in block.raw_entries() {
            let e = e?;
            let k = key.apply(e.shared, &data[e.key])?;
            if k.len() > lcp + WINDOW || k.len() < lcp || k[..lcp] != prefix[..lcp] {
                return None;
            }
            if entries.len() == max_entries {
                return None;
            }
            // ok: the block is under 64 KiB and keys are at most 28 bytes.
            entries.push((window_after(k, lcp) << 32) | ((at as u64) << 16) | k.len() as u64);
            at = e.value.end;
        }
        let mut words = Vec::with_capacity(HEADER_WORDS + entries.len());
        words.push(lcp as u64);
        words.extend(
            prefix
                .chunks_exact(8)
                .map(|c| c.iter().fold(0u64, |w, &b| (w << 8) | u64::from(b))),
        );
        words.extend_from_slice(&entries);
        Some(BlockDir {
            words: words.into_boxed_slice(),
        })
    }

    #[inline]
    fn entries(&self) -> &[u64] {
        &self.words[HEADER_WORDS..]
    }

    /// Bytes this directory occupies (what the block cache charges for it).
    pub(crate) fn charge(&self) -> usize {
        std::mem::size_of::<BlockDir>() + self.words.len() * ENTRY_BYTES
    }

    #[inline]
    fn place(&self, target: &[u8]) -> Placement {
        let n = self.words[0] as usize;
        let mut prefix = [0u8; MAX_PREFIX];
        for (dst, w) in prefix.chunks_exact_mut(8).zip(&self.words[1..HEADER_WORDS]) {
            dst.copy_from_slice(&w.to_be_bytes());
        }
        let m = target.len().min(n);
        match target[..m].cmp(&prefix[..m]) {
            Ordering::Less => Placement::Before,
            Ordering::Greater => Placement::After,
            // A proper prefix of the common prefix is below every key.
            Ordering::Equal if target.len() < n => Placement::Before,
            Ordering::Equal if target.len() > n + WINDOW => {
                // Longer than any key with an equal window: it sorts after all of them.
                Placement::Within(window_after(target, n) << 32 | 0xffff_ffff)
            }
            Ordering::Equal => {
                Placement::Within(window_after(target, n) << 32 | (target.len() as u64))
            }
        }
    }

    /// Offset in the block of entry `i`.
    #[inline]
    pub(crate) fn entry_offset(&self, i: usize) -> usize {
        ((self.entries()[i] >> 16) & 0xffff) as usize
    }

    /// Index of the first entry whose key is `>= target` (bytewise), or the entry count.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) fn lower_bound(&self, target: &[u8]) -> usize {
        match self.place(target) {
            Placement::Before => 0,
            Placement::After => self.entries().len(),
            Placement::Within(t) => self.lower_bound_within(t),
        }
    }

    /// First entry whose (window, key length) is `>=` the target's, packed as
    /// `window << 32 | length`.
    #[inline]
    fn lower_bound_within(&self, t: u64) -> usize {
        let w = t >> 32;
        let len = t & 0xffff_ffff;
        let entries = self.entries();
        let mut i = entries.partition_point(|&x| x >> 32 < w);
        // Keys with an equal window differ in length (at most 5 of them): walk.
        while let Some(&x) = entries.get(i) {
            if x >> 32 != w || x & 0xff >= len {
                break;
            }
            i += 1;
        }
        i
    }

    /// The index of the entry whose key equals `target`, if any.
    #[inline]
    pub(crate) fn find_exact(&self, target: &[u8]) -> Option<usize> {
        let Placement::Within(t) = self.place(target) else {
            return None;
        };
        let i = self.lower_bound_within(t);
        let x = *self.entries().get(i)?;
        (x >> 32 == t >> 32 && x & 0xff == t & 0xffff_ffff).then_some(i)
    }

    /// Number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::builder::BlockBuilder;
    use crate::util::comparator::BytewiseComparator;

    fn block_of(keys: &[&[u8]], restart: usize) -> Block {
        let mut b = BlockBuilder::new(restart);
        for k in keys {
            b.add(k, &[b'v'; 120]);
        }
        Block::from_bytes(b.finish().to_vec()).unwrap()
    }

    /// The directory agrees with the block's own search for every target in a dense set
    /// around the keys: equal, prefixes, extensions, neighbours, and outside the prefix.
    #[test]
    fn lower_bound_matches_the_block_search() {
        let sets: Vec<Vec<&[u8]>> = vec![
            vec![
                b"k0000010",
                b"k0000012",
                b"k0000014",
                b"k00000140",
                b"k0000016",
                b"k000002",
            ],
            vec![
                b"a", b"a\0", b"a\0\0", b"ab", b"abc", b"abc\0", b"abcd", b"b",
            ],
            vec![
                b"same-prefix-xx-1",
                b"same-prefix-xx-2",
                b"same-prefix-xx-2\xff",
                b"same-prefix-xx-2\xff\0\0",
            ],
            vec![b"", b"\0", b"\xff\xff\xff"],
        ];
        for keys in sets {
            for restart in [1, 2, 16] {
                let block = block_of(&keys, restart);
                let dir = BlockDir::build(&block).expect("a directory for this shape");
                assert_eq!(dir.len(), keys.len());
                let mut targets: Vec<Vec<u8>> = vec![vec![], b"\xff\xff\xff\xff".to_vec()];
                for k in &keys {
                    for cut in 0..=k.len() {
                        targets.push(k[..cut].to_vec());
                    }
                    for extra in [&b"\0"[..], b"\x01", b"\xff", b"\0\0\0\0\0\0\0\0\0"] {
                        targets.push([*k, extra].concat());
                    }
                    if let Some((&last, head)) = k.split_last() {
                        targets.push([head, &[last.wrapping_sub(1)]].concat());
                        targets.push([head, &[last.wrapping_add(1)]].concat());
                    }
                }
                let mut scratch = Vec::new();
                for t in &targets {
                    let want = keys
                        .iter()
                        .position(|k| *k >= t.as_slice())
                        .unwrap_or(keys.len());
                    assert_eq!(dir.lower_bound(t), want, "target {t:?} in {keys:?}");
                    let exact = keys.iter().position(|k| *k == t.as_slice());
                    assert_eq!(dir.find_exact(t), exact, "target {t:?}");
                    // And the entry offset leads to the entry the block search finds.
                    let r = block
                        .seek_value_range(&BytewiseComparator, t, &mut scratch)
                        .unwrap();
                    if want < keys.len() {
                        let v = block.value_at(dir.entry_offset(want)).unwrap();
                        assert_eq!(Some(v), r);
                    } else {
                        assert_eq!(r, None);
                    }
                }
            }
        }
    }

    #[test]
    fn no_directory_when_it_does_not_fit_or_pay() {
        // Keys longer than prefix + window after their common prefix.
        let b = block_of(&[b"a-long", b"b-long"], 16);
        assert!(BlockDir::build(&b).is_none());
        // Small entries: the directory would cost more than 1/8 of the block.
        let mut bb = BlockBuilder::new(16);
        for i in 0..100u32 {
            bb.add(format!("k{i:04}").as_bytes(), b"v");
        }
        let small = Block::from_bytes(bb.finish().to_vec()).unwrap();
        assert!(BlockDir::build(&small).is_none());
        // An empty block.
        let empty = Block::from_bytes(vec![0u8; 4]).unwrap();
        assert!(BlockDir::build(&empty).is_none());
    }
}
