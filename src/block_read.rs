//! Reading one stored block: handle check, positioned read, trailer checksum, decompression
//! (and the trailer a builder writes). Every block the crate reads, for gets, scans, the
//! index, metaindex and filter, goes through [`read_block`] or [`decode_block`].
//!
//! ```text
//! file: ... | block data (handle.size bytes) | type (1) | masked crc32c (4, LE) | ...
//!           ^ handle.offset                   \_________ trailer, 5 bytes ______/
//! crc32c covers block data + type; type 0 = stored as is, else a compression id
//! ```

use std::sync::Arc;

use bytes::Bytes;

use crate::cache::BufferPool;
use crate::coding;
use crate::compress::{self, CompressionProfile};
use crate::crc32c;
use crate::error::{BlockKind, Error, Result};
use crate::format::{BlockHandle, BLOCK_TRAILER_LEN, COMPRESSION_NONE};
use crate::format_decode::check_handle;
use crate::io::RandomAccess;

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

/// How `read_block` treats a block.
#[derive(Debug, Clone, Copy)]
pub struct ReadBlockOptions {
    /// Compare the trailer's CRC with the stored bytes.
    pub verify_checksum: bool,
    /// How compression id 2 is read.
    pub profile: CompressionProfile,
}

/// Reads the block at `handle`: checks the handle against `data_end` (the footer's offset)
/// before reading, then the checksum (if asked), then decompresses.
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
    read_block_in(file, handle, kind, data_end, opts, None)
}

/// [`read_block`] that decompresses into a buffer from `pool`, if given (the buffer goes
/// back to the pool when the block is dropped).
pub(crate) fn read_block_in<R: RandomAccess + ?Sized>(
    file: &R,
    handle: BlockHandle,
    kind: BlockKind,
    data_end: u64,
    opts: ReadBlockOptions,
    pool: Option<&Arc<BufferPool>>,
) -> Result<BlockContents> {
    let raw = read_raw(file, handle, kind, data_end)?;
    decode_block_in(raw, handle, kind, opts, pool)
}

/// The block at `handle` as stored, trailer included, after the handle check.
fn read_raw<R: RandomAccess + ?Sized>(
    file: &R,
    handle: BlockHandle,
    kind: BlockKind,
    data_end: u64,
) -> Result<Bytes> {
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
    Ok(raw)
}

/// The block at `handle` as stored (without its trailer) and its compression id, the
/// checksum compared if `verify_checksum`: for a reader that decompresses it its own way.
///
/// # Errors
/// As [`read_block`], except for decompression.
pub(crate) fn read_stored<R: RandomAccess + ?Sized>(
    file: &R,
    handle: BlockHandle,
    kind: BlockKind,
    data_end: u64,
    verify_checksum: bool,
) -> Result<(Bytes, u8)> {
    let raw = read_raw(file, handle, kind, data_end)?;
    let size = check_trailer(&raw, handle, kind, verify_checksum)?;
    Ok((raw.slice(..size), raw[size]))
}

/// The uncompressed block from `stored` (a block as stored, compression id
/// `compression`), decompressed into a buffer from `pool` when there is one.
///
/// # Errors
/// An unknown compression id or a block that does not decompress.
pub(crate) fn decompress_stored(
    stored: Bytes,
    compression: u8,
    handle: BlockHandle,
    kind: BlockKind,
    profile: CompressionProfile,
    pool: Option<&Arc<BufferPool>>,
) -> Result<Bytes> {
    if compression == COMPRESSION_NONE {
        return Ok(stored);
    }
    let spare = |len| pool.map(|p| p.take(len)).unwrap_or_default();
    let out =
        compress::decompress_reusing(compression, &stored, profile, spare).map_err(|reason| {
            Error::Decompress {
                kind,
                handle,
                compression,
                reason,
            }
        })?;
    Ok(match pool {
        Some(p) => p.bytes(out),
        None => out.into_bytes(),
    })
}

/// Checks `raw` = stored block + trailer (its length, and its checksum if `verify`);
/// returns the stored block's length.
fn check_trailer(raw: &[u8], handle: BlockHandle, kind: BlockKind, verify: bool) -> Result<usize> {
    let size = raw.len().saturating_sub(BLOCK_TRAILER_LEN);
    if raw.len() < BLOCK_TRAILER_LEN {
        return Err(Error::TruncatedBlock {
            kind,
            handle,
            got: raw.len(),
        });
    }
    if verify {
        // The checksum first: it streams through the block from its start, so the trailer
        // is in the CPU cache when it is read (reading the type byte first costs a cache miss
        // at the block's far end before the stream starts).
        // Every line requested together first: the checksum's reads are sequential.
        crate::block::touch_lines(raw);
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
    Ok(size)
}

/// Checks and decompresses `raw` = stored block + 5-byte trailer, read from `handle`.
///
/// # Errors
/// As [`read_block`], except for the handle and I/O checks.
pub fn decode_block(
    raw: Bytes,
    handle: BlockHandle,
    kind: BlockKind,
    opts: ReadBlockOptions,
) -> Result<BlockContents> {
    decode_block_in(raw, handle, kind, opts, None)
}

/// [`decode_block`], decompressing into a buffer from `pool` when there is one.
pub(crate) fn decode_block_in(
    raw: Bytes,
    handle: BlockHandle,
    kind: BlockKind,
    opts: ReadBlockOptions,
    pool: Option<&Arc<BufferPool>>,
) -> Result<BlockContents> {
    let size = check_trailer(&raw, handle, kind, opts.verify_checksum)?;
    let compression = raw[size];
    let data = decompress_stored(
        raw.slice(..size),
        compression,
        handle,
        kind,
        opts.profile,
        pool,
    )?;
    Ok(BlockContents {
        data,
        compression,
        checksum_verified: opts.verify_checksum,
    })
}

/// Builds the 5-byte trailer for `block` stored with compression id `compression`.
pub fn block_trailer(block: &[u8], compression: u8) -> [u8; BLOCK_TRAILER_LEN] {
    let crc = crc32c::extend(crc32c::value(block), &[compression]);
    let m = crc32c::mask(crc).to_le_bytes();
    [compression, m[0], m[1], m[2], m[3]]
}
