//! A SQLite record or index entry as a row, in the shape of the LevelDB backend's rows:
//!
//! ```text
//! text   corpusdb / people / 1 @ row 5 => zstd | {"id":1,...}
//!        corpusdb / people / index by_name / "alice" / 1 @ row 5
//! json   {"key": hex as stored, "value": hex as stored, "row_id": n, [extra fields],
//!         "idb": {"backend":"sqlite","compression":"zstd","db_name",...,"index":1,
//!                 "key":KEY,"kind":"record","store":3,"store_name","text",
//!                 "value":{"blink":21,"envelope":"plain","v8":16},"data":{...}}}
//! ```
//! Index entries: `"kind":"index"`, `"index"` (its id), `"index_name"`, `"primary_key"`;
//! the row's `"value"` is the primary key as stored.

use sst_chrome::idb::sqlite::{decode_sortable_key, SqliteDatabase};
use sst_chrome::idb::{decode_envelope, Envelope};
use sst_chrome::v8value::decode;
use sst_chrome::Error;

use crate::render::chrome::host_json::Blobs;
use crate::render::chrome::idb_json::{push_display, push_key};
use crate::render::chrome::json_text::push_int;
use crate::render::chrome::value_json::push_decoded;
use crate::render::output::OutFormat;
use crate::render::text::{push_hex, push_json_str, push_text};

/// A row to write: a record (its `compression_type`) or an index entry (its index id and
/// the record's key as stored).
pub enum Row<'a> {
    /// A `records` row.
    Record {
        /// `compression_type`.
        compression: i64,
    },
    /// An `index_references` row.
    Index {
        /// `index_id`.
        index: i64,
        /// `record_key`.
        primary_key: &'a [u8],
    },
}

/// One row's fields.
pub struct RowData<'a> {
    /// The database.
    pub db: &'a SqliteDatabase,
    /// The object store id.
    pub store: i64,
    /// The record's `row_id`.
    pub row_id: i64,
    /// The key as stored.
    pub key: &'a [u8],
    /// The value as stored (a record's).
    pub value: &'a [u8],
    /// What it is.
    pub row: Row<'a>,
}

fn compression_name(c: i64) -> String {
    match c {
        0 => "none".into(),
        1 => "zstd".into(),
        2 => "snappy".into(),
        n => n.to_string(),
    }
}

fn key_text(k: &[u8]) -> String {
    decode_sortable_key(k).map_or_else(|e| format!("? ({e})"), |k| k.to_string())
}

impl RowData<'_> {
    fn names(&self) -> (String, String) {
        let db = self.db.info.name.clone().unwrap_or_default();
        let store = self
            .db
            .info
            .stores
            .get(&self.store)
            .and_then(|s| s.name.clone());
        (db, store.unwrap_or_else(|| format!("store {}", self.store)))
    }

    fn index_name(&self, index: i64) -> Option<String> {
        self.db
            .info
            .stores
            .get(&self.store)?
            .indexes
            .get(&index)?
            .name
            .clone()
    }

    /// `corpusdb / people / 1`, `corpusdb / people / index by_name / "alice" / 1`.
    pub fn text(&self) -> String {
        let (db, store) = self.names();
        match &self.row {
            Row::Record { .. } => format!("{db} / {store} / {}", key_text(self.key)),
            Row::Index { index, primary_key } => format!(
                "{db} / {store} / index {} / {} / {}",
                self.index_name(*index).unwrap_or_else(|| index.to_string()),
                key_text(self.key),
                key_text(primary_key)
            ),
        }
    }

    /// The record's value as JSON (decompressed, decoded, Blobs and Files resolved).
    pub fn data(&self, compression: i64) -> Result<Vec<u8>, Error> {
        let bytes = sst_chrome::idb::sqlite::decompress(compression, self.value)?;
        let d = decode(&bytes).map_err(|e| Error::value(e, sst_chrome::ValuePlace::Row))?;
        let blobs = self.db.blobs(self.row_id)?;
        let list: Vec<_> = blobs.iter().map(|b| b.object.clone()).collect();
        let files: Vec<_> = blobs.iter().map(|b| b.legacy_file.clone()).collect();
        let mut out = Vec::new();
        push_decoded(
            &mut out,
            &d,
            &Blobs {
                list: Some(&list),
                dir: None,
                database: 0,
                sqlite_files: Some(&files),
            },
        );
        Ok(out)
    }

    /// Appends the row (with its `\n`); `extra` goes after `"row_id"` in JSON rows (a
    /// record's status and place), `hex` shows text keys and values as hex.
    pub fn push(&self, line: &mut Vec<u8>, format: OutFormat, extra: &str, hex: bool) {
        match format {
            OutFormat::Text => self.push_text(line, extra, hex),
            OutFormat::Json | OutFormat::Jsonl => self.push_json(line, extra),
        }
        line.push(b'\n');
    }

    fn push_text(&self, line: &mut Vec<u8>, extra: &str, hex: bool) {
        if hex {
            push_text(line, self.key, true);
        } else {
            line.extend_from_slice(self.text().as_bytes());
        }
        line.extend_from_slice(format!(" @ row {}{extra}", self.row_id).as_bytes());
        let Row::Record { compression } = self.row else {
            return;
        };
        line.extend_from_slice(b" => ");
        if hex {
            push_text(line, self.value, true);
            return;
        }
        if compression != 0 {
            line.extend_from_slice(format!("{} | ", compression_name(compression)).as_bytes());
        }
        match self.data(compression) {
            Ok(json) => line.extend_from_slice(&json),
            Err(e) => line.extend_from_slice(format!("data error: {e}").as_bytes()),
        }
    }

    fn push_json(&self, line: &mut Vec<u8>, extra: &str) {
        line.extend_from_slice(b"{\"key\":\"");
        push_hex(line, self.key);
        line.extend_from_slice(b"\",\"value\":\"");
        match &self.row {
            Row::Record { .. } => push_hex(line, self.value),
            Row::Index { primary_key, .. } => push_hex(line, primary_key),
        }
        line.extend_from_slice(format!("\",\"row_id\":{}{extra}", self.row_id).as_bytes());
        line.extend_from_slice(b",\"idb\":{\"backend\":\"sqlite\"");
        if let Row::Record { compression } = self.row {
            line.extend_from_slice(b",\"compression\":");
            push_json_str(line, &compression_name(compression));
        }
        let (db, store) = self.names();
        line.extend_from_slice(b",\"db_name\":");
        push_json_str(line, &db);
        line.extend_from_slice(b",\"index\":");
        let index = match self.row {
            Row::Record { .. } => 1,
            Row::Index { index, .. } => index,
        };
        push_int(line, index);
        if let Some(name) = self.index_name(index).filter(|_| index != 1) {
            line.extend_from_slice(b",\"index_name\":");
            push_json_str(line, &name);
        }
        line.extend_from_slice(b",\"key\":");
        push_typed(line, self.key);
        match &self.row {
            Row::Record { .. } => line.extend_from_slice(b",\"kind\":\"record\""),
            Row::Index { primary_key, .. } => {
                line.extend_from_slice(b",\"kind\":\"index\",\"primary_key\":");
                push_typed(line, primary_key);
            }
        }
        line.extend_from_slice(b",\"store\":");
        push_int(line, self.store);
        if self.db.info.stores.contains_key(&self.store) {
            line.extend_from_slice(b",\"store_name\":");
            push_json_str(line, &store);
        }
        line.extend_from_slice(b",\"text\":");
        push_display(line, &self.text());
        if let Row::Record { compression } = self.row {
            self.push_value(line, compression);
        }
        line.extend_from_slice(b"}}");
    }

    fn push_value(&self, line: &mut Vec<u8>, compression: i64) {
        let bytes = sst_chrome::idb::sqlite::decompress(compression, self.value);
        if let Ok(b) = &bytes {
            match decode_envelope(b) {
                Envelope::Plain { blink, v8 } => {
                    line.extend_from_slice(b",\"value\":{\"blink\":");
                    push_int(line, blink);
                    line.extend_from_slice(b",\"envelope\":\"plain\",\"v8\":");
                    match v8 {
                        Some(v) => push_int(line, v),
                        None => line.extend_from_slice(b"null"),
                    }
                    line.push(b'}');
                }
                _ => line.extend_from_slice(b",\"value\":{\"envelope\":\"unknown\"}"),
            }
        }
        let at = line.len();
        line.extend_from_slice(b",\"data\":");
        match self.data(compression) {
            Ok(json) => line.extend_from_slice(&json),
            Err(e) => {
                line.truncate(at);
                line.extend_from_slice(b",\"data_error\":");
                push_json_str(line, &e.to_string());
            }
        }
    }
}

/// A stored key as the typed JSON key, or `{"error": ...}`.
fn push_typed(line: &mut Vec<u8>, key: &[u8]) {
    match decode_sortable_key(key) {
        Ok(k) => push_key(line, &k),
        Err(e) => {
            line.extend_from_slice(b"{\"error\":");
            push_json_str(line, &e.to_string());
            line.push(b'}');
        }
    }
}
