//! IndexedDB rows of `sst db` and `sst log`: the `"idb"` object (`super::idb`'s key and
//! envelope, plus `db_name`, `store_name`, `index_name` and the value as `data` or
//! `data_error`), and text rows with names (`corpusdb / records / 42 @ 7 => v3 | {...}`).

use serde_json::json;
use sst_chrome::idb::{
    blob_file_path, decode_exists_value, decode_key, decode_record_value, idb_blob_list, idb_value,
    DecodedKey, Envelope, ExternalObject, KeyBody,
};
use sst_chrome::v8value::Object;
use sst_chrome::Error;

use super::decoding::{Decoding, Kind};
use super::json_text::push_int;
use super::value_json::{push_decoded, Blobs};
use crate::render::text;

impl Decoding<'_> {
    /// Appends the row's decoded field (`,"idb":{...}`, `,"local_storage":{...}`...).
    pub fn push_json(&self, line: &mut Vec<u8>, key: &[u8], value: Option<&[u8]>) {
        match self.kind {
            Kind::None => {}
            Kind::IndexedDb => self.push_idb_json(line, key, value),
            Kind::Local | Kind::Session => self.push_storage_json(line, key, value),
        }
    }

    /// Appends a key for text output.
    pub fn push_key_text(&self, line: &mut Vec<u8>, key: &[u8], hex: bool) {
        match self.kind {
            Kind::None => text::push_text(line, key, hex),
            Kind::IndexedDb => match (hex, decode_key(key)) {
                (false, Some(d)) => line.extend_from_slice(self.key_text(&d).as_bytes()),
                _ => text::push_text(line, key, hex),
            },
            Kind::Local | Kind::Session => self.push_storage_key_text(line, key, hex),
        }
    }

    /// Appends a value for text output (a record's value decoded: `v3 | {...}`).
    pub fn push_value_text(&self, line: &mut Vec<u8>, key: &[u8], value: &[u8], hex: bool) {
        match self.kind {
            Kind::None => text::push_text(line, value, hex),
            Kind::IndexedDb => {
                let is_record = matches!(decode_key(key).map(|d| d.body), Some(KeyBody::Record(_)));
                match decode_record_value(value).filter(|_| is_record && !hex) {
                    Some(rv) => {
                        line.extend_from_slice(format!("v{} | ", rv.version).as_bytes());
                        match self.record_data(key, value) {
                            Ok(json) => line.extend_from_slice(&json),
                            Err(e) => {
                                line.extend_from_slice(format!("data error: {e} | ").as_bytes());
                                text::push_text(line, rv.payload, false);
                            }
                        }
                    }
                    None => super::idb::push_value_text(line, key, value, hex),
                }
            }
            Kind::Local | Kind::Session => self.push_storage_value_text(line, key, value, hex),
        }
    }

    /// `corpusdb / records / 42`, `corpusdb / people / index by_name / "bob" / seq 0 / 2`;
    /// ids where the names are unknown; metadata as `super::idb` shows it.
    fn key_text(&self, d: &DecodedKey) -> String {
        let p = d.prefix;
        let db = self.catalog.database(p.database);
        let store = self.catalog.store(p.database, p.store);
        // A name only deleted metadata gives says so.
        let deleted = |name: &String, deleted: bool| match deleted {
            true => format!("{name} (deleted)"),
            false => name.clone(),
        };
        let db_name = db.and_then(|x| Some(deleted(x.name.as_ref()?, x.deleted)));
        let store_name = store.and_then(|x| Some(deleted(x.name.as_ref()?, x.deleted)));
        let (Some(dn), Some(sn)) = (db_name, store_name) else {
            return d.to_string();
        };
        let opt = |k: &Option<sst_chrome::idb::IdbKey>| {
            k.as_ref().map_or(String::new(), |k| format!(" / {k}"))
        };
        match &d.body {
            KeyBody::Record(k) => format!("{dn} / {sn}{}", opt(k)),
            KeyBody::Exists(k) => format!("{dn} / {sn} / exists{}", opt(k)),
            KeyBody::Blob(k) => format!("{dn} / {sn} / blob{}", opt(k)),
            KeyBody::IndexEntry {
                key,
                sequence,
                primary,
            } => {
                let index = store
                    .and_then(|s| s.indexes.get(&p.index))
                    .and_then(|i| i.name.clone())
                    .unwrap_or_else(|| p.index.to_string());
                let seq = sequence.map_or(String::new(), |s| format!(" / seq {s}"));
                format!(
                    "{dn} / {sn} / index {index}{}{seq}{}",
                    opt(key),
                    opt(primary)
                )
            }
            KeyBody::Meta { .. } => d.to_string(),
        }
    }

    /// The `"idb"` object, written directly in the field order `serde_json` gives it
    /// (alphabetical, as before names and values were added); metadata rows through
    /// `super::idb::meta_json`.
    fn push_idb_json(&self, line: &mut Vec<u8>, key: &[u8], value: Option<&[u8]>) {
        let Some(d) = decode_key(key) else {
            return;
        };
        if let KeyBody::Meta { .. } = d.body {
            if let Some(mut v) = super::idb::meta_json(key) {
                if let Some(obj) = v.as_object_mut() {
                    let db = d.prefix.database;
                    if let Some(info) = self.catalog.database(db) {
                        if let Some(name) = info.name.as_ref() {
                            obj.insert("db_name".into(), json!(name));
                        }
                        if info.deleted {
                            obj.insert("db_deleted".into(), json!(true));
                        }
                    }
                    if let Some(origin) = self.origin(db) {
                        obj.insert("origin".into(), json!(origin));
                    }
                    if self.catalog.partial.is_some() {
                        obj.insert("names_partial".into(), json!(true));
                    }
                }
                line.extend_from_slice(b",\"idb\":");
                line.extend_from_slice(v.to_string().as_bytes());
            }
            return;
        }
        let p = d.prefix;
        let store = self.catalog.store(p.database, p.store);
        let str_field = |line: &mut Vec<u8>, name: &str, v: &str| {
            line.extend_from_slice(name.as_bytes());
            super::idb_json::push_str(line, v);
        };
        let key_field = |line: &mut Vec<u8>, name: &str, k: &Option<sst_chrome::idb::IdbKey>| {
            line.extend_from_slice(name.as_bytes());
            match k {
                Some(k) => super::idb_json::push_key(line, k),
                None => line.extend_from_slice(b"null"),
            }
        };
        line.extend_from_slice(b",\"idb\":{\"db\":");
        push_int(line, p.database);
        if let Some((name, deleted)) = self
            .catalog
            .database(p.database)
            .and_then(|x| Some((x.name.as_ref()?, x.deleted)))
        {
            if deleted {
                line.extend_from_slice(b",\"db_deleted\":true");
            }
            str_field(line, ",\"db_name\":", name);
        }
        line.extend_from_slice(b",\"index\":");
        push_int(line, p.index);
        let (kind, k) = match &d.body {
            KeyBody::Record(k) => ("record", k),
            KeyBody::Exists(k) => ("exists", k),
            KeyBody::Blob(k) => ("blob", k),
            KeyBody::IndexEntry { key, .. } => {
                let name = store
                    .and_then(|s| s.indexes.get(&p.index))
                    .and_then(|i| i.name.as_ref());
                if let Some(name) = name {
                    str_field(line, ",\"index_name\":", name);
                }
                ("index", key)
            }
            KeyBody::Meta { .. } => return,
        };
        key_field(line, ",\"key\":", k);
        line.extend_from_slice(b",\"kind\":\"");
        line.extend_from_slice(kind.as_bytes());
        line.push(b'"');
        if self.catalog.partial.is_some() {
            line.extend_from_slice(b",\"names_partial\":true");
        }
        if let Some(origin) = self.origin(p.database) {
            str_field(line, ",\"origin\":", origin);
        }
        if let KeyBody::IndexEntry {
            sequence, primary, ..
        } = &d.body
        {
            key_field(line, ",\"primary_key\":", primary);
            match sequence {
                Some(s) => line.extend_from_slice(format!(",\"sequence\":{s}").as_bytes()),
                None => line.extend_from_slice(b",\"sequence\":null"),
            }
        }
        line.extend_from_slice(b",\"store\":");
        push_int(line, p.store);
        if let Some((name, deleted)) = store.and_then(|s| Some((s.name.as_ref()?, s.deleted))) {
            if deleted {
                line.extend_from_slice(b",\"store_deleted\":true");
            }
            str_field(line, ",\"store_name\":", name);
        }
        line.extend_from_slice(b",\"text\":");
        super::idb_json::push_display(line, &d);
        match &d.body {
            KeyBody::Record(_) => {
                let Some(rv) = value.and_then(decode_record_value) else {
                    line.push(b'}');
                    return;
                };
                line.extend_from_slice(b",\"value\":");
                self.push_envelope(line, key, p.database, rv.version, &rv.envelope);
                let at = line.len();
                line.extend_from_slice(b",\"data\":");
                if let Err(e) =
                    self.record_data_into(line, key, p.database, value.unwrap_or_default())
                {
                    line.truncate(at);
                    line.extend_from_slice(b",\"data_error\":");
                    text::push_json_str(line, &e.to_string());
                }
            }
            KeyBody::Exists(_) => {
                if let Some(v) = value.and_then(decode_exists_value) {
                    line.extend_from_slice(b",\"value\":{\"version\":");
                    push_int(line, v);
                    line.push(b'}');
                }
            }
            KeyBody::IndexEntry { .. } => {
                if let Some(rv) = value.and_then(decode_record_value) {
                    line.extend_from_slice(b",\"value\":{\"version\":");
                    push_int(line, rv.version);
                    line.push(b'}');
                }
            }
            _ => {}
        }
        line.push(b'}');
    }

    /// A record value's envelope, as `super::idb` writes it, plus the blob file of a value
    /// moved into one.
    fn push_envelope(
        &self,
        line: &mut Vec<u8>,
        key: &[u8],
        database: i64,
        version: i64,
        e: &Envelope,
    ) {
        match e {
            Envelope::Plain { blink, v8 } => {
                line.extend_from_slice(b"{\"blink\":");
                push_int(line, *blink);
                line.extend_from_slice(b",\"envelope\":\"plain\",\"v8\":");
                match v8 {
                    Some(v) => push_int(line, *v),
                    None => line.extend_from_slice(b"null"),
                }
                line.extend_from_slice(b",\"version\":");
                push_int(line, version);
                line.push(b'}');
            }
            Envelope::InBlob { size, index } => {
                line.extend_from_slice(
                    format!("{{\"blob_index\":{index},\"envelope\":\"blob\"").as_bytes(),
                );
                let path = self.externals(key).ok().and_then(|l| {
                    let e = l.get(usize::try_from(*index).ok()?)?;
                    Some(
                        self.blob_dir
                            .as_ref()?
                            .join(blob_file_path(database, e.blob_number)),
                    )
                });
                if let Some(path) = path {
                    line.extend_from_slice(b",\"path\":");
                    text::push_json_str(line, &path.to_string_lossy());
                }
                line.extend_from_slice(
                    format!(",\"size\":{size},\"version\":{version}}}").as_bytes(),
                );
            }
            Envelope::Snappy => line.extend_from_slice(
                format!("{{\"envelope\":\"snappy\",\"version\":{version}}}").as_bytes(),
            ),
            Envelope::Unknown => line.extend_from_slice(
                format!("{{\"envelope\":\"unknown\",\"version\":{version}}}").as_bytes(),
            ),
        }
    }

    /// A record's value as JSON, or what stops it from decoding and where (offsets count in
    /// the row's value, in the snappy-decompressed value, or in the blob file named).
    pub fn record_data(&self, key: &[u8], value: &[u8]) -> Result<Vec<u8>, Error> {
        let database = decode_key(key).map_or(0, |d| d.prefix.database);
        let mut out = Vec::new();
        self.record_data_into(&mut out, key, database, value)?;
        Ok(out)
    }

    /// [`Decoding::record_data`] appended to `out` (left as it was on an error).
    fn record_data_into(
        &self,
        out: &mut Vec<u8>,
        key: &[u8],
        database: i64,
        value: &[u8],
    ) -> Result<(), Error> {
        let v = idb_value(self.db(), self.blob_dir.as_deref(), key, value)?;
        let d = v.decode()?;
        let needs_list = d
            .objects
            .iter()
            .any(|o| matches!(o, Object::Host(h) if h.uses_blob_list()));
        let looked_up = match (&v.blobs, needs_list) {
            (None, true) => self.externals(key).ok(),
            _ => None,
        };
        let blobs = Blobs {
            list: v.blobs.as_deref().or(looked_up.as_deref()),
            dir: self.blob_dir.as_deref(),
            database,
            sqlite_files: None,
        };
        push_decoded(out, &d, &blobs);
        Ok(())
    }

    /// The record's blob list (its blob entry, looked up in the database).
    fn externals(&self, key: &[u8]) -> Result<Vec<ExternalObject>, Error> {
        idb_blob_list(self.db().ok_or(Error::NoDatabase)?, key)
    }
}
