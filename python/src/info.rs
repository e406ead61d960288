//! `Db.info()` and `Db.damage()`: what a directory holds, as dicts with the field names of
//! `sst db info --format json` (keys as bytes instead of hex).

use std::path::Path;

use leveldb_table::{db::files::FileKind, db::reader::Db};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

/// `{"offset", "len"}` of a torn tail, or `None`.
fn torn<'py>(py: Python<'py>, t: Option<(u64, u64)>) -> PyResult<Option<Bound<'py, PyDict>>> {
    t.map(|(o, n)| {
        let d = PyDict::new(py);
        d.set_item("offset", o)?;
        d.set_item("len", n)?;
        Ok(d)
    })
    .transpose()
}

/// The directory's LevelDB files that nothing live refers to (a table the MANIFEST does
/// not list, a log not replayed, an older MANIFEST), as `sst db info` lists them.
fn unlisted(db: &Db, dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names.retain(|name| match FileKind::parse(name) {
        Some(FileKind::Table(n)) => db.table_name(n).is_none(),
        Some(FileKind::Log(n)) => !db.logs().iter().any(|l| l.number == n),
        Some(FileKind::Manifest(_)) => db.manifest_name() != Some(name.as_str()),
        Some(_) => false,
        None => true,
    });
    names
}

/// `Db.info()`.
pub fn info<'py>(py: Python<'py>, db: &Db, dir: &Path) -> PyResult<Bound<'py, PyDict>> {
    let m = db.manifest();
    let levels = PyList::empty(py);
    for level in 0..7 {
        let files = PyList::empty(py);
        for f in db.level_files(level) {
            let d = PyDict::new(py);
            d.set_item("number", f.number)?;
            d.set_item("file", db.table_name(f.number))?;
            d.set_item("size", f.size)?;
            d.set_item("smallest", PyBytes::new(py, &f.smallest))?;
            d.set_item("largest", PyBytes::new(py, &f.largest))?;
            files.append(d)?;
        }
        let d = PyDict::new(py);
        d.set_item("level", level)?;
        d.set_item("files", files)?;
        let bytes: u64 = db.level_files(level).iter().map(|f| f.size).sum();
        d.set_item("bytes", bytes)?;
        levels.append(d)?;
    }
    let logs = PyList::empty(py);
    for l in db.logs() {
        let d = PyDict::new(py);
        d.set_item("number", l.number)?;
        d.set_item("batches", l.batches)?;
        d.set_item("records", l.records)?;
        d.set_item("torn_tail", torn(py, l.torn_tail)?)?;
        logs.append(d)?;
    }
    let d = PyDict::new(py);
    d.set_item("dir", dir.display().to_string())?;
    d.set_item("manifest", db.manifest_name())?;
    d.set_item("comparator", db.comparator_name())?;
    d.set_item("comparator_from", db.order_source().as_str())?;
    d.set_item("log_number", m.log_number)?;
    d.set_item("prev_log_number", m.prev_log_number)?;
    d.set_item("next_file", m.next_file_number)?;
    d.set_item("last_sequence", db.last_sequence())?;
    d.set_item("manifest_last_sequence", m.last_sequence)?;
    d.set_item("manifest_edits", m.edits)?;
    d.set_item("levels", levels)?;
    d.set_item("logs", logs)?;
    d.set_item("memtable_entries", db.memtable().len())?;
    // A directory listing: without the GIL.
    d.set_item("files_not_in_manifest", py.detach(|| unlisted(db, dir)))?;
    d.set_item("notes", db.notes().to_vec())?;
    d.set_item("manifest_torn_tail", torn(py, db.manifest_torn_tail())?)?;
    d.set_item("damage", damage(py, db)?)?;
    Ok(d)
}

/// `Db.damage()`: `[{"file", "offset", "len", "what"}]`.
pub fn damage<'py>(py: Python<'py>, db: &Db) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for x in db.damage() {
        let d = PyDict::new(py);
        d.set_item("file", &x.file)?;
        d.set_item("offset", x.offset)?;
        d.set_item("len", x.len)?;
        d.set_item("what", &x.what)?;
        out.append(d)?;
    }
    Ok(out)
}
