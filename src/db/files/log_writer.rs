//! Writing a log file (write-ahead log or MANIFEST) in LevelDB's format, byte for byte as
//! LevelDB's `db/log_writer.cc` writes it: records fragmented across 32 KiB blocks, a block
//! with fewer than 7 bytes left padded with zeros.
//!
//! ```text
//! | masked crc32c (4, LE) | length (2, LE) | type (1) | payload |   per fragment
//! ```

use std::io::{self, Write};

use crate::db::files::{
    LOG_BLOCK_SIZE, LOG_FIRST, LOG_FULL, LOG_HEADER_SIZE, LOG_LAST, LOG_MIDDLE,
};
use crate::util::crc32c;

/// Appends records to a log.
pub struct LogWriter<W: Write> {
    out: W,
    /// Offset within the current block.
    block_offset: usize,
}

impl<W: Write> LogWriter<W> {
    /// A writer at the start of an empty log.
    pub fn new(out: W) -> Self {
        LogWriter {
            out,
            block_offset: 0,
        }
    }

    /// A writer appending to a log that already holds `len` bytes.
    pub fn appending(out: W, len: u64) -> Self {
        LogWriter {
            out,
            block_offset: (len % LOG_BLOCK_SIZE as u64) as usize,
        }
    }

    /// Appends one record (split into fragments as needed).
    ///
    /// # Errors
    /// The writer's error.
    pub fn add_record(&mut self, data: &[u8]) -> io::Result<()> {
        let mut rest = data;
        let mut begin = true;
        loop {
            let left = LOG_BLOCK_SIZE - self.block_offset;
            if left < LOG_HEADER_SIZE {
                // Fill the block's tail with zeros and switch to a new block.
                const ZEROS: [u8; LOG_HEADER_SIZE] = [0; LOG_HEADER_SIZE];
                self.out.write_all(&ZEROS[..left])?;
                self.block_offset = 0;
            }
            let avail = LOG_BLOCK_SIZE - self.block_offset - LOG_HEADER_SIZE;
            let n = rest.len().min(avail);
            let end = n == rest.len();
            let kind = match (begin, end) {
                (true, true) => LOG_FULL,
                (true, false) => LOG_FIRST,
                (false, true) => LOG_LAST,
                (false, false) => LOG_MIDDLE,
            };
            self.emit(kind, &rest[..n])?;
            rest = &rest[n..];
            begin = false;
            if end {
                return Ok(());
            }
        }
    }

    fn emit(&mut self, kind: u8, payload: &[u8]) -> io::Result<()> {
        let crc = crc32c::mask(crc32c::extend(crc32c::value(&[kind]), payload));
        let mut header = [0u8; LOG_HEADER_SIZE];
        header[..4].copy_from_slice(&crc.to_le_bytes());
        // ok: a fragment fits in a block, so its length fits in 16 bits.
        header[4..6].copy_from_slice(&(payload.len() as u16).to_le_bytes());
        header[6] = kind;
        self.out.write_all(&header)?;
        self.out.write_all(payload)?;
        self.block_offset += LOG_HEADER_SIZE + payload.len();
        Ok(())
    }

    /// Flushes the underlying writer.
    ///
    /// # Errors
    /// The writer's error.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.out
    }

    /// Gives back the underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::files::{LogItem, LogReader};

    fn records(log: &[u8]) -> Vec<Vec<u8>> {
        LogReader::new(log)
            .map(|i| match i {
                LogItem::Record { data, .. } => data.into_owned(),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn records_of_every_size_round_trip_across_blocks() {
        let sizes = [0usize, 1, 100, 32761, 32762, 32768, 70000, 5, 0, 200_000, 3];
        let recs: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|j| (i * 31 + j) as u8).collect())
            .collect();
        let mut w = LogWriter::new(Vec::new());
        for r in &recs {
            w.add_record(r).unwrap();
        }
        let log = w.into_inner();
        assert_eq!(records(&log), recs);
        // Appending to the existing bytes continues the same block layout.
        let mut w = LogWriter::appending(log.clone(), log.len() as u64);
        w.add_record(b"more").unwrap();
        let log2 = w.into_inner();
        let mut want = recs.clone();
        want.push(b"more".to_vec());
        assert_eq!(records(&log2), want);
    }

    #[test]
    fn a_block_tail_under_seven_bytes_is_zero_padded() {
        let mut w = LogWriter::new(Vec::new());
        w.add_record(&vec![7u8; LOG_BLOCK_SIZE - LOG_HEADER_SIZE - 3])
            .unwrap();
        w.add_record(b"x").unwrap();
        let log = w.into_inner();
        assert_eq!(&log[LOG_BLOCK_SIZE - 3..LOG_BLOCK_SIZE], &[0, 0, 0]);
        assert_eq!(log.len(), LOG_BLOCK_SIZE + LOG_HEADER_SIZE + 1);
        assert_eq!(records(&log).len(), 2);
    }
}
