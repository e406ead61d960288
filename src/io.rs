//! Random-access sources a table is read from.
//!
//! A [`RandomAccess`] source returns the bytes at an offset as [`Bytes`]. A [`Bytes`] source
//! hands out zero-copy slices (wrap an `Arc<[u8]>` with `Bytes::from_owner`, or map a file with `map_file`,
//! to share it without copying); byte slices and vectors are copied per read; files are read with positioned reads
//! (`pread`), so one open file serves any number of threads. Reading never writes: no source
//! here opens a file for writing, creates, locks or renames anything.

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;

/// A source of bytes addressed by offset.
pub trait RandomAccess {
    /// Total size in bytes.
    ///
    /// # Errors
    /// If the size cannot be determined.
    fn size(&self) -> io::Result<u64>;

    /// Reads `len` bytes at `offset`. Returns fewer only at the end of the source.
    ///
    /// # Errors
    /// On an I/O error.
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes>;

    /// Whether [`read_at`](Self::read_at) returns views of bytes the source already holds
    /// (an in-memory buffer or a memory map) instead of fresh copies. The reader then reads
    /// each block exactly where it is: no readahead, and an uncompressed block in the block
    /// cache is charged only its bookkeeping, since it owns no memory of its own.
    fn is_zero_copy(&self) -> bool {
        false
    }

    /// All of the source's bytes, for a source that holds them in memory (a buffer or a
    /// memory map): point lookups then read values in place, without a `read_at`.
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }
}

fn slice_at(data: &[u8], offset: u64, len: usize) -> &[u8] {
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(data.len());
    let end = start.saturating_add(len).min(data.len());
    &data[start..end]
}

impl RandomAccess for [u8] {
    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        Ok(Bytes::copy_from_slice(slice_at(self, offset, len)))
    }
}

impl RandomAccess for Vec<u8> {
    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.as_slice().read_at(offset, len)
    }
}

impl RandomAccess for Bytes {
    fn size(&self) -> io::Result<u64> {
        Ok(self.len() as u64)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let end = start.saturating_add(len).min(self.len());
        Ok(self.slice(start..end))
    }
    fn is_zero_copy(&self) -> bool {
        true
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl RandomAccess for File {
    fn size(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let mut buf = vec![0u8; len];
        let mut done = 0;
        while done < len {
            match pread(self, &mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        buf.truncate(done);
        Ok(Bytes::from(buf))
    }
}

#[cfg(unix)]
fn pread(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(f, buf, offset)
}

#[cfg(windows)]
fn pread(f: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(f, buf, offset)
}

impl<T: RandomAccess + ?Sized> RandomAccess for &T {
    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        (**self).read_at(offset, len)
    }
    fn is_zero_copy(&self) -> bool {
        (**self).is_zero_copy()
    }
    fn as_slice(&self) -> Option<&[u8]> {
        (**self).as_slice()
    }
}

impl<T: RandomAccess + ?Sized> RandomAccess for Arc<T> {
    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        (**self).read_at(offset, len)
    }
    fn is_zero_copy(&self) -> bool {
        (**self).is_zero_copy()
    }
    fn as_slice(&self) -> Option<&[u8]> {
        (**self).as_slice()
    }
}

impl<T: RandomAccess + ?Sized> RandomAccess for Box<T> {
    fn size(&self) -> io::Result<u64> {
        (**self).size()
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        (**self).read_at(offset, len)
    }
    fn is_zero_copy(&self) -> bool {
        (**self).is_zero_copy()
    }
    fn as_slice(&self) -> Option<&[u8]> {
        (**self).as_slice()
    }
}

/// Wraps a source and counts the reads made through it (for tests and `sst stats`).
#[derive(Debug, Default)]
pub struct CountingReader<R> {
    inner: R,
    reads: AtomicU64,
    bytes: AtomicU64,
}

impl<R> CountingReader<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        CountingReader {
            inner,
            reads: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        }
    }

    /// Reads made so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::Relaxed)
    }

    /// Bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// Sets both counters back to zero.
    pub fn reset(&self) {
        self.reads.store(0, Ordering::Relaxed);
        self.bytes.store(0, Ordering::Relaxed);
    }

    /// The wrapped source.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }
}

impl<R: RandomAccess> RandomAccess for CountingReader<R> {
    fn size(&self) -> io::Result<u64> {
        self.inner.size()
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(len as u64, Ordering::Relaxed);
        self.inner.read_at(offset, len)
    }
    fn is_zero_copy(&self) -> bool {
        self.inner.is_zero_copy()
    }
    fn as_slice(&self) -> Option<&[u8]> {
        self.inner.as_slice()
    }
}
