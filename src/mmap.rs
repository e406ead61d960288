//! Read-only memory maps of table files: one of the crate's two `unsafe` blocks (the other
//! is the huge-page advice in `cache.rs`).
//!
//! A mapped table is read without system calls or copies: every block is a view of the
//! mapping ([`Bytes`] shares it), uncompressed blocks are parsed in place, and the OS page
//! cache is the only copy of the file's bytes. LevelDB reads tables the same way
//! (`PosixEnv::NewRandomAccessFile` maps them). Measured on the shared workload
//! (docs/performance.md), it takes a `pread`, an allocation and a copy out of every block
//! read.
//!
//! The contract of any file mapping applies: the file must not be truncated or modified
//! while it is mapped. Truncation makes later reads of the lost pages fault (`SIGBUS`), and
//! modification changes bytes under a reader that already verified them. Tables are
//! immutable once written (LevelDB and [`TableFileBuilder`](crate::TableFileBuilder) rename
//! complete files into place and never write them again), so this holds for live databases;
//! for files that another process may still change, open with [`File`] (`pread`) instead.

use std::fs::File;
use std::io;

use bytes::Bytes;

/// Maps `file` read-only and returns the whole mapping as shared bytes (zero-copy views,
/// see [`RandomAccess::is_zero_copy`](crate::RandomAccess::is_zero_copy)).
///
/// # Errors
/// If the file cannot be mapped.
#[allow(unsafe_code)]
pub fn map_file(file: &File) -> io::Result<Bytes> {
    // SAFETY: `Mmap::map` is unsafe only because another process could truncate or modify
    // the file while it is mapped, which Rust cannot see. The mapping is read-only and
    // private to the returned `Bytes`; the module documentation states the contract
    // (tables are immutable once written) and the `pread` alternative.
    let map = unsafe { memmap2::Mmap::map(file)? };
    #[cfg(target_os = "linux")]
    {
        // Advice only: where the page cache holds huge folios, map them as huge pages
        // (fewer TLB misses on random lookups). Failure changes nothing.
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    Ok(Bytes::from_owner(map))
}
