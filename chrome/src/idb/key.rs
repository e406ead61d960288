//! IndexedDB keys decoded into their parts, for display (`sst` prints them; the comparator
//! does not use this: it reads keys in place).

use std::fmt;

use super::coding::{
    read_binary, read_byte, read_f64, read_prefix, read_string, read_varint, KeyPrefix, PrefixKind,
};
use super::format::*;

/// An IDB key value (the keys a page passes to `put`, `get`, `IDBKeyRange`).
#[derive(Debug, Clone, PartialEq)]
pub enum IdbKey {
    /// The minimum key (Chromium uses it only in bounds).
    Min,
    /// A number.
    Number(f64),
    /// A date: milliseconds since the Unix epoch.
    Date(f64),
    /// A string, as UTF-16 code units (JavaScript strings may hold lone surrogates).
    String(Vec<u16>),
    /// An `ArrayBuffer` / typed array key.
    Binary(Vec<u8>),
    /// An array of keys.
    Array(Vec<IdbKey>),
    /// Type byte 0: Chromium's "invalid" key (used as the maximum bound).
    Null,
}

/// What follows a key's prefix.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyBody {
    /// Global or database metadata: the type byte and the bytes after it.
    Meta {
        /// The metadata type byte.
        kind: u8,
        /// Chromium's name for that type, where it has one.
        name: &'static str,
        /// The fields after the type byte, decoded where the type has them.
        fields: Vec<MetaField>,
    },
    /// A record (index id 1); `None` for a bare prefix.
    Record(Option<IdbKey>),
    /// A record's exists entry (index id 2).
    Exists(Option<IdbKey>),
    /// A record's blob entry (index id 3).
    Blob(Option<IdbKey>),
    /// An index entry: index key, sequence number, primary key (the last two optional).
    IndexEntry {
        /// The index key.
        key: Option<IdbKey>,
        /// The record's version when the entry was written.
        sequence: Option<i64>,
        /// The record's primary key.
        primary: Option<IdbKey>,
    },
}

/// A decoded metadata field.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaField {
    /// An id or number.
    Int(i64),
    /// A name.
    Text(String),
    /// A metadata sub-type byte.
    Byte(u8),
    /// Bytes this decoder does not interpret.
    Raw(Vec<u8>),
}

/// A key decoded into prefix and body.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedKey {
    /// Database, object store and index ids.
    pub prefix: KeyPrefix,
    /// The rest.
    pub body: KeyBody,
}

/// Decodes an IndexedDB key for display; `None` if it is not one Chromium would write.
pub fn decode_key(key: &[u8]) -> Option<DecodedKey> {
    let mut s = key;
    let prefix = read_prefix(&mut s)?;
    let body = match prefix.kind() {
        PrefixKind::GlobalMeta => global_meta(&mut s)?,
        PrefixKind::DatabaseMeta => database_meta(&mut s)?,
        PrefixKind::Record => KeyBody::Record(opt_key(&mut s)?),
        PrefixKind::Exists => KeyBody::Exists(opt_key(&mut s)?),
        PrefixKind::Blob => KeyBody::Blob(opt_key(&mut s)?),
        PrefixKind::IndexEntry => {
            let key = opt_key(&mut s)?;
            let sequence = if s.is_empty() {
                None
            } else {
                Some(read_varint(&mut s)?)
            };
            let primary = opt_key(&mut s)?;
            KeyBody::IndexEntry {
                key,
                sequence,
                primary,
            }
        }
        PrefixKind::Invalid => return None,
    };
    Some(DecodedKey { prefix, body })
}

fn opt_key(s: &mut &[u8]) -> Option<Option<IdbKey>> {
    if s.is_empty() {
        Some(None)
    } else {
        read_key(s, 0).map(Some)
    }
}

/// Decodes one IDB key.
pub fn read_key(s: &mut &[u8], depth: usize) -> Option<IdbKey> {
    if depth > MAX_KEY_DEPTH {
        return None;
    }
    Some(match read_byte(s)? {
        KEY_NULL => IdbKey::Null,
        KEY_MIN => IdbKey::Min,
        KEY_NUMBER => IdbKey::Number(read_f64(s)?),
        KEY_DATE => IdbKey::Date(read_f64(s)?),
        KEY_STRING => IdbKey::String(utf16_units(read_string(s)?)),
        KEY_BINARY => IdbKey::Binary(read_binary(s)?.to_vec()),
        KEY_ARRAY => {
            let n = read_varint(s)?;
            let n = usize::try_from(n).ok()?;
            // Each element takes at least one byte: a length beyond the input is malformed.
            if n > s.len() {
                return None;
            }
            let mut items = Vec::with_capacity(n);
            for _ in 0..n {
                items.push(read_key(s, depth + 1)?);
            }
            IdbKey::Array(items)
        }
        _ => return None,
    })
}

fn utf16_units(be: &[u8]) -> Vec<u16> {
    be.chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect()
}

fn text(s: &mut &[u8]) -> Option<MetaField> {
    Some(MetaField::Text(String::from_utf16_lossy(&utf16_units(
        read_string(s)?,
    ))))
}

fn int(s: &mut &[u8]) -> Option<MetaField> {
    read_varint(s).map(MetaField::Int)
}

fn byte(s: &mut &[u8]) -> Option<MetaField> {
    read_byte(s).map(MetaField::Byte)
}

fn meta(kind: u8, name: &'static str, mut fields: Vec<MetaField>, rest: &[u8]) -> KeyBody {
    if !rest.is_empty() {
        fields.push(MetaField::Raw(rest.to_vec()));
    }
    KeyBody::Meta { kind, name, fields }
}

fn global_meta(s: &mut &[u8]) -> Option<KeyBody> {
    let kind = read_byte(s)?;
    let (name, fields) = match kind {
        0 => ("schema version", vec![]),
        1 => ("max database id", vec![]),
        2 => ("data version", vec![]),
        3 => ("recovery blob journal", vec![]),
        4 => ("active blob journal", vec![]),
        5 => ("earliest sweep time", vec![]),
        6 => ("earliest compaction time", vec![]),
        GLOBAL_SCOPES => ("scopes", vec![]),
        GLOBAL_DB_FREE_LIST => ("database free list", vec![int(s)?]),
        GLOBAL_DB_NAME => ("database name", vec![text(s)?, text(s)?]),
        _ => return None,
    };
    Some(meta(kind, name, fields, s))
}

fn database_meta(s: &mut &[u8]) -> Option<KeyBody> {
    let kind = read_byte(s)?;
    let (name, fields) = match kind {
        0 => ("origin name", vec![]),
        1 => ("database name", vec![]),
        2 => ("user string version", vec![]),
        3 => ("max object store id", vec![]),
        4 => ("user version", vec![]),
        5 => ("blob key generator current number", vec![]),
        DB_STORE_META => ("object store metadata", vec![int(s)?, byte(s)?]),
        DB_INDEX_META => ("index metadata", vec![int(s)?, int(s)?, byte(s)?]),
        DB_STORE_FREE_LIST => ("object store free list", vec![int(s)?]),
        DB_INDEX_FREE_LIST => ("index free list", vec![int(s)?, int(s)?]),
        DB_STORE_NAMES => ("object store names", vec![text(s)?]),
        DB_INDEX_NAMES => ("index names", vec![int(s)?, text(s)?]),
        _ => return None,
    };
    Some(meta(kind, name, fields, s))
}

impl fmt::Display for MetaField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetaField::Int(x) => write!(f, "{x}"),
            MetaField::Text(t) => write!(f, "{t:?}"),
            MetaField::Byte(b) => write!(f, "type {b}"),
            MetaField::Raw(r) => {
                f.write_str("0x")?;
                r.iter().try_for_each(|x| write!(f, "{x:02x}"))
            }
        }
    }
}

fn opt(f: &mut fmt::Formatter<'_>, k: &Option<IdbKey>) -> fmt::Result {
    match k {
        Some(k) => write!(f, " / {k}"),
        None => Ok(()),
    }
}

impl fmt::Display for DecodedKey {
    /// `db 1 / store 2 / data / "key"`, `db 1 / store 2 / index 30 / 7 / seq 3 / "pk"`,
    /// `global / database name / "origin" / "name"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.prefix;
        match &self.body {
            KeyBody::Meta { name, fields, .. } => {
                if p.database == 0 {
                    write!(f, "global / {name}")?;
                } else {
                    write!(f, "db {} / {name}", p.database)?;
                }
                fields.iter().try_for_each(|x| write!(f, " / {x}"))
            }
            KeyBody::Record(k) => {
                write!(f, "db {} / store {} / data", p.database, p.store)?;
                opt(f, k)
            }
            KeyBody::Exists(k) => {
                write!(f, "db {} / store {} / exists", p.database, p.store)?;
                opt(f, k)
            }
            KeyBody::Blob(k) => {
                write!(f, "db {} / store {} / blob", p.database, p.store)?;
                opt(f, k)
            }
            KeyBody::IndexEntry {
                key,
                sequence,
                primary,
            } => {
                write!(
                    f,
                    "db {} / store {} / index {}",
                    p.database, p.store, p.index
                )?;
                opt(f, key)?;
                if let Some(s) = sequence {
                    write!(f, " / seq {s}")?;
                }
                opt(f, primary)
            }
        }
    }
}

fn put_varint(out: &mut Vec<u8>, v: u64) {
    let mut v = v;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_int(out: &mut Vec<u8>, v: i64) -> usize {
    let bytes = (v as u64).to_le_bytes();
    let len = bytes.iter().rposition(|&b| b != 0).map_or(1, |i| i + 1);
    out.extend_from_slice(&bytes[..len]);
    len
}

impl KeyPrefix {
    /// Appends the prefix as Chromium encodes it (ids as minimal little-endian integers;
    /// Chromium's limits are 8, 8 and 4 bytes: larger ids are truncated to them).
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        let at = out.len();
        out.push(0);
        let db = put_int(out, self.database);
        let store = put_int(out, self.store);
        let index = put_int(out, self.index).min(4);
        out.truncate(at + 1 + db + store + index);
        out[at] = ((db - 1) << 5 | (store - 1) << 2 | (index - 1)) as u8;
    }
}

impl IdbKey {
    /// Appends the key as Chromium's `EncodeIDBKey` does.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match self {
            IdbKey::Null => out.push(KEY_NULL),
            IdbKey::Min => out.push(KEY_MIN),
            IdbKey::Number(x) => {
                out.push(KEY_NUMBER);
                out.extend_from_slice(&x.to_le_bytes());
            }
            IdbKey::Date(x) => {
                out.push(KEY_DATE);
                out.extend_from_slice(&x.to_le_bytes());
            }
            IdbKey::String(units) => {
                out.push(KEY_STRING);
                put_varint(out, units.len() as u64);
                units
                    .iter()
                    .for_each(|u| out.extend_from_slice(&u.to_be_bytes()));
            }
            IdbKey::Binary(b) => {
                out.push(KEY_BINARY);
                put_varint(out, b.len() as u64);
                out.extend_from_slice(b);
            }
            IdbKey::Array(items) => {
                out.push(KEY_ARRAY);
                put_varint(out, items.len() as u64);
                items.iter().for_each(|k| k.encode_into(out));
            }
        }
    }

    /// The key of the record with this primary key in object store `store` of database
    /// `database` (what `sst db get` looks up).
    pub fn record_key(&self, database: i64, store: i64) -> Vec<u8> {
        let mut out = Vec::new();
        KeyPrefix {
            database,
            store,
            index: crate::idb::format::INDEX_DATA_RECORDS,
        }
        .encode_into(&mut out);
        self.encode_into(&mut out);
        out
    }
}
