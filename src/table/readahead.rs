//! Readahead for forward scans: one large read serves many consecutive blocks.

use bytes::Bytes;

use crate::block::stored::check_handle;
use crate::error::{BlockKind, Error, Result};
use crate::format::{BlockHandle, BLOCK_TRAILER_LEN};
use crate::io::RandomAccess;

/// Bytes read ahead of a forward scan: one large read serves many consecutive blocks.
#[derive(Default)]
pub(crate) struct Readahead {
    start: u64,
    buf: Bytes,
}

/// Size of one readahead read.
pub(super) const READAHEAD_BYTES: u64 = 256 * 1024;

impl Readahead {
    /// The stored block plus trailer at `handle`, from the window or after refilling it.
    pub(crate) fn fetch<R: RandomAccess>(
        &mut self,
        file: &R,
        handle: BlockHandle,
        data_end: u64,
    ) -> Result<Bytes> {
        check_handle(handle, BlockKind::Data, data_end)?;
        // ok: check_handle proved offset + size + 5 <= data_end.
        let n = handle.size + BLOCK_TRAILER_LEN as u64;
        let inside =
            handle.offset >= self.start && handle.offset + n <= self.start + self.buf.len() as u64;
        if !inside {
            let len = n.max(READAHEAD_BYTES).min(data_end - handle.offset);
            self.buf = file
                .read_at(handle.offset, len as usize)
                .map_err(|e| Error::io_at(e, BlockKind::Data, handle))?;
            self.start = handle.offset;
            if (self.buf.len() as u64) < n {
                return Err(Error::TruncatedBlock {
                    kind: BlockKind::Data,
                    handle,
                    got: self.buf.len(),
                });
            }
        }
        let at = (handle.offset - self.start) as usize;
        Ok(self.buf.slice(at..at + n as usize))
    }
}
