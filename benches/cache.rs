//! The block cache's replacement policies side by side (`CachePolicy`): point lookups
//! (`TableReader::get_into`, hits) on a 300,000-entry snappy table (bloom 10) whose block
//! cache holds a quarter of its uncompressed data blocks, so that the policy decides how
//! many lookups read and decompress a block.
//!
//! Four caches: each policy with the tables' lookup records holding cache entries
//! (`record_links(true)`, the default) and without. Three workloads of `PASS` lookups:
//!
//! * `repeat`: the peer benchmark's shape: a fixed list of uniform probes, run once on a
//!   cold cache, then the same list again: the second pass is measured;
//! * `uniform`: fresh uniform probes every pass, on a cache warmed by earlier passes;
//! * `zipf`: fresh Zipf-distributed probes (exponent 0.99, ranks scattered over the keys)
//!   every pass, on a warmed cache.
//!
//! Two parts: criterion's estimates, one benchmark per (workload, cache); then `ROUNDS`
//! rounds that run every (workload, cache) once each, in an order rotated per round, and
//! print the median time per lookup, the share of lookups served without reading a block
//! (hit ratio), and each time as a ratio to the CLOCK + TinyLFU cache with record links.
//! The machine's noise moves runs far apart; compare within one run only.
//! `cargo bench --bench cache -- summary` (a filter no benchmark matches) runs the rounds
//! alone. Results: docs/performance.md, "Block cache policies".

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{Criterion, SamplingMode, Throughput};
use leveldb_table::{
    raw::CountingReader, table::CachePolicy, table::KeyFormat, BlockCache, Compression,
    OpenOptions, ReadOptions, TableReader,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};

mod common;

const N: u64 = 300_000;
/// Lookups per pass.
const PASS: usize = 40_000;
/// Passes that warm a cache before fresh-probe workloads are measured.
const WARM_PASSES: u64 = 4;
/// Rounds of the side-by-side summary.
const ROUNDS: usize = 7;
const ZIPF_EXPONENT: f64 = 0.99;

type Table = TableReader<CountingReader<Bytes>>;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Workload {
    Repeat,
    Uniform,
    Zipf,
}

const WORKLOADS: [Workload; 3] = [Workload::Repeat, Workload::Uniform, Workload::Zipf];

const CACHES: &[(CachePolicy, bool, &str)] = &[
    (CachePolicy::ClockTinyLfu, true, "clock+links"),
    (CachePolicy::ClockTinyLfu, false, "clock"),
    #[cfg(feature = "quick-cache")]
    (CachePolicy::QuickCache, true, "quick+links"),
    #[cfg(feature = "quick-cache")]
    (CachePolicy::QuickCache, false, "quick"),
];

struct Setup {
    bytes: Bytes,
    blocks: u64,
    cache_bytes: u64,
    keys: Vec<Vec<u8>>,
    /// Zipf rank (0 = most probed) -> key index: a seeded shuffle, so that hot keys are
    /// scattered over the blocks.
    rank_to_key: Vec<u32>,
}

impl Setup {
    fn new() -> Setup {
        let entries = common::entries(N);
        let bytes = common::build_table(&entries, Compression::Snappy);
        let probe = open(&bytes, 1, CACHES[0]);
        let blocks = probe.data_block_handles().expect("handles").len() as u64;
        let mut rank_to_key: Vec<u32> = (0..N as u32).collect();
        let mut rng = StdRng::seed_from_u64(common::SEED);
        for i in (1..rank_to_key.len()).rev() {
            rank_to_key.swap(i, rng.gen_range(0..=i));
        }
        Setup {
            bytes,
            // Blocks close once they reach 4 KiB uncompressed.
            blocks,
            cache_bytes: blocks * 4096 / 4,
            keys: entries.into_iter().map(|(k, _)| k).collect(),
            rank_to_key,
        }
    }

    /// The probes of pass `seed` of `w`.
    fn probes(&self, w: Workload, seed: u64) -> Vec<u32> {
        let mut rng = StdRng::seed_from_u64(seed);
        match w {
            Workload::Repeat | Workload::Uniform => {
                (0..PASS).map(|_| rng.gen_range(0..N as u32)).collect()
            }
            Workload::Zipf => {
                let z = Zipf::new(N, ZIPF_EXPONENT).expect("zipf");
                (0..PASS)
                    .map(|_| self.rank_to_key[z.sample(&mut rng) as usize - 1])
                    .collect()
            }
        }
    }
}

fn open(bytes: &Bytes, cache_bytes: u64, (policy, links, _): (CachePolicy, bool, &str)) -> Table {
    let cache = BlockCache::with_policy(cache_bytes, policy).record_links(links);
    let ro = OpenOptions::default()
        .keys(KeyFormat::Plain)
        .block_cache(Some(Arc::new(cache)));
    TableReader::open(CountingReader::new(bytes.clone()), ro).expect("open")
}

/// Runs `probes` on `t`; (time, block reads).
fn pass(s: &Setup, t: &Table, probes: &[u32]) -> (Duration, u64) {
    let mut val = Vec::with_capacity(128);
    let reads = t.source().reads();
    let start = Instant::now();
    for &i in probes {
        let found = t
            .get_into(&s.keys[i as usize], &ReadOptions::default(), &mut val)
            .map(|l| l.is_found())
            .expect("get");
        assert!(found);
    }
    (start.elapsed(), t.source().reads() - reads)
}

/// One cache under one workload, kept between measurements (fresh-probe workloads reuse the
/// warmed table; `repeat` opens a cold one each time).
struct Runner<'a> {
    s: &'a Setup,
    w: Workload,
    cache: (CachePolicy, bool, &'static str),
    warm: Option<Table>,
    next_seed: u64,
}

impl<'a> Runner<'a> {
    fn new(s: &'a Setup, w: Workload, cache: (CachePolicy, bool, &'static str)) -> Self {
        Runner {
            s,
            w,
            cache,
            warm: None,
            next_seed: 1000,
        }
    }

    /// One measured pass: (time, block reads).
    fn measure(&mut self) -> (Duration, u64) {
        if self.w == Workload::Repeat {
            let t = open(&self.s.bytes, self.s.cache_bytes, self.cache);
            let probes = self.s.probes(self.w, 1);
            pass(self.s, &t, &probes);
            return pass(self.s, &t, &probes);
        }
        if self.warm.is_none() {
            let t = open(&self.s.bytes, self.s.cache_bytes, self.cache);
            for seed in 0..WARM_PASSES {
                pass(self.s, &t, &self.s.probes(self.w, 100 + seed));
            }
            self.warm = Some(t);
        }
        self.next_seed += 1;
        let probes = self.s.probes(self.w, self.next_seed);
        match &self.warm {
            Some(t) => pass(self.s, t, &probes),
            None => unreachable!("warmed above"),
        }
    }
}

fn criterion_part(c: &mut Criterion, s: &Setup) {
    for w in WORKLOADS {
        let mut g = c.benchmark_group(format!("cache_{w:?}").to_lowercase());
        g.sampling_mode(SamplingMode::Flat)
            .sample_size(10)
            .warm_up_time(Duration::from_millis(100))
            .measurement_time(Duration::from_secs(1))
            .throughput(Throughput::Elements(PASS as u64));
        for &cache in CACHES {
            let mut r = Runner::new(s, w, cache);
            g.bench_function(cache.2, |b| {
                b.iter_custom(|iters| (0..iters).map(|_| r.measure().0).sum())
            });
        }
        g.finish();
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn summary(s: &Setup) {
    println!(
        "\nside by side: {N} entries, {} data blocks, cache {} bytes (a quarter of them, \
         uncompressed), {PASS} hit lookups per pass, medians of {ROUNDS} rounds",
        s.blocks, s.cache_bytes
    );
    let mut runners: Vec<Runner> = WORKLOADS
        .iter()
        .flat_map(|&w| CACHES.iter().map(move |&c| (w, c)))
        .map(|(w, c)| Runner::new(s, w, c))
        .collect();
    let mut ns = vec![Vec::new(); runners.len()];
    let mut hits = vec![Vec::new(); runners.len()];
    for round in 0..ROUNDS {
        for j in 0..runners.len() {
            // Rotate the order of the caches within each workload every round.
            let (w, c) = (j / CACHES.len(), (j + round) % CACHES.len());
            let i = w * CACHES.len() + c;
            let (t, reads) = runners[i].measure();
            ns[i].push(t.as_nanos() as f64 / PASS as f64);
            hits[i].push(1.0 - reads as f64 / PASS as f64);
        }
    }
    println!("| workload | cache | ns/lookup | hit ratio | time / clock+links |");
    println!("|---|---|---:|---:|---:|");
    for (w, workload) in WORKLOADS.iter().enumerate() {
        let base = median(&mut ns[w * CACHES.len()].clone());
        for (c, cache) in CACHES.iter().enumerate() {
            let i = w * CACHES.len() + c;
            let t = median(&mut ns[i]);
            let h = median(&mut hits[i]);
            println!(
                "| {workload:?} | {} | {t:.0} | {h:.3} | {:.2} |",
                cache.2,
                t / base
            );
        }
    }
}

fn main() {
    let s = Setup::new();
    let mut c = Criterion::default().configure_from_args();
    criterion_part(&mut c, &s);
    c.final_summary();
    if std::env::args().all(|a| a != "--list") {
        summary(&s);
    }
}
