//! A table written atomically to a path: [`TableBuilder`] over an [`AtomicFile`] (temp
//! file, fsync, rename), so the table appears complete or not at all.

use std::io::BufWriter;
use std::path::Path;

use crate::atomic_file::AtomicFile;
use crate::error::{Error, Result};
use crate::options::Options;
use crate::table_builder::{TableBuilder, TableStats};

/// Builds a table at a path atomically: the bytes go to a temporary file in the target's
/// directory, which is fsynced and renamed over the target by [`finish`](Self::finish)
/// (an [`AtomicFile`]: the table gets a plain file's mode, or the mode of the file it replaces).
/// If the build fails, or the builder is dropped unfinished, the temporary file is removed
/// and nothing appears at the target path.
pub struct TableFileBuilder {
    inner: TableBuilder<BufWriter<AtomicFile>>,
    /// The target path, shown in I/O errors.
    shown: String,
}

impl TableFileBuilder {
    /// Starts a table that will appear at `path` when finished.
    ///
    /// # Errors
    /// If the temporary file cannot be created (an I/O error in [`Error::InFile`], naming
    /// `path`), or the options are invalid.
    pub fn create(path: impl AsRef<Path>, opts: &Options) -> Result<Self> {
        let shown = path.as_ref().display().to_string();
        let file = AtomicFile::create(path)?;
        let inner = TableBuilder::new(BufWriter::with_capacity(1 << 16, file), opts)?;
        Ok(TableFileBuilder { inner, shown })
    }

    /// Adds an entry; see [`TableBuilder::add`].
    ///
    /// # Errors
    /// As [`TableBuilder::add`]; an I/O error (a full disk) comes in [`Error::InFile`],
    /// naming the table's path.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.inner.add(key, value).map_err(|e| e.io_in(&self.shown))
    }

    /// The builder inside (for `num_entries`, `file_size`).
    pub fn builder(&self) -> &TableBuilder<BufWriter<AtomicFile>> {
        &self.inner
    }

    /// Finishes the table, fsyncs it, renames it to the target path and fsyncs the
    /// directory.
    ///
    /// # Errors
    /// Any I/O error ([`Error::InFile`], naming the table's path); the target path is then
    /// left as it was.
    pub fn finish(self) -> Result<TableStats> {
        let shown = self.shown;
        let (w, stats) = self.inner.finish().map_err(|e| e.io_in(&shown))?;
        let file = w
            .into_inner()
            .map_err(|e| Error::from(e.into_error()).io_in(&shown))?;
        file.commit()?;
        Ok(stats)
    }
}
