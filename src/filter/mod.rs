//! Filter policies: the contract of LevelDB's `include/leveldb/filter_policy.h`.
//!
//! A policy turns the keys of a range of data blocks into a small filter, and later answers
//! "may this key be among them?". `false` must mean the key was not added; `true` may be wrong
//! (a false positive). The policy's [`name`](FilterPolicy::name) is written into the metaindex
//! (`"filter." + name`), and a reader only uses a filter whose name it knows.

pub(crate) mod block;
pub(crate) mod bloom;
mod local;

pub use bloom::{BloomFilterPolicy, LegacyBloomFilterPolicy};
pub use local::CacheLocalBloomPolicy;

/// A filter policy, as LevelDB's `FilterPolicy`.
pub trait FilterPolicy: Send + Sync {
    /// The name stored in the metaindex. Changing how filters are encoded requires a new name.
    fn name(&self) -> &str;

    /// Appends a filter for `keys` to `dst`. It must not modify the bytes already in `dst`.
    /// `keys` may contain duplicates, and may be empty.
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>);

    /// Whether `key` may be among the keys `filter` was created from. Never fails: malformed
    /// filter bytes answer `true` (or, for a filter too short to hold anything, `false`,
    /// exactly as LevelDB).
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool;
}

impl<P: FilterPolicy + ?Sized> FilterPolicy for std::sync::Arc<P> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        (**self).create_filter(keys, dst)
    }
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        (**self).key_may_match(key, filter)
    }
}
