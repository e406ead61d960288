//! `sst db scan` on SQLite: every record of every selected store in key order, then the
//! store's index entries (by index, index key, primary key), database by database (by
//! name), as the LevelDB backend orders an origin's keys.

use std::io::Write;
use std::path::Path;

use crate::exit::{self, CmdResult, EXIT_OK};
use crate::render::chrome::DecodeArgs;
use crate::render::output::{self, OutFormat, RowsOut};

use super::open::{open, selected};
use super::rows::{Row, RowData};

/// What `sst db scan` asks of a SQLite target.
pub struct ScanArgs<'a> {
    /// The folder or file.
    pub path: &'a Path,
    /// Output format.
    pub format: OutFormat,
    /// Text shows keys and values as hex.
    pub hex: bool,
    /// At most this many rows.
    pub limit: Option<u64>,
    /// `--database`, `--store`.
    pub decode: &'a DecodeArgs,
}

/// Runs `sst db scan` on SQLite.
pub fn scan(a: &ScanArgs<'_>) -> CmdResult {
    let dbs = open(a.path)?;
    let keep = selected(&dbs, a.path, a.decode)?;
    let mut out = RowsOut::new(output::stdout(), a.format);
    let mut line = Vec::with_capacity(256);
    let mut n = 0u64;
    let full = |n: u64| a.limit.is_some_and(|l| n >= l);
    let fail = |e: sst_chrome::Error| exit::Failure::error(format!("{}: {e}", a.path.display()));
    for (db, stores) in keep {
        for &store in &stores {
            let mut io_err = None;
            db.for_each_record(store, |r| {
                if full(n) {
                    return Ok(false);
                }
                line.clear();
                let row = RowData {
                    db,
                    store,
                    row_id: r.row_id,
                    key: r.key,
                    value: r.value,
                    row: Row::Record {
                        compression: r.compression,
                    },
                };
                row.push(&mut line, a.format, "", a.hex);
                n += 1;
                if let Err(e) = out.write_all(&line) {
                    io_err = Some(e);
                    return Ok(false);
                }
                Ok(true)
            })
            .map_err(fail)?;
            if let Some(e) = io_err {
                return Err(e.into());
            }
            db.for_each_index_entry(store, |e| {
                if full(n) {
                    return Ok(false);
                }
                line.clear();
                let row = RowData {
                    db,
                    store,
                    row_id: e.record_row_id,
                    key: e.key,
                    value: &[],
                    row: Row::Index {
                        index: e.index,
                        primary_key: e.primary_key,
                    },
                };
                row.push(&mut line, a.format, "", a.hex);
                n += 1;
                if let Err(e) = out.write_all(&line) {
                    io_err = Some(e);
                    return Ok(false);
                }
                Ok(true)
            })
            .map_err(fail)?;
            if let Some(e) = io_err {
                return Err(e.into());
            }
        }
    }
    out.finish()?;
    Ok(EXIT_OK)
}
