//! Keys of tables written by a LevelDB database (LevelDB's `db/dbformat.{h,cc}`).
//!
//! ```text
//! internal key = user_key | tag: fixed64 LE      tag = sequence << 8 | type
//! type         = 0 deletion | 1 value            sequence < 2^56
//! ```
//!
//! A database orders internal keys by user key ascending, then tag descending (newest
//! first), and builds its filters over user keys. This module is the explicit adapter for
//! that: [`InternalKeyComparator`] and [`InternalFilterPolicy`] wrap a user comparator and a
//! user filter policy; the table layer itself never rewrites keys.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::filter::FilterPolicy;
use crate::format::coding;
use crate::format::{INTERNAL_TAG_LEN, MAX_SEQUENCE, TYPE_DELETION, TYPE_VALUE};
use crate::util::comparator::Comparator;

/// What an internal key records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// A tombstone (type 0).
    Deletion,
    /// A value (type 1).
    Value,
}

impl ValueType {
    /// The type byte.
    pub fn as_u8(self) -> u8 {
        match self {
            ValueType::Deletion => TYPE_DELETION,
            ValueType::Value => TYPE_VALUE,
        }
    }
}

/// An internal key split into its parts, borrowing the user key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParsedInternalKey<'a> {
    /// The key the application used.
    pub user_key: &'a [u8],
    /// The write's sequence number.
    pub sequence: u64,
    /// Value or deletion.
    pub value_type: ValueType,
}

/// Packs a sequence number and a type byte into a tag.
pub fn pack_tag(sequence: u64, value_type: u8) -> u64 {
    (sequence.min(MAX_SEQUENCE) << 8) | u64::from(value_type)
}

/// Splits an internal key; `None` if it is under 8 bytes or its type byte is not 0 or 1
/// (LevelDB's `ParseInternalKey`).
pub fn parse_internal_key(key: &[u8]) -> Option<ParsedInternalKey<'_>> {
    let split = key.len().checked_sub(INTERNAL_TAG_LEN)?;
    let tag = coding::decode_fixed64(&key[split..]);
    let value_type = match (tag & 0xff) as u8 {
        TYPE_DELETION => ValueType::Deletion,
        TYPE_VALUE => ValueType::Value,
        _ => return None,
    };
    Some(ParsedInternalKey {
        user_key: &key[..split],
        sequence: tag >> 8,
        value_type,
    })
}

/// Appends `user_key | fixed64(sequence << 8 | type)` to `dst`.
pub fn append_internal_key(
    dst: &mut Vec<u8>,
    user_key: &[u8],
    sequence: u64,
    value_type: ValueType,
) {
    dst.extend_from_slice(user_key);
    coding::put_fixed64(dst, pack_tag(sequence, value_type.as_u8()));
}

/// Builds an internal key.
pub fn internal_key(user_key: &[u8], sequence: u64, value_type: ValueType) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + INTERNAL_TAG_LEN);
    append_internal_key(&mut v, user_key, sequence, value_type);
    v
}

/// The key a lookup of `user_key` as of `snapshot` seeks to: `user_key | (snapshot, 1)`,
/// which sorts before every version of `user_key` visible at `snapshot`.
pub fn lookup_key(dst: &mut Vec<u8>, user_key: &[u8], snapshot: u64) {
    dst.clear();
    append_internal_key(dst, user_key, snapshot, ValueType::Value);
}

/// The user key of an internal key (all but the last 8 bytes; the whole key if shorter).
#[inline]
pub fn user_key(internal_key: &[u8]) -> &[u8] {
    &internal_key[..internal_key.len().saturating_sub(INTERNAL_TAG_LEN)]
}

#[inline]
fn tag(internal_key: &[u8]) -> u64 {
    match internal_key.len().checked_sub(INTERNAL_TAG_LEN) {
        Some(at) => coding::decode_fixed64(&internal_key[at..]),
        None => 0,
    }
}

/// LevelDB's `InternalKeyComparator`: user keys by the user comparator, then tags descending.
#[derive(Clone)]
pub struct InternalKeyComparator {
    user: Arc<dyn Comparator>,
    /// The user comparator is bytewise: user keys are compared as slices, without a
    /// dynamic call per comparison.
    bytewise: bool,
}

impl InternalKeyComparator {
    /// Wraps a user comparator.
    pub fn new(user: Arc<dyn Comparator>) -> Self {
        let bytewise = user.is_bytewise();
        InternalKeyComparator { user, bytewise }
    }

    /// The user comparator.
    pub fn user_comparator(&self) -> &Arc<dyn Comparator> {
        &self.user
    }
}

impl std::fmt::Debug for InternalKeyComparator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "InternalKeyComparator({})", self.user.name())
    }
}

impl Comparator for InternalKeyComparator {
    fn name(&self) -> &str {
        "leveldb.InternalKeyComparator"
    }

    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let o = if self.bytewise {
            user_key(a).cmp(user_key(b))
        } else {
            self.user.compare(user_key(a), user_key(b))
        };
        match o {
            Ordering::Equal => tag(b).cmp(&tag(a)),
            o => o,
        }
    }

    fn find_shortest_separator(&self, start: &mut Vec<u8>, limit: &[u8]) {
        let user_start = user_key(start);
        let user_limit = user_key(limit);
        let mut tmp = user_start.to_vec();
        self.user.find_shortest_separator(&mut tmp, user_limit);
        if tmp.len() < user_start.len() && self.user.compare(user_start, &tmp) == Ordering::Less {
            // A physically shorter but logically larger user key: use the earliest
            // possible tag with it.
            coding::put_fixed64(&mut tmp, pack_tag(MAX_SEQUENCE, TYPE_VALUE));
            *start = tmp;
        }
    }

    fn find_short_successor(&self, key: &mut Vec<u8>) {
        let user = user_key(key);
        let mut tmp = user.to_vec();
        self.user.find_short_successor(&mut tmp);
        if tmp.len() < user.len() && self.user.compare(user, &tmp) == Ordering::Less {
            coding::put_fixed64(&mut tmp, pack_tag(MAX_SEQUENCE, TYPE_VALUE));
            *key = tmp;
        }
    }
}

/// LevelDB's `InternalFilterPolicy`: the same name as the user policy, filters built over
/// (and probed with) user keys.
#[derive(Clone)]
pub struct InternalFilterPolicy {
    user: Arc<dyn FilterPolicy>,
}

impl InternalFilterPolicy {
    /// Wraps a user policy.
    pub fn new(user: Arc<dyn FilterPolicy>) -> Self {
        InternalFilterPolicy { user }
    }

    /// The user policy.
    pub fn user_policy(&self) -> &Arc<dyn FilterPolicy> {
        &self.user
    }
}

impl FilterPolicy for InternalFilterPolicy {
    fn name(&self) -> &str {
        self.user.name()
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let user_keys: Vec<&[u8]> = keys.iter().map(|k| user_key(k)).collect();
        self.user.create_filter(&user_keys, dst);
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        self.user.key_may_match(user_key(key), filter)
    }
}
