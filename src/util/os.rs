//! The crate's only `unsafe` code, in one place: operating-system calls whose safety Rust
//! cannot check. Read-only memory maps of table files ([`map_file`], feature `mmap`),
//! transparent-huge-page advice for the block cache's buffers (Linux), the limit on open
//! files (a database reader holds every live table open).
//!
//! **Maps.** A mapped table is read without system calls or copies: every block is a view of
//! the mapping ([`Bytes`] shares it), uncompressed blocks are parsed in place, and the OS page
//! cache is the only copy of the file's bytes. LevelDB reads tables the same way
//! (`PosixEnv::NewRandomAccessFile` maps them). Measured on the shared workload
//! (docs/performance.md), it takes a `pread`, an allocation and a copy out of every block
//! read.
//!
//! The contract of any file mapping applies, which is why [`map_file`] is an `unsafe fn`:
//! the file must not be truncated or modified while it is mapped. Truncation makes later
//! reads of the lost pages fault (`SIGBUS`), and modification changes bytes under a reader
//! that already verified them. Tables are immutable once written (LevelDB and
//! [`TableFileBuilder`](crate::TableFileBuilder) rename complete files into place and never
//! write them again), so this holds for live databases; for files that another process may
//! still change, open with [`File`] (`pread`) instead, the safe default everywhere.

#[cfg(feature = "mmap")]
use std::fs::File;
#[cfg(feature = "mmap")]
use std::io;

#[cfg(feature = "mmap")]
use bytes::Bytes;

/// Maps `file` read-only and returns the whole mapping as shared bytes (zero-copy views,
/// see [`RandomAccess::is_zero_copy`](crate::RandomAccess::is_zero_copy)).
///
/// # Safety
/// The file must not be truncated or modified, by this or any other process, while the
/// returned bytes (or any view of them) are alive: truncation makes reads fault (`SIGBUS`),
/// modification changes bytes that were already checked. Table files of LevelDB databases
/// and of this crate are never changed once written.
///
/// # Errors
/// If the file cannot be mapped.
#[cfg(feature = "mmap")]
#[allow(unsafe_code)]
pub unsafe fn map_file(file: &File) -> io::Result<Bytes> {
    // SAFETY: `Mmap::map` is unsafe only because the file could be truncated or modified
    // while it is mapped, which Rust cannot see; the caller promises it is not. The mapping
    // is read-only and private to the returned `Bytes`.
    let map = unsafe { memmap2::Mmap::map(file)? };
    #[cfg(target_os = "linux")]
    {
        // Advice only: where the page cache holds huge folios, map them as huge pages
        // (fewer TLB misses on random lookups). Failure changes nothing.
        let _ = map.advise(memmap2::Advice::HugePage);
    }
    Ok(Bytes::from_owner(map))
}

/// Asks Linux to back the whole 2 MiB pages inside `mem` with transparent huge pages.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub(crate) fn advise_huge_pages<T>(mem: &mut [T]) {
    const HUGE: usize = 2 << 20;
    let start = mem.as_mut_ptr() as usize;
    let Some(first) = start.checked_next_multiple_of(HUGE) else {
        return;
    };
    let end = (start + std::mem::size_of_val(mem)) / HUGE * HUGE;
    if end <= first {
        return;
    }
    // SAFETY: `[first, end)` lies inside `mem`, memory this function borrows mutably, so no
    // other reference observes it. MADV_HUGEPAGE is advice about how to back the range; it
    // changes neither its contents nor its validity, and on failure (old kernel, THP
    // disabled) nothing changes, which is why the result is ignored.
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
    }
}

/// Asks the CPU to start loading every 64-byte line of `bytes` into its caches, without
/// waiting for them: a later pass over the bytes (a checksum, a decompression) then finds
/// them arriving, while the work in between (the cache's admission check, with its own
/// misses) goes on. A load-based prefetch (`touch_lines` in the block module)
/// cannot do that across a lock, which waits for every earlier load.
#[inline]
#[allow(unsafe_code)]
pub(crate) fn prefetch_lines(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64) {
        // SAFETY: PREFETCHT0 is a hint: it reads nothing architecturally, never faults, and
        // changes no state a program can observe; SSE, which provides it, is part of the
        // x86_64 baseline. The pointer is into a live slice all the same.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Takes a POSIX advisory write lock on the whole of `file` without waiting (`fcntl` with
/// `F_SETLK`), as LevelDB's `PosixEnv::LockFile` locks a database's LOCK file: another
/// process holding it (LevelDB, or this crate's engine) makes this fail with
/// `WouldBlock`. The lock is released when the file is closed. Elsewhere than Linux, the
/// standard library's `flock`-style lock.
///
/// # Errors
/// `WouldBlock` when another process holds the lock; other errors of the system call.
#[allow(unsafe_code)]
pub(crate) fn lock_whole_file(file: &std::fs::File) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: `flock` is plain data; zeroed is a valid value for every field.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        fl.l_start = 0;
        fl.l_len = 0; // the whole file
                      // SAFETY: the descriptor is open for the life of `file`, which this call borrows;
                      // F_SETLK reads the `flock` structure it is given and writes nothing through it.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &fl) };
        if r == -1 {
            let e = std::io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EACCES) | Some(libc::EAGAIN) => {
                    std::io::Error::new(std::io::ErrorKind::WouldBlock, e)
                }
                _ => e,
            });
        }
        Ok(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => std::io::ErrorKind::WouldBlock.into(),
            std::fs::TryLockError::Error(e) => e,
        })
    }
}

/// Files the process keeps free for everything else when a reader holds many open.
const OPEN_FILES_RESERVE: u64 = 256;

/// How many more files this process may hold open for a reader that wants `want` of them:
/// the soft limit on open files less those already open and a reserve of 256. On Linux,
/// when `want` needs it, the soft limit is first raised toward the hard limit (as Go's
/// runtime does for every program). Elsewhere, 200.
#[allow(unsafe_code)]
pub(crate) fn open_files_budget(want: usize) -> usize {
    #[cfg(target_os = "linux")]
    {
        let open_now = std::fs::read_dir("/proc/self/fd").map_or(64, |d| d.count() as u64);
        // SAFETY: `rlimit` is plain data; zeroed is a valid value for every field.
        let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
        // SAFETY: getrlimit writes one `rlimit` through the pointer, which points to one.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
            return 200;
        }
        let need = (want as u64)
            .saturating_add(open_now)
            .saturating_add(OPEN_FILES_RESERVE);
        if need > lim.rlim_cur && lim.rlim_max > lim.rlim_cur {
            let raised = libc::rlimit {
                rlim_cur: need.min(lim.rlim_max),
                rlim_max: lim.rlim_max,
            };
            // SAFETY: setrlimit reads one `rlimit` through the pointer, which points to one;
            // raising the soft limit up to the hard one needs no privilege and changes
            // nothing but how many files the process may open.
            if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
                lim.rlim_cur = raised.rlim_cur;
            }
        }
        usize::try_from(
            lim.rlim_cur
                .saturating_sub(open_now)
                .saturating_sub(OPEN_FILES_RESERVE),
        )
        .unwrap_or(usize::MAX)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = want;
        200
    }
}
