//! Bulk build: sorted entries -> a complete LevelDB database directory that LevelDB opens
//! without compacting (there is no bulk load in LevelDB itself; RocksDB has
//! `SstFileWriter` + `IngestExternalFile`).
//!
//! ```text
//! target/ (appears whole, by one rename of a temporary directory beside it)
//!   000002.ldb ... 00000N.ldb  tables of ~target_file_size, internal keys (user key,
//!                              sequence 1.., kValue), key ranges back to back, all at one
//!                              level (6 by default: LevelDB never compacts its last level
//!                              for size, and a read there meets one table per key, so no
//!                              seek compaction either)
//!   MANIFEST-(N+1)             one VersionEdit: comparator, log number N+2 (no log file),
//!                              next file N+3, last sequence = entries, the new files
//!   CURRENT                    "MANIFEST-(N+1)\n"
//! ```

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;

use crate::db::files::LogWriter;
use crate::db::files::{manifest_file_name, table_file_name};
use crate::db::files::{NewFile, VersionEdit};
use crate::db::files::{BYTEWISE_COMPARATOR_NAME, NUM_LEVELS, TARGET_FILE_SIZE};
use crate::error::{Error, Result};
use crate::format::coding;
use crate::format::TYPE_VALUE;
use crate::internal_key;
use crate::options::{KeyFormat, Options};
use crate::table_builder::TableBuilder;

/// How a bulk build writes its tables; set with setters named as the fields.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct BulkOptions {
    /// Table options (compression, block size, filter). Keys are written as internal keys
    /// with the bytewise comparator whatever `comparator` says here.
    pub table: Options,
    /// A table is closed once it reaches this many bytes (LevelDB's `max_file_size`, 2 MiB).
    pub target_file_size: u64,
    /// The level the tables go to (6, the deepest).
    pub level: usize,
}

impl Default for BulkOptions {
    fn default() -> Self {
        BulkOptions {
            table: Options::default().bloom(10),
            target_file_size: TARGET_FILE_SIZE,
            level: NUM_LEVELS - 1,
        }
    }
}

impl BulkOptions {
    /// Sets [`table`](Self::table).
    pub fn table(mut self, table: Options) -> Self {
        self.table = table;
        self
    }

    /// Sets [`target_file_size`](Self::target_file_size).
    pub fn target_file_size(mut self, target_file_size: u64) -> Self {
        self.target_file_size = target_file_size;
        self
    }

    /// Sets [`level`](Self::level).
    pub fn level(mut self, level: usize) -> Self {
        self.level = level;
        self
    }
}

/// What a bulk build wrote.
#[derive(Debug, Clone, Default)]
pub struct BulkStats {
    /// Entries written.
    pub entries: u64,
    /// Tables written, with their level, number, size and key range.
    pub files: Vec<NewFile>,
    /// Bytes of all tables.
    pub bytes: u64,
}

struct OpenTable {
    builder: TableBuilder<BufWriter<File>>,
    number: u64,
    smallest: Vec<u8>,
}

/// Writes a LevelDB database directory from entries in increasing key order.
pub struct BulkBuilder {
    target: PathBuf,
    tmp: Option<tempfile::TempDir>,
    opts: BulkOptions,
    table_opts: Options,
    current: Option<OpenTable>,
    stats: BulkStats,
    next_number: u64,
    /// The previous key (valid when `entries > 0`), reused: no allocation per entry.
    last_key: Vec<u8>,
    ikey: Vec<u8>,
    /// The first error, rendered, once the build failed (it takes no more input).
    failed: Option<String>,
    syncer: Syncer,
}

/// Fsyncs finished tables on a second thread while the next table is built; `finish` waits
/// for every one (and reports the first failure) before the MANIFEST and CURRENT are written,
/// so the directory is still published only once every file is on disk.
struct Syncer {
    tx: Option<mpsc::Sender<File>>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Syncer {
    fn start() -> Syncer {
        let (tx, rx) = mpsc::channel::<File>();
        let thread = std::thread::Builder::new()
            .name("bulk-fsync".into())
            .spawn(move || {
                let mut first_error = Ok(());
                for f in rx {
                    if let Err(e) = f.sync_all() {
                        if first_error.is_ok() {
                            first_error = Err(e);
                        }
                    }
                }
                first_error
            })
            .ok();
        Syncer {
            tx: thread.as_ref().map(|_| tx),
            thread,
        }
    }

    /// Queues `file` for fsync (or syncs it here when no thread could be started).
    fn sync(&self, file: File) -> io::Result<()> {
        match &self.tx {
            Some(tx) => match tx.send(file) {
                Ok(()) => Ok(()),
                Err(mpsc::SendError(file)) => file.sync_all(),
            },
            None => file.sync_all(),
        }
    }

    /// Waits for every queued fsync; the first error, if any.
    fn wait(&mut self) -> io::Result<()> {
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("the fsync thread panicked")),
            None => Ok(()),
        }
    }
}

impl BulkBuilder {
    /// Starts a build of the directory `target`, which must not exist; the work happens in a
    /// temporary directory beside it.
    ///
    /// # Errors
    /// `target` exists, its parent cannot be written, or the options are invalid.
    pub fn create(target: impl AsRef<Path>, opts: BulkOptions) -> Result<Self> {
        let target = target.as_ref().to_path_buf();
        if target.exists() {
            return Err(Error::InvalidArgument(format!(
                "{} exists; a bulk build writes a new directory",
                target.display()
            )));
        }
        if opts.level >= NUM_LEVELS || opts.target_file_size == 0 {
            return Err(Error::InvalidArgument(format!(
                "level must be < {NUM_LEVELS} and the target file size > 0"
            )));
        }
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{name}.bulk-"))
            .tempdir_in(&parent)
            .map_err(|e| Error::from(e).in_file(parent.display()))?;
        let mut table_opts = opts.table.clone();
        table_opts.comparator = std::sync::Arc::new(crate::util::comparator::BytewiseComparator);
        let table_opts = table_opts.keys(KeyFormat::Internal);
        Ok(BulkBuilder {
            target,
            tmp: Some(tmp),
            opts,
            table_opts,
            current: None,
            stats: BulkStats::default(),
            next_number: 2,
            last_key: Vec::new(),
            ikey: Vec::new(),
            failed: None,
            syncer: Syncer::start(),
        })
    }

    fn dir(&self) -> &Path {
        // ok: `tmp` is only taken by `finish`, which consumes the builder.
        self.tmp.as_ref().map_or(Path::new("."), |t| t.path())
    }

    /// Adds an entry; keys must increase strictly (bytewise). Entry i gets sequence i + 1.
    ///
    /// # Errors
    /// [`Error::OutOfOrder`] for a key not above the previous one; I/O errors, in
    /// [`Error::InFile`] naming the table being written. The build then fails: later calls
    /// give [`Error::BuilderFailed`].
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if let Some(first) = &self.failed {
            return Err(Error::BuilderFailed {
                first: first.clone(),
            });
        }
        if self.stats.entries > 0 && key <= self.last_key.as_slice() {
            let e = Error::OutOfOrder {
                previous: self.last_key.clone(),
                got: key.to_vec(),
            };
            self.failed = Some(e.to_string());
            return Err(e);
        }
        let number = self.current.as_ref().map_or(self.next_number, |t| t.number);
        let r = self
            .add_inner(key, value)
            .map_err(|e| e.io_in(self.dir().join(table_file_name(number)).display()));
        if let Err(e) = &r {
            self.failed = Some(e.to_string());
        }
        r
    }

    fn add_inner(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let seq = self.stats.entries + 1;
        self.ikey.clear();
        self.ikey.extend_from_slice(key);
        coding::put_fixed64(&mut self.ikey, internal_key::pack_tag(seq, TYPE_VALUE));
        if self.current.is_none() {
            let number = self.next_number;
            self.next_number += 1;
            let file = File::create(self.dir().join(table_file_name(number)))?;
            let builder =
                TableBuilder::new(BufWriter::with_capacity(1 << 16, file), &self.table_opts)?;
            self.current = Some(OpenTable {
                builder,
                number,
                smallest: self.ikey.clone(),
            });
        }
        let Some(t) = self.current.as_mut() else {
            return Ok(()); // ok: set just above
        };
        t.builder.add(&self.ikey, value)?;
        self.stats.entries = seq;
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        if t.builder.file_size() >= self.opts.target_file_size {
            self.close_table()?;
        }
        Ok(())
    }

    fn close_table(&mut self) -> Result<()> {
        let Some(t) = self.current.take() else {
            return Ok(());
        };
        let (w, _) = t.builder.finish()?;
        let file = w.into_inner().map_err(|e| Error::from(e.into_error()))?;
        let size = file.metadata()?.len();
        self.syncer.sync(file)?;
        let largest = self.ikey.clone();
        self.stats.bytes += size;
        self.stats.files.push(NewFile {
            level: self.opts.level as u32,
            number: t.number,
            size,
            smallest: t.smallest,
            largest,
        });
        Ok(())
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.stats.entries
    }

    /// Finishes the last table, writes the MANIFEST and CURRENT, and renames the directory
    /// into place (after fsyncing every file and the directory).
    ///
    /// # Errors
    /// I/O errors (in [`Error::InFile`], naming the target), an earlier failure
    /// ([`Error::BuilderFailed`]), or a target that appeared meanwhile; nothing is left at
    /// the target then.
    pub fn finish(mut self) -> Result<BulkStats> {
        if let Some(first) = self.failed.take() {
            return Err(Error::BuilderFailed { first });
        }
        let shown = self.target.display().to_string();
        self.finish_inner().map_err(|e| e.io_in(shown))
    }

    fn finish_inner(&mut self) -> Result<BulkStats> {
        self.close_table()?;
        self.syncer.wait()?;
        let manifest = self.next_number;
        let log_number = manifest + 1;
        let edit = VersionEdit {
            comparator: Some(BYTEWISE_COMPARATOR_NAME.to_string()),
            log_number: Some(log_number),
            prev_log_number: Some(0),
            next_file_number: Some(log_number + 1),
            last_sequence: Some(self.stats.entries),
            new_files: self.stats.files.clone(),
            ..VersionEdit::default()
        };
        let mut record = Vec::new();
        edit.encode(&mut record);
        let dir = self.dir().to_path_buf();
        let mut w = LogWriter::new(BufWriter::new(File::create(
            dir.join(manifest_file_name(manifest)),
        )?));
        w.add_record(&record)?;
        let file = w
            .into_inner()
            .into_inner()
            .map_err(|e| Error::from(e.into_error()))?;
        file.sync_all()?;
        let mut cur = File::create(dir.join("CURRENT"))?;
        cur.write_all(format!("{}\n", manifest_file_name(manifest)).as_bytes())?;
        cur.sync_all()?;
        File::open(&dir)?.sync_all()?;
        if self.target.exists() {
            return Err(Error::from(io::Error::new(
                io::ErrorKind::AlreadyExists,
                "it appeared during the build",
            )));
        }
        let tmp = self.tmp.take().map(tempfile::TempDir::keep);
        if let Some(path) = tmp {
            if let Err(e) = std::fs::rename(&path, &self.target) {
                let _ = std::fs::remove_dir_all(&path);
                return Err(e.into());
            }
        }
        if let Some(parent) = self.target.parent().filter(|p| !p.as_os_str().is_empty()) {
            File::open(parent)?.sync_all()?;
        }
        Ok(std::mem::take(&mut self.stats))
    }
}
