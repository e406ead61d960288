//! Block compression codecs, by the trailer's type byte.
//!
//! ```text
//! id  google/leveldb        Mojang (Bedrock)       RocksDB
//! 0   none                  none                   none
//! 1   snappy (raw format)   snappy                 snappy
//! 2   zstd (main only)      zlib stream (RFC 1950) zlib
//! 3   -                     zstd                   bzip2
//! 4   -                     raw deflate (RFC 1951) lz4
//! ```
//!
//! Id 2 is ambiguous; [`CompressionProfile::Auto`] tells zstd and zlib apart by their first
//! bytes (a zstd frame starts `28 b5 2f fd`; a zlib header has `CM = 8` and a header checksum
//! divisible by 31, which `28 b5` is not). Every decompressor's output is bounded by a multiple
//! of its input that the codec cannot exceed, and by [`MAX_BLOCK_BYTES`], so a hostile block
//! cannot make us allocate without limit.

mod pool;

pub(crate) use pool::{BlockBuf, BufferPool};

use std::fmt;

use crate::format::{
    COMPRESSION_ID2_ZSTD_OR_ZLIB, COMPRESSION_MOJANG_RAW_DEFLATE, COMPRESSION_MOJANG_ZSTD,
    COMPRESSION_NONE, COMPRESSION_SNAPPY, ZSTD_FRAME_MAGIC,
};

/// Largest uncompressed block we agree to produce (1 GiB). LevelDB blocks hold at least one
/// whole value, so this also bounds the values we can read.
pub const MAX_BLOCK_BYTES: usize = 1 << 30;

/// How to read the ambiguous compression id 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompressionProfile {
    /// Decide by content: zstd frame magic means zstd, a valid zlib header means zlib.
    #[default]
    Auto,
    /// google/leveldb: id 2 is zstd.
    LevelDb,
    /// Mojang's fork (and RocksDB): id 2 is zlib.
    Mojang,
}

/// Compression used when writing blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    /// Store blocks raw (id 0).
    None,
    /// Raw snappy (id 1), LevelDB's default.
    #[default]
    Snappy,
    /// zstd at the given level (id 2, as google/leveldb main writes it).
    #[cfg(feature = "zstd")]
    Zstd(i32),
    /// Raw deflate at the given level 0..=9 (id 4, what Minecraft Bedrock writes).
    #[cfg(feature = "zlib")]
    RawDeflate(u32),
    /// A zlib stream at the given level 0..=9 (id 2 as Mojang's fork and older Bedrock
    /// worlds use it; google/leveldb main reads id 2 as zstd instead).
    #[cfg(feature = "zlib")]
    Zlib(u32),
}

impl Compression {
    /// The type byte blocks compressed this way carry.
    pub fn id(self) -> u8 {
        match self {
            Compression::None => COMPRESSION_NONE,
            Compression::Snappy => COMPRESSION_SNAPPY,
            #[cfg(feature = "zstd")]
            Compression::Zstd(_) => COMPRESSION_ID2_ZSTD_OR_ZLIB,
            #[cfg(feature = "zlib")]
            Compression::RawDeflate(_) => COMPRESSION_MOJANG_RAW_DEFLATE,
            #[cfg(feature = "zlib")]
            Compression::Zlib(_) => COMPRESSION_ID2_ZSTD_OR_ZLIB,
        }
    }
}

/// Why a block did not decompress.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecompressError {
    /// The type byte names no codec we know ("bad block type").
    UnknownType,
    /// The codec is known but was compiled out (cargo feature off).
    Unsupported(&'static str),
    /// The stated uncompressed length is missing, absurd or over the bound.
    BadLength(&'static str),
    /// The compressed bytes are not valid for the codec.
    BadContents(&'static str),
}

impl fmt::Display for DecompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecompressError::UnknownType => f.write_str("bad block type"),
            DecompressError::Unsupported(c) => write!(f, "{c} support not compiled in"),
            DecompressError::BadLength(c) => write!(f, "corrupted {c} compressed block length"),
            DecompressError::BadContents(c) => write!(f, "corrupted {c} compressed block contents"),
        }
    }
}

/// Human name of a compression id as `profile` reads it (for `sst blocks` and errors).
pub fn name(id: u8, data: &[u8], profile: CompressionProfile) -> &'static str {
    match id {
        COMPRESSION_NONE => "none",
        COMPRESSION_SNAPPY => "snappy",
        COMPRESSION_ID2_ZSTD_OR_ZLIB => match id2_is_zstd(data, profile) {
            true => "zstd",
            false => "zlib",
        },
        COMPRESSION_MOJANG_ZSTD => "zstd",
        COMPRESSION_MOJANG_RAW_DEFLATE => "raw-deflate",
        _ => "unknown",
    }
}

fn looks_like_zlib(data: &[u8]) -> bool {
    match data {
        [b0, b1, ..] => b0 & 0x0f == 8 && (u16::from(*b0) * 256 + u16::from(*b1)) % 31 == 0,
        _ => false,
    }
}

fn id2_is_zstd(data: &[u8], profile: CompressionProfile) -> bool {
    match profile {
        CompressionProfile::LevelDb => true,
        CompressionProfile::Mojang => false,
        CompressionProfile::Auto => data.starts_with(&ZSTD_FRAME_MAGIC) || !looks_like_zlib(data),
    }
}

/// Decompresses `input`, stored with type byte `id`.
///
/// # Errors
/// A [`DecompressError`] for unknown ids, compiled-out codecs and corrupt input.
pub fn decompress(
    id: u8,
    input: &[u8],
    profile: CompressionProfile,
) -> Result<Vec<u8>, DecompressError> {
    decompress_reusing(id, input, profile, |_| BlockBuf::default()).map(BlockBuf::into_vec)
}

/// [`decompress`] into a buffer from `spare(len)` where the codec states the output length up
/// front (snappy). Bytes of the spare buffer that the output overwrites are not zeroed first:
/// a recycled block buffer costs no fill beyond its growth.
pub(crate) fn decompress_reusing(
    id: u8,
    input: &[u8],
    profile: CompressionProfile,
    spare: impl FnOnce(usize) -> BlockBuf,
) -> Result<BlockBuf, DecompressError> {
    let heap = |r: Result<Vec<u8>, DecompressError>| r.map(BlockBuf::Heap);
    match id {
        COMPRESSION_SNAPPY => {
            let len = snappy_len(input)?;
            let mut out = spare(len);
            out.set_len_filled(len);
            snappy_exact(input, out.as_mut_slice()).map(|()| out)
        }
        COMPRESSION_ID2_ZSTD_OR_ZLIB if id2_is_zstd(input, profile) => heap(zstd(input)),
        COMPRESSION_ID2_ZSTD_OR_ZLIB => heap(inflate(input, true)),
        COMPRESSION_MOJANG_ZSTD => heap(zstd(input)),
        COMPRESSION_MOJANG_RAW_DEFLATE => heap(inflate(input, false)),
        _ => Err(DecompressError::UnknownType),
    }
}

/// Decompresses a snappy block into `out` (cleared first), reusing its allocation.
///
/// # Errors
/// When the length preamble or the contents are corrupt.
pub fn snappy_into(input: &[u8], out: &mut Vec<u8>) -> Result<(), DecompressError> {
    let len = snappy_len(input)?;
    out.clear();
    out.resize(len, 0);
    snappy_exact(input, out)
}

/// The uncompressed length a snappy block states, if plausible.
fn snappy_len(input: &[u8]) -> Result<usize, DecompressError> {
    let len = snap::raw::decompress_len(input).map_err(|_| DecompressError::BadLength("snappy"))?;
    // A snappy element of n input bytes yields at most 64 output bytes per 2..3 input bytes
    // (copy with 2-byte offset, 3 bytes -> 64), so more than 32x the input is impossible.
    if len > input.len().saturating_mul(32) || len > MAX_BLOCK_BYTES {
        return Err(DecompressError::BadLength("snappy"));
    }
    Ok(len)
}

/// Decompresses `input` into `out`, which is exactly as long as the length `snappy_len`
/// read from `input`: every byte of `out` is overwritten (the decoder writes every byte of
/// the length it reports, checked below), so a recycled buffer needs no clearing.
fn snappy_exact(input: &[u8], out: &mut [u8]) -> Result<(), DecompressError> {
    match snap::raw::Decoder::new().decompress(input, out) {
        Ok(n) if n == out.len() => Ok(()),
        _ => Err(DecompressError::BadContents("snappy")),
    }
}

#[cfg(feature = "zstd")]
fn zstd(input: &[u8]) -> Result<Vec<u8>, DecompressError> {
    // LevelDB main reads ZSTD_getFrameContentSize and rejects 0; a frame without a content
    // size is rejected here too (C++ would use the "unknown" sentinel as a length).
    let len = match zstd::zstd_safe::get_frame_content_size(input) {
        Ok(Some(n)) if n > 0 => n,
        _ => return Err(DecompressError::BadLength("zstd")),
    };
    // zstd's largest expansion is a run-length block: 4 header bytes for 128 KiB of output.
    let bound = (input.len() as u64).saturating_mul(1 << 15);
    if len > bound || len > MAX_BLOCK_BYTES as u64 {
        return Err(DecompressError::BadLength("zstd"));
    }
    match zstd::bulk::decompress(input, len as usize) {
        Ok(out) if out.len() as u64 == len => Ok(out),
        _ => Err(DecompressError::BadContents("zstd")),
    }
}

#[cfg(not(feature = "zstd"))]
fn zstd(_: &[u8]) -> Result<Vec<u8>, DecompressError> {
    Err(DecompressError::Unsupported("zstd"))
}

#[cfg(feature = "zlib")]
fn inflate(input: &[u8], zlib_header: bool) -> Result<Vec<u8>, DecompressError> {
    use std::io::Read;
    let what = if zlib_header { "zlib" } else { "raw deflate" };
    // Deflate cannot expand by more than 1032:1 (RFC 1951 length codes: 258 bytes per
    // 2 bits at best); read at most that much plus one byte to detect a lie.
    let bound = (input.len() as u64)
        .saturating_mul(1032)
        .min(MAX_BLOCK_BYTES as u64);
    let mut out = Vec::with_capacity(input.len().saturating_mul(4).min(1 << 20));
    let res = if zlib_header {
        flate2::read::ZlibDecoder::new(input)
            .take(bound + 1)
            .read_to_end(&mut out)
    } else {
        flate2::read::DeflateDecoder::new(input)
            .take(bound + 1)
            .read_to_end(&mut out)
    };
    match res {
        Ok(n) if n as u64 <= bound => Ok(out),
        Ok(_) => Err(DecompressError::BadLength(what)),
        Err(_) => Err(DecompressError::BadContents(what)),
    }
}

#[cfg(not(feature = "zlib"))]
fn inflate(_: &[u8], _: bool) -> Result<Vec<u8>, DecompressError> {
    Err(DecompressError::Unsupported("zlib"))
}

/// Reusable compression state for a sequence of blocks (one per table builder): the snappy
/// encoder's hash table and the output buffer are kept between blocks, so a block is
/// compressed without allocating, and without zero-filling a fresh output buffer (which
/// `compress` must do: the snappy encoder writes into an initialised slice). Measured on the
/// 1M build: the per-block `memset`s were 4.8% of it (docs/performance.md).
#[derive(Default)]
pub struct Compressor {
    snappy: Option<snap::raw::Encoder>,
    buf: Vec<u8>,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("buf_len", &self.buf.len())
            .finish()
    }
}

impl Compressor {
    /// The form a block is stored in (LevelDB's `TableBuilder::WriteBlock`): compressed
    /// with `kind` if that saves more than 12.5%, else as it is; with the trailer's type
    /// byte.
    ///
    /// # Errors
    /// As [`compress`].
    pub fn stored_form<'a>(
        &'a mut self,
        kind: Compression,
        raw: &'a [u8],
    ) -> std::io::Result<(&'a [u8], u8)> {
        if kind != Compression::None {
            let c = self.compress(kind, raw)?;
            if c.len() < raw.len() - raw.len() / 8 {
                return Ok((c, kind.id()));
            }
        }
        Ok((raw, COMPRESSION_NONE))
    }

    /// Compresses `input` as `kind`; the result lives until the next call.
    ///
    /// # Errors
    /// As [`compress`].
    pub fn compress(&mut self, kind: Compression, input: &[u8]) -> std::io::Result<&[u8]> {
        if kind != Compression::Snappy {
            compress(kind, input, &mut self.buf)?;
            return Ok(&self.buf);
        }
        let max = snap::raw::max_compress_len(input.len());
        if self.buf.len() < max {
            // Grows (and zero-fills) only when a larger block than any before arrives.
            self.buf.resize(max, 0);
        }
        let n = self
            .snappy
            .get_or_insert_with(snap::raw::Encoder::new)
            .compress(input, &mut self.buf[..max])
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        Ok(&self.buf[..n])
    }
}

/// Compresses `input` into `out` (cleared first).
///
/// # Errors
/// Only if the codec itself fails, which it does not for in-memory input.
pub fn compress(kind: Compression, input: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    out.clear();
    match kind {
        Compression::None => out.extend_from_slice(input),
        Compression::Snappy => {
            out.resize(snap::raw::max_compress_len(input.len()), 0);
            let n = snap::raw::Encoder::new()
                .compress(input, out)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
            out.truncate(n);
        }
        #[cfg(feature = "zstd")]
        Compression::Zstd(level) => {
            // zstd's bulk API writes the content size into the frame header, which
            // LevelDB main's reader requires.
            *out = zstd::bulk::compress(input, level)?;
        }
        #[cfg(feature = "zlib")]
        Compression::RawDeflate(level) => {
            use std::io::Write;
            let mut enc = flate2::write::DeflateEncoder::new(
                std::mem::take(out),
                flate2::Compression::new(level.min(9)),
            );
            enc.write_all(input)?;
            *out = enc.finish()?;
        }
        #[cfg(feature = "zlib")]
        Compression::Zlib(level) => {
            use std::io::Write;
            let mut enc = flate2::write::ZlibEncoder::new(
                std::mem::take(out),
                flate2::Compression::new(level.min(9)),
            );
            enc.write_all(input)?;
            *out = enc.finish()?;
        }
    }
    Ok(())
}
