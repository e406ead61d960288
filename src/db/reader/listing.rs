//! The directory's files as one attempt at opening found them, its tables and logs held
//! open from the moment they were listed: a file the owner deletes afterwards stays readable
//! through the descriptor that holds it (on Unix), so a compaction or a flush that ends
//! while the MANIFEST is read takes nothing the attempt needs (`live.rs`).
//!
//! ```text
//! take:    readdir -> (name, kind) of LevelDB's files, other names apart;
//!          every table (as many as the process may hold open) and log opened and held
//! refresh: readdir again (after the MANIFEST is read) -> names new since, the logs held
//! file:    a held file, handed over (or opened now, for one listed beyond the budget)
//! ```

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::Arc;

use crate::db::files::FileKind;
use crate::error::Result;

/// The directory's files, the tables and logs among them held open.
pub(super) struct Listing {
    /// Every LevelDB file, (name, kind), sorted by kind.
    pub(super) files: Vec<(String, FileKind)>,
    /// The other names, sorted.
    pub(super) other: Vec<String>,
    /// Held files, by name.
    held: HashMap<String, Arc<File>>,
    /// Every name listed.
    known: HashSet<String>,
    /// The tables' names by number.
    tables: HashMap<u64, String>,
    /// How many more files may be held.
    budget: usize,
}

impl Listing {
    /// Lists `dir` and holds its tables and logs open.
    ///
    /// # Errors
    /// The directory cannot be listed.
    pub(super) fn take(dir: &Path) -> Result<Listing> {
        let mut l = Listing {
            files: Vec::new(),
            other: Vec::new(),
            held: HashMap::new(),
            known: HashSet::new(),
            tables: HashMap::new(),
            budget: 0,
        };
        l.refresh(dir, true)?;
        Ok(l)
    }

    /// Lists `dir` again: the names that appeared since are added, and the logs among them
    /// held (the tables too, when `tables`). Names gone since stay: their files are held,
    /// or were deleted after the listing that found them.
    ///
    /// # Errors
    /// The directory cannot be listed.
    pub(super) fn refresh(&mut self, dir: &Path, tables: bool) -> Result<()> {
        let mut new = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if self.known.contains(&name) {
                continue;
            }
            match FileKind::parse(&name) {
                Some(k) => new.push((name, k)),
                None => {
                    self.known.insert(name.clone());
                    self.other.push(name);
                }
            }
        }
        let holds = |k: &FileKind| match k {
            FileKind::Table(_) => tables,
            FileKind::Log(_) => true,
            _ => false,
        };
        let holdable = new.iter().filter(|(_, k)| holds(k)).count();
        if self.held.is_empty() {
            self.budget = crate::util::os::open_files_budget(holdable);
        }
        let mut listed = Vec::with_capacity(new.len());
        for (name, kind) in new {
            if holds(&kind) && self.budget > 0 {
                match File::open(dir.join(&name)) {
                    Ok(f) => {
                        self.held.insert(name.clone(), Arc::new(f));
                        self.budget -= 1;
                    }
                    // Deleted since readdir: not listed.
                    Err(e) if e.kind() == ErrorKind::NotFound => continue,
                    // Out of descriptors after all, or not readable: opened (and the
                    // error reported) on first use.
                    Err(_) => {}
                }
            }
            if let FileKind::Table(n) = kind {
                self.tables.insert(n, name.clone());
            }
            self.known.insert(name.clone());
            listed.push((name, kind));
        }
        self.files.extend(listed);
        self.files.sort_by_key(|(_, k)| *k);
        self.other.sort();
        Ok(())
    }

    /// The listed name of table `number` (`NNNNNN.ldb` or the older `NNNNNN.sst`).
    pub(super) fn table_name(&self, number: u64) -> Option<&str> {
        self.tables.get(&number).map(String::as_str)
    }

    /// File `name`: the one held since it was listed, or opened now. `Ok(None)` when it is
    /// not there (deleted since it was listed, or never listed and not there).
    ///
    /// # Errors
    /// It cannot be opened (other than not being there).
    pub(super) fn file(&mut self, dir: &Path, name: &str) -> std::io::Result<Option<Arc<File>>> {
        if let Some(f) = self.held.remove(name) {
            return Ok(Some(f));
        }
        match File::open(dir.join(name)) {
            Ok(f) => Ok(Some(Arc::new(f))),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Whether file `name` is held (else a reader opens it on first use).
    pub(super) fn is_held(&self, name: &str) -> bool {
        self.held.contains_key(name)
    }
}
