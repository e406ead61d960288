//! Which order a table's keys are in, and the refusal to search a table in an order its keys
//! contradict.
//!
//! A table does not record its comparator (the MANIFEST does). For a table inside a database
//! directory the MANIFEST's comparator is used; otherwise `--comparator` (default bytewise).
//! Before `get`, `filter` or a `--from/--to` range answers, every key of the table is checked
//! to be in that order (one pass over the keys): a binary search in the wrong order answers
//! "not found" for keys that are there, so the command refuses instead, and names the order
//! the keys are in when it is one this tool knows.

use std::path::Path;
use std::sync::Arc;

use leveldb_table::db::files::FileKind;
use leveldb_table::{db::files::read_current, db::files::ManifestState};
use leveldb_table::{Comparator, ReadOptions, TableReader};

use leveldb_table::Cursor;

use crate::exit::{self, Failure};
use crate::input::flags::{ComparatorArg, Global};
use crate::render::text;

/// Where the comparator for a table came from.
pub enum Source {
    /// `--comparator`.
    Flag,
    /// The MANIFEST of the directory the table is in.
    Manifest,
    /// Nothing said: LevelDB's default.
    Default,
}

/// The comparator for the table at `path`: `--comparator` if given (refused if the
/// directory's MANIFEST names another), else the MANIFEST's when the table is in a database
/// directory, else bytewise.
pub fn comparator_for(path: &Path, g: &Global) -> Result<(Arc<dyn Comparator>, Source), String> {
    let manifest = manifest_comparator(path);
    match (g.comparator, manifest) {
        (Some(c), Some(m)) if m != c.name() => Err(format!(
            "{}: --comparator {} contradicts the directory's MANIFEST, which names {m:?}",
            path.display(),
            c.name()
        )),
        (Some(c), _) => Ok((c.comparator(), Source::Flag)),
        (None, Some(m)) => ComparatorArg::named(&m)
            .map(|c| (c.comparator(), Source::Manifest))
            .ok_or_else(|| {
                format!(
                    "{}: the directory's MANIFEST names comparator {m:?}, which this tool does \
                     not have; refusing to read the table in another order",
                    path.display()
                )
            }),
        (None, None) => Ok((ComparatorArg::Bytewise.comparator(), Source::Default)),
    }
}

/// The comparator named by the MANIFEST of the database directory holding `path`, if it is a
/// table in one (CURRENT beside it, naming a readable MANIFEST).
fn manifest_comparator(path: &Path) -> Option<String> {
    if !matches!(FileKind::of_path(path), Some(FileKind::Table(_))) {
        return None;
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (name, _) = read_current(dir).ok()?;
    let bytes = std::fs::read(dir.join(name)).ok()?;
    ManifestState::replay(&bytes, true).ok()?.comparator
}

/// Where the keys of a table break its order: a description and the two keys.
type Disorder = (String, Vec<u8>, Vec<u8>);

/// The first place the keys of `table` break its comparator's order. Checked: the index
/// separators ascend, and in every data block that can be read the keys ascend and lie
/// between the previous block's separator and the block's own (so together they ascend
/// across the whole table). A block that cannot be read is skipped here: `get` reports it
/// for the keys that fall in it. An index that cannot be read is an error.
fn first_disorder<R: leveldb_table::RandomAccess>(
    table: &TableReader<R>,
    path: &Path,
) -> Result<Option<Disorder>, String> {
    let cmp = table.comparator();
    let handles = table
        .data_block_handles()
        .map_err(|e| exit::describe(path, &e))?;
    for (i, w) in handles.windows(2).enumerate() {
        if cmp.compare(&w[0].0, &w[1].0).is_ge() {
            return Ok(Some((
                format!("index entries {i} and {}", i + 1),
                w[0].0.clone(),
                w[1].0.clone(),
            )));
        }
    }
    // Filling the table's block cache (when it has one, as `get`'s does) makes the
    // lookups that follow the check hits.
    let opts = ReadOptions::default();
    let mut prev_sep: Option<&[u8]> = None;
    for (sep, handle) in &handles {
        let Ok(block) = table.read_data_block(*handle, &opts) else {
            prev_sep = Some(sep);
            continue;
        };
        let mut it = block.iter(cmp);
        it.seek_to_first();
        let mut prev: Option<Vec<u8>> = None;
        let at = format!("the data block at offset {}", handle.offset);
        while it.valid() {
            let key = it.key();
            match &prev {
                Some(p) if cmp.compare(p, key).is_ge() => {
                    return Ok(Some((at, p.clone(), key.to_vec())));
                }
                None => {
                    if let Some(s) = prev_sep.filter(|s| cmp.compare(s, key).is_ge()) {
                        return Ok(Some((
                            format!("{at} (its first key against the previous block's separator)"),
                            s.to_vec(),
                            key.to_vec(),
                        )));
                    }
                }
                _ => {}
            }
            prev = Some(key.to_vec());
            it.next();
        }
        if let Some(last) = prev.filter(|l| cmp.compare(l, sep).is_gt()) {
            return Ok(Some((
                format!("{at} (its last key against its separator)"),
                last,
                sep.clone(),
            )));
        }
        prev_sep = Some(sep);
    }
    Ok(None)
}

/// The known orders (other than the table's own) that every key of the file at `path` is
/// in: the hint given when the keys contradict the order asked for.
pub fn orders_that_fit(path: &Path, g: &Global, current: &str) -> Vec<&'static str> {
    let mut fits = Vec::new();
    for c in [ComparatorArg::Bytewise, ComparatorArg::IdbCmp1] {
        if c.name() == current {
            continue;
        }
        let Ok(file) = std::fs::File::open(path) else {
            continue;
        };
        let mut opts = g.reader_options();
        opts.comparator = c.comparator();
        let Ok(t) = TableReader::open(file, opts) else {
            continue;
        };
        if let Ok(None) = first_disorder(&t, path) {
            fits.push(c.name());
        }
    }
    fits
}

/// The hint for keys found out of `current` order.
pub fn hint(path: &Path, g: &Global, current: &str) -> String {
    match orders_that_fit(path, g, current).first() {
        Some(&"idb_cmp1") => {
            "the keys are in idb_cmp1 order (Chrome IndexedDB): pass --comparator idb_cmp1".into()
        }
        Some(_) => "the keys are in bytewise order: pass --comparator bytewise".into(),
        None => "the keys are in no order this tool knows (bytewise, idb_cmp1)".into(),
    }
}

/// Refuses (exit 2) unless every key of `table` is in its comparator's order.
pub fn require_order<R: leveldb_table::RandomAccess>(
    table: &TableReader<R>,
    path: &Path,
    g: &Global,
    what: &str,
) -> Result<(), Failure> {
    let name = table_order_name(path, g);
    match first_disorder(table, path) {
        Ok(None) => Ok(()),
        Ok(Some((at, a, b))) => Err(Failure::error(format!(
            "{}: keys out of {name} order in {at} ({} then {}); refusing {what}: a search \
             in the wrong order would miss keys that are there. {}",
            path.display(),
            text::hex(&a),
            text::hex(&b),
            hint(path, g, &name)
        ))),
        Err(e) => Err(Failure::error(e)),
    }
}

/// The name of the order the table at `path` is read in.
pub fn table_order_name(path: &Path, g: &Global) -> String {
    comparator_for(path, g)
        .map(|(c, _)| c.name().to_string())
        .unwrap_or_default()
}
