//! Reading a log file: the write-ahead log (`NNNNNN.log`, one WriteBatch per record) and the
//! MANIFEST (one VersionEdit per record) share this format.
//!
//! ```text
//! | block (32768 bytes) | block | ... |
//! block:  | record | record | ... | padding: < 7 zero bytes |
//! record: | masked crc32c of type+payload (4, LE) | length (2, LE) | type (1) | payload |
//!          a logical record is one FULL fragment, or FIRST, MIDDLE..., LAST
//! ```
//!
//! The reader follows LevelDB's `db/log_reader.cc`: a damaged record is reported with its
//! offset and the bytes dropped, and reading goes on with the next block (the records before
//! it are kept, and so are good records after it); a record cut off by the end of the file is
//! a torn tail (a writer stopped mid-record), reported as such.

use std::borrow::Cow;

use crate::db::files::{GapKind, Physical, PhysicalReader};
use crate::db::files::{LOG_FIRST, LOG_FULL, LOG_HEADER_SIZE, LOG_LAST, LOG_MIDDLE};
use crate::error::Error;

/// One item of a log: a logical record, or damage.
#[derive(Debug)]
pub enum LogItem<'a> {
    /// A whole record: its payload and the file offset of its first fragment.
    Record {
        /// File offset of the record's first fragment header.
        offset: u64,
        /// The payload (borrowed when it is one fragment).
        data: Cow<'a, [u8]>,
    },
    /// Bytes that could not be read as records ([`Error::BadLogRecord`]).
    Damage(Error),
    /// The file ends inside a record: the writer stopped mid-record (or the file was cut).
    /// LevelDB's recovery ignores such a tail; it is reported so nothing is dropped silently.
    TornTail {
        /// Offset of the incomplete record.
        offset: u64,
        /// Its bytes.
        len: u64,
    },
}

/// A reader over the bytes of a log file.
pub struct LogReader<'a> {
    data: &'a [u8],
    physical: PhysicalReader<'a>,
    /// Fragments of the record being assembled, and the offset of its first one.
    pending: Option<(u64, Vec<u8>)>,
    done: bool,
}

/// One physical fragment.
enum Fragment<'a> {
    Ok {
        offset: usize,
        kind: u8,
        payload: &'a [u8],
    },
    Bad(Error),
    Torn {
        offset: usize,
    },
    Eof,
}

impl<'a> LogReader<'a> {
    /// A reader over `data`, the whole log file.
    pub fn new(data: &'a [u8]) -> Self {
        LogReader {
            data,
            physical: PhysicalReader::new(data),
            pending: None,
            done: false,
        }
    }

    fn bad(offset: usize, dropped: usize, reason: &'static str) -> Error {
        Error::BadLogRecord {
            offset: offset as u64,
            dropped: dropped as u64,
            reason,
        }
    }

    /// The next physical fragment (padding and preallocated zeros passed over).
    fn fragment(&mut self) -> Fragment<'a> {
        loop {
            let Some(item) = self.physical.next() else {
                return Fragment::Eof;
            };
            return match item {
                Physical::Record {
                    offset,
                    kind,
                    payload,
                    checksum_ok: true,
                    ..
                } => Fragment::Ok {
                    offset: offset as usize,
                    kind,
                    payload,
                },
                Physical::Record {
                    offset, dropped, ..
                } => Fragment::Bad(Self::bad(
                    offset as usize,
                    dropped as usize,
                    "checksum mismatch",
                )),
                Physical::Gap {
                    kind: GapKind::Padding | GapKind::Zeros,
                    ..
                } => continue,
                Physical::Gap {
                    offset,
                    len,
                    kind: GapKind::Damage(reason),
                } => Fragment::Bad(Self::bad(offset as usize, len as usize, reason)),
                Physical::Gap {
                    offset,
                    kind: GapKind::Torn,
                    ..
                } => Fragment::Torn {
                    offset: offset as usize,
                },
            };
        }
    }

    /// Reads on from file offset `offset` (a record start), forgetting any record being
    /// assembled.
    fn restart_at(&mut self, offset: usize) {
        self.physical = PhysicalReader::at(self.data, offset);
    }
}

impl<'a> Iterator for LogReader<'a> {
    type Item = LogItem<'a>;

    fn next(&mut self) -> Option<LogItem<'a>> {
        if self.done {
            return None;
        }
        loop {
            match self.fragment() {
                Fragment::Eof => {
                    self.done = true;
                    let (offset, _) = self.pending.take()?;
                    return Some(LogItem::TornTail {
                        offset,
                        len: self.data.len() as u64 - offset,
                    });
                }
                Fragment::Torn { offset } => {
                    self.done = true;
                    let offset = self.pending.take().map_or(offset as u64, |(o, _)| o);
                    return Some(LogItem::TornTail {
                        offset,
                        len: self.data.len() as u64 - offset,
                    });
                }
                Fragment::Bad(e) => {
                    // A record being assembled is lost with the damaged fragment.
                    self.pending = None;
                    return Some(LogItem::Damage(e));
                }
                Fragment::Ok {
                    offset,
                    kind,
                    payload,
                } => match kind {
                    LOG_FULL => {
                        if let Some((o, partial)) = self.pending.take() {
                            self.pending = None;
                            // Report the partial record; the FULL one is read next time.
                            self.restart_at(offset);
                            let dropped = partial.len();
                            return Some(LogItem::Damage(Self::bad(
                                o as usize,
                                dropped,
                                "partial record without end",
                            )));
                        }
                        return Some(LogItem::Record {
                            offset: offset as u64,
                            data: Cow::Borrowed(payload),
                        });
                    }
                    LOG_FIRST => {
                        if let Some((o, partial)) = self.pending.take() {
                            self.restart_at(offset);
                            return Some(LogItem::Damage(Self::bad(
                                o as usize,
                                partial.len(),
                                "partial record without end",
                            )));
                        }
                        self.pending = Some((offset as u64, payload.to_vec()));
                    }
                    LOG_MIDDLE | LOG_LAST => {
                        let Some((o, mut buf)) = self.pending.take() else {
                            return Some(LogItem::Damage(Self::bad(
                                offset,
                                LOG_HEADER_SIZE + payload.len(),
                                "missing start of fragmented record",
                            )));
                        };
                        buf.extend_from_slice(payload);
                        if kind == LOG_LAST {
                            return Some(LogItem::Record {
                                offset: o,
                                data: Cow::Owned(buf),
                            });
                        }
                        self.pending = Some((o, buf));
                    }
                    _ => {
                        self.pending = None;
                        return Some(LogItem::Damage(Self::bad(
                            offset,
                            LOG_HEADER_SIZE + payload.len(),
                            "unknown record type",
                        )));
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::files::LogWriter;
    use crate::db::files::LOG_BLOCK_SIZE;

    fn log(records: &[&[u8]]) -> Vec<u8> {
        let mut w = LogWriter::new(Vec::new());
        for r in records {
            w.add_record(r).unwrap();
        }
        w.into_inner()
    }

    #[test]
    fn damage_is_reported_where_it_is_and_later_blocks_are_read() {
        let big = vec![7u8; 40_000];
        let mut bytes = log(&[b"one", &big, b"three"]);
        // A bad checksum in the first record: the rest of block 0 is dropped (the FIRST
        // fragment of the big record too), its LAST fragment in block 1 has no start, and
        // "three" is read.
        bytes[8] ^= 1;
        let items: Vec<LogItem<'_>> = LogReader::new(&bytes).collect();
        let mut kinds = Vec::new();
        for i in &items {
            kinds.push(match i {
                LogItem::Record { data, .. } => format!("record {}", data.len()),
                LogItem::Damage(Error::BadLogRecord { offset, reason, .. }) => {
                    format!("{reason} at {offset}")
                }
                other => format!("{other:?}"),
            });
        }
        assert_eq!(
            kinds,
            [
                "checksum mismatch at 0".to_string(),
                format!("missing start of fragmented record at {LOG_BLOCK_SIZE}"),
                "record 5".to_string(),
            ]
        );
    }

    #[test]
    fn a_cut_file_ends_in_a_torn_tail_and_a_stray_type_0_header_is_damage() {
        let bytes = log(&[b"one", b"two"]);
        let cut = &bytes[..bytes.len() - 1];
        let items: Vec<LogItem<'_>> = LogReader::new(cut).collect();
        assert!(matches!(items[0], LogItem::Record { .. }));
        assert!(
            matches!(items[1], LogItem::TornTail { offset: 10, len: 9 }),
            "{items:?}"
        );
        // A zero-length type-0 header followed by non-zero bytes, near the end of the file:
        // damage whose dropped bytes stay inside the file.
        let mut z = vec![0u8; 7];
        z.extend_from_slice(b"xy");
        match LogReader::new(&z).next() {
            Some(LogItem::Damage(Error::BadLogRecord {
                offset: 0,
                dropped: 9,
                ..
            })) => {}
            other => panic!("{other:?}"),
        }
        // Zero padding only: nothing at all.
        assert!(LogReader::new(&[0u8; 100]).next().is_none());
    }
}
