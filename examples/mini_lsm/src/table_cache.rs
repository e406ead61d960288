//! The open tables (LevelDB's `TableCache`): at most `capacity` kept open, the least
//! recently used closed first, each read through a memory map or with `pread`. The crate's
//! one `unsafe` block is here (mapping a table file). A reader holds its table (an `Arc`) while it uses it, so a
//! table closed by the cache stays readable until the last user is done.
//!
//! ```text
//! get(number) ─► open? ─ yes ─► Arc<Table> (use tick updated)
//!                      └ no ──► open the file, verify footer and index, insert;
//!                               over capacity: close the entry with the oldest tick
//! ```

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use leveldb_table::db::engine::TableFile;
use leveldb_table::db::files::table_file_name;
use leveldb_table::raw::map_file;
use leveldb_table::{Error, OpenOptions, Result, TableReader};

/// An open table.
pub struct Table {
    /// Its file number.
    pub number: u64,
    /// The reader.
    pub reader: TableReader<TableFile>,
}

struct Slot {
    table: Arc<Table>,
    used: AtomicU64,
}

/// The open tables of one directory.
pub struct TableCache {
    dir: PathBuf,
    opts: OpenOptions,
    mmap: bool,
    capacity: usize,
    tables: RwLock<HashMap<u64, Slot>>,
    tick: AtomicU64,
}

impl TableCache {
    /// A cache of at most `capacity` open tables of `dir`, read with `opts`, through memory
    /// maps when `mmap`.
    pub fn new(dir: &Path, opts: OpenOptions, capacity: usize, mmap: bool) -> TableCache {
        TableCache {
            dir: dir.to_path_buf(),
            opts,
            mmap,
            capacity: capacity.max(1),
            tables: RwLock::default(),
            tick: AtomicU64::new(0),
        }
    }

    /// Table `number`, opened if it is not open.
    ///
    /// # Errors
    /// The file is missing or cannot be read, or its footer or index is damaged: the
    /// library's error, naming the file.
    pub fn get(&self, number: u64) -> Result<Arc<Table>> {
        let now = self.tick.fetch_add(1, Ordering::Relaxed);
        {
            let tables = self.tables.read().unwrap_or_else(|p| p.into_inner());
            if let Some(s) = tables.get(&number) {
                s.used.store(now, Ordering::Relaxed);
                return Ok(s.table.clone());
            }
        }
        let table = Arc::new(open_table(&self.dir, number, &self.opts, self.mmap)?);
        let mut tables = self.tables.write().unwrap_or_else(|p| p.into_inner());
        if tables.len() >= self.capacity && !tables.contains_key(&number) {
            let oldest = tables
                .iter()
                .min_by_key(|(_, s)| s.used.load(Ordering::Relaxed))
                .map(|(n, _)| *n);
            if let Some(n) = oldest {
                tables.remove(&n);
            }
        }
        let slot = tables.entry(number).or_insert(Slot {
            table,
            used: AtomicU64::new(now),
        });
        Ok(slot.table.clone())
    }

    /// Closes table `number` (it is obsolete); users holding it keep it until they are done.
    pub fn evict(&self, number: u64) {
        self.tables
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&number);
    }

    /// How many tables are open in the cache.
    pub fn len(&self) -> usize {
        self.tables.read().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// Opens table `number` of `dir` (named `NNNNNN.ldb`, or `NNNNNN.sst` as LevelDB before 1.14
/// named tables), through a memory map when `mmap`.
pub fn open_table(dir: &Path, number: u64, opts: &OpenOptions, mmap: bool) -> Result<Table> {
    let mut name = table_file_name(number);
    let mut file = File::open(dir.join(&name));
    if matches!(&file, Err(e) if e.kind() == std::io::ErrorKind::NotFound) {
        let sst = format!("{number:06}.sst");
        if let Ok(f) = File::open(dir.join(&sst)) {
            name = sst;
            file = Ok(f);
        }
    }
    let in_file = |e: Error| Error::InFile {
        file: name.clone(),
        source: Box::new(e),
    };
    let file = file.map_err(|e| in_file(e.into()))?;
    let source: TableFile = match mmap {
        // SAFETY: the contract of `map_file` is that the file is not truncated or changed
        // while mapped. The engine never writes to a table file under its final name (a
        // table is written under a temporary name, synced, then renamed into place), and
        // deleting a mapped file leaves the mapping valid.
        #[allow(unsafe_code)]
        true => Box::new(unsafe { map_file(&file) }.map_err(|e| in_file(e.into()))?),
        false => Box::new(file),
    };
    let reader = TableReader::open(source, opts.clone()).map_err(in_file)?;
    Ok(Table { number, reader })
}
