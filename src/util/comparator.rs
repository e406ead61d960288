//! Key orderings (LevelDB's `include/leveldb/comparator.h`, `util/comparator.cc`).
//!
//! Besides ordering keys, a comparator shortens index keys: the index entry of a data block
//! only has to separate its last key from the next block's first key, so
//! [`find_shortest_separator`](Comparator::find_shortest_separator) and
//! [`find_short_successor`](Comparator::find_short_successor) may replace it with something
//! shorter. The table's bytes depend on these, so they follow LevelDB exactly.

use std::cmp::Ordering;

/// A total order on keys, with LevelDB's index-key shortening.
pub trait Comparator: Send + Sync {
    /// The comparator's name (LevelDB stores the user comparator's name in the MANIFEST,
    /// not in tables).
    fn name(&self) -> &str;

    /// Three-way comparison.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// If `start < limit`, may change `start` into a shorter key in `[start, limit)`.
    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]);

    /// May change `key` into a short key `>= key`.
    fn find_short_successor(&self, key: &mut Vec<u8>);

    /// True only if [`compare`](Self::compare) is plain lexicographic byte order, which lets
    /// block searches skip comparisons using the entries' shared prefixes.
    fn is_bytewise(&self) -> bool {
        false
    }

    /// Whether every key this order calls equal to `key` has `key`'s very bytes (true by
    /// default, and always for bytewise). A table's filter is keyed by bytes, so a lookup
    /// takes its "absent" only for such a key; for another (an order that calls distinct
    /// bytes equal) it reads the block the index points to, and the answer is the
    /// comparator's equality (LevelDB's `Compare == 0`) wherever the key is stored.
    fn equal_keys_identical(&self, _key: &[u8]) -> bool {
        true
    }
}

/// Lexicographic byte order, `leveldb.BytewiseComparator`.
#[derive(Debug, Clone, Copy, Default)]
pub struct BytewiseComparator;

impl Comparator for BytewiseComparator {
    fn name(&self) -> &str {
        "leveldb.BytewiseComparator"
    }

    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let min_len = start.len().min(limit.len());
        let diff = start.iter().zip(limit).take_while(|(a, b)| a == b).count();
        if diff >= min_len {
            // One is a prefix of the other: leave it.
            return;
        }
        let byte = start[diff];
        if byte < 0xff && byte + 1 < limit[diff] {
            start[diff] = byte + 1;
            start.truncate(diff + 1);
        }
    }

    fn is_bytewise(&self) -> bool {
        true
    }

    fn find_short_successor(&self, key: &mut Vec<u8>) {
        if let Some(i) = key.iter().position(|&b| b != 0xff) {
            key[i] += 1;
            key.truncate(i + 1);
        }
        // An all-0xff key is left as it is.
    }
}
