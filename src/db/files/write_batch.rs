//! WriteBatch: the payload of one write-ahead-log record (LevelDB's `db/write_batch.cc`).
//!
//! ```text
//! | sequence (8, LE) | count (4, LE) | record × count |
//! record: | 1 (value) | varint32 key length | key | varint32 value length | value |
//!       | | 0 (deletion) | varint32 key length | key |
//! ```
//!
//! The i-th record (from 0) gets sequence `sequence + i`.

use crate::db::files::WRITE_BATCH_HEADER;
use crate::error::{Error, Result};
use crate::format::coding::{self, get_length_prefixed_slice};
use crate::format::{TYPE_DELETION, TYPE_VALUE};
use crate::internal_key::ValueType;

/// One record of a batch, with its sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchRecord<'a> {
    /// The record's sequence number.
    pub sequence: u64,
    /// Put or delete.
    pub kind: ValueType,
    /// The user key.
    pub key: &'a [u8],
    /// The value (empty for a deletion).
    pub value: &'a [u8],
    /// The byte offset of the record (its tag byte) in the batch.
    pub offset: u64,
}

/// A decoded batch: its header, and its records on demand.
#[derive(Debug, Clone, Copy)]
pub struct WriteBatchReader<'a> {
    sequence: u64,
    count: u32,
    records: &'a [u8],
}

impl<'a> WriteBatchReader<'a> {
    /// Reads the header of `rep`.
    ///
    /// # Errors
    /// [`Error::BadWriteBatch`] when `rep` is shorter than the 12-byte header.
    pub fn new(rep: &'a [u8]) -> Result<Self> {
        if rep.len() < WRITE_BATCH_HEADER {
            return Err(Error::BadWriteBatch {
                offset: 0,
                reason: "malformed WriteBatch (too small)",
            });
        }
        Ok(WriteBatchReader {
            sequence: coding::decode_fixed64(&rep[..8]),
            count: coding::decode_fixed32(&rep[8..12]),
            records: &rep[WRITE_BATCH_HEADER..],
        })
    }

    /// The sequence number of the first record.
    pub fn sequence(&self) -> u64 {
        self.sequence
    }

    /// The number of records the header states.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// The records. Each is checked as it is read; a bad one is an error, and so is a count
    /// that does not match the records (after the last one).
    pub fn records(&self) -> BatchRecords<'a> {
        BatchRecords {
            sequence: self.sequence,
            stated: self.count,
            seen: 0,
            rest: self.records,
            offset: WRITE_BATCH_HEADER,
            done: false,
        }
    }

    /// All records, or the first error.
    ///
    /// # Errors
    /// As [`records`](Self::records).
    pub fn collect(&self) -> Result<Vec<BatchRecord<'a>>> {
        self.records().collect()
    }
}

/// Iterator over the records of a batch.
pub struct BatchRecords<'a> {
    sequence: u64,
    stated: u32,
    seen: u32,
    rest: &'a [u8],
    offset: usize,
    done: bool,
}

impl<'a> Iterator for BatchRecords<'a> {
    type Item = Result<BatchRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let bad = |offset: usize, reason| {
            Some(Err(Error::BadWriteBatch {
                offset: offset as u64,
                reason,
            }))
        };
        let Some((&tag, mut input)) = self.rest.split_first() else {
            self.done = true;
            if self.seen != self.stated {
                return bad(self.offset, "WriteBatch has wrong count");
            }
            return None;
        };
        let at = self.offset;
        let before = self.rest.len();
        let (kind, key, value) = match tag {
            TYPE_VALUE => {
                let (Some(k), Some(v)) = (
                    get_length_prefixed_slice(&mut input),
                    get_length_prefixed_slice(&mut input),
                ) else {
                    self.done = true;
                    return bad(at, "bad WriteBatch Put");
                };
                (ValueType::Value, k, v)
            }
            TYPE_DELETION => {
                let Some(k) = get_length_prefixed_slice(&mut input) else {
                    self.done = true;
                    return bad(at, "bad WriteBatch Delete");
                };
                (ValueType::Deletion, k, &[][..])
            }
            _ => {
                self.done = true;
                return bad(at, "unknown WriteBatch tag");
            }
        };
        self.offset += before - input.len();
        self.rest = input;
        let sequence = self.sequence.wrapping_add(u64::from(self.seen));
        self.seen = self.seen.saturating_add(1);
        Some(Ok(BatchRecord {
            sequence,
            kind,
            key,
            value,
            offset: at as u64,
        }))
    }
}

/// A batch being built, in LevelDB's encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch {
            rep: vec![0; WRITE_BATCH_HEADER],
        }
    }
}

impl WriteBatch {
    /// An empty batch (sequence 0).
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the batch (no records, sequence 0), keeping its buffer for reuse: a writer
    /// that logs one batch per operation allocates nothing once the buffer has grown.
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(WRITE_BATCH_HEADER, 0);
    }

    /// Adds a put.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.bump();
        self.rep.push(TYPE_VALUE);
        coding::put_length_prefixed_slice(&mut self.rep, key);
        coding::put_length_prefixed_slice(&mut self.rep, value);
    }

    /// Adds a deletion.
    pub fn delete(&mut self, key: &[u8]) {
        self.bump();
        self.rep.push(TYPE_DELETION);
        coding::put_length_prefixed_slice(&mut self.rep, key);
    }

    fn bump(&mut self) {
        let n = coding::decode_fixed32(&self.rep[8..12]).wrapping_add(1);
        self.rep[8..12].copy_from_slice(&n.to_le_bytes());
    }

    /// Sets the sequence number of the first record.
    pub fn set_sequence(&mut self, seq: u64) {
        self.rep[..8].copy_from_slice(&seq.to_le_bytes());
    }

    /// Number of records.
    pub fn count(&self) -> u32 {
        coding::decode_fixed32(&self.rep[8..12])
    }

    /// Appends the records of `other` after this batch's (LevelDB's
    /// `WriteBatchInternal::Append`): a writer that commits a group of batches as one log
    /// record builds it this way. The sequence stays this batch's.
    pub fn append(&mut self, other: &WriteBatch) {
        let n = self.count().wrapping_add(other.count());
        self.rep[8..12].copy_from_slice(&n.to_le_bytes());
        self.rep
            .extend_from_slice(other.rep.get(WRITE_BATCH_HEADER..).unwrap_or_default());
    }

    /// The encoded batch (a log record's payload).
    pub fn as_bytes(&self) -> &[u8] {
        &self.rep
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_batches_read_as_one_with_consecutive_sequences() {
        let (mut a, mut b) = (WriteBatch::new(), WriteBatch::new());
        a.put(b"a", b"1");
        b.delete(b"b");
        b.put(b"c", b"3");
        a.append(&b);
        a.set_sequence(10);
        assert_eq!(a.count(), 3);
        let got = WriteBatchReader::new(a.as_bytes())
            .unwrap()
            .collect()
            .unwrap();
        let seqs: Vec<(u64, &[u8])> = got.iter().map(|r| (r.sequence, r.key)).collect();
        assert_eq!(seqs, [(10, &b"a"[..]), (11, b"b"), (12, b"c")]);
        assert_eq!(got[1].kind, ValueType::Deletion);
    }

    #[test]
    fn a_batch_round_trips_with_sequences() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.delete(b"b");
        b.put(b"", b"");
        b.set_sequence(100);
        let r = WriteBatchReader::new(b.as_bytes()).unwrap();
        assert_eq!((r.sequence(), r.count()), (100, 3));
        let recs = r.collect().unwrap();
        assert_eq!(recs.len(), 3);
        assert_eq!(recs[1].kind, ValueType::Deletion);
        assert_eq!((recs[2].sequence, recs[2].key), (102, &b""[..]));
    }

    #[test]
    fn a_cleared_batch_equals_a_new_one_and_is_reused() {
        let mut b = WriteBatch::new();
        b.put(b"key", b"value");
        b.delete(b"gone");
        b.set_sequence(41);
        b.clear();
        assert_eq!(b, WriteBatch::new());
        assert_eq!(b.count(), 0);
        b.put(b"k", b"v");
        b.set_sequence(7);
        let mut fresh = WriteBatch::new();
        fresh.put(b"k", b"v");
        fresh.set_sequence(7);
        assert_eq!(b.as_bytes(), fresh.as_bytes());
    }

    #[test]
    fn damaged_batches_are_errors_never_panics() {
        assert!(WriteBatchReader::new(&[0; 11]).is_err());
        let mut b = WriteBatch::new();
        b.put(b"key", b"value");
        b.delete(b"gone");
        let bytes = b.as_bytes().to_vec();
        for cut in WRITE_BATCH_HEADER..bytes.len() {
            let r = WriteBatchReader::new(&bytes[..cut]).unwrap();
            assert!(r.collect().is_err(), "cut at {cut}");
        }
        let mut wrong_count = bytes.clone();
        wrong_count[8] = 3;
        let e = WriteBatchReader::new(&wrong_count)
            .unwrap()
            .collect()
            .unwrap_err();
        assert!(e.to_string().contains("wrong count"), "{e}");
        let mut bad_tag = bytes;
        bad_tag[12] = 9;
        let e = WriteBatchReader::new(&bad_tag)
            .unwrap()
            .collect()
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("unknown WriteBatch tag at offset 12"),
            "{e}"
        );
    }
}
