//! `sst db get DIR --database NAME --store NAME KEY...`: keys given as IndexedDB keys in
//! the contract's JSON form (`7`, `"k7"`, `[1,"a"]`, `{"$type":"date","value":0}`,
//! `{"$type":"ArrayBuffer","hex":"00ff"}`), each encoded into its record's LevelDB key as
//! Chromium encodes it (`prefix(database, store, 1) | EncodeIDBKey(key)`), which `db get`
//! then looks up as any key: filter first, as Chromium's own `get()` does.

use std::path::Path;

use sst_chrome::idb::parse_key_json;

use super::decoding::{DecodeArgs, Decoding};
use crate::exit::Failure;

/// The object store keys are looked up in.
#[derive(Debug, Clone, Copy)]
pub struct IdbLookup {
    database: i64,
    store: i64,
}

impl IdbLookup {
    /// The one store `--database` / `--store` name in `dir` (as `dec` resolved them).
    ///
    /// # Errors
    /// No `--store`; a name that matches nothing (already refused by `dec`); a store name
    /// several databases have, without `--database`.
    pub fn new(dec: &Decoding<'_>, dir: &Path, a: &DecodeArgs) -> Result<IdbLookup, Failure> {
        let Some(store) = &a.store else {
            return Err(Failure::error(
                "db get: --database needs --store NAME: keys are looked up in one object store",
            ));
        };
        let stores: Vec<(i64, i64)> = dec
            .kept()
            .unwrap_or_default()
            .iter()
            .filter_map(|&(db, st)| Some((db, st?)))
            .collect();
        match stores[..] {
            [(database, store)] => Ok(IdbLookup { database, store }),
            [] => Err(Failure::error(format!(
                "{}: no object store named {store:?} to look keys up in",
                dir.display()
            ))),
            _ => {
                let names: Vec<String> = stores
                    .iter()
                    .map(|(db, _)| {
                        let name = dec.catalog.database(*db).and_then(|d| d.name.as_deref());
                        format!("{} (id {db})", name.unwrap_or("?"))
                    })
                    .collect();
                Err(Failure::error(format!(
                    "{}: {} databases have an object store named {store:?}: {}; say which \
                     with --database",
                    dir.display(),
                    stores.len(),
                    names.join(", ")
                )))
            }
        }
    }

    /// The LevelDB key of the record whose IndexedDB key is `text` (JSON, as above).
    ///
    /// # Errors
    /// `text` is not an IndexedDB key in that form (what and where, and what was given).
    pub fn record_key(&self, text: &[u8], what: &str) -> Result<Vec<u8>, Failure> {
        let k = std::str::from_utf8(text)
            .map_err(|_| Failure::error(format!("{what}: not UTF-8 text")))
            .and_then(|t| {
                parse_key_json(t).map_err(|e| {
                    Failure::error(format!(
                        "{what} {t:?}: {e} (IndexedDB keys are JSON: 7, \"k7\", [1,\"a\"], \
                         {{\"$type\":\"date\",\"value\":0}}, {{\"$type\":\"ArrayBuffer\",\"hex\":\"00ff\"}})"
                    ))
                })
            })?;
        Ok(k.record_key(self.database, self.store))
    }
}
