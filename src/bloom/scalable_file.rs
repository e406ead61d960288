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

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::format::{MAX_LAYERS, SCALABLE_FILE_MAGIC, SCALABLE_FILE_VERSION};
use super::scalable::{Layer, ScalableBloomFilter, ScalableParams};
use crate::error::{Error, Result};
use crate::util::coding::{get_fixed32, get_fixed64, put_fixed32, put_fixed64};
use crate::util::crc32c;

/// Reads fields from the front of the file, tracking the offset for errors.
struct Reader<'a> {
    rest: &'a [u8],
    len: usize,
}

impl<'a> Reader<'a> {
    fn offset(&self) -> u64 {
        (self.len - self.rest.len()) as u64
    }
    fn bad(&self, reason: &'static str) -> Error {
        Error::BadBloomFile {
            offset: self.offset(),
            reason,
        }
    }
    fn u32(&mut self, what: &'static str) -> Result<u32> {
        let at = self.offset();
        get_fixed32(&mut self.rest).ok_or(Error::BadBloomFile {
            offset: at,
            reason: what,
        })
    }
    fn u64(&mut self, what: &'static str) -> Result<u64> {
        let at = self.offset();
        get_fixed64(&mut self.rest).ok_or(Error::BadBloomFile {
            offset: at,
            reason: what,
        })
    }
    fn bytes(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        let n = usize::try_from(n).map_err(|_| self.bad(what))?;
        if self.rest.len() < n {
            return Err(self.bad(what));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
}

impl ScalableBloomFilter {
    /// The filter in its stored form (see the layout in `scalable_file.rs`).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.memory_bytes() + 36 * self.layers.len());
        out.extend_from_slice(&SCALABLE_FILE_MAGIC);
        put_fixed32(&mut out, SCALABLE_FILE_VERSION);
        put_fixed64(&mut out, self.seed);
        put_fixed64(&mut out, self.params.capacity);
        put_fixed64(&mut out, self.params.fp_rate.to_bits());
        put_fixed32(&mut out, self.params.growth);
        put_fixed64(&mut out, self.params.ratio.to_bits());
        put_fixed32(&mut out, self.layers.len() as u32);
        for l in &self.layers {
            put_fixed64(&mut out, l.items);
            put_fixed64(&mut out, l.bits_set);
            put_fixed64(&mut out, l.geometry.bits);
            put_fixed32(&mut out, l.geometry.k);
            out.extend_from_slice(&l.bits);
        }
        let crc = crc32c::mask(crc32c::value(&out));
        put_fixed32(&mut out, crc);
        out
    }

    /// Reads a filter from its stored form.
    ///
    /// # Errors
    /// [`Error::BadBloomFile`] with the offset of the first field that is wrong.
    pub fn from_bytes(data: &[u8]) -> Result<Self> {
        let body_len = data.len().checked_sub(4).ok_or(Error::BadBloomFile {
            offset: 0,
            reason: "file too short for a bloom filter",
        })?;
        let (body, crc) = data.split_at(body_len);
        let mut r = Reader {
            rest: body,
            len: body.len(),
        };
        if r.bytes(8, "bad magic")? != SCALABLE_FILE_MAGIC {
            return Err(Error::BadBloomFile {
                offset: 0,
                reason: "bad magic (not an sst bloom filter file)",
            });
        }
        let stored = crc32c::unmask(crate::util::coding::decode_fixed32(crc));
        if stored != crc32c::value(body) {
            return Err(Error::BadBloomFile {
                offset: body_len as u64,
                reason: "checksum mismatch",
            });
        }
        if r.u32("truncated version")? != SCALABLE_FILE_VERSION {
            return Err(Error::BadBloomFile {
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
        params.validate().map_err(|_| Error::BadBloomFile {
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
                return Err(Error::BadBloomFile {
                    offset: at,
                    reason: "layer size does not match the parameters",
                });
            }
            let array = r.bytes(bits.div_ceil(8), "truncated layer bit array")?;
            let ones: u64 = array.iter().map(|b| u64::from(b.count_ones())).sum();
            if ones != bits_set {
                return Err(Error::BadBloomFile {
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
    /// I/O errors, and [`Error::BadBloomFile`] for a damaged file.
    pub fn load(path: &Path) -> Result<Self> {
        Self::from_bytes(&fs::read(path)?)
    }

    /// Writes the filter to `path` atomically: a temporary file in the same directory
    /// (created with the mode a new file gets, 0666 less the umask), fsync, rename over
    /// `path`, fsync of the directory. Readers see the old file or the new one, never a mix.
    ///
    /// # Errors
    /// I/O errors; the temporary file is removed then.
    pub fn save(&self, path: &Path) -> Result<()> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path.file_name().ok_or_else(|| {
            Error::InvalidArgument(format!("{} is not a file path", path.display()))
        })?;
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".tmp.{}.{nonce}", std::process::id()));
        let tmp = dir.join(tmp_name);
        let write = || -> std::io::Result<()> {
            let mut f = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
            f.write_all(&self.to_bytes())?;
            f.sync_all()?;
            drop(f);
            fs::rename(&tmp, path)?;
            File::open(&dir)?.sync_all()
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            Error::from(e)
        })
    }
}
