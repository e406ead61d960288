//! `idb_cmp1`: the order of Chrome's IndexedDB LevelDB databases.
//!
//! The order is Chromium's `indexed_db::Compare(a, b, /*only_compare_index_keys=*/false)`,
//! which its LevelDB comparator `idb_cmp1` calls, rule for rule:
//!
//! 1. Prefixes by database id, then object store id, then index id (as integers).
//! 2. Global and database metadata by type byte; types without fields are equal whatever
//!    follows them; typed ones by their fields (ids as integers, names as UTF-16 code
//!    units); global type 50 (LevelDB scopes) by the bytes after it.
//! 3. Records, exists and blob entries by their IDB key (an empty key first).
//! 4. Index entries by index key, then (when both carry one) primary key, then sequence
//!    number; an entry that stops earlier sorts first.
//! 5. IDB keys: min < number < date < string < binary < array < null; numbers and dates
//!    numerically (0 and -0 equal), strings by UTF-16 code unit, binary by byte, arrays
//!    element by element and then by length.
//!
//! Where Chromium's comparison fails (a key its decoder rejects) it answers "equal", which
//! is no order at all; and it stops at a key's last field, calling a key and the same key
//! with bytes after it equal. Here the order is defined on the keys Chromium's encoders
//! write ([`is_well_formed`]: every field in as few bytes as it needs, nothing after);
//! any other key is *malformed*: it sorts after every well-formed key, bytewise among
//! themselves, so the order stays total, a key equals only keys of its own bytes (except a
//! number or date 0 and -0, which Chromium writes both and calls equal), and `verify`
//! reports them. Like Chromium's, the separator functions do nothing: index keys are the
//! data blocks' last keys.

use std::cmp::Ordering;

use super::coding::{
    cmp_keys, minimal_prefix, read_byte, read_canonical_varint, read_prefix, read_string,
    read_varint, skip_key, KeyPrefix, PrefixKind,
};
use super::format::*;
use leveldb_table::db::reader::KnownOrder;
use leveldb_table::Comparator;

/// Chrome's IndexedDB comparator, `idb_cmp1`.
#[derive(Debug, Clone, Copy, Default)]
pub struct IdbComparator;

impl Comparator for IdbComparator {
    fn name(&self) -> &str {
        IDB_COMPARATOR_NAME
    }

    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        match (is_well_formed(a), is_well_formed(b)) {
            (true, true) => chromium_compare(a, b).unwrap_or_else(|| a.cmp(b)),
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            (false, false) => a.cmp(b),
        }
    }

    fn find_shortest_separator(&self, _start: &mut Vec<u8>, _limit: &[u8]) {}

    fn find_short_successor(&self, _key: &mut Vec<u8>) {}

    /// Distinct well-formed keys compare equal only through a number or date 0 and -0 (both
    /// written by Chromium, `+0.0 == -0.0` in its order): a lookup of such a key reads the
    /// block whatever the bytewise filter says. Keys outside the order compare as bytes.
    fn equal_keys_identical(&self, key: &[u8]) -> bool {
        well_formed(key) != Some(true)
    }
}

/// `idb_cmp1` as an order a [`leveldb_table::Db`] may be read in: named by a MANIFEST, or
/// found by salvage (no MANIFEST) when every key is well-formed ([`is_well_formed`]) and in
/// its order; Chrome's global metadata keys (database id 0) mark the data as IndexedDB's
/// when the few keys there are also fit bytewise order.
pub fn known_order() -> KnownOrder {
    KnownOrder::new(std::sync::Arc::new(IdbComparator))
        .well_formed(is_well_formed)
        .marker(|k| key_prefix(k).is_some_and(|p| p.kind() == PrefixKind::GlobalMeta))
}

/// True if `key` is a key as Chromium's encoders write it: its prefix and every field its
/// kind has, each in as few bytes as it needs, and nothing after them. [`IdbComparator`]
/// orders such keys exactly as Chromium does; any other key (trailing bytes, a longer
/// encoding of a number, a field cut short) is outside the order and sorts after them all.
pub fn is_well_formed(key: &[u8]) -> bool {
    well_formed(key).is_some()
}

/// `Some(zero)` for a well-formed key, `zero` when it holds a number or date 0 or -0.
fn well_formed(key: &[u8]) -> Option<bool> {
    if !minimal_prefix(key) {
        return None;
    }
    let mut s = key;
    let prefix = read_prefix(&mut s)?;
    let mut zero = false;
    let varint = read_canonical_varint;
    let string = |s: &mut &[u8]| {
        let n = usize::try_from(varint(s)?).ok()?.checked_mul(2)?;
        *s = s.get(n..)?;
        Some(())
    };
    match prefix.kind() {
        PrefixKind::GlobalMeta => match read_byte(&mut s)? {
            // The scopes' keys are compared as bytes after the type byte.
            GLOBAL_SCOPES => return Some(false),
            t if t < GLOBAL_SIMPLE_LIMIT => {}
            GLOBAL_DB_FREE_LIST => drop(varint(&mut s)?),
            GLOBAL_DB_NAME => {
                string(&mut s)?;
                string(&mut s)?;
            }
            _ => return None,
        },
        PrefixKind::DatabaseMeta => match read_byte(&mut s)? {
            t if t < DB_SIMPLE_LIMIT => {}
            DB_STORE_META => {
                varint(&mut s)?;
                read_byte(&mut s)?;
            }
            DB_INDEX_META => {
                varint(&mut s)?;
                varint(&mut s)?;
                read_byte(&mut s)?;
            }
            DB_STORE_FREE_LIST => drop(varint(&mut s)?),
            DB_INDEX_FREE_LIST => {
                varint(&mut s)?;
                varint(&mut s)?;
            }
            DB_STORE_NAMES => string(&mut s)?,
            DB_INDEX_NAMES => {
                varint(&mut s)?;
                string(&mut s)?;
            }
            _ => return None,
        },
        PrefixKind::Record | PrefixKind::Exists | PrefixKind::Blob => {
            if !s.is_empty() {
                skip_key(&mut s, &mut zero)?;
            }
        }
        PrefixKind::IndexEntry => {
            // Index key, then (both or neither) the sequence number and the primary key.
            if !s.is_empty() {
                skip_key(&mut s, &mut zero)?;
                if !s.is_empty() {
                    varint(&mut s)?;
                    if !s.is_empty() {
                        skip_key(&mut s, &mut zero)?;
                    }
                }
            }
        }
        PrefixKind::Invalid => return None,
    }
    s.is_empty().then_some(zero)
}

/// Chromium's comparison; `None` where Chromium's would fail.
fn chromium_compare(a: &[u8], b: &[u8]) -> Option<Ordering> {
    let (mut sa, mut sb) = (a, b);
    let pa = read_prefix(&mut sa)?;
    let pb = read_prefix(&mut sb)?;
    let by_prefix = pa.cmp_ids(&pb);
    if by_prefix.is_ne() {
        return Some(by_prefix);
    }
    match pa.kind() {
        PrefixKind::GlobalMeta => global_meta(&mut sa, &mut sb),
        PrefixKind::DatabaseMeta => database_meta(&mut sa, &mut sb),
        PrefixKind::Record | PrefixKind::Exists | PrefixKind::Blob => {
            if sa.is_empty() || sb.is_empty() {
                return Some(sa.len().cmp(&sb.len()));
            }
            cmp_keys(&mut sa, &mut sb)
        }
        PrefixKind::IndexEntry => index_entry(&mut sa, &mut sb),
        PrefixKind::Invalid => None,
    }
}

fn global_meta(a: &mut &[u8], b: &mut &[u8]) -> Option<Ordering> {
    let (ta, tb) = (read_byte(a)?, read_byte(b)?);
    if ta != tb {
        return Some(ta.cmp(&tb));
    }
    match ta {
        t if t < GLOBAL_SIMPLE_LIMIT => Some(Ordering::Equal),
        GLOBAL_SCOPES => Some((*a).cmp(*b)),
        GLOBAL_DB_FREE_LIST => Some(read_varint(a)?.cmp(&read_varint(b)?)),
        GLOBAL_DB_NAME => {
            let (origin_a, origin_b) = (read_string(a)?, read_string(b)?);
            let (name_a, name_b) = (read_string(a)?, read_string(b)?);
            Some(origin_a.cmp(origin_b).then(name_a.cmp(name_b)))
        }
        _ => None,
    }
}

fn database_meta(a: &mut &[u8], b: &mut &[u8]) -> Option<Ordering> {
    let (ta, tb) = (read_byte(a)?, read_byte(b)?);
    if ta != tb {
        return Some(ta.cmp(&tb));
    }
    let ids = |a: &mut &[u8], b: &mut &[u8]| Some(read_varint(a)?.cmp(&read_varint(b)?));
    match ta {
        t if t < DB_SIMPLE_LIMIT => Some(Ordering::Equal),
        DB_STORE_META => {
            let store = ids(a, b)?;
            Some(store.then(read_byte(a)?.cmp(&read_byte(b)?)))
        }
        DB_INDEX_META => {
            let store = ids(a, b)?;
            let index = ids(a, b)?;
            Some(store.then(index).then(read_byte(a)?.cmp(&read_byte(b)?)))
        }
        DB_STORE_FREE_LIST => ids(a, b),
        DB_INDEX_FREE_LIST => Some(ids(a, b)?.then(ids(a, b)?)),
        DB_STORE_NAMES => Some(read_string(a)?.cmp(read_string(b)?)),
        DB_INDEX_NAMES => {
            let store = ids(a, b)?;
            Some(store.then(read_string(a)?.cmp(read_string(b)?)))
        }
        _ => None,
    }
}

/// Index entries: index key, then primary key, then sequence number (Chromium's
/// `CompareSuffix<IndexDataKey>`, with its rule that an entry ending early sorts first).
fn index_entry(a: &mut &[u8], b: &mut &[u8]) -> Option<Ordering> {
    if a.is_empty() || b.is_empty() {
        return Some(a.len().cmp(&b.len()));
    }
    let by_key = cmp_keys(a, b)?;
    if by_key.is_ne() {
        return Some(by_key);
    }
    let seq_a = if a.is_empty() { -1 } else { read_varint(a)? };
    let seq_b = if b.is_empty() { -1 } else { read_varint(b)? };
    if a.is_empty() || b.is_empty() {
        return Some(a.len().cmp(&b.len()));
    }
    let by_primary = cmp_keys(a, b)?;
    Some(by_primary.then(seq_a.cmp(&seq_b)))
}

/// The prefix of a well-formed key (for callers that group keys by database and store).
pub fn key_prefix(key: &[u8]) -> Option<KeyPrefix> {
    let mut s = key;
    read_prefix(&mut s)
}
