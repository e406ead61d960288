//! Finding the one table of a level >= 1 that may hold a user key: a search aid built when
//! the database opens (in memory only, not a disk structure), for bytewise user orders.
//!
//! ```text
//! lcp       bytes every user key of the level starts with (the common prefix of the
//!           first file's smallest and the last file's largest user key: in bytewise
//!           order every key between two keys shares their common prefix)
//! largest   [u64; files]  the 8 bytes after lcp of each file's largest user key, big-endian,
//!                         zero-padded (0 for keys below the lcp range, u64::MAX above it)
//! smallest  [u64; files]  the same for each file's smallest user key
//! slots     [u32; files]  the file's place in the database's table list
//! ```
//!
//! The map from keys to prefixes is monotone, so a lookup binary-searches one small `u64`
//! array (35 files of a 1M-entry LevelDB database: five cache lines) and compares whole keys
//! only where a file's prefix equals the key's; without it every step of the search compares
//! the key with a file's largest key through the comparator, each in its own allocation.
//! LevelDB's `FindFile` does the latter. A damaged MANIFEST with overlapping files at a level
//! can make the search choose a wrong file (as LevelDB's would), never read out of bounds.

use std::cmp::Ordering;

use crate::db::files::FileMeta;
use crate::format::coding;
use crate::internal_key;
use crate::search::index::prefix_map;

/// The search aid of one level (see the module documentation).
pub(super) struct LevelSearch {
    lcp: Vec<u8>,
    largest: Vec<u64>,
    smallest: Vec<u64>,
    slots: Vec<u32>,
}

/// No table of the list: the file is missing from the directory.
pub(super) const NO_SLOT: u32 = u32::MAX;

impl LevelSearch {
    /// The aid for `files` (sorted by key), with `slot_of` giving each file number's place in
    /// the table list ([`NO_SLOT`] when absent).
    pub(super) fn build(files: &[FileMeta], slot_of: impl Fn(u64) -> u32) -> LevelSearch {
        let user = internal_key::user_key;
        let lcp = match (files.first(), files.last()) {
            (Some(a), Some(b)) => {
                let a = user(&a.smallest);
                a[..coding::common_prefix_len(a, user(&b.largest))].to_vec()
            }
            _ => Vec::new(),
        };
        let mut s = LevelSearch {
            lcp,
            largest: Vec::with_capacity(files.len()),
            smallest: Vec::with_capacity(files.len()),
            slots: files.iter().map(|f| slot_of(f.number)).collect(),
        };
        for f in files {
            let (lo, hi) = (s.prefix(user(&f.smallest)), s.prefix(user(&f.largest)));
            s.smallest.push(lo);
            s.largest.push(hi);
        }
        s
    }

    /// Monotone map of a user key to a u64 (`index_search::prefix_map` under `lcp`).
    #[inline]
    fn prefix(&self, k: &[u8]) -> u64 {
        prefix_map(k, &self.lcp)
    }

    /// The position in `files` (the level this aid was built from) of the file whose key
    /// range holds `key`, and that file's slot; `None` when no file's range does.
    #[inline]
    pub(super) fn find(&self, files: &[FileMeta], key: &[u8]) -> Option<(usize, u32)> {
        if self.largest.is_empty() {
            return None;
        }
        let tp = self.prefix(key);
        // Files before i end below the key (their largest prefix is smaller).
        let mut i = self.largest.partition_point(|&p| p < tp);
        // Among the files whose largest key has the key's prefix, compare whole keys.
        let run = self.largest.get(i..).unwrap_or(&[]);
        let run = &run[..run.partition_point(|&p| p == tp)];
        if !run.is_empty() {
            let same = files.get(i..i + run.len()).unwrap_or(&[]);
            i += same.partition_point(|f| internal_key::user_key(&f.largest) < key);
        }
        let (f, &sp) = files.get(i).zip(self.smallest.get(i))?;
        let starts_at_or_below = match sp.cmp(&tp) {
            Ordering::Less => true,
            Ordering::Greater => false,
            Ordering::Equal => internal_key::user_key(&f.smallest) <= key,
        };
        starts_at_or_below.then(|| (i, self.slots.get(i).copied().unwrap_or(NO_SLOT)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(number: u64, lo: &[u8], hi: &[u8]) -> FileMeta {
        let ik = |k: &[u8]| {
            let mut v = k.to_vec();
            v.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
            v
        };
        FileMeta {
            number,
            size: 0,
            smallest: ik(lo),
            largest: ik(hi),
        }
    }

    /// The file LevelDB's `FindFile` + range check would pick, by whole-key comparisons.
    fn model(files: &[FileMeta], key: &[u8]) -> Option<usize> {
        let i = files.partition_point(|f| internal_key::user_key(&f.largest) < key);
        let f = files.get(i)?;
        (internal_key::user_key(&f.smallest) <= key).then_some(i)
    }

    #[test]
    fn agrees_with_whole_key_search() {
        // Ranges with long shared prefixes, prefixes that tie after 8 bytes, short keys,
        // keys that end inside the common prefix, and gaps between files.
        let level = vec![
            meta(1, b"k00000000", b"k00000000aaaaaaaa1"),
            meta(2, b"k00000000aaaaaaaa2", b"k00000000aaaaaaaa9"),
            meta(3, b"k00000000aaaaaaab", b"k00000000b"),
            meta(4, b"k00000000d", b"k00000000d"),
            meta(5, b"k00000000f", b"k00000001"),
            meta(7, b"k00000002x", b"k0000001"),
        ];
        let search = LevelSearch::build(&level, |n| n as u32 * 10);
        let mut probes: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"a".to_vec(),
            b"k".to_vec(),
            b"k0".to_vec(),
            b"k00000000".to_vec(),
            b"k000000000".to_vec(),
            b"k0000001".to_vec(),
            b"k00000010".to_vec(),
            b"l".to_vec(),
            vec![0xff; 20],
        ];
        for f in &level {
            for k in [&f.smallest, &f.largest] {
                let u = internal_key::user_key(k).to_vec();
                let mut before = u.clone();
                if let Some(last) = before.last_mut() {
                    *last -= 1;
                }
                let mut after = u.clone();
                after.push(0);
                let mut next = u.clone();
                if let Some(last) = next.last_mut() {
                    *last += 1;
                }
                probes.extend([u, before, after, next]);
            }
        }
        for p in &probes {
            let got = search.find(&level, p);
            let want = model(&level, p).map(|i| (i, level[i].number as u32 * 10));
            assert_eq!(got, want, "key {:?}", String::from_utf8_lossy(p));
        }
    }

    proptest::proptest! {
        /// Random sorted, non-overlapping levels over a small alphabet (so keys share
        /// prefixes, tie within 8 bytes and end inside one another): the search picks the
        /// file the whole-key search picks, for every probe.
        #[test]
        fn agrees_on_random_levels(
            mut keys in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec![0u8, b'a', b'b', 0xff]), 0..14),
                1..40,
            ),
            probes in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec![0u8, b'a', b'b', 0xff]), 0..14),
                1..40,
            ),
            split in proptest::collection::vec(proptest::bool::ANY, 40),
        ) {
            keys.sort();
            keys.dedup();
            // Cut the sorted keys into files: a file ends where `split` says (or at the end);
            // `split` also drops some keys between files, leaving gaps.
            let mut level = Vec::new();
            let mut start = 0;
            for i in 0..keys.len() {
                if i < start {
                    continue;
                }
                if i + 1 == keys.len() || split[i] {
                    level.push(meta(level.len() as u64 + 1, &keys[start], &keys[i]));
                    start = i + 1 + usize::from(split[(i + 1) % 40] && i + 2 < keys.len());
                    if start >= keys.len() {
                        break;
                    }
                }
            }
            let search = LevelSearch::build(&level, |n| n as u32);
            for p in probes.iter().chain(keys.iter()) {
                let want = model(&level, p).map(|i| (i, level[i].number as u32));
                proptest::prop_assert_eq!(search.find(&level, p), want);
            }
        }
    }

    #[test]
    fn empty_level_finds_nothing() {
        let search = LevelSearch::build(&[], |_| 0);
        assert_eq!(search.find(&[], b"k"), None);
    }
}
