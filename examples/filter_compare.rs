//! False positives and probe time of LevelDB's bloom policy and this crate's cache-local
//! bloom policy, side by side in one run, as Markdown tables (docs/filter.md).
//!
//! `cargo run --release --example filter_compare`
//!
//! Each filter holds 10,000 keys (LevelDB's filters hold one 2 KiB range of a table each,
//! usually fewer keys; the table-level comparison is the peer harness's `miss_blocks_read`,
//! see docs/filter.md). Probes are 1,000,000 keys never inserted. Key sets: sequential
//! (`k000000000000002`, ...), random (16 hex digits of a mixed counter), near-identical
//! (`user:00000042:name`, the shape of real database keys).

use std::time::Instant;

use leveldb_table::{filter::BloomFilterPolicy, filter::CacheLocalBloomPolicy, FilterPolicy};

const KEYS: u64 = 10_000;
const PROBES: u64 = 1_000_000;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

type KeyFn = fn(u64) -> Vec<u8>;

fn sets() -> [(&'static str, KeyFn, KeyFn); 3] {
    [
        (
            "sequential",
            |i| format!("k{:015}", 2 * i).into_bytes(),
            |i| format!("k{:015}", 2 * i + 1).into_bytes(),
        ),
        (
            "random",
            |i| format!("{:016x}", splitmix(i)).into_bytes(),
            |i| format!("{:016x}", splitmix((i + 1) << 40)).into_bytes(),
        ),
        (
            "near-identical",
            |i| format!("user:{i:08}:name").into_bytes(),
            |i| format!("user:{:08}:name", i + 10_000_000).into_bytes(),
        ),
    ]
}

/// A filter built over `add`'s keys and `probe`'s absent keys, laid out contiguously (one
/// buffer and offsets) so that timing a probe measures the filter, not the allocator's
/// scattering of a million small key vectors.
struct Case {
    filter: Vec<u8>,
    keys: Vec<Vec<u8>>,
    probe_bytes: Vec<u8>,
    probe_ends: Vec<usize>,
}

impl Case {
    fn new(p: &dyn FilterPolicy, add: KeyFn, probe: KeyFn) -> Case {
        let keys: Vec<Vec<u8>> = (0..KEYS).map(add).collect();
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        let mut filter = Vec::new();
        p.create_filter(&refs, &mut filter);
        let mut probe_bytes = Vec::new();
        let mut probe_ends = Vec::with_capacity(PROBES as usize);
        for i in 0..PROBES {
            probe_bytes.extend_from_slice(&probe(i));
            probe_ends.push(probe_bytes.len());
        }
        Case {
            filter,
            keys,
            probe_bytes,
            probe_ends,
        }
    }

    /// Keys the filter calls maybe-present, and the pass's ns per probe.
    fn pass(&self, p: &dyn FilterPolicy) -> (usize, f64) {
        let a = Instant::now();
        let mut start = 0;
        let mut hits = 0;
        for &end in &self.probe_ends {
            hits += usize::from(p.key_may_match(&self.probe_bytes[start..end], &self.filter));
            start = end;
        }
        (hits, a.elapsed().as_secs_f64() * 1e9 / PROBES as f64)
    }
}

/// (false-positive rate, filter bytes, ns per probe: the best of 5 passes).
fn measure(p: &dyn FilterPolicy, add: KeyFn, probe: KeyFn) -> (f64, usize, f64) {
    let c = Case::new(p, add, probe);
    assert!(
        c.keys.iter().all(|k| p.key_may_match(k, &c.filter)),
        "no false negatives"
    );
    let mut best = f64::MAX;
    let mut hits = 0;
    for _ in 0..5 {
        let (h, ns) = c.pass(p);
        hits = h;
        best = best.min(ns);
    }
    (hits as f64 / PROBES as f64, c.filter.len(), best)
}

fn main() {
    println!("| bits/key | keys | LevelDB bloom FP | cache-local FP | LevelDB bytes | cache-local bytes |");
    println!("|---:|---|---:|---:|---:|---:|");
    let mut times = Vec::new();
    for bits in [4usize, 6, 8, 10, 12, 14, 16, 20] {
        for (name, add, probe) in sets() {
            let ldb = BloomFilterPolicy::new(bits);
            let local = CacheLocalBloomPolicy::new(bits as f64);
            let (f1, b1, t1) = measure(&ldb, add, probe);
            let (f2, b2, t2) = measure(&local, add, probe);
            println!(
                "| {bits} | {name} | {:.3}% | {:.3}% | {b1} | {b2} |",
                f1 * 100.0,
                f2 * 100.0
            );
            if bits == 10 {
                times.push((name, t1, t2));
            }
        }
    }
    println!();
    println!("| keys (10 bits/key) | LevelDB bloom ns/probe | cache-local ns/probe | ratio |");
    println!("|---|---:|---:|---:|");
    for (name, t1, t2) in times {
        println!("| {name} | {t1:.1} | {t2:.1} | {:.2} |", t2 / t1);
    }
}
