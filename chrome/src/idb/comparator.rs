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
//! is no order at all; here such keys are *malformed*: they sort after every well-formed
//! key, bytewise among themselves, so the order stays total and
//! [`is_well_formed`] lets `verify` report them. Like Chromium's, the separator functions
//! do nothing: index keys are the data blocks' last keys.

use std::cmp::Ordering;

use super::coding::{
    cmp_keys, read_byte, read_prefix, read_string, read_varint, skip_key, KeyPrefix, PrefixKind,
};
use super::format::*;
use leveldb_table::db::KnownOrder;
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

/// True if Chromium's decoders accept `key` (its prefix, and the fields its kind compares),
/// so that [`IdbComparator`] orders it exactly as Chromium does.
pub fn is_well_formed(key: &[u8]) -> bool {
    well_formed(key).is_some()
}

fn well_formed(key: &[u8]) -> Option<()> {
    let mut s = key;
    let prefix = read_prefix(&mut s)?;
    match prefix.kind() {
        PrefixKind::GlobalMeta => match read_byte(&mut s)? {
            t if t < GLOBAL_SIMPLE_LIMIT || t == GLOBAL_SCOPES => Some(()),
            GLOBAL_DB_FREE_LIST => read_varint(&mut s).map(drop),
            GLOBAL_DB_NAME => read_string(&mut s)
                .and_then(|_| read_string(&mut s))
                .map(drop),
            _ => None,
        },
        PrefixKind::DatabaseMeta => match read_byte(&mut s)? {
            t if t < DB_SIMPLE_LIMIT => Some(()),
            DB_STORE_META => read_varint(&mut s)
                .and_then(|_| read_byte(&mut s))
                .map(drop),
            DB_INDEX_META => {
                read_varint(&mut s)?;
                read_varint(&mut s)?;
                read_byte(&mut s).map(drop)
            }
            DB_STORE_FREE_LIST => read_varint(&mut s).map(drop),
            DB_INDEX_FREE_LIST => read_varint(&mut s)
                .and_then(|_| read_varint(&mut s))
                .map(drop),
            DB_STORE_NAMES => read_string(&mut s).map(drop),
            DB_INDEX_NAMES => read_varint(&mut s)
                .and_then(|_| read_string(&mut s))
                .map(drop),
            _ => None,
        },
        PrefixKind::Record | PrefixKind::Exists | PrefixKind::Blob => {
            if s.is_empty() {
                Some(())
            } else {
                skip_key(&mut s)
            }
        }
        PrefixKind::IndexEntry => {
            if s.is_empty() {
                return Some(());
            }
            skip_key(&mut s)?;
            if s.is_empty() {
                return Some(());
            }
            read_varint(&mut s)?;
            if s.is_empty() {
                return Some(());
            }
            skip_key(&mut s)
        }
        PrefixKind::Invalid => None,
    }
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
