//! IndexedDB display: metadata keys decoded into their parts and record values' envelopes,
//! shown when the order is `idb_cmp1` (a Chrome IndexedDB database, or `--comparator
//! idb_cmp1`).

use serde_json::{json, Value};
use sst_chrome::idb::{
    decode_exists_value, decode_key, decode_record_value, DecodedKey, Envelope, KeyBody, MetaField,
};

use crate::render::text;

/// A metadata row's `"idb"` object (`None` for keys that are not IndexedDB metadata).
pub fn meta_json(key: &[u8]) -> Option<Value> {
    let d = decode_key(key)?;
    let KeyBody::Meta { kind, name, fields } = &d.body else {
        return None;
    };
    let p = d.prefix;
    let f: Vec<Value> = fields
        .iter()
        .map(|f| match f {
            MetaField::Int(x) => json!(x),
            MetaField::Byte(x) => json!(x),
            MetaField::Text(t) => json!(t),
            MetaField::Raw(r) => json!(text::hex(r)),
        })
        .collect();
    Some(json!({
        "text": d.to_string(),
        "db": p.database,
        "store": p.store,
        "index": p.index,
        "kind": "metadata",
        "type": kind,
        "name": name,
        "fields": f,
    }))
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
        text::push_text(line, value, hex);
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
            text::push_text(line, rv.payload, hex);
        }
        None => text::push_text(line, value, hex),
    }
}
