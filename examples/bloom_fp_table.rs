//! Prints the measured false-positive rate of LevelDB's bloom filter for 1..=20 bits per
//! key next to the theory, as a Markdown table (used in docs/filter.md).
//!
//! `cargo run --release --example bloom_fp_table`

use leveldb_table::{filter::BloomFilterPolicy, filter::LegacyBloomFilterPolicy, FilterPolicy};

fn main() {
    const KEYS: u32 = 10_000;
    const PROBES: u32 = 1_000_000;
    println!("| bits/key | k | theory (1-e^(-k/b))^k | optimal-k theory 0.6185^b | measured, random keys | measured, sequential keys |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for bits in 1..=20usize {
        let p = BloomFilterPolicy::new(bits);
        let k = f64::from(p.k());
        let b = bits as f64;
        let theory = (1.0 - (-k / b).exp()).powf(k);
        let optimal = 0.6185f64.powf(b);
        // Keys like a database's: 16-byte strings; probes never inserted.
        let random_keys: Vec<Vec<u8>> = (0..KEYS)
            .map(|i| format!("{:016x}", splitmix(u64::from(i))).into_bytes())
            .collect();
        let seq_keys: Vec<Vec<u8>> = (0..KEYS)
            .map(|i| format!("k{:015}", 2 * i).into_bytes())
            .collect();
        let rate = |keys: &[Vec<u8>], probe: &dyn Fn(u32) -> Vec<u8>| {
            let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
            let mut f = Vec::new();
            p.create_filter(&refs, &mut f);
            let hits = (0..PROBES)
                .filter(|&i| p.key_may_match(&probe(i), &f))
                .count();
            hits as f64 / f64::from(PROBES)
        };
        let r1 = rate(&random_keys, &|i| {
            format!("{:016x}", splitmix((u64::from(i) + 1) << 40)).into_bytes()
        });
        let r2 = rate(&seq_keys, &|i| {
            format!("k{:015}", 2 * (i % KEYS) + 1).into_bytes()
        });
        println!(
            "| {bits} | {} | {:.4}% | {:.4}% | {:.4}% | {:.4}% |",
            p.k(),
            theory * 100.0,
            optimal * 100.0,
            r1 * 100.0,
            r2 * 100.0
        );
    }
    legacy_cost();
}

/// The price of probing legacy-named filters with both hashes (`LegacyBloomFilterPolicy`).
fn legacy_cost() {
    const KEYS: u64 = 10_000;
    const PROBES: u64 = 1_000_000;
    let policy = BloomFilterPolicy::new(10);
    let legacy = LegacyBloomFilterPolicy::new(10);
    println!();
    println!("| keys | policy | false positives | ns per probe |");
    println!("|---|---|---:|---:|");
    // Keys of 13 bytes: a 1-byte tail, >= 0x80 half of the time (the signed and unsigned
    // hashes then differ); and keys of 16 bytes (no tail: both hashes agree).
    for (label, len) in [("13-byte random", 13usize), ("16-byte random", 16)] {
        let key = |i: u64| {
            let mut k = Vec::with_capacity(len);
            let mut x = i;
            while k.len() < len {
                x = splitmix(x);
                k.extend_from_slice(&x.to_le_bytes());
            }
            k.truncate(len);
            k
        };
        let keys: Vec<Vec<u8>> = (0..KEYS).map(key).collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
        let mut f = Vec::new();
        policy.create_filter(&refs, &mut f);
        let probes: Vec<Vec<u8>> = (0..PROBES).map(|i| key(i + (1 << 40))).collect();
        for (name, p) in [
            ("BuiltinBloomFilter2", &policy as &dyn FilterPolicy),
            ("legacy, both hashes", &legacy),
        ] {
            let t = std::time::Instant::now();
            let hits = probes.iter().filter(|k| p.key_may_match(k, &f)).count();
            let ns = t.elapsed().as_nanos() as f64 / PROBES as f64;
            println!(
                "| {label} | {name} | {:.3}% | {ns:.1} |",
                hits as f64 * 100.0 / PROBES as f64
            );
        }
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
