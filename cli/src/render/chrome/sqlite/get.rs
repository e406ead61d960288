//! `sst db get DIR --database NAME --store NAME KEY...` on SQLite: IndexedDB keys given as
//! JSON in the form rows print them (`1`, `"alice"`, `[2026,"x"]`,
//! `{"$type":"date","value":0}`: `sst_chrome::idb::parse_key_json`), looked up as Chromium
//! looks them up (`records` by store and encoded key).

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;

use sst_chrome::idb::parse_key_json;
use sst_chrome::idb::sqlite::encode_sortable_key;

use crate::exit::{CmdResult, Failure, EXIT_FAIL, EXIT_OK};
use crate::render::chrome::DecodeArgs;
use crate::render::output::{OutFormat, RowsOut};
use crate::render::{output, text};

use super::open::{open, selected};
use super::rows::{Row, RowData};

/// What `sst db get` asks of a SQLite target.
pub struct GetArgs<'a> {
    /// The folder or file.
    pub path: &'a Path,
    /// The keys, as JSON.
    pub keys: &'a [OsString],
    /// Output format.
    pub format: OutFormat,
    /// `--database`, `--store` (the store is required).
    pub decode: &'a DecodeArgs,
}

/// Runs `sst db get` on SQLite: exit 0 when every key is found, 1 otherwise.
pub fn get(a: &GetArgs<'_>) -> CmdResult {
    if a.decode.store.is_none() {
        return Err(Failure::error(format!(
            "{}: a SQLite IndexedDB lookup needs --store NAME (and --database NAME when \
             several databases have that store); keys are IndexedDB keys as JSON",
            a.path.display()
        )));
    }
    let keys = a
        .keys
        .iter()
        .map(|k| {
            let text = k.to_string_lossy().into_owned();
            parse_key_json(&text)
                .map(|key| (text.clone(), key))
                .map_err(|e| Failure::error(format!("KEY {text}: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let dbs = open(a.path)?;
    let keep = selected(&dbs, a.path, a.decode)?;
    let stores: Vec<_> = keep
        .iter()
        .flat_map(|(db, s)| s.iter().map(move |s| (*db, *s)))
        .collect();
    if stores.len() != 1 {
        return Err(Failure::error(format!(
            "{}: {} object stores match; --database NAME says which",
            a.path.display(),
            stores.len()
        )));
    }
    let (db, store) = stores[0];
    let mut out = RowsOut::new(output::verdict_stdout(), a.format);
    let mut missing = false;
    for (text, key) in &keys {
        let mut line = Vec::new();
        let found = db
            .get(store, key, |r| {
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
                let extra = if a.format == OutFormat::Text {
                    ""
                } else {
                    ",\"found\":true"
                };
                row.push(&mut line, a.format, extra, false);
                Ok(())
            })
            .map_err(|e| Failure::error(format!("{}: {e}", a.path.display())))?;
        if found.is_none() {
            missing = true;
            line.clear();
            match a.format {
                OutFormat::Text => {
                    line.extend_from_slice(format!("{text}: not found\n").as_bytes())
                }
                _ => {
                    line.extend_from_slice(b"{\"key\":\"");
                    if let Some(k) = encode_sortable_key(key) {
                        text::push_hex(&mut line, &k);
                    }
                    line.extend_from_slice(b"\",\"found\":false,\"given\":");
                    text::push_json_str(&mut line, text);
                    line.extend_from_slice(b"}\n");
                }
            }
        }
        out.write_all(&line)?;
    }
    out.finish()?;
    Ok(if missing { EXIT_FAIL } else { EXIT_OK })
}
