//! localStorage and sessionStorage rows of `sst db`: `"local_storage": {"kind": "item",
//! "origin", "key", "value"}` (metadata rows with their own kind), `"session_storage":
//! {"kind": "item", "map", "namespace", "namespaces", "origin", "key", "value"}`, and text
//! rows (`https://a.test / "key" @ 4 => "value"`).

use sst_chrome::dom_storage::{
    decode_local_storage, decode_session_storage, LocalStorageEntry, SessionStorageEntry,
    StorageText,
};

use super::decoding::{Decoding, Kind};
use super::json_text::{push_plain, push_str};
use crate::render::text;

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `"field":"text"`, or for bytes Chrome reads as corrupt `"field":null,"field_error":...,
/// "field_hex":...`.
fn text_field(out: &mut Vec<u8>, field: &str, t: &StorageText<'_>) {
    out.push(b'"');
    out.extend_from_slice(field.as_bytes());
    out.extend_from_slice(b"\":");
    match t {
        StorageText::Text(s) => push_str(out, s),
        StorageText::Corrupt(b) => {
            out.extend_from_slice(
                format!("null,\"{field}_error\":\"an unknown format byte or an odd UTF-16 length (Chrome reads it as an empty string)\",\"{field}_hex\":\"")
                    .as_bytes(),
            );
            text::push_hex(out, b);
            out.push(b'"');
        }
    }
}

fn opt_num<T: ToString>(v: Option<T>) -> String {
    v.map_or("null".into(), |x| x.to_string())
}

impl Decoding<'_> {
    /// The object of a localStorage or sessionStorage row, if the key is one they write.
    fn storage_object(&self, key: &[u8], value: &[u8]) -> Option<Vec<u8>> {
        let mut o = Vec::with_capacity(64 + key.len() + value.len());
        o.extend_from_slice(b"{\"kind\":");
        if self.kind == Kind::Local {
            match decode_local_storage(key, value)? {
                LocalStorageEntry::Item { origin, key, value } => {
                    o.extend_from_slice(b"\"item\",\"origin\":");
                    push_plain(&mut o, &lossy(origin));
                    o.push(b',');
                    text_field(&mut o, "key", &key);
                    o.push(b',');
                    text_field(&mut o, "value", &value);
                }
                LocalStorageEntry::WriteMeta {
                    origin,
                    last_modified_ms,
                    size_bytes,
                } => {
                    o.extend_from_slice(b"\"meta\",\"origin\":");
                    push_plain(&mut o, &lossy(origin));
                    o.extend_from_slice(
                        format!(
                            ",\"last_modified\":{},\"size_bytes\":{}",
                            opt_num(last_modified_ms),
                            opt_num(size_bytes)
                        )
                        .as_bytes(),
                    );
                }
                LocalStorageEntry::AccessMeta {
                    origin,
                    last_accessed_ms,
                } => {
                    o.extend_from_slice(b"\"access\",\"origin\":");
                    push_plain(&mut o, &lossy(origin));
                    o.extend_from_slice(
                        format!(",\"last_accessed\":{}", opt_num(last_accessed_ms)).as_bytes(),
                    );
                }
                LocalStorageEntry::Version(v) => {
                    o.extend_from_slice(b"\"version\",\"value\":");
                    push_plain(&mut o, &lossy(v));
                }
            }
        } else {
            match decode_session_storage(key, value)? {
                SessionStorageEntry::Item { map, key, value } => {
                    o.extend_from_slice(
                        format!("\"item\",\"map\":{map},\"namespace\":").as_bytes(),
                    );
                    let (namespaces, origin) = self.maps.get(&map).cloned().unwrap_or_default();
                    match namespaces.first() {
                        Some(n) => push_plain(&mut o, n),
                        None => o.extend_from_slice(b"null"),
                    }
                    o.extend_from_slice(b",\"namespaces\":[");
                    for (i, n) in namespaces.iter().enumerate() {
                        if i > 0 {
                            o.push(b',');
                        }
                        push_plain(&mut o, n);
                    }
                    o.extend_from_slice(b"],\"origin\":");
                    if namespaces.is_empty() {
                        o.extend_from_slice(b"null");
                    } else {
                        push_plain(&mut o, &origin);
                    }
                    o.extend_from_slice(b",\"key\":");
                    push_str(&mut o, &key);
                    o.push(b',');
                    text_field(&mut o, "value", &value);
                }
                SessionStorageEntry::Namespace {
                    namespace,
                    origin,
                    map,
                } => {
                    o.extend_from_slice(b"\"namespace\",\"namespace\":");
                    push_plain(&mut o, &lossy(namespace));
                    o.extend_from_slice(b",\"origin\":");
                    push_plain(&mut o, &lossy(origin));
                    o.extend_from_slice(format!(",\"map\":{}", opt_num(map)).as_bytes());
                }
                SessionStorageEntry::NextMapId(n) => {
                    o.extend_from_slice(
                        format!("\"next_map_id\",\"value\":{}", opt_num(n)).as_bytes(),
                    );
                }
                SessionStorageEntry::Version(v) => {
                    o.extend_from_slice(b"\"version\",\"value\":");
                    push_plain(&mut o, &lossy(v));
                }
            }
        }
        o.push(b'}');
        Some(o)
    }

    /// Appends `,"local_storage":{...}` or `,"session_storage":{...}`.
    pub(crate) fn push_storage_json(&self, line: &mut Vec<u8>, key: &[u8], value: Option<&[u8]>) {
        let Some(o) = self.storage_object(key, value.unwrap_or_default()) else {
            return;
        };
        line.extend_from_slice(if self.kind == Kind::Local {
            b",\"local_storage\":"
        } else {
            b",\"session_storage\":"
        });
        line.extend_from_slice(&o);
    }

    /// `origin / "key"` (localStorage), `map 3 / "key"` (sessionStorage); other records
    /// as their raw keys.
    pub(crate) fn push_storage_key_text(&self, line: &mut Vec<u8>, key: &[u8], hex: bool) {
        if !hex {
            if self.kind == Kind::Local {
                if let Some(LocalStorageEntry::Item {
                    origin,
                    key: StorageText::Text(k),
                    ..
                }) = decode_local_storage(key, b"")
                {
                    line.extend_from_slice(origin);
                    line.extend_from_slice(b" / ");
                    push_str(line, &k);
                    return;
                }
            } else if let Some(SessionStorageEntry::Item { map, key: k, .. }) =
                decode_session_storage(key, b"")
            {
                line.extend_from_slice(format!("map {map} / ").as_bytes());
                push_str(line, &k);
                return;
            }
        }
        text::push_text(line, key, hex);
    }

    /// An item's value as a JSON string; metadata as its JSON object.
    pub(crate) fn push_storage_value_text(
        &self,
        line: &mut Vec<u8>,
        key: &[u8],
        value: &[u8],
        hex: bool,
    ) {
        if !hex {
            let item = match (
                self.kind,
                decode_local_storage(key, value),
                decode_session_storage(key, value),
            ) {
                (
                    Kind::Local,
                    Some(LocalStorageEntry::Item {
                        value: StorageText::Text(v),
                        ..
                    }),
                    _,
                )
                | (
                    Kind::Session,
                    _,
                    Some(SessionStorageEntry::Item {
                        value: StorageText::Text(v),
                        ..
                    }),
                ) => Some(v),
                _ => None,
            };
            if let Some(v) = item {
                push_str(line, &v);
                return;
            }
            if let Some(o) = self.storage_object(key, value) {
                line.extend_from_slice(&o);
                return;
            }
        }
        text::push_text(line, value, hex);
    }
}
