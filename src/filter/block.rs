//! The filter block: one filter per 2 KiB range of data-block file offsets
//! (LevelDB's `table/filter_block.cc`).
//!
//! ```text
//! +------------+-----+--------------+--------------------+-------------------+-------------+---------+
//! | filter 0   | ... | filter N-1   | fixed32 offset[0]  | ... offset[N-1]   | fixed32     | base_lg |
//! | (policy    |     | (may be      | start of filter 0  |                   | array_start | u8 (11) |
//! |  output)   |     |  empty)      |                    |                   |             |         |
//! +------------+-----+--------------+--------------------+-------------------+-------------+---------+
//! ^ block start                      ^ array_start
//! ```
//!
//! The keys of a data block that starts at file offset X live in filter `X >> base_lg`.
//! Filter i ends where filter i+1 starts; the last one ends at `array_start` (the word after
//! the offset array). Ranges that hold no block start get an empty filter (4 bytes of offset).
//!
//! The reader is advisory: any malformed input answers "may match", never a wrong "no".

use std::sync::Arc;

use crate::filter::FilterPolicy;
use crate::format::coding;
use crate::format::FILTER_BASE_LG;

/// Builds a filter block. Call protocol: `(start_block add_key*)* finish`, with
/// non-decreasing block offsets.
pub struct FilterBlockBuilder {
    policy: Arc<dyn FilterPolicy>,
    /// Pending keys, flattened.
    keys: Vec<u8>,
    /// Start of each pending key in `keys`.
    starts: Vec<usize>,
    /// Filter bytes so far.
    result: Vec<u8>,
    /// Start offset of each filter in `result`.
    offsets: Vec<u32>,
    base_lg: u8,
}

impl FilterBlockBuilder {
    /// A builder using `policy`, one filter per 2 KiB of data-block offset.
    pub fn new(policy: Arc<dyn FilterPolicy>) -> Self {
        Self::with_base_lg(policy, FILTER_BASE_LG)
    }

    /// A builder with another filter base (one filter per `1 << base_lg` bytes), as goleveldb's
    /// `FilterBaseLg` option allows. `base_lg` is clamped to 1..=31.
    pub fn with_base_lg(policy: Arc<dyn FilterPolicy>, base_lg: u8) -> Self {
        FilterBlockBuilder {
            policy,
            keys: Vec::new(),
            starts: Vec::new(),
            result: Vec::new(),
            offsets: Vec::new(),
            base_lg: base_lg.clamp(1, 31),
        }
    }

    /// Announces that the next keys belong to a data block starting at `block_offset`.
    /// Emits the filters of every range before that block's range.
    ///
    /// An offset smaller than an earlier one (a contract violation) generates nothing.
    pub fn start_block(&mut self, block_offset: u64) {
        let index = block_offset >> self.base_lg;
        while index > self.offsets.len() as u64 {
            self.generate_filter();
        }
    }

    /// Adds a key of the current data block.
    pub fn add_key(&mut self, key: &[u8]) {
        self.starts.push(self.keys.len());
        self.keys.extend_from_slice(key);
    }

    /// Finishes the block and returns its bytes.
    pub fn finish(mut self) -> Vec<u8> {
        if !self.starts.is_empty() {
            self.generate_filter();
        }
        let array_start = self.result.len() as u32;
        let mut out = self.result;
        out.reserve(self.offsets.len() * 4 + 5);
        for off in &self.offsets {
            coding::put_fixed32(&mut out, *off);
        }
        coding::put_fixed32(&mut out, array_start);
        out.push(self.base_lg);
        out
    }

    fn generate_filter(&mut self) {
        self.offsets.push(self.result.len() as u32);
        if self.starts.is_empty() {
            return;
        }
        let mut keys: Vec<&[u8]> = Vec::with_capacity(self.starts.len());
        for (i, &s) in self.starts.iter().enumerate() {
            let e = self.starts.get(i + 1).copied().unwrap_or(self.keys.len());
            keys.push(&self.keys[s..e]);
        }
        self.policy.create_filter(&keys, &mut self.result);
        self.keys.clear();
        self.starts.clear();
    }
}

/// How the filter block answers for one data block (see `FilterBlockReader::filter_span`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FilterSpan {
    /// The policy decides on these bytes of the block.
    Filter(std::ops::Range<usize>),
    /// No key matches (an empty filter whose offsets lie outside the offset array).
    NoMatch,
    /// No filter applies: every key may match.
    MayMatch,
}

/// Reads a filter block. Construction never fails; a malformed block answers "may match".
#[derive(Clone)]
pub struct FilterBlockReader<D = bytes::Bytes> {
    policy: Arc<dyn FilterPolicy>,
    data: D,
    /// Offset of the offset array (0 when unusable).
    array_start: usize,
    /// Number of filters (0 when the block is unusable: every query then matches).
    num: usize,
    base_lg: u8,
}

impl<D: AsRef<[u8]>> FilterBlockReader<D> {
    /// Parses the block's tail: base_lg, array_start and the number of filters.
    pub fn new(policy: Arc<dyn FilterPolicy>, data: D) -> Self {
        let (array_start, num, base_lg) = {
            let d = data.as_ref();
            let n = d.len();
            if n < 5 {
                (0, 0, 0)
            } else {
                let base_lg = d[n - 1];
                let last_word = coding::decode_fixed32(&d[n - 5..]) as usize;
                if last_word > n - 5 {
                    (0, 0, base_lg)
                } else {
                    (last_word, (n - 5 - last_word) / 4, base_lg)
                }
            }
        };
        FilterBlockReader {
            policy,
            data,
            array_start,
            num,
            base_lg,
        }
    }

    /// Number of filters the block holds (0 if it is malformed).
    pub fn num_filters(&self) -> usize {
        self.num
    }

    /// The stored base_lg (one filter per `1 << base_lg` bytes of data-block offset).
    pub fn base_lg(&self) -> u8 {
        self.base_lg
    }

    /// The policy the filters are probed with.
    pub fn policy(&self) -> &Arc<dyn FilterPolicy> {
        &self.policy
    }

    /// Index of the filter covering a data block at `block_offset`, if the block has one.
    pub fn filter_index(&self, block_offset: u64) -> Option<usize> {
        if self.base_lg >= 64 {
            return None;
        }
        let i = block_offset >> self.base_lg;
        (i < self.num as u64).then_some(i as usize)
    }

    /// Bytes of filter `i`; `None` when `i` is out of range or its offsets are malformed
    /// (those filters answer "may match", except a malformed empty one).
    pub fn filter(&self, i: usize) -> Option<&[u8]> {
        if i >= self.num {
            return None;
        }
        let d = self.data.as_ref();
        let at = self.array_start + 4 * i;
        let start = coding::decode_fixed32(&d[at..]) as usize;
        let limit = coding::decode_fixed32(&d[at + 4..]) as usize;
        if start <= limit && limit <= self.array_start {
            Some(&d[start..limit])
        } else {
            None
        }
    }

    /// The block's bytes.
    pub fn data(&self) -> &[u8] {
        self.data.as_ref()
    }

    /// What decides whether a key of the data block at `block_offset` may match: LevelDB's
    /// rules, without the key.
    pub(crate) fn filter_span(&self, block_offset: u64) -> FilterSpan {
        let Some(i) = self.filter_index(block_offset) else {
            return FilterSpan::MayMatch;
        };
        let d = self.data.as_ref();
        let at = self.array_start + 4 * i;
        // ok: num was computed so that every word read here lies before the last 5 bytes.
        let start = coding::decode_fixed32(&d[at..]) as usize;
        let limit = coding::decode_fixed32(&d[at + 4..]) as usize;
        if start <= limit && limit <= self.array_start {
            FilterSpan::Filter(start..limit)
        } else if start == limit {
            // Empty filters do not match any keys; errors are treated as potential matches.
            FilterSpan::NoMatch
        } else {
            FilterSpan::MayMatch
        }
    }

    /// LevelDB's `FilterBlockReader::KeyMayMatch`: whether `key`, of a data block starting at
    /// `block_offset`, may be in the table.
    pub fn key_may_match(&self, block_offset: u64, key: &[u8]) -> bool {
        match self.filter_span(block_offset) {
            FilterSpan::Filter(r) => self.policy.key_may_match(key, &self.data.as_ref()[r]),
            FilterSpan::NoMatch => false,
            FilterSpan::MayMatch => true,
        }
    }
}
