//! Tests of the block cache common to both policies.

use std::sync::{Mutex, Weak};

use super::*;

const POLICIES: &[CachePolicy] = &[
    CachePolicy::ClockTinyLfu,
    #[cfg(feature = "quick-cache")]
    CachePolicy::QuickCache,
];

/// A cached block of about `bytes` bytes (its charge is its exact size).
pub(super) fn entry(bytes: usize) -> Arc<CachedBlock> {
    let mut b = crate::block::builder::BlockBuilder::new(16);
    b.add(b"k", &vec![7u8; bytes.saturating_sub(16)]);
    let data = bytes::Bytes::copy_from_slice(b.finish());
    let handle = crate::format::BlockHandle {
        offset: 0,
        size: data.len() as u64,
    };
    let block = Block::new(data, crate::error::BlockKind::Data, handle).unwrap();
    Arc::new(CachedBlock::new(block, None, true))
}

fn shards(c: &BlockCache) -> usize {
    with_engine!(&c.engine, r => r.shards())
}

/// Blocks larger than a shard are not cached; the same key offered again leaves one
/// entry for it, charged as that entry (our CLOCK keeps the newer, `quick_cache` the one
/// it holds: it never replaces, so that the replaced entry's record would be told).
#[test]
fn oversized_blocks_and_offered_again() {
    for &policy in POLICIES {
        let c = BlockCache::with_policy(10_000, policy);
        assert!(!c.insert_entry(1, 0, entry(20_000)), "{policy:?}");
        assert!(c.is_empty());
        let first = entry(3000);
        assert!(c.insert_entry(1, 0, first.clone()));
        let small = entry(2000);
        assert!(c.insert_entry(1, 0, small.clone()));
        let kept = c.get_entry(1, 0).unwrap();
        let want = match policy {
            CachePolicy::ClockTinyLfu => &small,
            #[cfg(feature = "quick-cache")]
            CachePolicy::QuickCache => &first,
        };
        assert!(Arc::ptr_eq(&kept, want), "{policy:?}");
        assert_eq!((c.len(), c.charge()), (1, kept.charge), "{policy:?}");
        // Another table's block at the same offset is another key.
        assert!(c.get_entry(2, 0).is_none());
    }
}

/// A 64 MiB cache has 16 shards (LevelDB's count), a small one a single shard, whatever
/// the policy.
#[test]
fn shards_by_capacity() {
    for &policy in POLICIES {
        let n = |cap| shards(&BlockCache::with_policy(cap, policy));
        assert_eq!(
            [n(64 << 20), n(8 << 20), n(6 << 20), n(1)],
            [16, 4, 2, 1],
            "{policy:?}"
        );
    }
}

/// Threads offering, finding and using blocks at once: the charge stays within the
/// capacity, and every entry found is the block asked for.
#[test]
fn threads_share_a_full_cache() {
    let one = entry(1000).charge;
    for &policy in POLICIES {
        let c = Arc::new(BlockCache::with_policy(32 * one, policy));
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let c = c.clone();
                s.spawn(move || {
                    for i in 0..3000u64 {
                        let k = (i * 7 + t * 13) % 97;
                        match c.get_entry(1, k * 4096) {
                            Some(e) => assert_eq!(e.block.size(), entry(1000).block.size()),
                            None => {
                                c.insert_entry(1, k * 4096, entry(1000));
                            }
                        }
                        if let Some(e) = c.get_entry(1, k * 4096) {
                            e.mark_used(e.references());
                            c.note_use(1, k * 4096);
                        }
                        assert!(c.charge() <= c.capacity());
                    }
                });
            }
        });
        assert!(c.len() <= 32 && c.len() >= 16, "{policy:?}: {}", c.len());
        assert_eq!(c.charge(), c.len() as u64 * one);
    }
}

/// Slots of a fake table: which entry each holds.
struct Slots(Mutex<Vec<Option<Arc<CachedBlock>>>>);

impl SlotOwner for Slots {
    fn release(&self, index: usize, entry: &Arc<CachedBlock>) {
        let mut s = self.0.lock().unwrap();
        if s[index].as_ref().is_some_and(|e| Arc::ptr_eq(e, entry)) {
            s[index] = None;
        }
    }
}

/// Entries linked to slots as tables link them (on admission and when found) are
/// released when they leave: after a stream of blocks through a small cache, every
/// entry a slot holds is the cache's current entry for its block, and threads doing
/// the same leave the same state.
#[test]
fn linked_entries_are_released_when_they_leave() {
    let one = entry(1000).charge;
    for &policy in POLICIES {
        let c = Arc::new(BlockCache::with_policy(16 * one, policy));
        let slots = Arc::new(Slots(Mutex::new(vec![None; 200])));
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (c, slots) = (c.clone(), slots.clone());
                s.spawn(move || {
                    let owner: Weak<dyn SlotOwner> = Arc::downgrade(&slots) as Weak<Slots>;
                    let mut x = t + 1;
                    for _ in 0..4000 {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        // Skewed: low blocks far more often.
                        let k = ((x >> 33) % 200) * ((x >> 20) % 200) / 200;
                        let k = k as usize;
                        let link = |e: &Arc<CachedBlock>| {
                            slots.0.lock().unwrap()[k] = Some(e.clone());
                            e.link_to(owner.clone(), k);
                        };
                        if c.get_entry_with(1, k as u64, link).is_none() {
                            let link = |e: &Arc<CachedBlock>| {
                                slots.0.lock().unwrap()[k] = Some(e.clone());
                                e.link_to(owner.clone(), k);
                            };
                            c.insert_entry_with(1, k as u64, entry(1000), link);
                        }
                    }
                });
            }
        });
        let held = slots.0.lock().unwrap().clone();
        let mut n = 0;
        for (k, e) in held.iter().enumerate() {
            if let Some(e) = e {
                let cached = c.get_entry(1, k as u64);
                assert!(
                    cached.is_some_and(|c| Arc::ptr_eq(&c, e)),
                    "{policy:?}: slot {k} holds an entry the cache let go"
                );
                n += 1;
            }
        }
        assert!(n > 0 && n <= 16, "{policy:?}: {n} held");
        assert!(c.charge() <= c.capacity());
    }
}
