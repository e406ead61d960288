//! Shared inputs of the vectors: hex, the iSCSI command, a bloom filter's bytes, TestHashFilter.

use super::*;

pub(crate) fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    hex::decode(s).unwrap()
}

/// The 48-byte iSCSI read command of RFC 3720 B.4, used by both hash_test and crc32c_test.
pub(crate) fn iscsi() -> Vec<u8> {
    unhex(
        "01c00000000000000000000000000000 14000000000004000000001400000018
         28000000000000000200000000000000",
    )
}

pub(crate) fn bloom_filter(policy: &BloomFilterPolicy, keys: &[&[u8]]) -> Vec<u8> {
    let mut dst = Vec::new();
    policy.create_filter(keys, &mut dst);
    dst
}

// Section 4 (filter block): LevelDB's TestHashFilter.

/// LevelDB's TestHashFilter: for each key, fixed32(Hash(key, 1)); a key matches if any word
/// equals its hash.
pub(crate) struct TestHashFilter;

impl FilterPolicy for TestHashFilter {
    fn name(&self) -> &str {
        "TestHashFilter"
    }
    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        for k in keys {
            put_fixed32(dst, hash(k, 1));
        }
    }
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let h = hash(key, 1);
        filter.chunks_exact(4).any(|w| decode_fixed32(w) == h)
    }
}

pub(crate) fn policy() -> Arc<dyn FilterPolicy> {
    Arc::new(TestHashFilter)
}
