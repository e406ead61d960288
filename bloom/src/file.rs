//! What the stored filter files share: a little-endian field reader that knows its offset
//! (for errors), LevelDB's masked CRC32C, and the atomic write (temporary file, fsync,
//! rename, fsync of the directory).
//!
//! A small copy of the table crate's `coding`/`crc32c` helpers (a dozen lines) so that this
//! crate does not depend on the table crate; the CRC itself is the `crc32c` crate's.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::CRC_MASK_DELTA;

/// LevelDB's mask of a CRC32C (`util/crc32c.h`): `rotr32(c, 15) + 0xa282ead8`.
pub(crate) fn masked_crc(data: &[u8]) -> u32 {
    crc32c::crc32c(data)
        .rotate_right(15)
        .wrapping_add(CRC_MASK_DELTA)
}

/// Reads fields from the front of a stored filter, tracking the offset for errors.
pub(crate) struct Reader<'a> {
    pub(crate) rest: &'a [u8],
    len: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8]) -> Self {
        Reader {
            rest: data,
            len: data.len(),
        }
    }
    pub(crate) fn offset(&self) -> u64 {
        (self.len - self.rest.len()) as u64
    }
    pub(crate) fn bad(&self, reason: &'static str) -> Error {
        Error::BadFile {
            offset: self.offset(),
            reason,
        }
    }
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32> {
        let (head, rest) = self.rest.split_first_chunk::<4>().ok_or(self.bad(what))?;
        self.rest = rest;
        Ok(u32::from_le_bytes(*head))
    }
    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64> {
        let (head, rest) = self.rest.split_first_chunk::<8>().ok_or(self.bad(what))?;
        self.rest = rest;
        Ok(u64::from_le_bytes(*head))
    }
    pub(crate) fn bytes(&mut self, n: u64, what: &'static str) -> Result<&'a [u8]> {
        let n = usize::try_from(n).map_err(|_| self.bad(what))?;
        if self.rest.len() < n {
            return Err(self.bad(what));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
}

/// Splits a stored filter into its body and checks the masked CRC32C in its last 4 bytes.
pub(crate) fn check_crc<'a>(data: &'a [u8], what: &'static str) -> Result<&'a [u8]> {
    let body_len = data.len().checked_sub(4).ok_or(Error::BadFile {
        offset: 0,
        reason: what,
    })?;
    let (body, crc) = data.split_at(body_len);
    let mut r = Reader::new(crc);
    if r.u32("truncated checksum")? != masked_crc(body) {
        return Err(Error::BadFile {
            offset: body_len as u64,
            reason: "checksum mismatch",
        });
    }
    Ok(body)
}

/// Reads a whole file, naming it in the error.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>> {
    fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory (created with
/// the mode a new file gets, 0666 less the umask), fsync, rename over `path`, fsync of the
/// directory. Readers see the old file or the new one, never a mix.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| Error::InvalidArgument(format!("{} is not a file path", path.display())))?;
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
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        File::open(&dir)?.sync_all()
    };
    write().map_err(|source| {
        let _ = fs::remove_file(&tmp);
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    })
}
