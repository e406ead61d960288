//! Prints the measured tables of docs/bloom.md as Markdown: false-positive rate against bits
//! per key for the standalone sizing (counting filter, XXH3 double hashing), and layers,
//! memory and false-positive rate of a scalable filter as items grow.
//!
//! `cargo run --release -p sst-bloom --example scalable_bloom_tables`

use sst_bloom::{CountingBloomFilter, ScalableBloomFilter, ScalableParams};

const ABSENT: u32 = 1_000_000;

fn measured(contains: impl Fn(&[u8]) -> bool) -> f64 {
    let hits = (0..ABSENT)
        .filter(|i| contains(format!("out:{i}").as_bytes()))
        .count();
    hits as f64 / f64::from(ABSENT)
}

fn main() {
    const N: u32 = 100_000;
    println!("| target | bits/key (m/n) | k | theory (1-e^(-k n/m))^k | measured ({ABSENT} absent keys) |");
    println!("|---:|---:|---:|---:|---:|");
    for eps in [0.1, 0.05, 0.01, 0.005, 0.001, 0.0001] {
        let mut f = CountingBloomFilter::for_capacity(u64::from(N), eps);
        for i in 0..N {
            f.add(format!("in:{i}").as_bytes());
        }
        let bpk = f.counters() as f64 / f64::from(N);
        let k = f64::from(f.k());
        let theory = (1.0 - (-k / bpk).exp()).powf(k);
        let m = measured(|key| f.may_contain(key));
        println!(
            "| {:.2}% | {bpk:.2} | {} | {:.4}% | {:.4}% |",
            eps * 100.0,
            f.k(),
            theory * 100.0,
            m * 100.0
        );
    }

    println!();
    println!(
        "| items added | layers | items held | bytes | bits/key | estimated FP | measured FP |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let params = ScalableParams {
        capacity: 10_000,
        fp_rate: 0.01,
        ..ScalableParams::default()
    };
    let mut f = ScalableBloomFilter::new(params).expect("params");
    let mut added = 0u32;
    for target in [10_000u32, 20_000, 40_000, 80_000, 160_000, 320_000, 640_000] {
        while added < target {
            f.add(format!("in:{added}").as_bytes()).expect("add");
            added += 1;
        }
        let m = measured(|key| f.may_contain(key));
        println!(
            "| {target} | {} | {} | {} | {:.2} | {:.4}% | {:.4}% |",
            f.layers().len(),
            f.items(),
            f.memory_bytes(),
            f.memory_bytes() as f64 * 8.0 / f64::from(target),
            f.estimated_fp_rate() * 100.0,
            m * 100.0
        );
    }
}
