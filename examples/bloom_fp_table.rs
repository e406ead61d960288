//! Prints the measured false-positive rate of LevelDB's bloom filter for 1..=20 bits per
//! key next to the theory, as a Markdown table (used in docs/filter.md).
//!
//! `cargo run --release --example bloom_fp_table`

use leveldb_table::{BloomFilterPolicy, FilterPolicy};

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
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}
