//! IndexedDB display: keys decoded into their parts and record values' envelopes, shown when
//! the order is `idb_cmp1` (a Chrome IndexedDB database, or `--comparator idb_cmp1`).

use serde_json::{json, Value};
use sst_chrome::idb::{
    decode_exists_value, decode_key, decode_record_value, DecodedKey, Envelope, IdbKey, KeyBody,
    MetaField,
};

use crate::common;

/// A typed key as JSON: `{"type":"number","value":1.5}`, `{"type":"date","ms":…}`,
/// `{"type":"string","value":"…"}`, `{"type":"binary","hex":"…"}`,
/// `{"type":"array","value":[…]}`, `{"type":"min"}`, `{"type":"null"}`.
pub fn key_json(k: &IdbKey) -> Value {
    match k {
        IdbKey::Min => json!({"type": "min"}),
        IdbKey::Null => json!({"type": "null"}),
        IdbKey::Number(x) => json!({"type": "number", "value": number(*x)}),
        IdbKey::Date(ms) => json!({"type": "date", "ms": number(*ms)}),
        IdbKey::String(units) => {
            let s = String::from_utf16(units);
            match s {
                Ok(s) => json!({"type": "string", "value": s}),
                // Lone surrogates: the code units, since no UTF-8 string holds them.
                Err(_) => json!({"type": "string", "value": String::from_utf16_lossy(units),
                                 "utf16": units}),
            }
        }
        IdbKey::Binary(b) => json!({"type": "binary", "hex": common::hex(b)}),
        IdbKey::Array(items) => {
            json!({"type": "array", "value": items.iter().map(key_json).collect::<Vec<_>>()})
        }
    }
}

/// Infinities are not JSON numbers: they are written as JavaScript's strings for them.
fn number(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else if x > 0.0 {
        json!("Infinity")
    } else {
        json!("-Infinity")
    }
}

fn opt_key(k: &Option<IdbKey>) -> Value {
    k.as_ref().map_or(Value::Null, key_json)
}

/// The decoded form of a key as JSON (`None` if it is not an IndexedDB key).
pub fn decoded_json(key: &[u8], value: Option<&[u8]>) -> Option<Value> {
    let d = decode_key(key)?;
    let p = d.prefix;
    let mut v = json!({
        "text": d.to_string(),
        "db": p.database,
        "store": p.store,
        "index": p.index,
    });
    let obj = v.as_object_mut()?;
    match &d.body {
        KeyBody::Meta { kind, name, fields } => {
            obj.insert("kind".into(), json!("metadata"));
            obj.insert("type".into(), json!(kind));
            obj.insert("name".into(), json!(name));
            let f: Vec<Value> = fields
                .iter()
                .map(|f| match f {
                    MetaField::Int(x) => json!(x),
                    MetaField::Byte(x) => json!(x),
                    MetaField::Text(t) => json!(t),
                    MetaField::Raw(r) => json!(common::hex(r)),
                })
                .collect();
            obj.insert("fields".into(), json!(f));
        }
        KeyBody::Record(k) => {
            obj.insert("kind".into(), json!("record"));
            obj.insert("key".into(), opt_key(k));
            if let Some(rv) = value.and_then(decode_record_value) {
                obj.insert("value".into(), envelope_json(rv.version, &rv.envelope));
            }
        }
        KeyBody::Exists(k) => {
            obj.insert("kind".into(), json!("exists"));
            obj.insert("key".into(), opt_key(k));
            if let Some(v) = value.and_then(decode_exists_value) {
                obj.insert("value".into(), json!({"version": v}));
            }
        }
        KeyBody::Blob(k) => {
            obj.insert("kind".into(), json!("blob"));
            obj.insert("key".into(), opt_key(k));
        }
        KeyBody::IndexEntry {
            key,
            sequence,
            primary,
        } => {
            obj.insert("kind".into(), json!("index"));
            obj.insert("key".into(), opt_key(key));
            obj.insert("sequence".into(), json!(sequence));
            obj.insert("primary_key".into(), opt_key(primary));
            // The value: the record's version when the entry was written (Chromium treats
            // an entry whose version is not the record's current one as stale), then the
            // primary key again.
            if let Some(rv) = value.and_then(decode_record_value) {
                obj.insert("value".into(), json!({"version": rv.version}));
            }
        }
    }
    Some(v)
}

fn envelope_json(version: i64, e: &Envelope) -> Value {
    match e {
        Envelope::Plain { blink, v8 } => {
            json!({"version": version, "envelope": "plain", "blink": blink, "v8": v8})
        }
        Envelope::InBlob { size, index } => {
            json!({"version": version, "envelope": "blob", "size": size, "blob_index": index})
        }
        Envelope::Snappy => json!({"version": version, "envelope": "snappy"}),
        Envelope::Unknown => json!({"version": version, "envelope": "unknown"}),
    }
}

/// Appends a record value for text output: `v3 plain(blink 17, v8 15) | ` before the
/// bytes when the key is a record's and the value has a version.
pub fn push_value_text(line: &mut Vec<u8>, key: &[u8], value: &[u8], hex: bool) {
    let body = decode_key(key).map(|d: DecodedKey| d.body);
    let version = match &body {
        Some(KeyBody::Exists(_)) => decode_exists_value(value),
        Some(KeyBody::IndexEntry { .. }) => decode_record_value(value).map(|r| r.version),
        _ => None,
    };
    if let Some(v) = version {
        line.extend_from_slice(format!("v{v} | ").as_bytes());
        common::push_text(line, value, hex);
        return;
    }
    let is_record = matches!(body, Some(KeyBody::Record(_)));
    match decode_record_value(value).filter(|_| is_record) {
        Some(rv) => {
            let env = match rv.envelope {
                Envelope::Plain {
                    blink,
                    v8: Some(v8),
                } => format!("plain(blink {blink}, v8 {v8})"),
                Envelope::Plain { blink, v8: None } => format!("plain(blink {blink})"),
                Envelope::InBlob { size, index } => format!("in blob {index} ({size} bytes)"),
                Envelope::Snappy => "snappy".into(),
                Envelope::Unknown => "unknown envelope".into(),
            };
            line.extend_from_slice(format!("v{} {env} | ", rv.version).as_bytes());
            common::push_text(line, rv.payload, hex);
        }
        None => common::push_text(line, value, hex),
    }
}
