//! Reading Chrome IndexedDB keys in place: the prefix, varints, length-prefixed strings and
//! IDB keys, without allocating (the layouts are in [`format`](super::format)).
//!
//! Each reader takes `&mut &[u8]`, consumes what it read and returns `None` where Chromium's
//! decoder fails (a truncated field, a varint over 64 bits, an unknown key type, arrays
//! nested deeper than Chromium writes them).

use std::cmp::Ordering;

use super::format::*;

/// The three ids at the start of every key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyPrefix {
    /// Database id (0: global metadata).
    pub database: i64,
    /// Object store id (0: database metadata).
    pub store: i64,
    /// Index id (1 records, 2 exists, 3 blobs, >= 30 a user index).
    pub index: i64,
}

/// What a key's prefix says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixKind {
    /// Database id 0.
    GlobalMeta,
    /// Object store id 0.
    DatabaseMeta,
    /// Index id 1: a record.
    Record,
    /// Index id 2: a record's exists entry.
    Exists,
    /// Index id 3: a record's blob entry.
    Blob,
    /// Index id >= 30: an index entry.
    IndexEntry,
    /// Index ids 0 and 4..=29 of a store: nothing Chromium writes.
    Invalid,
}

impl KeyPrefix {
    /// The kind of key this prefix starts (Chromium's `KeyPrefix::type`).
    pub fn kind(&self) -> PrefixKind {
        if self.database == 0 {
            PrefixKind::GlobalMeta
        } else if self.store == 0 {
            PrefixKind::DatabaseMeta
        } else if self.index == INDEX_DATA_RECORDS {
            PrefixKind::Record
        } else if self.index == INDEX_EXISTS {
            PrefixKind::Exists
        } else if self.index == INDEX_BLOB {
            PrefixKind::Blob
        } else if self.index >= MIN_USER_INDEX {
            PrefixKind::IndexEntry
        } else {
            PrefixKind::Invalid
        }
    }

    /// Chromium's prefix order: database, then store, then index id.
    pub fn cmp_ids(&self, other: &KeyPrefix) -> Ordering {
        (self.database, self.store, self.index).cmp(&(other.database, other.store, other.index))
    }
}

/// Reads the prefix.
pub fn read_prefix(s: &mut &[u8]) -> Option<KeyPrefix> {
    let (&packed, rest) = s.split_first()?;
    let db_len = ((packed >> 5) & 0x7) as usize + 1;
    let store_len = ((packed >> 2) & 0x7) as usize + 1;
    let index_len = (packed & 0x3) as usize + 1;
    if rest.len() < db_len + store_len + index_len {
        return None;
    }
    let (db, rest) = rest.split_at(db_len);
    let (store, rest) = rest.split_at(store_len);
    let (index, rest) = rest.split_at(index_len);
    *s = rest;
    Some(KeyPrefix {
        database: int_le(db),
        store: int_le(store),
        index: int_le(index),
    })
}

/// A little-endian integer of 1 to 8 bytes (Chromium's `DecodeInt`).
pub(crate) fn int_le(b: &[u8]) -> i64 {
    b.iter()
        .rev()
        .fold(0u64, |acc, &x| (acc << 8) | u64::from(x)) as i64
}

/// A whole value holding one integer as Chromium's `EncodeInt` writes it (little-endian, as
/// few bytes as the value needs: 1 to 8): the database id of a `global / database name`
/// record, an exists entry's version, the ids and numbers of metadata values
/// (`DecodeInt`). `None` for an empty value or one longer than 8 bytes.
pub fn decode_int(value: &[u8]) -> Option<i64> {
    (1..=8).contains(&value.len()).then(|| int_le(value))
}

/// Reads one byte.
pub fn read_byte(s: &mut &[u8]) -> Option<u8> {
    let (&b, rest) = s.split_first()?;
    *s = rest;
    Some(b)
}

/// Reads a varint (Chromium's `DecodeVarInt`: at most 64 bits, as a signed number).
pub fn read_varint(s: &mut &[u8]) -> Option<i64> {
    let mut value = 0u64;
    let mut shift = 0u32;
    for (i, &b) in s.iter().enumerate() {
        if shift >= 64 {
            return None;
        }
        value |= u64::from(b & 0x7f) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            *s = &s[i + 1..];
            return Some(value as i64);
        }
    }
    None
}

/// Reads `n` bytes.
fn read_bytes<'a>(s: &mut &'a [u8], n: i64) -> Option<&'a [u8]> {
    let n = usize::try_from(n).ok()?;
    if s.len() < n {
        return None;
    }
    let (head, rest) = s.split_at(n);
    *s = rest;
    Some(head)
}

/// Reads a varint length and that many UTF-16BE code units; returns their bytes.
pub fn read_string<'a>(s: &mut &'a [u8]) -> Option<&'a [u8]> {
    let units = read_varint(s)?;
    read_bytes(s, units.checked_mul(2)?)
}

/// Reads a varint length and that many bytes.
pub fn read_binary<'a>(s: &mut &'a [u8]) -> Option<&'a [u8]> {
    let n = read_varint(s)?;
    read_bytes(s, n)
}

/// Reads a little-endian `f64`.
pub fn read_f64(s: &mut &[u8]) -> Option<f64> {
    let b = read_bytes(s, 8)?;
    Some(f64::from_le_bytes(b.try_into().ok()?))
}

/// Whether the prefix at the start of `key` is as Chromium's `KeyPrefix::Encode` writes it:
/// each id in as few bytes as it needs (a longer one reads the same id from other bytes).
pub fn minimal_prefix(key: &[u8]) -> bool {
    let Some(&packed) = key.first() else {
        return false;
    };
    let lens = [
        ((packed >> 5) & 0x7) as usize + 1,
        ((packed >> 2) & 0x7) as usize + 1,
        (packed & 0x3) as usize + 1,
    ];
    let mut at = 1;
    lens.iter().all(|&n| {
        let id = key.get(at..at + n);
        at += n;
        id.is_some_and(|b| n == 1 || b[n - 1] != 0)
    })
}

/// Reads a varint as Chromium's `EncodeVarInt` writes it: in as few bytes as the value
/// needs (`None` for a longer encoding of the same value, or what [`read_varint`] refuses).
pub fn read_canonical_varint(s: &mut &[u8]) -> Option<i64> {
    let start = *s;
    let v = read_varint(s)?;
    let used = start.len() - s.len();
    let last = start[used - 1];
    (used == 1 || (last != 0 && (used < 10 || last == 1))).then_some(v)
}

/// Skips one IDB key as Chromium's `EncodeIDBKey` writes it (its `ConsumeEncodedIDBKey`,
/// with its depth limit, lengths in as few bytes as they need; a NaN number or date is
/// refused). Sets `zero` when the key holds a number or date 0 or -0, which the order calls
/// equal although their bytes differ.
pub fn skip_key(s: &mut &[u8], zero: &mut bool) -> Option<()> {
    skip_key_at(s, 0, zero)
}

fn skip_key_at(s: &mut &[u8], depth: usize, zero: &mut bool) -> Option<()> {
    if depth > MAX_KEY_DEPTH {
        return None;
    }
    let bytes = |s: &mut &[u8], n: i64| {
        let n = usize::try_from(n).ok()?;
        let rest = s.get(n..)?;
        *s = rest;
        Some(())
    };
    match read_byte(s)? {
        KEY_NULL | KEY_MIN => Some(()),
        KEY_ARRAY => {
            let n = read_canonical_varint(s)?;
            for _ in 0..n.max(0) {
                skip_key_at(s, depth + 1, zero)?;
            }
            (n >= 0).then_some(())
        }
        KEY_BINARY => {
            let n = read_canonical_varint(s)?;
            bytes(s, n)
        }
        KEY_STRING => {
            let n = read_canonical_varint(s)?;
            bytes(s, n.checked_mul(2)?)
        }
        // NaN is not a key (the IndexedDB API refuses it); Chromium's `<`/`>` would call it
        // equal to every number, which is no order.
        KEY_DATE | KEY_NUMBER => {
            let x = read_f64(s).filter(|x| !x.is_nan())?;
            *zero |= x == 0.0;
            Some(())
        }
        _ => None,
    }
}

/// The rank of a key type in Chromium's order (`CompareTypes` over Blink's `IDBKeyType`,
/// whose values run Invalid, Array, Binary, String, Date, Number, None, Min, and a larger
/// value sorts first): min < number < date < string < binary < array < null and unknown.
fn type_rank(t: u8) -> u8 {
    match t {
        KEY_MIN => 0,
        KEY_NUMBER => 1,
        KEY_DATE => 2,
        KEY_STRING => 3,
        KEY_BINARY => 4,
        KEY_ARRAY => 5,
        _ => 6,
    }
}

/// Compares two IDB keys as Chromium's `CompareEncodedIDBKeys`, consuming what it compared.
/// `None` where Chromium's comparison fails (a truncated or malformed key).
pub fn cmp_keys(a: &mut &[u8], b: &mut &[u8]) -> Option<Ordering> {
    cmp_keys_at(a, b, 0)
}

fn cmp_keys_at(a: &mut &[u8], b: &mut &[u8], depth: usize) -> Option<Ordering> {
    if depth > MAX_KEY_DEPTH {
        return None;
    }
    let ta = read_byte(a)?;
    let tb = read_byte(b)?;
    let by_type = type_rank(ta).cmp(&type_rank(tb));
    if by_type.is_ne() {
        return Some(by_type);
    }
    match ta {
        KEY_ARRAY => {
            let na = read_varint(a)?;
            let nb = read_varint(b)?;
            for _ in 0..na.min(nb).max(0) {
                let o = cmp_keys_at(a, b, depth + 1)?;
                if o.is_ne() {
                    return Some(o);
                }
            }
            Some(na.cmp(&nb))
        }
        KEY_BINARY => Some(read_binary(a)?.cmp(read_binary(b)?)),
        // UTF-16BE: comparing the bytes compares the code units.
        KEY_STRING => Some(read_string(a)?.cmp(read_string(b)?)),
        KEY_DATE | KEY_NUMBER => {
            let (x, y) = (read_f64(a)?, read_f64(b)?);
            // NaN and -0 compare as Chromium's `<` and `>` leave them: equal.
            Some(x.partial_cmp(&y).unwrap_or(Ordering::Equal))
        }
        // Null, min key and unknown types: no payload compared.
        _ => Some(Ordering::Equal),
    }
}
