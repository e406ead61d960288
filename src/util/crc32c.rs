//! CRC32C (Castagnoli) and LevelDB's checksum masking (`util/crc32c.h`).
//!
//! ```text
//! mask(c)   = rotr32(c, 15) + 0xa282ead8        (wrapping)
//! unmask(m) = rotl32(m - 0xa282ead8, 15)
//! ```
//!
//! LevelDB stores masked CRCs because computing the CRC of a string that itself contains
//! embedded CRCs is problematic. The CRC itself comes from the `crc32c` crate, which uses the
//! SSE 4.2 / ARMv8 instructions when the CPU has them.

use crate::format::CRC_MASK_DELTA;

/// CRC32C of `data`.
#[inline]
pub fn value(data: &[u8]) -> u32 {
    ::crc32c::crc32c(data)
}

/// CRC32C of `A ‖ data`, given `crc` = CRC32C of `A`.
#[inline]
pub fn extend(crc: u32, data: &[u8]) -> u32 {
    ::crc32c::crc32c_append(crc, data)
}

/// LevelDB's mask of a CRC, as stored in block trailers.
#[inline]
pub fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(CRC_MASK_DELTA)
}

/// Inverse of [`mask`].
#[inline]
pub fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(CRC_MASK_DELTA).rotate_left(15)
}
