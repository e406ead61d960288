//! `sst db records` on SQLite: every live record (`"status":"live"`), then the older
//! versions of records the files still hold (`shadowed`, `deleted`, `uncommitted`), each
//! with where it was found: a WAL frame, a main-file page the log replaces, a free page
//! (`sst_chrome::idb::sqlite::older_records`).

use std::io::Write;
use std::path::Path;

use sst_chrome::idb::sqlite::{older_records, RowPlace};

use crate::exit::{CmdResult, Failure, EXIT_OK};
use crate::render::chrome::DecodeArgs;
use crate::render::output::{OutFormat, RowsOut};
use crate::render::{output, text};

use super::open::{open, selected};
use super::rows::{Row, RowData};

fn file_name(p: &Path) -> String {
    p.file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned())
}

/// Runs `sst db records` on SQLite.
pub fn records(path: &Path, format: OutFormat, hex: bool, decode: &DecodeArgs) -> CmdResult {
    let dbs = open(path)?;
    let keep = selected(&dbs, path, decode)?;
    let fail = |e: sst_chrome::Error| Failure::error(format!("{}: {e}", path.display()));
    let mut out = RowsOut::new(output::stdout(), format);
    let text = format == OutFormat::Text;
    for (db, stores) in keep {
        let name = file_name(db.path());
        let live = if text {
            format!(" : live [{name}]")
        } else {
            let mut s = b",\"status\":\"live\",\"file\":".to_vec();
            text::push_json_str(&mut s, &name);
            String::from_utf8_lossy(&s).into_owned()
        };
        for &store in &stores {
            let mut rows = Vec::new();
            db.for_each_record(store, |r| {
                let mut line = Vec::new();
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
                row.push(&mut line, format, &live, hex);
                rows.push(line);
                Ok(true)
            })
            .map_err(fail)?;
            for l in rows {
                out.write_all(&l)?;
            }
        }
        for o in older_records(db).map_err(fail)? {
            if !stores.contains(&o.store)
                && (decode.store.is_some() || db.info.stores.contains_key(&o.store))
            {
                continue;
            }
            let (file, place, at) = match o.place {
                RowPlace::WalFrame {
                    frame,
                    offset,
                    page,
                } => (
                    format!("{name}-wal"),
                    "wal_frame",
                    format!("frame {frame} (page {page}) at {offset}"),
                ),
                RowPlace::MainPage { page, offset } => (
                    name.clone(),
                    "main_page",
                    format!("page {page} at {offset}"),
                ),
                RowPlace::FreePage { page } => {
                    (name.clone(), "free_page", format!("free page {page}"))
                }
            };
            let extra = if text {
                format!(" : {} [{file} {at}]", o.status.as_str())
            } else {
                let mut s = format!(",\"status\":\"{}\",\"file\":", o.status.as_str()).into_bytes();
                text::push_json_str(&mut s, &file);
                s.extend_from_slice(format!(",\"place\":\"{place}\"").as_bytes());
                match o.place {
                    RowPlace::WalFrame {
                        frame,
                        offset,
                        page,
                    } => s.extend_from_slice(
                        format!(",\"frame\":{frame},\"page\":{page},\"offset\":{offset}")
                            .as_bytes(),
                    ),
                    RowPlace::MainPage { page, offset } => s.extend_from_slice(
                        format!(",\"page\":{page},\"offset\":{offset}").as_bytes(),
                    ),
                    RowPlace::FreePage { page } => {
                        s.extend_from_slice(format!(",\"page\":{page}").as_bytes())
                    }
                }
                s.extend_from_slice(format!(",\"copies\":{}", o.copies).as_bytes());
                String::from_utf8_lossy(&s).into_owned()
            };
            let mut line = Vec::new();
            let row = RowData {
                db,
                store: o.store,
                row_id: o.row_id,
                key: &o.key,
                value: &o.value,
                row: Row::Record {
                    compression: o.compression,
                },
            };
            row.push(&mut line, format, &extra, hex);
            out.write_all(&line)?;
        }
    }
    out.finish()?;
    Ok(EXIT_OK)
}
