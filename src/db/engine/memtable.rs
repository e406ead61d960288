//! The writes of the live logs, in key order: what LevelDB's memtable holds when it reopens
//! a database (before it would flush them to a table, which this reader never does).
//!
//! ```text
//! entries: [(internal key = user key | tag (8, LE: sequence << 8 | type), value)]
//!          sorted by the internal-key order: user key ascending, then sequence descending
//! ```

use std::cmp::Ordering;

use crate::db::files::BatchRecord;
use crate::internal_key::{self, InternalKeyComparator, ValueType};
use crate::util::comparator::Comparator;

/// Where a memtable entry came from: the log file number and the record's offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Origin {
    /// The log's file number.
    pub log: u64,
    /// Offset of the log record (the WriteBatch) in the file: its first fragment's.
    pub offset: u64,
    /// Offset of the entry's own record (its tag byte) in the WriteBatch.
    pub offset_in_batch: u64,
}

/// Sorted, immutable entries of the live logs.
pub struct MemTable {
    cmp: InternalKeyComparator,
    entries: Vec<(Vec<u8>, Vec<u8>, Origin)>,
}

/// What a memtable says about a key at a snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemLookup<'a> {
    /// A value with its sequence.
    Found(&'a [u8], u64),
    /// A deletion with its sequence.
    Deleted(u64),
    /// Nothing for this key at or below the snapshot.
    NotFound,
}

impl MemTable {
    /// Builds from records in any order (sorted here once).
    pub fn new<'r>(
        cmp: InternalKeyComparator,
        records: impl IntoIterator<Item = (BatchRecord<'r>, Origin)>,
    ) -> MemTable {
        let mut entries: Vec<(Vec<u8>, Vec<u8>, Origin)> = records
            .into_iter()
            .map(|(r, o)| {
                (
                    internal_key::internal_key(r.key, r.sequence, r.kind),
                    r.value.to_vec(),
                    o,
                )
            })
            .collect();
        entries.sort_by(|a, b| cmp.compare(&a.0, &b.0));
        // The same key and sequence twice (a log replayed twice): keep one.
        entries.dedup_by(|a, b| a.0 == b.0);
        MemTable { cmp, entries }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in order.
    pub fn entries(&self) -> &[(Vec<u8>, Vec<u8>, Origin)] {
        &self.entries
    }

    /// The internal-key comparator.
    pub fn comparator(&self) -> &InternalKeyComparator {
        &self.cmp
    }

    /// Index of the first entry at or after internal key `target`.
    pub fn lower_bound(&self, target: &[u8]) -> usize {
        self.entries
            .partition_point(|(k, _, _)| self.cmp.compare(k, target) == Ordering::Less)
    }

    /// The newest version of `user_key` with a sequence <= `snapshot`.
    pub fn get(&self, user_key: &[u8], snapshot: u64) -> MemLookup<'_> {
        if self.entries.is_empty() {
            return MemLookup::NotFound;
        }
        let ucmp = self.cmp.user_comparator();
        // First entry at or after (user_key, snapshot): versions of a key are stored newest
        // (highest sequence) first.
        let i = self.entries.partition_point(|(k, _, _)| {
            match ucmp.compare(internal_key::user_key(k), user_key) {
                Ordering::Less => true,
                Ordering::Greater => false,
                Ordering::Equal => {
                    internal_key::parse_internal_key(k).is_some_and(|p| p.sequence > snapshot)
                }
            }
        });
        let Some((k, v, _)) = self.entries.get(i) else {
            return MemLookup::NotFound;
        };
        let Some(p) = internal_key::parse_internal_key(k) else {
            return MemLookup::NotFound;
        };
        if ucmp.compare(p.user_key, user_key) != Ordering::Equal {
            return MemLookup::NotFound;
        }
        match p.value_type {
            ValueType::Value => MemLookup::Found(v, p.sequence),
            ValueType::Deletion => MemLookup::Deleted(p.sequence),
        }
    }
}
