//! Files that appear complete or not at all.
//!
//! The bytes go to a temporary file in the target's directory (so the final rename stays on
//! one file system); [`AtomicFile::commit`] fsyncs it, renames it over the target and fsyncs
//! the directory, as LevelDB does for CURRENT (`SetCurrentFile`) and its tables. Dropped
//! without a commit, the temporary file is removed and the target is left as it was.
//!
//! The file gets the mode a plain `File::create` would give it (0666 less the umask, 0644
//! under the usual umask 022), not the 0600 of a temporary file; a file built over an
//! existing one keeps the old file's permissions.

use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// A file being written at a path where it will appear, whole, on [`commit`](Self::commit).
#[derive(Debug)]
pub struct AtomicFile {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl AtomicFile {
    /// Starts a file that will appear at `path`.
    ///
    /// # Errors
    /// If the temporary file cannot be created in `path`'s directory
    /// ([`Error::InFile`] naming `path`).
    pub fn create(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        Self::create_at(&path).map_err(|e| e.io_in(path.display()))
    }

    fn create_at(path: &Path) -> Result<Self> {
        let path = path.to_path_buf();
        let dir = parent_dir(&path);
        let mut builder = tempfile::Builder::new();
        builder.prefix(".sst-").suffix(".tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // Created with mode 0666: the kernel applies the umask, as for File::create.
            builder.permissions(Permissions::from_mode(0o666));
        }
        let tmp = builder.tempfile_in(dir)?;
        if let Ok(meta) = fs::metadata(&path) {
            // Replacing a file: keep its permissions.
            tmp.as_file().set_permissions(meta.permissions())?;
        }
        Ok(AtomicFile { tmp, path })
    }

    /// The path the file will have once committed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file (for reading back what was written, or its length).
    pub fn as_file(&self) -> &File {
        self.tmp.as_file()
    }

    /// Makes the file appear at its path: fsync, rename over the target, fsync the directory.
    ///
    /// # Errors
    /// Any I/O error ([`Error::InFile`] naming the path); the target path is then left as
    /// it was.
    pub fn commit(self) -> Result<()> {
        let shown = self.path.display().to_string();
        self.commit_inner().map_err(|e| e.io_in(shown))
    }

    fn commit_inner(self) -> Result<()> {
        self.tmp.as_file().sync_all()?;
        self.tmp
            .persist(&self.path)
            .map_err(|e| Error::from(e.error))?;
        sync_dir(parent_dir(&self.path))
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tmp.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.tmp.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.tmp.flush()
    }
}

/// Writes `bytes` to `path` atomically (see [`AtomicFile`]).
///
/// # Errors
/// Any I/O error ([`Error::InFile`] naming `path`); the target path is then left as it was.
pub fn write_atomically(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let path = path.as_ref();
    let mut f = AtomicFile::create(path)?;
    f.write_all(bytes)
        .map_err(|e| Error::from(e).io_in(path.display()))?;
    f.commit()
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Fsyncs a directory, so a rename in it is durable (a no-op where directories cannot be
/// opened, as on Windows).
fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(unix)]
    use std::os::unix::fs::PermissionsExt;

    #[cfg(unix)]
    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    #[cfg(unix)]
    #[test]
    fn new_files_get_the_mode_of_a_plain_create_and_replaced_files_keep_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain");
        File::create(&plain).unwrap();
        let ours = dir.path().join("ours");
        write_atomically(&ours, b"x").unwrap();
        assert_eq!(mode(&ours), mode(&plain), "same mode as File::create");
        assert_ne!(mode(&ours), 0o600, "not the temporary file's mode");

        fs::set_permissions(&ours, Permissions::from_mode(0o640)).unwrap();
        write_atomically(&ours, b"yy").unwrap();
        assert_eq!(mode(&ours), 0o640, "a replaced file keeps its permissions");
        assert_eq!(fs::read(&ours).unwrap(), b"yy");
    }

    #[test]
    fn nothing_appears_without_a_commit() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t");
        let mut f = AtomicFile::create(&p).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert!(!p.exists());
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            0,
            "temp file removed"
        );
    }
}
