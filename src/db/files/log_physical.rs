//! The physical records of a log file (write-ahead log or MANIFEST): every record header
//! and every byte that holds none, with offsets, read the way LevelDB's `log_reader.cc`
//! walks a file. `db::log_reader::LogReader` assembles logical records from these.
//!
//! ```text
//! | block 0 (32768 bytes)                                | block 1 ...
//! | record | record | ... | padding (< 7 bytes, zeros)  | record ...
//! record: | masked crc32c (4, LE) | length (2, LE) | type (1) | payload (length) |
//!         type: 1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST (0: preallocated zeros)
//! ```
//!
//! What is not a good record is a [`Gap`](Physical::Gap): block padding, preallocated zero
//! space, damage (a length running past its block, a type-0 header before non-zero bytes),
//! or a torn tail (the file ends inside a record). A record whose checksum fails is reported
//! as a record with `checksum_ok: false`; its length may itself be damaged, so the rest of
//! its block is dropped, as LevelDB does.

use crate::db::files::{LOG_BLOCK_SIZE, LOG_HEADER_SIZE, LOG_ZERO_TYPE};
use crate::util::crc32c;

/// One physical item of a log file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Physical<'a> {
    /// A record header whose length fits its block and the file.
    Record {
        /// File offset of the header.
        offset: u64,
        /// The type byte (1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST).
        kind: u8,
        /// The payload (`length` bytes after the header).
        payload: &'a [u8],
        /// Whether the stored checksum matches the type and payload.
        checksum_ok: bool,
        /// With a bad checksum, the bytes dropped from `offset` (to the end of the block);
        /// 0 otherwise.
        dropped: u64,
    },
    /// Bytes that hold no record.
    Gap {
        /// File offset of the first byte.
        offset: u64,
        /// Number of bytes.
        len: u64,
        /// Why they hold none.
        kind: GapKind,
    },
}

/// Why bytes of a log file hold no record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapKind {
    /// The end of a block too short for a header (the writer pads it with zeros).
    Padding,
    /// Zeros to the end of the block (space an mmap writer preallocated).
    Zeros,
    /// Damage: the bytes to the end of the block are dropped.
    Damage(&'static str),
    /// The file ends inside a record (a write in progress, or a cut file).
    Torn,
}

impl GapKind {
    /// A short name: `padding`, `zeros`, `damage`, `torn`.
    pub fn as_str(self) -> &'static str {
        match self {
            GapKind::Padding => "padding",
            GapKind::Zeros => "zeros",
            GapKind::Damage(_) => "damage",
            GapKind::Torn => "torn",
        }
    }
}

/// The name of a record type byte: `FULL`, `FIRST`, `MIDDLE`, `LAST`, `ZERO`, else
/// `UNKNOWN`.
pub fn type_name(kind: u8) -> &'static str {
    match kind {
        0 => "ZERO",
        1 => "FULL",
        2 => "FIRST",
        3 => "MIDDLE",
        4 => "LAST",
        _ => "UNKNOWN",
    }
}

/// The physical items of a log file, in file order; together they cover every byte.
pub struct PhysicalReader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> PhysicalReader<'a> {
    /// A reader over `data`, the whole file.
    pub fn new(data: &'a [u8]) -> Self {
        PhysicalReader { data, pos: 0 }
    }

    /// A reader over `data` from file offset `pos` (a record's start).
    pub fn at(data: &'a [u8], pos: usize) -> Self {
        PhysicalReader { data, pos }
    }
}

impl<'a> Iterator for PhysicalReader<'a> {
    type Item = Physical<'a>;

    fn next(&mut self) -> Option<Physical<'a>> {
        let start = self.pos;
        if start >= self.data.len() {
            return None;
        }
        let left_in_block = LOG_BLOCK_SIZE - start % LOG_BLOCK_SIZE;
        let rest = &self.data[start..];
        let to_block_end = left_in_block.min(rest.len());
        let gap = |len: usize, kind| Physical::Gap {
            offset: start as u64,
            len: len as u64,
            kind,
        };
        if left_in_block < LOG_HEADER_SIZE {
            self.pos = start + left_in_block;
            return Some(gap(to_block_end, GapKind::Padding));
        }
        if rest.len() < LOG_HEADER_SIZE {
            self.pos = self.data.len();
            return Some(gap(rest.len(), GapKind::Torn));
        }
        let length = usize::from(u16::from_le_bytes([rest[4], rest[5]]));
        let kind = rest[6];
        if kind == LOG_ZERO_TYPE && length == 0 {
            self.pos = start + left_in_block;
            return Some(if rest[..to_block_end].iter().all(|&b| b == 0) {
                gap(to_block_end, GapKind::Zeros)
            } else {
                gap(
                    to_block_end,
                    GapKind::Damage("zero-length record of type 0"),
                )
            });
        }
        if LOG_HEADER_SIZE + length > left_in_block {
            // A record never crosses a block boundary.
            self.pos = start + left_in_block;
            return Some(gap(to_block_end, GapKind::Damage("bad record length")));
        }
        if LOG_HEADER_SIZE + length > rest.len() {
            self.pos = self.data.len();
            return Some(gap(rest.len(), GapKind::Torn));
        }
        let payload = &rest[LOG_HEADER_SIZE..LOG_HEADER_SIZE + length];
        let stored = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let checksum_ok = stored == crc32c::mask(crc32c::value(&rest[6..LOG_HEADER_SIZE + length]));
        let dropped = if checksum_ok {
            self.pos = start + LOG_HEADER_SIZE + length;
            0
        } else {
            // The length itself may be damaged: the rest of the block is dropped.
            self.pos = start + left_in_block;
            to_block_end as u64
        };
        Some(Physical::Record {
            offset: start as u64,
            kind,
            payload,
            checksum_ok,
            dropped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::files::LogWriter;

    /// The bytes each item covers.
    fn span(p: &Physical<'_>) -> (u64, u64) {
        match *p {
            Physical::Record {
                offset,
                payload,
                checksum_ok,
                dropped,
                ..
            } => (
                offset,
                if checksum_ok {
                    (LOG_HEADER_SIZE + payload.len()) as u64
                } else {
                    dropped
                },
            ),
            Physical::Gap { offset, len, .. } => (offset, len),
        }
    }

    #[test]
    fn items_cover_every_byte_and_name_fragments_padding_damage_and_a_torn_tail() {
        let mut w = LogWriter::new(Vec::new());
        w.add_record(b"one").unwrap();
        w.add_record(&vec![7u8; 70_000]).unwrap();
        w.add_record(b"three").unwrap();
        let mut bytes = w.into_inner();
        let types = |b: &[u8]| -> Vec<String> {
            PhysicalReader::new(b)
                .map(|p| match p {
                    Physical::Record {
                        kind, checksum_ok, ..
                    } => format!("{}{}", type_name(kind), if checksum_ok { "" } else { "!" }),
                    Physical::Gap { kind, .. } => kind.as_str().to_string(),
                })
                .collect()
        };
        assert_eq!(types(&bytes), ["FULL", "FIRST", "MIDDLE", "LAST", "FULL"]);
        // A flipped payload byte of the first record: a bad checksum, the rest of block 0
        // dropped; then the file is cut inside the last record.
        bytes[8] ^= 1;
        let cut = &bytes[..bytes.len() - 2];
        assert_eq!(types(cut), ["FULL!", "MIDDLE", "LAST", "torn"]);
        for b in [&bytes[..], cut] {
            let mut at = 0;
            for p in PhysicalReader::new(b) {
                let (o, n) = span(&p);
                assert_eq!(o, at, "{p:?}");
                at = o + n;
            }
            assert_eq!(at, b.len() as u64);
        }
        // Padding at a block's end, zeros, a bad length.
        let mut z = vec![0u8; LOG_BLOCK_SIZE + 20];
        z[LOG_BLOCK_SIZE + 4] = 0xff; // length 255 in a 20-byte rest: torn
        assert_eq!(types(&z), ["zeros", "torn"]);
        let mut p = vec![1u8; LOG_BLOCK_SIZE - 3];
        p[4] = 0xff;
        p[5] = 0xff; // 65535 bytes: past the block
        assert_eq!(types(&p), ["damage"]);
    }
}
