//! The MANIFEST being appended to: every change to the live tables, one VersionEdit per log
//! record (LevelDB's `VersionSet::LogAndApply`).
//!
//! ```text
//! MANIFEST-N: VersionEdit (the whole state, written on open), VersionEdit (one change), ...
//!             each record synced before the change is used
//! ```

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use leveldb_table::db::files::{manifest_file_name, LogWriter, VersionEdit};

use crate::error::{Error, Result};

/// The MANIFEST being appended to.
pub struct Manifest {
    path: PathBuf,
    log: LogWriter<BufWriter<File>>,
}

impl Manifest {
    /// Creates `MANIFEST-number` holding `edit` (the whole state), synced. CURRENT is not
    /// changed here.
    pub fn create(dir: &Path, number: u64, edit: &VersionEdit) -> Result<Manifest> {
        let path = dir.join(manifest_file_name(number));
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        let mut m = Manifest {
            path,
            log: LogWriter::new(BufWriter::new(file)),
        };
        m.append(edit)?;
        Ok(m)
    }

    /// Appends `edit` and syncs: once this returns, the change survives a crash.
    pub fn append(&mut self, edit: &VersionEdit) -> Result<()> {
        let mut rec = Vec::new();
        edit.encode(&mut rec);
        self.log
            .add_record(&rec)
            .and_then(|()| self.log.flush())
            .and_then(|()| self.log.get_ref().get_ref().sync_data())
            .map_err(|e| Error::io(&self.path, e))
    }
}
