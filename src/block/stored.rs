//! Reading one stored block: handle check, positioned read, trailer checksum, decompression
//! (and the trailer a builder writes). Every block the crate reads, for gets, scans, the
//! index, metaindex and filter, goes through [`read_block`] or its two steps
//! ([`StoredBlock`]: read and check, then decompress).
//!
//! ```text
//! file: ... | block data (handle.size bytes) | type (1) | masked crc32c (4, LE) | ...
//!           ^ handle.offset                   \_________ trailer, 5 bytes ______/
//! crc32c covers block data + type; type 0 = stored as is, else a compression id
//! ```

use std::sync::Arc;

use bytes::Bytes;

use crate::compress::BufferPool;
use crate::compress::{self, CompressionProfile};
use crate::error::{BlockKind, Error, Result};
use crate::format::coding;
use crate::format::{BlockHandle, BLOCK_TRAILER_LEN, COMPRESSION_NONE};
use crate::io::RandomAccess;
use crate::util::crc32c;

/// A block's bytes as read from the file, after checksum and decompression.
#[derive(Debug, Clone)]
pub struct BlockContents {
    /// The uncompressed block.
    pub data: Bytes,
    /// Compression id of the stored block (the trailer's type byte).
    pub compression: u8,
    /// Whether the trailer's checksum was compared (and matched).
    pub checksum_verified: bool,
}

/// How [`read_block`] treats a block.
#[derive(Debug, Clone, Copy)]
pub struct ReadBlockOptions {
    /// Compare the trailer's CRC with the stored bytes.
    pub verify_checksum: bool,
    /// How compression id 2 is read.
    pub profile: CompressionProfile,
}

/// Reads the block at `handle` and decompresses it: [`StoredBlock::read`], then
/// [`StoredBlock::decompress`]. The one way the crate reads a block; readers that take the
/// steps apart (readahead, a partial decompression) take these two.
///
/// # Errors
/// A bad handle, an I/O error, a checksum mismatch, an unknown compression id or a block
/// that does not decompress; each error names the block.
pub fn read_block<R: RandomAccess + ?Sized>(
    file: &R,
    handle: BlockHandle,
    kind: BlockKind,
    data_end: u64,
    opts: ReadBlockOptions,
) -> Result<BlockContents> {
    StoredBlock::read(file, handle, kind, data_end, opts)?.decompress()
}

/// A block as the file stores it (compressed or not), its trailer checked: the first step
/// of [`read_block`].
#[derive(Debug, Clone)]
pub struct StoredBlock {
    /// The stored bytes, without the trailer.
    pub data: Bytes,
    /// Compression id (the trailer's type byte).
    pub compression: u8,
    /// Whether the trailer's checksum was compared (and matched).
    pub checksum_verified: bool,
    handle: BlockHandle,
    kind: BlockKind,
    profile: CompressionProfile,
}

impl StoredBlock {
    /// Reads the block at `handle`: checks the handle against `data_end` (the footer's
    /// offset) before reading, then the trailer, and the checksum if `opts` asks.
    ///
    /// # Errors
    /// A bad handle, an I/O error, a short read or a checksum mismatch.
    pub fn read<R: RandomAccess + ?Sized>(
        file: &R,
        handle: BlockHandle,
        kind: BlockKind,
        data_end: u64,
        opts: ReadBlockOptions,
    ) -> Result<StoredBlock> {
        check_handle(handle, kind, data_end)?;
        // ok: check_handle proved offset + size + 5 fits in u64 and in the file.
        let n = handle.size as usize + BLOCK_TRAILER_LEN;
        let raw = file
            .read_at(handle.offset, n)
            .map_err(|e| Error::io_at(e, kind, handle))?;
        if raw.len() != n {
            return Err(Error::TruncatedBlock {
                kind,
                handle,
                got: raw.len(),
            });
        }
        StoredBlock::from_raw(raw, handle, kind, opts)
    }

    /// The block in `raw` (the stored block and its 5-byte trailer, read from `handle` some
    /// other way): checks the trailer, and the checksum if `opts` asks.
    ///
    /// # Errors
    /// A trailer that is cut short or a checksum mismatch.
    pub fn from_raw(
        raw: Bytes,
        handle: BlockHandle,
        kind: BlockKind,
        opts: ReadBlockOptions,
    ) -> Result<StoredBlock> {
        let Some(size) = raw.len().checked_sub(BLOCK_TRAILER_LEN) else {
            return Err(Error::TruncatedBlock {
                kind,
                handle,
                got: raw.len(),
            });
        };
        if opts.verify_checksum {
            // The checksum first: it streams through the block from its start, so the
            // trailer is in the CPU cache when it is read (reading the type byte first
            // costs a cache miss at the block's far end before the stream starts). Every
            // line requested together first: the checksum's reads are sequential.
            crate::block::touch_lines(&raw);
            let actual = crc32c::value(&raw[..size + 1]);
            let expected = crc32c::unmask(coding::decode_fixed32(&raw[size + 1..]));
            if expected != actual {
                return Err(Error::ChecksumMismatch {
                    kind,
                    handle,
                    expected,
                    actual,
                });
            }
        }
        Ok(StoredBlock {
            compression: raw[size],
            data: raw.slice(..size),
            checksum_verified: opts.verify_checksum,
            handle,
            kind,
            profile: opts.profile,
        })
    }

    /// The uncompressed block: the second step of [`read_block`].
    ///
    /// # Errors
    /// An unknown compression id or a block that does not decompress.
    pub fn decompress(self) -> Result<BlockContents> {
        self.decompress_in(None)
    }

    /// [`decompress`](Self::decompress) into a buffer from `pool` when there is one (it goes
    /// back to the pool when the block is dropped).
    pub(crate) fn decompress_in(self, pool: Option<&Arc<BufferPool>>) -> Result<BlockContents> {
        let StoredBlock {
            data,
            compression,
            checksum_verified,
            handle,
            kind,
            profile,
        } = self;
        if compression == COMPRESSION_NONE {
            return Ok(BlockContents {
                data,
                compression,
                checksum_verified,
            });
        }
        let spare = |len| pool.map(|p| p.take(len)).unwrap_or_default();
        let out =
            compress::decompress_reusing(compression, &data, profile, spare).map_err(|reason| {
                Error::Decompress {
                    kind,
                    handle,
                    compression,
                    reason,
                }
            })?;
        let data = match pool {
            Some(p) => p.bytes(out),
            None => out.into_bytes(),
        };
        Ok(BlockContents {
            data,
            compression,
            checksum_verified,
        })
    }
}

/// Builds the 5-byte trailer for `block` stored with compression id `compression`.
pub fn block_trailer(block: &[u8], compression: u8) -> [u8; BLOCK_TRAILER_LEN] {
    let crc = crc32c::extend(crc32c::value(block), &[compression]);
    let m = crc32c::mask(crc).to_le_bytes();
    [compression, m[0], m[1], m[2], m[3]]
}

/// Checks that `handle` (plus its trailer) lies inside the first `data_end` bytes of the file.
///
/// # Errors
/// [`Error::BadBlockHandle`] when it does not; nothing has been allocated at that point.
pub fn check_handle(handle: BlockHandle, kind: BlockKind, data_end: u64) -> Result<()> {
    match handle.end_with_trailer() {
        Some(end) if end <= data_end => Ok(()),
        _ => Err(Error::BadBlockHandle {
            kind,
            handle,
            limit: data_end,
        }),
    }
}
