//! The stored form of a [`CountingBloomFilter`]: one file, written atomically.
//!
//! ```text
//! file    = magic "SSTCOUNT" (8) | version: u32 (1) | capacity: u64 | fp_rate: f64 bits (u64)
//!         | m: u64 | k: u32 | counters: ceil(m / 2) bytes | crc: u32
//! counters: counter 2j in the low nibble of byte j, counter 2j+1 in its high nibble
//!           (with m odd, the last byte's high nibble is 0)
//! crc     = masked CRC32C (LevelDB's mask) of everything before it
//! ```
//!
//! All integers little-endian. A reader checks the CRC, and that `m` and `k` are what the
//! capacity and rate give (the sizing of `hash.rs`).

use std::path::Path;

use crate::counting::CountingBloomFilter;
use crate::error::{Error, Result};
use crate::file::{check_crc, masked_crc, read, write_atomically, Reader};
use crate::format::{COUNTING_FILE_MAGIC, COUNTING_FILE_VERSION};
use crate::hash::sizing;

impl CountingBloomFilter {
    /// The filter in its stored form (see the layout in `counting_file.rs`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + self.nibbles.len());
        out.extend_from_slice(&COUNTING_FILE_MAGIC);
        out.extend_from_slice(&COUNTING_FILE_VERSION.to_le_bytes());
        out.extend_from_slice(&self.capacity.to_le_bytes());
        out.extend_from_slice(&self.fp_bits.to_le_bytes());
        out.extend_from_slice(&self.m.to_le_bytes());
        out.extend_from_slice(&self.k.to_le_bytes());
        out.extend_from_slice(&self.nibbles);
        let crc = masked_crc(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Reads a filter from its stored form.
    ///
    /// # Errors
    /// [`Error::BadFile`] with the offset of the first field that is wrong.
    pub fn from_bytes(data: &[u8]) -> Result<Self> {
        if data.len() < 8 || data[..8] != COUNTING_FILE_MAGIC {
            return Err(Error::BadFile {
                offset: 0,
                reason: "bad magic (not an sst counting bloom filter file)",
            });
        }
        let body = check_crc(data, "file too short for a counting bloom filter")?;
        let mut r = Reader::new(body);
        r.bytes(8, "bad magic")?;
        if r.u32("truncated version")? != COUNTING_FILE_VERSION {
            return Err(Error::BadFile {
                offset: 8,
                reason: "unknown version",
            });
        }
        let capacity = r.u64("truncated capacity")?;
        let fp_bits = r.u64("truncated fp rate")?;
        let fp_rate = f64::from_bits(fp_bits);
        let at = r.offset();
        let m = r.u64("truncated counter count")?;
        let k = r.u32("truncated k")?;
        if capacity == 0
            || !(fp_rate > 0.0 && fp_rate <= 0.5)
            || (m, k) != sizing(capacity, fp_rate)
        {
            return Err(Error::BadFile {
                offset: at,
                reason: "counter count or k does not match the capacity and rate",
            });
        }
        let at = r.offset();
        let nibbles = r.bytes(m.div_ceil(2), "truncated counters")?.to_vec();
        if m % 2 == 1 && nibbles.last().is_some_and(|&b| b >> 4 != 0) {
            return Err(Error::BadFile {
                offset: at + m / 2,
                reason: "a counter past the last one is set",
            });
        }
        if !r.rest.is_empty() {
            return Err(r.bad("trailing bytes after the counters"));
        }
        Ok(CountingBloomFilter {
            nibbles,
            m,
            k,
            capacity,
            fp_bits,
        })
    }

    /// Reads a filter from a file written by [`save`](Self::save).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file, and [`Error::BadFile`] for a damaged file.
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_bytes(&read(path)?)
    }

    /// Writes the filter to `path` atomically (temporary file, fsync, rename, fsync of the
    /// directory): readers see the old file or the new one, never a mix.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file; the temporary file is removed then.
    pub fn save(&self, path: &Path) -> Result<()> {
        write_atomically(path, &self.to_bytes())
    }
}
