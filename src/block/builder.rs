//! Builds data, index and metaindex blocks (LevelDB's `table/block_builder.cc`).
//!
//! ```text
//! entry   = shared: varint32 | non_shared: varint32 | value_len: varint32
//!           | key[shared..] (non_shared bytes) | value (value_len bytes)
//! block   = entry* | restart: fixed32 * num_restarts | num_restarts: fixed32
//! ```
//!
//! Keys share a prefix with the key before them, except every `restart_interval`-th key (a
//! restart point), which is stored whole and listed in the restart array so readers can
//! binary-search. An empty block is `00 00 00 00 01 00 00 00` (one restart at offset 0).

use crate::format::coding;

/// Builds one block. Call protocol: `add*` then `finish`, then `reset` to start the next.
#[derive(Debug, Clone)]
pub struct BlockBuilder {
    buffer: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    counter: usize,
    finished: bool,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// A builder with a restart point every `restart_interval` keys (at least 1).
    pub fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            buffer: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            counter: 0,
            finished: false,
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Clears the builder for the next block, keeping its allocations.
    pub fn reset(&mut self) {
        self.buffer.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.finished = false;
        self.last_key.clear();
        self.entries = 0;
    }

    /// Appends an entry. The caller guarantees `key` sorts after every key added before
    /// (the table builder checks this with its comparator).
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(!self.finished, "add after finish");
        let mut shared = 0;
        if self.counter < self.restart_interval {
            shared = coding::common_prefix_len(&self.last_key, key);
        } else {
            self.restarts.push(self.buffer.len() as u32);
            self.counter = 0;
        }
        let non_shared = key.len() - shared;
        coding::put_varint32(&mut self.buffer, shared as u32);
        coding::put_varint32(&mut self.buffer, non_shared as u32);
        coding::put_varint32(&mut self.buffer, value.len() as u32);
        self.buffer.extend_from_slice(&key[shared..]);
        self.buffer.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(&key[shared..]);
        self.counter += 1;
        self.entries += 1;
    }

    /// Appends the restart array and returns the finished block.
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for r in &self.restarts {
                coding::put_fixed32(&mut self.buffer, *r);
            }
            coding::put_fixed32(&mut self.buffer, self.restarts.len() as u32);
            self.finished = true;
        }
        &self.buffer
    }

    /// Finishes the block, hands its bytes over and starts the next block in `spare`'s
    /// allocation (a table builder that compresses on a helper thread passes blocks on
    /// without copying them).
    pub(crate) fn take_finished(&mut self, mut spare: Vec<u8>) -> Vec<u8> {
        self.finish();
        spare.clear();
        let block = std::mem::replace(&mut self.buffer, spare);
        self.reset();
        block
    }

    /// Size of the block if it were finished now (LevelDB's `CurrentSizeEstimate`).
    pub fn current_size_estimate(&self) -> usize {
        self.buffer.len() + self.restarts.len() * 4 + 4
    }

    /// Whether no entry has been added since the last reset.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// Entries added since the last reset.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// The last key added.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }
}
