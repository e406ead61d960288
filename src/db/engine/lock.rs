//! The LOCK file of a database directory: held by the one process that writes the database,
//! as LevelDB's `DBImpl::Open` holds it (`Env::LockFile`, a POSIX `fcntl` write lock on the
//! whole file), so that two writers never share a directory, whether both are LevelDB, both
//! are engines built on this crate, or one of each.
//!
//! ```text
//! dir/LOCK   empty file; created if missing, never removed
//!            held: fcntl(F_SETLK, F_WRLCK, whole file) by the writer's process
//!            + an in-process set of held paths (fcntl locks do not exclude the same process)
//! ```
//!
//! The read-only `Db` (`db::reader`) never takes it (reading never writes).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use crate::error::{Error, Result};

/// Paths locked by this process (LevelDB's `PosixLockTable`): `fcntl` locks belong to the
/// process, so a second lock from the same process would succeed without it.
fn held() -> &'static Mutex<HashSet<PathBuf>> {
    static HELD: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    HELD.get_or_init(|| Mutex::new(HashSet::new()))
}

/// The LOCK of a database directory, held until dropped.
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
    // Closing the file releases the fcntl lock.
    _file: File,
}

impl DirLock {
    /// Creates `dir/LOCK` if missing and locks it without waiting.
    ///
    /// # Errors
    /// [`Error::Io`] of kind `WouldBlock` when another process or another `DirLock` of this
    /// process holds it (the message names the file); other I/O errors as they come.
    pub fn acquire(dir: impl AsRef<Path>) -> Result<DirLock> {
        let path = dir.as_ref().join("LOCK");
        let key = std::fs::canonicalize(dir.as_ref())
            .map(|d| d.join("LOCK"))
            .unwrap_or_else(|_| path.clone());
        let busy = || {
            Error::from(std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                format!(
                    "{}: the database is in use (another process or handle holds its LOCK)",
                    path.display()
                ),
            ))
        };
        let mut set = held().lock().unwrap_or_else(|p| p.into_inner());
        if set.contains(&key) {
            return Err(busy());
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::from(e).in_file(path.display()))?;
        match crate::util::os::lock_whole_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return Err(busy()),
            Err(e) => return Err(Error::from(e).in_file(path.display())),
        }
        set.insert(key.clone());
        Ok(DirLock {
            path: key,
            _file: file,
        })
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        let mut set = held().lock().unwrap_or_else(|p| p.into_inner());
        set.remove(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_of_one_directory_fails_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let a = DirLock::acquire(dir.path()).unwrap();
        assert!(dir.path().join("LOCK").exists());
        let e = DirLock::acquire(dir.path()).unwrap_err();
        assert!(e.to_string().contains("LOCK"), "{e}");
        drop(a);
        let _b = DirLock::acquire(dir.path()).unwrap();
    }
}
