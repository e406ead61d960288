//! VersionEdit: one MANIFEST record, a change to the set of live tables (LevelDB's
//! `db/version_edit.cc`).
//!
//! ```text
//! record: (varint32 tag, field)*
//!   1 comparator       varstring name
//!   2 log number       varint64
//!   3 next file number varint64
//!   4 last sequence    varint64
//!   5 compact pointer  varint32 level, varstring internal key
//!   6 deleted file     varint32 level, varint64 number
//!   7 new file         varint32 level, varint64 number, varint64 size,
//!                      varstring smallest internal key, varstring largest internal key
//!   8 (retired: large value reference)
//!   9 prev log number  varint64
//! ```

use crate::db::files::{
    NUM_LEVELS, TAG_COMPACT_POINTER, TAG_COMPARATOR, TAG_DELETED_FILE, TAG_LAST_SEQUENCE,
    TAG_LOG_NUMBER, TAG_NEW_FILE, TAG_NEXT_FILE_NUMBER, TAG_PREV_LOG_NUMBER,
    TAG_RETIRED_LARGE_VALUE_REF,
};
use crate::error::{Error, Result};
use crate::format::coding::{self, get_length_prefixed_slice, get_varint32, get_varint64};

/// A table added to a level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewFile {
    /// Its level (0..7).
    pub level: u32,
    /// Its file number (`NNNNNN.ldb`).
    pub number: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its smallest internal key.
    pub smallest: Vec<u8>,
    /// Its largest internal key.
    pub largest: Vec<u8>,
}

/// One MANIFEST record, decoded. Fields a record does not set are `None` / empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionEdit {
    /// Name of the comparator the database is ordered by.
    pub comparator: Option<String>,
    /// Logs below this number are no longer needed.
    pub log_number: Option<u64>,
    /// The log of a memtable being flushed when this was written (old LevelDBs).
    pub prev_log_number: Option<u64>,
    /// The next file number to hand out.
    pub next_file_number: Option<u64>,
    /// The last sequence number used.
    pub last_sequence: Option<u64>,
    /// Where the next compaction of a level starts (level, internal key).
    pub compact_pointers: Vec<(u32, Vec<u8>)>,
    /// Tables removed (level, number).
    pub deleted_files: Vec<(u32, u64)>,
    /// Tables added.
    pub new_files: Vec<NewFile>,
}

fn level_of(input: &mut &[u8], at: usize) -> Result<u32> {
    match get_varint32(input) {
        Some(l) if (l as usize) < NUM_LEVELS => Ok(l),
        Some(l) => Err(Error::BadVersionEdit {
            offset: at as u64,
            reason: format!("level {l} out of range (LevelDB has {NUM_LEVELS})"),
        }),
        None => Err(Error::BadVersionEdit {
            offset: at as u64,
            reason: "level".into(),
        }),
    }
}

impl VersionEdit {
    /// Decodes one MANIFEST record.
    ///
    /// # Errors
    /// [`Error::BadVersionEdit`] naming the field and its offset: a truncated field, a level
    /// out of range, the retired tag 8, an unknown tag.
    pub fn decode(record: &[u8]) -> Result<VersionEdit> {
        let mut e = VersionEdit::default();
        let mut input = record;
        let at = |input: &[u8]| record.len() - input.len();
        let bad = |offset: usize, what: &str| Error::BadVersionEdit {
            offset: offset as u64,
            reason: what.to_string(),
        };
        while !input.is_empty() {
            let start = at(input);
            let tag = get_varint32(&mut input).ok_or_else(|| bad(start, "tag"))?;
            let field = at(input);
            match tag {
                TAG_COMPARATOR => {
                    let name = get_length_prefixed_slice(&mut input)
                        .ok_or_else(|| bad(field, "comparator name"))?;
                    e.comparator = Some(String::from_utf8_lossy(name).into_owned());
                }
                TAG_LOG_NUMBER => {
                    e.log_number =
                        Some(get_varint64(&mut input).ok_or_else(|| bad(field, "log number"))?);
                }
                TAG_PREV_LOG_NUMBER => {
                    e.prev_log_number = Some(
                        get_varint64(&mut input)
                            .ok_or_else(|| bad(field, "previous log number"))?,
                    );
                }
                TAG_NEXT_FILE_NUMBER => {
                    e.next_file_number = Some(
                        get_varint64(&mut input).ok_or_else(|| bad(field, "next file number"))?,
                    );
                }
                TAG_LAST_SEQUENCE => {
                    e.last_sequence = Some(
                        get_varint64(&mut input)
                            .ok_or_else(|| bad(field, "last sequence number"))?,
                    );
                }
                TAG_COMPACT_POINTER => {
                    let level = level_of(&mut input, field)?;
                    let key = get_length_prefixed_slice(&mut input)
                        .ok_or_else(|| bad(field, "compaction pointer"))?;
                    e.compact_pointers.push((level, key.to_vec()));
                }
                TAG_DELETED_FILE => {
                    let level = level_of(&mut input, field)?;
                    let number =
                        get_varint64(&mut input).ok_or_else(|| bad(field, "deleted file"))?;
                    e.deleted_files.push((level, number));
                }
                TAG_NEW_FILE => {
                    let level = level_of(&mut input, field)?;
                    let (Some(number), Some(size), Some(smallest), Some(largest)) = (
                        get_varint64(&mut input),
                        get_varint64(&mut input),
                        get_length_prefixed_slice(&mut input),
                        get_length_prefixed_slice(&mut input),
                    ) else {
                        return Err(bad(field, "new-file entry"));
                    };
                    e.new_files.push(NewFile {
                        level,
                        number,
                        size,
                        smallest: smallest.to_vec(),
                        largest: largest.to_vec(),
                    });
                }
                TAG_RETIRED_LARGE_VALUE_REF => {
                    return Err(bad(
                        start,
                        "tag 8 (large value reference, retired before LevelDB 1.0)",
                    ));
                }
                other => return Err(bad(start, &format!("unknown tag {other}"))),
            }
        }
        Ok(e)
    }

    /// Appends the encoding of this edit, field order as LevelDB writes it.
    pub fn encode(&self, dst: &mut Vec<u8>) {
        if let Some(c) = &self.comparator {
            coding::put_varint32(dst, TAG_COMPARATOR);
            coding::put_length_prefixed_slice(dst, c.as_bytes());
        }
        let mut num = |tag, v: Option<u64>| {
            if let Some(v) = v {
                coding::put_varint32(dst, tag);
                coding::put_varint64(dst, v);
            }
        };
        num(TAG_LOG_NUMBER, self.log_number);
        num(TAG_PREV_LOG_NUMBER, self.prev_log_number);
        num(TAG_NEXT_FILE_NUMBER, self.next_file_number);
        num(TAG_LAST_SEQUENCE, self.last_sequence);
        for (level, key) in &self.compact_pointers {
            coding::put_varint32(dst, TAG_COMPACT_POINTER);
            coding::put_varint32(dst, *level);
            coding::put_length_prefixed_slice(dst, key);
        }
        for (level, number) in &self.deleted_files {
            coding::put_varint32(dst, TAG_DELETED_FILE);
            coding::put_varint32(dst, *level);
            coding::put_varint64(dst, *number);
        }
        for f in &self.new_files {
            coding::put_varint32(dst, TAG_NEW_FILE);
            coding::put_varint32(dst, f.level);
            coding::put_varint64(dst, f.number);
            coding::put_varint64(dst, f.size);
            coding::put_length_prefixed_slice(dst, &f.smallest);
            coding::put_length_prefixed_slice(dst, &f.largest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> VersionEdit {
        VersionEdit {
            comparator: Some("leveldb.BytewiseComparator".into()),
            log_number: Some(12),
            prev_log_number: Some(0),
            next_file_number: Some(14),
            last_sequence: Some(1 << 40),
            compact_pointers: vec![(1, b"k\x01\x02\0\0\0\0\0\0".to_vec())],
            deleted_files: vec![(0, 7), (2, 9)],
            new_files: vec![NewFile {
                level: 3,
                number: 13,
                size: 123_456,
                smallest: b"a\x01\x01\0\0\0\0\0\0".to_vec(),
                largest: b"z\x01\x09\0\0\0\0\0\0".to_vec(),
            }],
        }
    }

    #[test]
    fn edits_round_trip() {
        let e = sample();
        let mut buf = Vec::new();
        e.encode(&mut buf);
        assert_eq!(VersionEdit::decode(&buf).unwrap(), e);
        assert_eq!(VersionEdit::decode(&[]).unwrap(), VersionEdit::default());
    }

    #[test]
    fn every_cut_and_bad_tag_is_an_error_with_an_offset() {
        let mut buf = Vec::new();
        sample().encode(&mut buf);
        for cut in 1..buf.len() {
            // A cut may fall between fields (a shorter valid edit) or inside one (an error).
            let _ = VersionEdit::decode(&buf[..cut]);
        }
        assert!(VersionEdit::decode(&buf[..buf.len() - 1]).is_err());
        let e = VersionEdit::decode(&[8, 1, 2]).unwrap_err();
        assert!(e.to_string().contains("tag 8"), "{e}");
        let e = VersionEdit::decode(&[2, 5, 77]).unwrap_err();
        assert!(e.to_string().contains("unknown tag 77 at offset 2"), "{e}");
        let e = VersionEdit::decode(&[7, 9, 1, 1]).unwrap_err();
        assert!(e.to_string().contains("level 9 out of range"), "{e}");
    }
}
