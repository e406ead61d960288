//! `CountingBloomFilter`: no false negatives under add/remove sequences (property tests),
//! refused removals change nothing, and the measured false-positive rate at 1% and 0.1%.

use std::collections::HashMap;

use proptest::prelude::*;
use sst_bloom::CountingBloomFilter;

#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    Remove(u8),
    RemoveNeverAdded(u16),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<u8>().prop_map(Op::Add),
        2 => any::<u8>().prop_map(Op::Remove),
        1 => any::<u16>().prop_map(Op::RemoveNeverAdded),
    ]
}

fn key(i: u8) -> Vec<u8> {
    format!("key-{i}").into_bytes()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every key added more often than removed answers "maybe", whatever the order, with
    /// filters small enough that counters collide and saturate.
    #[test]
    fn no_false_negative_for_keys_still_present(
        capacity in 1u64..64,
        ops in proptest::collection::vec(op(), 1..400),
    ) {
        let mut f = CountingBloomFilter::for_capacity(capacity, 0.01);
        let mut model: HashMap<u8, u32> = HashMap::new();
        for op in ops {
            match op {
                Op::Add(k) => {
                    f.add(&key(k));
                    *model.entry(k).or_default() += 1;
                }
                Op::Remove(k) => {
                    // Only keys the model holds are removed (removing others is the misuse
                    // the filter can only partly detect).
                    if let Some(n) = model.get_mut(&k).filter(|n| **n > 0) {
                        prop_assert!(f.remove(&key(k)), "present key refused");
                        *n -= 1;
                    }
                }
                Op::RemoveNeverAdded(k) => {
                    let absent = format!("never-{k}").into_bytes();
                    let before = f.clone();
                    if !f.may_contain(&absent) {
                        prop_assert!(!f.remove(&absent));
                        prop_assert_eq!(&f, &before, "a refused removal changed the filter");
                    }
                }
            }
            for (k, n) in &model {
                if *n > 0 {
                    prop_assert!(f.may_contain(&key(*k)), "false negative for key-{}", k);
                }
            }
        }
    }
}

#[test]
fn removing_everything_empties_the_filter() {
    let mut f = CountingBloomFilter::for_capacity(1000, 0.01);
    let empty = f.clone();
    for i in 0..1000u32 {
        f.add(&i.to_le_bytes());
    }
    for i in 0..1000u32 {
        assert!(f.remove(&i.to_le_bytes()));
    }
    assert_eq!(f, empty);
}

/// False positives on `absent` keys after adding `n` keys to a filter sized for `n`.
fn measured_fp(n: u32, fp: f64, absent: u32) -> f64 {
    let mut f = CountingBloomFilter::for_capacity(u64::from(n), fp);
    for i in 0..n {
        f.add(format!("in:{i}").as_bytes());
    }
    for i in 0..n {
        assert!(f.may_contain(format!("in:{i}").as_bytes()));
    }
    let hits = (0..absent)
        .filter(|i| f.may_contain(format!("out:{i}").as_bytes()))
        .count();
    hits as f64 / f64::from(absent)
}

#[test]
fn measured_fp_at_one_percent() {
    let rate = measured_fp(100_000, 0.01, 200_000);
    assert!(
        rate > 0.005 && rate < 0.0125,
        "measured {rate} at a 1% target"
    );
}

#[test]
fn measured_fp_at_a_tenth_of_a_percent() {
    let rate = measured_fp(100_000, 0.001, 500_000);
    assert!(
        rate > 0.0004 && rate < 0.00125,
        "measured {rate} at a 0.1% target"
    );
}

/// The counting filter is sized exactly as the table crate's `BloomFilter::for_capacity` (the
/// shared math of `hash.rs`): the same number of positions (up to the byte rounding) and k.
#[test]
fn sizing_matches_the_table_crates_bloom_filter() {
    for &(n, eps) in &[
        (1u64, 0.01),
        (1000, 0.01),
        (12345, 0.001),
        (100, 0.3),
        (7, 1e-12),
    ] {
        let table = leveldb_table::raw::bloom::BloomFilter::for_capacity(n as usize, eps);
        let ours = CountingBloomFilter::for_capacity(n, eps);
        // for_capacity rounds the bit count up to whole bytes.
        assert_eq!(
            table.bits() as u64,
            ours.counters().div_ceil(8) * 8,
            "n={n} eps={eps}"
        );
        assert_eq!(u32::from(table.k()), ours.k(), "n={n} eps={eps}");
    }
}

#[test]
fn counting_file_round_trips_and_damage_is_an_error_with_an_offset() {
    let mut f = CountingBloomFilter::for_capacity(501, 0.02);
    for i in 0..400u32 {
        f.add(&i.to_le_bytes());
    }
    assert!(f.remove(&7u32.to_le_bytes()));
    let bytes = f.to_bytes();
    let back = CountingBloomFilter::from_bytes(&bytes).expect("round trip");
    assert_eq!(back, f);
    assert_eq!((back.capacity(), back.fp_rate()), (501, 0.02));
    for at in [0usize, 9, 20, 40, bytes.len() / 2, bytes.len() - 1] {
        let mut bad = bytes.clone();
        bad[at] ^= 0x10;
        let e = CountingBloomFilter::from_bytes(&bad).unwrap_err();
        assert!(
            matches!(e, sst_bloom::Error::BadFile { .. }),
            "flip at {at}: {e}"
        );
    }
    for len in [0usize, 7, 12, bytes.len() - 1] {
        assert!(
            CountingBloomFilter::from_bytes(&bytes[..len]).is_err(),
            "cut at {len}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.bloom");
    f.save(&path).unwrap();
    assert_eq!(CountingBloomFilter::load(&path).unwrap(), f);
}
