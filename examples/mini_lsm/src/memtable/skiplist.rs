//! The memtable's ordered store: a skiplist whose entries live in one arena (LevelDB's
//! `db/skiplist.h` over `util/arena.h`), linked by indices instead of pointers, so an entry
//! costs no allocation of its own and a memtable is freed in a few large pieces.
//!
//! ```text
//! arena:  | key (klen bytes) | value (vlen bytes) | key | value | ...   (insertion order)
//! nodes:  [head] [node 1] [node 2] ...   node: key prefix (16 bytes, order-preserving:
//!         most comparisons end there), arena offset, klen, vlen, tower start
//! links:  towers back to back: node n's next node at level l is links[tower(n) + l]
//!         (NIL at the end of a level); heights 1-12, each level 1/4 as likely as the one
//!         below (LevelDB's branching); the last node of each level is kept, so a key
//!         above every other is linked without a search
//! order:  a `KeyOrder` (a type, so that comparisons are inlined)
//! ```
//!
//! One writer at a time (`&mut self`); the memtable puts it behind a lock.

use std::cmp::Ordering;

const MAX_HEIGHT: usize = 12;

/// No node: the end of a level.
pub const NIL: u32 = u32::MAX;
/// The head node: before every entry.
pub const HEAD: u32 = 0;

#[derive(Clone, Copy)]
struct Node {
    /// The key's order prefix (`KeyOrder::prefix`): most comparisons end here, without
    /// reading the key from the arena.
    prefix: u128,
    off: usize,
    klen: u32,
    vlen: u32,
    tower: u32,
}

/// The order of a list's keys.
pub trait KeyOrder {
    /// Compares two keys.
    fn compare(a: &[u8], b: &[u8]) -> Ordering;
    /// A number that orders keys as `compare` does wherever two keys' numbers differ:
    /// `prefix(a) < prefix(b)` only if `a < b` (equal numbers decide nothing).
    fn prefix(key: &[u8]) -> u128;
}

/// An ordered set of (key, value) entries with unique keys.
pub struct SkipList<O> {
    arena: Vec<u8>,
    nodes: Vec<Node>,
    links: Vec<u32>,
    /// The last node of each level (`HEAD` for an empty level).
    tail: [u32; MAX_HEIGHT],
    height: usize,
    rng: u32,
    order: std::marker::PhantomData<O>,
}

impl<O: KeyOrder> SkipList<O> {
    /// An empty list with room for about `bytes` of keys and values (room to grow past it
    /// is made as it fills, by copying).
    pub fn with_capacity(bytes: usize) -> SkipList<O> {
        let mut nodes = Vec::with_capacity(1 + bytes / 128);
        nodes.push(Node {
            prefix: 0,
            off: 0,
            klen: 0,
            vlen: 0,
            tower: 0,
        });
        let mut links = Vec::with_capacity(MAX_HEIGHT + bytes / 64);
        links.resize(MAX_HEIGHT, NIL);
        SkipList {
            arena: Vec::with_capacity(bytes),
            nodes,
            links,
            tail: [HEAD; MAX_HEIGHT],
            height: 1,
            rng: 0x2545_f491,
            order: std::marker::PhantomData,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.nodes.len() - 1
    }

    /// The key of node `n` (empty for the head).
    pub fn key(&self, n: u32) -> &[u8] {
        match self.nodes.get(n as usize) {
            Some(x) => self
                .arena
                .get(x.off..x.off + x.klen as usize)
                .unwrap_or_default(),
            None => &[],
        }
    }

    /// The value of node `n`.
    pub fn value(&self, n: u32) -> &[u8] {
        match self.nodes.get(n as usize) {
            Some(x) => {
                let start = x.off + x.klen as usize;
                self.arena
                    .get(start..start + x.vlen as usize)
                    .unwrap_or_default()
            }
            None => &[],
        }
    }

    fn next_at(&self, n: u32, level: usize) -> u32 {
        match self.nodes.get(n as usize) {
            Some(x) => self
                .links
                .get(x.tower as usize + level)
                .copied()
                .unwrap_or(NIL),
            None => NIL,
        }
    }

    /// The node after `n` (`NIL` at the end).
    pub fn next(&self, n: u32) -> u32 {
        self.next_at(n, 0)
    }

    /// Whether node `n`'s key is below `key` (whose prefix is `prefix`).
    #[inline]
    fn below(&self, n: u32, key: &[u8], prefix: u128) -> bool {
        match self.nodes.get(n as usize) {
            Some(x) if x.prefix != prefix => x.prefix < prefix,
            Some(_) => O::compare(self.key(n), key) == Ordering::Less,
            None => false,
        }
    }

    /// The first node with a key >= `key` (`NIL` when none); `prev` gets, per level, the
    /// last node before it.
    fn find_ge(&self, key: &[u8], mut prev: Option<&mut [u32; MAX_HEIGHT]>) -> u32 {
        let prefix = O::prefix(key);
        let mut x = HEAD;
        let mut level = self.height - 1;
        loop {
            let next = self.next_at(x, level);
            if next != NIL && self.below(next, key, prefix) {
                x = next;
                continue;
            }
            if let Some(p) = prev.as_deref_mut() {
                p[level] = x;
            }
            if level == 0 {
                return next;
            }
            level -= 1;
        }
    }

    /// The first node with a key >= `key` (`NIL` when none).
    pub fn seek(&self, key: &[u8]) -> u32 {
        self.find_ge(key, None)
    }

    /// The last node with a key < `key` (`HEAD` when none).
    pub fn before(&self, key: &[u8]) -> u32 {
        let prefix = O::prefix(key);
        let mut x = HEAD;
        let mut level = self.height - 1;
        loop {
            let next = self.next_at(x, level);
            if next != NIL && self.below(next, key, prefix) {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
    }

    /// The first node (`NIL` when empty).
    pub fn first(&self) -> u32 {
        self.next_at(HEAD, 0)
    }

    /// The last node (`HEAD` when empty).
    pub fn last(&self) -> u32 {
        self.tail[0]
    }

    fn random_height(&mut self) -> usize {
        let mut h = 1;
        while h < MAX_HEIGHT {
            // xorshift32
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 17;
            self.rng ^= self.rng << 5;
            if self.rng % 4 != 0 {
                break;
            }
            h += 1;
        }
        h
    }

    /// Adds an entry whose key is the concatenation of `key_parts` and whose value is
    /// `value`. Its key must not be in the list yet (the memtable's keys carry unique
    /// sequence numbers).
    pub fn insert(&mut self, key_parts: &[&[u8]], value: &[u8]) {
        let off = self.arena.len();
        for p in key_parts {
            self.arena.extend_from_slice(p);
        }
        let klen = self.arena.len() - off;
        self.arena.extend_from_slice(value);
        let mut prev = [HEAD; MAX_HEIGHT];
        let prefix;
        {
            let key = self.arena.get(off..off + klen).unwrap_or_default();
            prefix = O::prefix(key);
            let last = self.tail[0];
            if last != HEAD && self.below(last, key, prefix) {
                // After every entry (ascending keys): the tails are the predecessors, no
                // search (RocksDB's append fast path).
                prev = self.tail;
            } else {
                self.find_ge(key, Some(&mut prev));
            }
        }
        let height = self.random_height();
        if height > self.height {
            // The levels above the current height start at the head.
            for p in prev.iter_mut().take(height).skip(self.height) {
                *p = HEAD;
            }
            self.height = height;
        }
        let n = self.nodes.len() as u32;
        let tower = self.links.len() as u32;
        self.nodes.push(Node {
            prefix,
            off,
            klen: klen as u32,
            vlen: value.len() as u32,
            tower,
        });
        for (level, &p) in prev.iter().enumerate().take(height) {
            let next = self.next_at(p, level);
            self.links.push(next);
            let slot = self.nodes[p as usize].tower as usize + level;
            self.links[slot] = n;
            if next == NIL {
                self.tail[level] = n;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Bytewise;
    impl KeyOrder for Bytewise {
        fn compare(a: &[u8], b: &[u8]) -> Ordering {
            a.cmp(b)
        }
        fn prefix(key: &[u8]) -> u128 {
            // The first two bytes and whether there are more (a deliberately weak prefix:
            // the tests then take both paths).
            let b = |i: usize| u128::from(key.get(i).copied().unwrap_or(0));
            b(0) << 16 | b(1) << 8 | u128::from(key.len().min(2) as u8)
        }
    }

    #[test]
    fn a_list_keeps_its_entries_in_order_and_finds_them_both_ways() {
        let mut l = SkipList::<Bytewise>::with_capacity(0);
        let mut model = std::collections::BTreeMap::new();
        let mut x = 7u32;
        for _ in 0..3000 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let k = (x >> 8) % 5000;
            let key = format!("{k:05}");
            if model.contains_key(&key) {
                continue;
            }
            l.insert(&[key.as_bytes()], &k.to_le_bytes());
            model.insert(key, k);
        }
        assert_eq!(l.len(), model.len());
        let mut n = l.first();
        for (k, v) in &model {
            assert_eq!(l.key(n), k.as_bytes());
            assert_eq!(l.value(n), v.to_le_bytes());
            n = l.next(n);
        }
        assert_eq!(n, NIL);
        assert_eq!(l.key(l.last()), model.keys().last().unwrap().as_bytes());
        for probe in ["", "00000", "02500", "02500x", "99999"] {
            let ge = model
                .range(probe.to_string()..)
                .next()
                .map(|(k, _)| k.as_bytes());
            let lt = model
                .range(..probe.to_string())
                .next_back()
                .map(|(k, _)| k.as_bytes());
            let s = l.seek(probe.as_bytes());
            assert_eq!((s != NIL).then(|| l.key(s)), ge, "{probe}");
            let b = l.before(probe.as_bytes());
            assert_eq!((b != HEAD).then(|| l.key(b)), lt, "{probe}");
        }
    }

    /// Ascending keys (linked after the tails) mixed with keys that go in between.
    #[test]
    fn ascending_keys_and_keys_in_between_stay_in_order() {
        let mut l = SkipList::<Bytewise>::with_capacity(1 << 10);
        let mut model = std::collections::BTreeSet::new();
        for i in 0..3000u32 {
            let k = match i % 10 {
                3 => format!("{:06}", i / 2 + 1_000_000), // above everything so far, often
                7 => format!("{:06}x", i / 3),            // in between
                _ => format!("{i:06}"),
            };
            if model.insert(k.clone()) {
                l.insert(&[k.as_bytes()], b"");
            }
        }
        let mut n = l.first();
        for k in &model {
            assert_eq!(l.key(n), k.as_bytes());
            n = l.next(n);
        }
        assert_eq!(n, NIL);
        assert_eq!(l.key(l.last()), model.last().unwrap().as_bytes());
        for k in model.iter().step_by(97) {
            assert_eq!(l.key(l.seek(k.as_bytes())), k.as_bytes());
        }
    }
}
