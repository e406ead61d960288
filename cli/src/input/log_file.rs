//! Files in LevelDB's log format (write-ahead logs and MANIFESTs): read whole, refusing a
//! file of another kind, and walked record by record with damage reported on stderr.

use std::fmt::Display;
use std::path::Path;

use leveldb_table::{db::files::LogItem, db::files::LogReader};

use crate::exit::{self, Failure};
use crate::input::filekind::{self, Kind};

/// Reads a file in the log format, refusing (one line, exit 2) a file of another kind than
/// `want` (`wanted` names it): a table, CURRENT, a directory, a MANIFEST given to `log`...
pub fn read_as(path: &Path, want: &[Kind], wanted: &str) -> Result<Vec<u8>, Failure> {
    let refuse = |kind: Kind| filekind::expect(path, &kind, want, wanted).map_err(Failure::error);
    if let Some(msg) = crate::render::chrome::not_leveldb(path) {
        return Err(Failure::error(msg));
    }
    if path.is_dir() {
        refuse(filekind::of_path(path))?;
    }
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::error(format!("{}: cannot read: {e}", path.display())))?;
    let kind = filekind::of_file(path, &bytes);
    refuse(kind.clone())?;
    // Neither the bytes nor the name say it is LevelDB's: an empty file, or one with no
    // intact record of the log format at its start (random bytes, a file of another
    // program) is refused in one line rather than reported as thousands of damaged blocks.
    if kind == Kind::Unknown && !filekind::has_log_record(&bytes) {
        return Err(Failure::error(format!(
            "{}: not {wanted}: {}, and its name is not LevelDB's",
            path.display(),
            if bytes.is_empty() {
                "an empty file".to_string()
            } else {
                format!(
                    "no intact record of the log format in its first {} bytes",
                    bytes.len().min(filekind::SNIFF_BYTES as usize)
                )
            }
        )));
    }
    if bytes.is_empty() {
        exit::warn(&format!(
            "{}: empty: no records (LevelDB creates a log empty and writes to it later)",
            path.display()
        ));
    }
    Ok(bytes)
}

/// Reports damage and torn tails on stderr; returns whether there was damage.
pub fn report(path: &Path, item: &LogItem<'_>) -> bool {
    match item {
        LogItem::Damage(e) => {
            exit::warn(&format!("{}: {e}", path.display()));
            true
        }
        LogItem::TornTail { offset, len } => {
            exit::warn(&format!(
                "{}: the last record at offset {offset} ({len} bytes) is incomplete (a write in progress, or a cut file)",
                path.display()
            ));
            false
        }
        LogItem::Record { .. } => false,
    }
}

/// Walks the logical records of `bytes` (the file at `path`): damage and a torn tail are
/// reported on stderr ([`report`]), each record is handed to `each` with its offset. Returns
/// whether anything was damaged: in the file, or inside a record (`each` returns `true`).
pub fn for_each_record(
    path: &Path,
    bytes: &[u8],
    mut each: impl FnMut(u64, &[u8]) -> Result<bool, Failure>,
) -> Result<bool, Failure> {
    let mut damaged = false;
    for item in LogReader::new(bytes) {
        damaged |= report(path, &item);
        if let LogItem::Record { offset, data } = item {
            damaged |= each(offset, &data)?;
        }
    }
    Ok(damaged)
}

/// Reports on stderr a record at `offset` of `path` that does not decode.
pub fn bad_record(path: &Path, offset: u64, e: impl Display) {
    exit::warn(&format!(
        "{}: record at offset {offset}: {e}",
        path.display()
    ));
}
