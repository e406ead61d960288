//! Reading the fixture, the expected JSON and `sst`'s rows, and matching a row's data to it.

use super::*;

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/idb")
}

pub(crate) fn dir() -> String {
    let dirs: Vec<PathBuf> = std::fs::read_dir(root().join("contract/IndexedDB"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".indexeddb.leveldb"))
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].to_string_lossy().into_owned()
}

pub(crate) fn expected() -> Value {
    serde_json::from_slice(&std::fs::read(root().join("contract.expected.json")).unwrap()).unwrap()
}

/// JSON text whose lone surrogates (`\ud800`, which `JSON.stringify` writes too) become
/// U+FFFD, so that serde_json reads it.
pub(crate) fn parse(text: &str) -> Value {
    let mut fixed = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("\\u") {
        let (head, tail) = rest.split_at(at);
        fixed.push_str(head);
        let escaped = head.chars().rev().take_while(|c| *c == '\\').count() % 2 == 1;
        let unit = tail.get(2..6).and_then(|h| u16::from_str_radix(h, 16).ok());
        let pair = tail
            .get(8..12)
            .and_then(|h| u16::from_str_radix(h, 16).ok());
        match (unit, pair) {
            (Some(0xd800..=0xdbff), Some(0xdc00..=0xdfff)) if !escaped => {
                fixed.push_str(&tail[..12]);
                rest = &tail[12..];
                continue;
            }
            (Some(0xd800..=0xdfff), _) if !escaped => fixed.push_str("\\ufffd"),
            _ => fixed.push_str(&tail[..6.min(tail.len())]),
        }
        rest = &tail[6.min(tail.len())..];
    }
    fixed.push_str(rest);
    serde_json::from_str(&fixed).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The raw JSON text of a field of the row's `"idb"` object: from `,"NAME":` to the
/// next field (`next`), or to the object's end for the last field.
pub(crate) fn raw<'a>(line: &'a str, name: &str, next: Option<&str>) -> Option<&'a str> {
    let idb = line.find("\"idb\":")?;
    let tag = format!(",\"{name}\":");
    let at = idb + line[idb..].find(&tag)? + tag.len();
    match next {
        Some(n) => Some(&line[at..at + line[at..].find(&format!(",\"{n}\":"))?]),
        None => line.get(at..line.len() - 2),
    }
}

/// One record row of `sst db scan`: store name, raw key text, raw data text, sequence.
pub(crate) struct Row {
    pub(crate) store: String,
    pub(crate) key: String,
    pub(crate) data: String,
    pub(crate) seq: u64,
}

pub(crate) fn record_rows() -> Vec<Row> {
    let (code, out, err) = sst(&["db", "scan", &dir(), "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    let mut rows = Vec::new();
    for line in out.lines() {
        let row = parse(line);
        if row["idb"]["kind"] != "record" {
            continue;
        }
        assert!(row["idb"].get("data_error").is_none(), "{line}");
        rows.push(Row {
            store: row["idb"]["store_name"].as_str().unwrap().to_string(),
            key: raw(line, "key", Some("kind")).unwrap().to_string(),
            data: raw(line, "data", None).unwrap().to_string(),
            seq: row["seq"].as_u64().unwrap(),
        });
    }
    rows
}

/// `got` matches `want` where the page could not know everything: objects marked
/// `"$subset": true` match on the fields they list; `"$pixels"` stands for `pixels`.
pub(crate) fn matches(got: &Value, want: &Value, pixels: &str) -> bool {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            let subset = w.get("$subset") == Some(&Value::Bool(true));
            let extra = g.keys().filter(|k| !w.contains_key(*k)).count();
            (subset || extra == 0)
                && w.iter()
                    .filter(|(k, _)| k.as_str() != "$subset")
                    .all(|(k, v)| match (g.get(k), v) {
                        (Some(Value::String(p)), Value::String(x)) if x == "$pixels" => p == pixels,
                        (Some(gv), wv) => matches(gv, wv, pixels),
                        (None, _) => false,
                    })
        }
        (Value::Array(g), Value::Array(w)) => {
            g.len() == w.len() && g.iter().zip(w).all(|(a, b)| matches(a, b, pixels))
        }
        _ => got == want,
    }
}

/// RGBA pixels (as a canvas reads them back) from an ImageBitmap's serialized pixels in
/// its `pixel_format` (opaque pixels: premultiplied or not, the same).
pub(crate) fn rgba(bitmap: &Value) -> String {
    let hex = bitmap["pixels"].as_str().unwrap();
    match bitmap["pixel_format"].as_str().unwrap() {
        "RGBA8" => hex.to_string(),
        "BGRA8" => (0..hex.len() / 8)
            .map(|i| {
                let p = &hex[i * 8..i * 8 + 8];
                format!("{}{}{}{}", &p[4..6], &p[2..4], &p[0..2], &p[6..8])
            })
            .collect(),
        f => panic!("pixel format {f}"),
    }
}

/// `data` decoded by the documented rule, as a consumer would: an object with a key
/// starting with one `$` is one of the contract's (`$type`, `$ref`): `("$", its JSON)`;
/// any other is the page's plain object, each key starting with `$$` losing one `$`.
pub(crate) fn consume(v: &Value) -> Value {
    match v {
        Value::Object(o) if o.keys().any(|k| k.starts_with('$') && !k.starts_with("$$")) => {
            Value::Array(vec![Value::String("$".into()), v.clone()])
        }
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| {
                    let k = k
                        .strip_prefix('$')
                        .filter(|r| r.starts_with('$'))
                        .unwrap_or(k);
                    (k.to_string(), consume(x))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(consume).collect()),
        _ => v.clone(),
    }
}
