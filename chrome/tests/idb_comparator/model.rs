//! The model of the order: Chromium's rules over decoded key parts.

use super::*;

// ---- the model: Chromium's rules over decoded parts ----

pub(crate) fn rank(k: &IdbKey) -> u8 {
    match k {
        IdbKey::Min => 0,
        IdbKey::Number(_) => 1,
        IdbKey::Date(_) => 2,
        IdbKey::String(_) => 3,
        IdbKey::Binary(_) => 4,
        IdbKey::Array(_) => 5,
        IdbKey::Null => 6,
    }
}

pub(crate) fn model_key(a: &IdbKey, b: &IdbKey) -> Ordering {
    match (a, b) {
        (IdbKey::Number(x), IdbKey::Number(y)) | (IdbKey::Date(x), IdbKey::Date(y)) => {
            x.partial_cmp(y).unwrap()
        }
        (IdbKey::String(x), IdbKey::String(y)) => x.cmp(y),
        (IdbKey::Binary(x), IdbKey::Binary(y)) => x.cmp(y),
        (IdbKey::Array(x), IdbKey::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = model_key(p, q);
                if o.is_ne() {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

pub(crate) fn model_opt(a: &Option<IdbKey>, b: &Option<IdbKey>) -> Ordering {
    match (a, b) {
        (Some(x), Some(y)) => model_key(x, y),
        _ => a.is_some().cmp(&b.is_some()),
    }
}

/// Chromium's order on two well-formed keys, from their decoded parts.
pub(crate) fn model(a: &[u8], b: &[u8]) -> Ordering {
    let (x, y) = (decode_key(a).unwrap(), decode_key(b).unwrap());
    let (p, q) = (x.prefix, y.prefix);
    let by_prefix = (p.database, p.store, p.index).cmp(&(q.database, q.store, q.index));
    if by_prefix.is_ne() {
        return by_prefix;
    }
    match (&x.body, &y.body) {
        (
            KeyBody::Meta {
                kind: k1,
                fields: f1,
                ..
            },
            KeyBody::Meta {
                kind: k2,
                fields: f2,
                ..
            },
        ) => {
            if k1 != k2 {
                return k1.cmp(k2);
            }
            let simple = if p.database == 0 { 7 } else { 6 };
            if *k1 < simple {
                return Ordering::Equal;
            }
            if p.database == 0 && *k1 == 50 {
                // Scopes: the bytes after the type byte.
                return a.cmp(b);
            }
            // Typed metadata: the fields in order (ids as integers, names as code units),
            // bytes after them ignored.
            let fields = |f: &[sst_chrome::idb::MetaField]| {
                f.iter()
                    .filter(|x| !matches!(x, sst_chrome::idb::MetaField::Raw(_)))
                    .map(|x| format!("{x:?}"))
                    .collect::<Vec<_>>()
            };
            let (f1, f2) = (fields(f1), fields(f2));
            for (u, v) in f1.iter().zip(&f2) {
                let o = field_cmp(u, v);
                if o.is_ne() {
                    return o;
                }
            }
            Ordering::Equal
        }
        (KeyBody::Record(k1), KeyBody::Record(k2))
        | (KeyBody::Exists(k1), KeyBody::Exists(k2))
        | (KeyBody::Blob(k1), KeyBody::Blob(k2)) => model_opt(k1, k2),
        (
            KeyBody::IndexEntry {
                key: k1,
                sequence: s1,
                primary: p1,
            },
            KeyBody::IndexEntry {
                key: k2,
                sequence: s2,
                primary: p2,
            },
        ) => {
            let by_key = model_opt(k1, k2);
            if by_key.is_ne() || k1.is_none() || k2.is_none() {
                return by_key;
            }
            match (p1, p2) {
                (Some(u), Some(v)) => model_key(u, v).then(s1.cmp(s2)),
                // An entry that stops earlier sorts first; two that stop are equal.
                _ => p1.is_some().cmp(&p2.is_some()),
            }
        }
        _ => unreachable!("same prefix, different body kinds"),
    }
}

/// Compares two `Debug`-printed metadata fields: `Int(n)` numerically, `Byte(b)`
/// numerically, `Text("...")` by UTF-16 code units.
pub(crate) fn field_cmp(u: &str, v: &str) -> Ordering {
    let num = |s: &str| -> Option<i64> {
        let inner = s.strip_prefix("Int(").or_else(|| s.strip_prefix("Byte("))?;
        inner.trim_end_matches(')').parse().ok()
    };
    match (num(u), num(v)) {
        (Some(x), Some(y)) => x.cmp(&y),
        _ => {
            let text = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
            text(u).cmp(&text(v))
        }
    }
}
