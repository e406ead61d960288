//! Reading the fixture, the expected JSON and `sst`'s rows, and matching a record's data to it.

use super::*;

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/idb")
}

pub(crate) fn idb_dir() -> PathBuf {
    let dirs: Vec<PathBuf> = std::fs::read_dir(root().join("values/IndexedDB"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".indexeddb.leveldb"))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].clone()
}

pub(crate) fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(root().join("values.expected.json")).unwrap()).unwrap()
}

pub(crate) fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The raw JSON text of the `data` field of a row (the last field of `"idb"`, itself the
/// row's last field), so that it can be compared byte for byte.
pub(crate) fn raw_data(line: &str) -> Option<&str> {
    let idb = line.find("\"idb\":")?;
    let at = idb + line[idb..].find(",\"data\":")? + ",\"data\":".len();
    line.get(at..line.len() - 2)
}

/// A row parsed for its other fields: JSON lone surrogates (`\ud800`, which
/// `JSON.stringify` writes too) become U+FFFD, which serde_json can hold.
pub(crate) fn parse_row(line: &str) -> Value {
    let mut fixed = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\\u") {
        let (head, tail) = rest.split_at(at);
        fixed.push_str(head);
        let escaped_backslash = head.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1;
        let code = tail.get(2..6).and_then(|h| u16::from_str_radix(h, 16).ok());
        match code {
            Some(0xd800..=0xdfff) if !escaped_backslash => fixed.push_str("\\ufffd"),
            _ => fixed.push_str(&tail[..6.min(tail.len())]),
        }
        rest = &tail[6.min(tail.len())..];
    }
    fixed.push_str(rest);
    serde_json::from_str(&fixed).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// A key as the page typed it (`{"type": ..., "value"|"ms"|"hex": ...}`) in the form rows
/// print keys in (docs/indexeddb.md).
pub(crate) fn contract_key(k: &Value) -> Value {
    match k["type"].as_str().unwrap() {
        "number" if k["value"].is_string() => {
            serde_json::json!({"$type": "number", "value": k["value"]})
        }
        "number" | "string" => k["value"].clone(),
        "date" => serde_json::json!({"$type": "date", "value": k["ms"]}),
        "binary" => serde_json::json!({"$type": "ArrayBuffer", "hex": k["hex"]}),
        "array" => Value::Array(
            k["value"]
                .as_array()
                .unwrap()
                .iter()
                .map(contract_key)
                .collect(),
        ),
        t => panic!("key type {t}"),
    }
}

/// A row's key is the key the page typed (numbers compared as numbers).
pub(crate) fn same_key(ours: &Value, typed: &Value) -> bool {
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
            }
            _ => a == b,
        }
    }
    same(ours, &contract_key(typed))
}

/// Our `data` without what values.html's mapping predates: an Error's `stack` and `cause`
/// (the contract adds them; testdata/idb/contract checks them against Chromium).
pub(crate) fn without_error_extras(data: &str) -> Value {
    let mut v: Value = serde_json::from_str(data).unwrap();
    fn strip(v: &mut Value) {
        match v {
            Value::Object(o) => {
                if o.get("$type") == Some(&Value::String("error".into())) {
                    o.remove("stack");
                    o.remove("cause");
                }
                o.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

/// `got` matches `want` where the page could not know everything: objects marked
/// `"$subset": true` match on the fields they list; `"path"` (which only the tool knows) is
/// collected instead of compared; `"$key_data"` stands for the CryptoKey's bytes.
pub(crate) fn matches(got: &Value, want: &Value, key_data: &str, paths: &mut Vec<String>) -> bool {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            if let Some(Value::String(p)) = g.get("path") {
                if !paths.contains(p) {
                    paths.push(p.clone());
                }
            }
            let subset = w.get("$subset") == Some(&Value::Bool(true));
            let wanted = w.iter().filter(|(k, _)| k.as_str() != "$subset");
            let extra = g
                .keys()
                .filter(|k| k.as_str() != "path" && !w.contains_key(*k))
                .count();
            (subset || extra == 0)
                && wanted.into_iter().all(|(k, v)| match (g.get(k), v) {
                    (Some(Value::String(gs)), Value::String(ws)) if ws == "$key_data" => {
                        gs == key_data
                    }
                    (Some(gv), wv) => matches(gv, wv, key_data, paths),
                    (None, _) => false,
                })
        }
        (Value::Array(g), Value::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(a, b)| matches(a, b, key_data, paths))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => got == want,
    }
}

pub(crate) fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
