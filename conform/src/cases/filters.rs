//! The bloom filter of LevelDB before 1.18 as x86 builds wrote it: named
//! `leveldb.BuiltinBloomFilter`, the key's tail bytes (past its last whole 4-byte word)
//! hashed as *signed* chars. goleveldb writes the same name with the unsigned hash (the
//! library's `LegacyBloomFilterPolicy`); this is the other kind of file with that name.
//!
//! ```text
//! filter = bit array (max(64, n * bits_per_key) bits, rounded up to bytes) | k (1 byte)
//! key:   h = hash_signed_tail(key, 0xbc9f1d34); delta = rotr(h, 17)
//!        k times: set bit h % bits; h += delta
//! ```

use leveldb_table::raw::bloom::k_for_bits_per_key;
use leveldb_table::raw::hash::hash_signed_tail;
use leveldb_table::FilterPolicy;

/// The seed of LevelDB's bloom hash (`util/bloom.cc`, `BloomHash`).
const BLOOM_SEED: u32 = 0xbc9f_1d34;

/// LevelDB < 1.18's bloom policy on x86, for writing the kit's pre-1.18 table.
pub(crate) struct SignedTailBloom {
    bits_per_key: usize,
}

impl SignedTailBloom {
    pub(crate) fn new(bits_per_key: usize) -> Self {
        SignedTailBloom { bits_per_key }
    }
}

impl FilterPolicy for SignedTailBloom {
    fn name(&self) -> &str {
        "leveldb.BuiltinBloomFilter"
    }

    fn create_filter(&self, keys: &[&[u8]], dst: &mut Vec<u8>) {
        let k = k_for_bits_per_key(self.bits_per_key);
        let bits = (keys.len() * self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let bits = bytes * 8;
        let start = dst.len();
        dst.resize(start + bytes, 0);
        for key in keys {
            let mut h = hash_signed_tail(key, BLOOM_SEED);
            let delta = h.rotate_right(17);
            for _ in 0..k {
                let pos = h as usize % bits;
                dst[start + pos / 8] |= 1 << (pos % 8);
                h = h.wrapping_add(delta);
            }
        }
        dst.push(k);
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        let Some((&k, array)) = filter.split_last() else {
            return false;
        };
        if k > 30 {
            return true;
        }
        let bits = array.len() * 8;
        if bits == 0 {
            return false;
        }
        let mut h = hash_signed_tail(key, BLOOM_SEED);
        let delta = h.rotate_right(17);
        for _ in 0..k {
            let pos = h as usize % bits;
            if array[pos / 8] & (1 << (pos % 8)) == 0 {
                return false;
            }
            h = h.wrapping_add(delta);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leveldb_table::filter::LegacyBloomFilterPolicy;

    #[test]
    fn the_library_reads_signed_tail_filters_under_the_legacy_name() {
        // Keys whose tails have high bytes: the two hashes differ, and the library's legacy
        // policy accepts either.
        let keys: Vec<Vec<u8>> = (0..200u32)
            .map(|i| [&i.to_le_bytes()[..], &[0x80 | i as u8, 0xff][..]].concat())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut f = Vec::new();
        SignedTailBloom::new(10).create_filter(&refs, &mut f);
        let legacy = LegacyBloomFilterPolicy::new(10);
        for k in &refs {
            assert!(SignedTailBloom::new(10).key_may_match(k, &f));
            assert!(legacy.key_may_match(k, &f));
        }
    }
}
