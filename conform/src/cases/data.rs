//! The entry sets the generated cases are made of, from a fixed-seed generator: the same
//! bytes on every run and every machine.

use leveldb_table::raw::internal_key::{internal_key, ValueType};

use crate::protocol::Entry;

/// splitmix64: small, fast, and fully specified, so case bytes never depend on a crate's
/// version.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n` > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    fn letters(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| b'a' + self.below(26) as u8).collect()
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

const WORDS: [&str; 12] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima",
];

fn sentence(rng: &mut Rng, words: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..words {
        if i > 0 {
            v.push(b' ');
        }
        v.extend_from_slice(WORDS[rng.below(WORDS.len())].as_bytes());
    }
    v
}

/// Sorts by key and keeps the first entry of each key.
fn sorted(mut v: Vec<Entry>) -> Vec<Entry> {
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v.dedup_by(|a, b| a.0 == b.0);
    v
}

/// `n` ordinary entries: `key-NNNNNN/` plus 0..11 letters, values of 0..15 words (every
/// 16th empty) or, every 50th, 40 random bytes.
pub(crate) fn words(n: usize, seed: u64) -> Vec<Entry> {
    let mut rng = Rng::new(seed);
    let v = (0..n)
        .map(|i| {
            let mut k = format!("key-{:06}/", i * 7).into_bytes();
            let extra = rng.below(12);
            k.extend(rng.letters(extra));
            let value = match i {
                _ if i % 16 == 5 => Vec::new(),
                _ if i % 50 == 7 => rng.bytes(40),
                _ => {
                    let w = 1 + rng.below(15);
                    sentence(&mut rng, w)
                }
            };
            (k, value)
        })
        .collect();
    sorted(v)
}

/// `n` keys sharing a `prefix_len`-byte prefix, then a counter and 0..5 letters.
pub(crate) fn shared_prefix(n: usize, prefix_len: usize, seed: u64) -> Vec<Entry> {
    let mut rng = Rng::new(seed);
    let prefix = rng.letters(prefix_len);
    let v = (0..n)
        .map(|i| {
            let mut k = prefix.clone();
            k.extend_from_slice(format!("{i:06}").as_bytes());
            let extra = rng.below(5);
            k.extend(rng.letters(extra));
            let w = rng.below(6);
            (k, sentence(&mut rng, w))
        })
        .collect();
    sorted(v)
}

/// Binary keys and values made mostly of 0x00 and 0xff (and their neighbours), with the
/// edge keys `00`, `0000`, `00ff`, `ff`, `ffff...`.
pub(crate) fn binary(n: usize, seed: u64) -> Vec<Entry> {
    const ALPHABET: [u8; 8] = [0x00, 0x00, 0xff, 0xff, 0x01, 0xfe, 0x7f, 0x80];
    let mut rng = Rng::new(seed);
    let pick = |rng: &mut Rng, len: usize| -> Vec<u8> {
        (0..len)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect()
    };
    let mut v: Vec<Entry> = (0..n)
        .map(|_| {
            let kl = 1 + rng.below(24);
            let vl = rng.below(32);
            (pick(&mut rng, kl), pick(&mut rng, vl))
        })
        .collect();
    for edge in [&[0u8][..], &[0, 0], &[0, 0xff], &[0xff], &[0xff; 16]] {
        v.push((edge.to_vec(), vec![0xff, 0x00]));
    }
    sorted(v)
}

/// The empty key with an empty value, then keys with empty values and a key of one byte
/// with a one-byte value.
pub(crate) fn empty_keys_values() -> Vec<Entry> {
    let mut v = vec![(Vec::new(), Vec::new())];
    for i in 0..40 {
        let value = if i % 3 == 0 {
            Vec::new()
        } else {
            vec![b'v'; i]
        };
        v.push((format!("e{i:02}").into_bytes(), value));
    }
    v.push((b"z".to_vec(), b"z".to_vec()));
    sorted(v)
}

/// Small entries around three values of 1 MiB: one compressible (words), one random, and one
/// of 1 MiB + 1 bytes of zeros.
pub(crate) fn big_values(seed: u64) -> Vec<Entry> {
    let mut rng = Rng::new(seed);
    let mib = 1 << 20;
    let mut words = Vec::with_capacity(mib);
    while words.len() < mib {
        words.extend(sentence(&mut rng, 8));
        words.push(b'\n');
    }
    words.truncate(mib);
    let random = rng.bytes(mib);
    let v = vec![
        (b"a".to_vec(), b"small".to_vec()),
        (b"big-1-words".to_vec(), words),
        (b"big-2-random".to_vec(), random),
        (b"big-3-zeros".to_vec(), vec![0; mib + 1]),
        (b"m".to_vec(), b"between".to_vec()),
        (b"z".to_vec(), Vec::new()),
    ];
    sorted(v)
}

/// A database table's entries: internal keys (user key, sequence, type) of `n` user keys
/// with one to three versions each, some newest versions deletions, in internal-key order.
pub(crate) fn internal(n: usize, seed: u64) -> Vec<Entry> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    let mut seq = 1u64;
    let users = words(n, seed ^ 0x5eed);
    for (user, value) in users {
        let versions = 1 + rng.below(3);
        let mut mine = Vec::new();
        for v in 0..versions {
            let deletion = v + 1 == versions && rng.below(5) == 0;
            let (t, val) = match deletion {
                true => (ValueType::Deletion, Vec::new()),
                false => (
                    ValueType::Value,
                    [&value[..], format!("/v{v}").as_bytes()].concat(),
                ),
            };
            mine.push((internal_key(&user, seq, t), val));
            seq += 1;
        }
        // Newest (highest sequence) first, as the internal-key order puts them.
        mine.reverse();
        out.extend(mine);
    }
    out
}
