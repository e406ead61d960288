//! The stored form of a [`ScalableBloomFilter`]: one file, written atomically.
//!
//! ```text
//! file   = header | layer * count | crc: u32
//! header = magic "SSTBLOOM" (8) | version: u32 (1) | seed: u64 | capacity: u64
//!        | fp_rate: f64 bits (u64) | growth: u32 | ratio: f64 bits (u64) | count: u32
//! layer  = items: u64 | bits_set: u64 | bits: u64 | k: u32 | bit array: ceil(bits / 8) bytes
//!          (bit p = byte[p / 8] & (1 << (p % 8)), LSB first)
//! crc    = masked CRC32C (LevelDB's mask) of everything before it
//! ```
//!
//! All integers little-endian. A reader checks the CRC, that each layer's bits and k are
//! what the parameters give for its index, and that `bits_set` is the bit array's popcount.

use std::path::Path;

use crate::error::{Error, Result};
use crate::file::{check_crc, masked_crc, read, write_atomically, Reader};
use crate::format::{MAX_LAYERS, SCALABLE_FILE_MAGIC, SCALABLE_FILE_VERSION};
use crate::scalable::{Layer, ScalableBloomFilter, ScalableParams};

impl ScalableBloomFilter {
    /// The filter in its stored form (see the layout in `scalable_file.rs`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.memory_bytes() + 36 * self.layers.len());
        out.extend_from_slice(&SCALABLE_FILE_MAGIC);
        out.extend_from_slice(&SCALABLE_FILE_VERSION.to_le_bytes());
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.params.capacity.to_le_bytes());
        out.extend_from_slice(&self.params.fp_rate.to_bits().to_le_bytes());
        out.extend_from_slice(&self.params.growth.to_le_bytes());
        out.extend_from_slice(&self.params.ratio.to_bits().to_le_bytes());
        out.extend_from_slice(&(self.layers.len() as u32).to_le_bytes());
        for l in &self.layers {
            out.extend_from_slice(&l.items.to_le_bytes());
            out.extend_from_slice(&l.bits_set.to_le_bytes());
            out.extend_from_slice(&l.geometry.bits.to_le_bytes());
            out.extend_from_slice(&l.geometry.k.to_le_bytes());
            out.extend_from_slice(&l.bits);
        }
        let crc = masked_crc(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Reads a filter from its stored form.
    ///
    /// # Errors
    /// [`Error::BadFile`] with the offset of the first field that is wrong.
    pub fn from_bytes(data: &[u8]) -> Result<Self> {
        if data.len() < 8 || data[..8] != SCALABLE_FILE_MAGIC {
            return Err(Error::BadFile {
                offset: 0,
                reason: "bad magic (not an sst scalable bloom filter file)",
            });
        }
        let body = check_crc(data, "file too short for a bloom filter")?;
        let mut r = Reader::new(body);
        r.bytes(8, "bad magic")?;
        if r.u32("truncated version")? != SCALABLE_FILE_VERSION {
            return Err(Error::BadFile {
                offset: 8,
                reason: "unknown version",
            });
        }
        let seed = r.u64("truncated seed")?;
        let params = ScalableParams {
            capacity: r.u64("truncated capacity")?,
            fp_rate: f64::from_bits(r.u64("truncated fp rate")?),
            growth: r.u32("truncated growth")?,
            ratio: f64::from_bits(r.u64("truncated ratio")?),
        };
        params.validate().map_err(|_| Error::BadFile {
            offset: 20,
            reason: "invalid parameters",
        })?;
        let count = r.u32("truncated layer count")?;
        if count == 0 || count > MAX_LAYERS {
            return Err(r.bad("layer count out of range"));
        }
        let mut layers = Vec::new();
        for i in 0..count {
            let at = r.offset();
            let items = r.u64("truncated layer")?;
            let bits_set = r.u64("truncated layer")?;
            let bits = r.u64("truncated layer")?;
            let k = r.u32("truncated layer")?;
            let geometry = params.layer(i);
            if bits != geometry.bits || k != geometry.k {
                return Err(Error::BadFile {
                    offset: at,
                    reason: "layer size does not match the parameters",
                });
            }
            let array = r.bytes(bits.div_ceil(8), "truncated layer bit array")?;
            let ones: u64 = array.iter().map(|b| u64::from(b.count_ones())).sum();
            if ones != bits_set {
                return Err(Error::BadFile {
                    offset: at,
                    reason: "layer bit count does not match its bit array",
                });
            }
            let mut layer = Layer::new(geometry)?;
            // ok: both are ceil(bits / 8) bytes long (Layer::new and the read above).
            layer.bits.copy_from_slice(array);
            layer.items = items;
            layer.bits_set = bits_set;
            layers.push(layer);
        }
        if !r.rest.is_empty() {
            return Err(r.bad("trailing bytes after the last layer"));
        }
        Ok(ScalableBloomFilter {
            params,
            seed,
            layers,
        })
    }

    /// Reads a filter from a file written by [`save`](Self::save).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file, and [`Error::BadFile`] for a damaged file.
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_bytes(&read(path)?)
    }

    /// Writes the filter to `path` atomically: a temporary file in the same directory
    /// (created with the mode a new file gets, 0666 less the umask), fsync, rename over
    /// `path`, fsync of the directory. Readers see the old file or the new one, never a mix.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file; the temporary file is removed then.
    pub fn save(&self, path: &Path) -> Result<()> {
        write_atomically(path, &self.to_bytes())
    }
}
