//! IndexedDB rows of `sst db` and `sst log`: the `"idb"` object (`crate::idb`'s key and
//! envelope, plus `db_name`, `store_name`, `index_name` and the value as `data` or
//! `data_error`), and text rows with names (`corpusdb / records / 42 @ 7 => v3 | {...}`).

use std::borrow::Cow;

use leveldb_table::idb::{
    blob_entry_key, blob_file_path, decode_external_objects, decode_key, decode_record_value,
    unwrap_value, DecodedKey, Envelope, ExternalObject, KeyBody, Unwrapped,
};
use leveldb_table::v8value::{decode, HostObject, Object, ValueError};
use serde_json::json;

use crate::decoding::{Decoding, Kind};
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

    fn push_idb_json(&self, line: &mut Vec<u8>, key: &[u8], value: Option<&[u8]>) {
        let Some(mut v) = crate::idb::decoded_json(key, value) else {
            return;
        };
        let Some(d) = decode_key(key) else {
            return;
        };
        let p = d.prefix;
        let is_record = matches!(d.body, KeyBody::Record(_));
        if let Some(obj) = v.as_object_mut() {
            if let Some(name) = self
                .catalog
                .database(p.database)
                .and_then(|x| x.name.as_ref())
            {
                obj.insert("db_name".into(), json!(name));
            }
            let store = self
                .catalog
                .store(p.database, p.store)
                .filter(|_| p.store != 0);
            if let Some(name) = store.and_then(|s| s.name.as_ref()) {
                obj.insert("store_name".into(), json!(name));
            }
            // A value moved into a blob file: where the file is.
            if let Some(Envelope::InBlob { index, .. }) =
                value.and_then(decode_record_value).map(|r| r.envelope)
            {
                let path = self.externals(key).ok().and_then(|l| {
                    let e = l.get(usize::try_from(index).ok()?)?;
                    Some(
                        self.blob_dir
                            .as_ref()?
                            .join(blob_file_path(p.database, e.blob_number)),
                    )
                });
                if let (Some(path), Some(env)) =
                    (path, obj.get_mut("value").and_then(|v| v.as_object_mut()))
                {
                    env.insert("path".into(), json!(path.to_string_lossy()));
                }
            }
            if let KeyBody::IndexEntry { .. } = d.body {
                if let Some(name) = store
                    .and_then(|s| s.indexes.get(&p.index))
                    .and_then(|i| i.name.as_ref())
                {
                    obj.insert("index_name".into(), json!(name));
                }
            }
        }
        let mut text = v.to_string().into_bytes();
        let envelope = value.and_then(decode_record_value);
        if let (true, Some(value), Some(_)) = (is_record, value, envelope) {
            text.pop(); // the closing brace
            match self.record_data(key, value) {
                Ok(json) => {
                    text.extend_from_slice(b",\"data\":");
                    text.extend_from_slice(&json);
                }
                Err(e) => {
                    text.extend_from_slice(b",\"data_error\":");
                    crate::common::push_json_str(&mut text, &e);
                }
            }
            text.push(b'}');
        }
        line.extend_from_slice(b",\"idb\":");
        line.extend_from_slice(&text);
    }

    /// A record's value as JSON, or what stops it from decoding and where (offsets count in
    /// the row's value, in the snappy-decompressed value, or in the blob file named).
    pub fn record_data(&self, key: &[u8], value: &[u8]) -> Result<Vec<u8>, String> {
        let rv = decode_record_value(value).ok_or("the value has no version varint")?;
        let shift = value.len() - rv.payload.len();
        let database = decode_key(key).map_or(0, |d| d.prefix.database);
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
        let mut out = Vec::with_capacity(bytes.len() + 16);
        push_decoded(&mut out, &d, &blobs);
        Ok(out)
    }

    /// The record's blob list (its blob entry, looked up in the database).
    fn externals(&self, key: &[u8]) -> Result<Vec<ExternalObject>, String> {
        let db = self
            .db()
            .ok_or("the record's blob entry cannot be looked up here")?;
        let k = blob_entry_key(key).ok_or("not a record key")?;
        match db.get(&k) {
            Ok(Some((v, _))) => decode_external_objects(&v).map_err(|e| e.to_string()),
            Ok(None) => Err("the record has no blob entry".into()),
            Err(e) => Err(format!("its blob entry cannot be read: {e}")),
        }
    }
}

/// An error in the serialized value, its offset counted in the row's value.
fn shifted(mut e: ValueError, shift: usize) -> String {
    e.offset += shift;
    e.to_string()
}
