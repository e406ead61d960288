//! IndexedDB rows of `sst db` and `sst log`: the `"idb"` object (`crate::idb`'s key and
//! envelope, plus `db_name`, `store_name`, `index_name` and the value as `data` or
//! `data_error`), and text rows with names (`corpusdb / records / 42 @ 7 => v3 | {...}`).

use std::borrow::Cow;

use leveldb_table::idb::{
    blob_entry_key, blob_file_path, decode_exists_value, decode_external_objects, decode_key,
    decode_record_value, unwrap_value, DecodedKey, Envelope, ExternalObject, KeyBody, Unwrapped,
};
use leveldb_table::v8value::{decode, HostObject, Object, ValueError};
use leveldb_table::{Lookup, ReadOptions};
use serde_json::json;

use crate::decoding::{Decoding, Kind};
use crate::json_text::push_int;
use crate::value_json::{push_decoded, Blobs};

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
            Kind::None => crate::common::push_text(line, key, hex),
            Kind::IndexedDb => match (hex, decode_key(key)) {
                (false, Some(d)) => line.extend_from_slice(self.key_text(&d).as_bytes()),
                _ => crate::common::push_text(line, key, hex),
            },
            Kind::Local | Kind::Session => self.push_storage_key_text(line, key, hex),
        }
    }

    /// Appends a value for text output (a record's value decoded: `v3 | {...}`).
    pub fn push_value_text(&self, line: &mut Vec<u8>, key: &[u8], value: &[u8], hex: bool) {
        match self.kind {
            Kind::None => crate::common::push_text(line, value, hex),
            Kind::IndexedDb => {
                let is_record = matches!(decode_key(key).map(|d| d.body), Some(KeyBody::Record(_)));
                match decode_record_value(value).filter(|_| is_record && !hex) {
                    Some(rv) => {
                        line.extend_from_slice(format!("v{} | ", rv.version).as_bytes());
                        match self.record_data(key, value) {
                            Ok(json) => line.extend_from_slice(&json),
                            Err(e) => {
                                line.extend_from_slice(format!("data error: {e} | ").as_bytes());
                                crate::common::push_text(line, rv.payload, false);
                            }
                        }
                    }
                    None => crate::idb::push_value_text(line, key, value, hex),
                }
            }
            Kind::Local | Kind::Session => self.push_storage_value_text(line, key, value, hex),
        }
    }

    /// `corpusdb / records / 42`, `corpusdb / people / index by_name / "bob" / seq 0 / 2`;
    /// ids where the names are unknown; metadata as `crate::idb` shows it.
    fn key_text(&self, d: &DecodedKey) -> String {
        let p = d.prefix;
        let db = self.catalog.database(p.database);
        let store = self.catalog.store(p.database, p.store);
        let db_name = db.and_then(|x| x.name.clone());
        let store_name = store.and_then(|x| x.name.clone());
        let (Some(dn), Some(sn)) = (db_name, store_name) else {
            return d.to_string();
        };
        let opt = |k: &Option<leveldb_table::idb::IdbKey>| {
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
    /// `crate::idb::decoded_json`.
    fn push_idb_json(&self, line: &mut Vec<u8>, key: &[u8], value: Option<&[u8]>) {
        let Some(d) = decode_key(key) else {
            return;
        };
        if let KeyBody::Meta { .. } = d.body {
            if let Some(mut v) = crate::idb::decoded_json(key, value) {
                if let (Some(obj), Some(name)) = (
                    v.as_object_mut(),
                    self.catalog
                        .database(d.prefix.database)
                        .and_then(|x| x.name.as_ref()),
                ) {
                    obj.insert("db_name".into(), json!(name));
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
            crate::idb_json::push_display(line, &v);
        };
        let key_field = |line: &mut Vec<u8>, name: &str, k: &Option<leveldb_table::idb::IdbKey>| {
            line.extend_from_slice(name.as_bytes());
            match k {
                Some(k) => crate::idb_json::push_key(line, k),
                None => line.extend_from_slice(b"null"),
            }
        };
        line.extend_from_slice(b",\"idb\":{\"db\":");
        push_int(line, p.database);
        if let Some(name) = self
            .catalog
            .database(p.database)
            .and_then(|x| x.name.as_ref())
        {
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
        if let Some(name) = store.and_then(|s| s.name.as_ref()) {
            str_field(line, ",\"store_name\":", name);
        }
        line.extend_from_slice(b",\"text\":");
        crate::idb_json::push_display(line, &d);
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
                    crate::common::push_json_str(line, &e);
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

    /// A record value's envelope, as `crate::idb` writes it, plus the blob file of a value
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
                    crate::common::push_json_str(line, &path.to_string_lossy());
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
    pub fn record_data(&self, key: &[u8], value: &[u8]) -> Result<Vec<u8>, String> {
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
    ) -> Result<(), String> {
        let rv = decode_record_value(value).ok_or("the value has no version varint")?;
        let shift = value.len() - rv.payload.len();
        let mut list: Option<Vec<ExternalObject>> = None;
        let blob_file: Vec<u8>;
        let mut origin = String::new();
        let bytes: Cow<'_, [u8]> = match unwrap_value(rv.payload) {
            Ok(Unwrapped::Value(Cow::Borrowed(b))) => Cow::Borrowed(b),
            Ok(Unwrapped::Value(b)) => {
                origin = "snappy-decompressed value".into();
                b
            }
            Ok(Unwrapped::InBlob { size, index }) => {
                let l = self.externals(key)?;
                let e = l.get(index as usize).ok_or_else(|| {
                    format!("the value was moved to blob {index} of the record, which its blob entry does not list")
                })?;
                let rel = blob_file_path(database, e.blob_number);
                let Some(dir) = &self.blob_dir else {
                    return Err(format!("the value was moved to blob file {rel} of the .blob folder, which is not known for this directory"));
                };
                let path = dir.join(&rel);
                blob_file = std::fs::read(&path).map_err(|err| {
                    format!("the value was moved to blob file {} ({size} bytes), which cannot be read: {err}", path.display())
                })?;
                if blob_file.len() as u64 != size {
                    return Err(format!(
                        "the value was moved to blob file {}, which has {} bytes where the record says {size}",
                        path.display(),
                        blob_file.len()
                    ));
                }
                list = Some(l);
                origin = format!("blob file {}", path.display());
                match unwrap_value(&blob_file) {
                    Ok(Unwrapped::Value(b)) => b,
                    Ok(Unwrapped::InBlob { .. }) => {
                        return Err(format!("{origin} holds another blob reference"))
                    }
                    Err(e) => return Err(format!("{} in {origin}", e)),
                }
            }
            Err(e) => return Err(shifted(e, shift)),
        };
        let d = match decode(&bytes) {
            Ok(d) => d,
            Err(e) if origin.is_empty() => return Err(shifted(e, shift)),
            Err(e) => return Err(format!("{e} of the {origin}")),
        };
        let needs_list = d.objects.iter().any(|o| {
            matches!(
                o,
                Object::Host(
                    HostObject::BlobIndex(_)
                        | HostObject::FileIndex(_)
                        | HostObject::FileListIndex(_)
                )
            )
        });
        if needs_list && list.is_none() {
            list = self.externals(key).ok();
        }
        let blobs = Blobs {
            list: list.as_deref(),
            dir: self.blob_dir.as_deref(),
            database,
        };
        push_decoded(out, &d, &blobs);
        Ok(())
    }

    /// The record's blob list (its blob entry, looked up in the database).
    fn externals(&self, key: &[u8]) -> Result<Vec<ExternalObject>, String> {
        let db = self
            .db()
            .ok_or("the record's blob entry cannot be looked up here")?;
        let k = blob_entry_key(key).ok_or("not a record key")?;
        match db.get(&k, &ReadOptions::default()) {
            Ok(Lookup::Found { value, .. }) => {
                decode_external_objects(&value).map_err(|e| e.to_string())
            }
            Ok(_) => Err("the record has no blob entry".into()),
            Err(e) => Err(format!("its blob entry cannot be read: {e}")),
        }
    }
}

/// An error in the serialized value, its offset counted in the row's value.
fn shifted(mut e: ValueError, shift: usize) -> String {
    e.offset += shift;
    e.to_string()
}
