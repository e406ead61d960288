//! Tests of the external sorter: spilling, the budget, duplicates, and a property test
//! against a plain sort, through both merges.

use super::arena::key_cmp;
use super::*;

fn keys(n: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("k{:08}", (i * 7919) % n).into_bytes())
        .collect()
}

#[test]
fn small_budgets_spill_runs_and_merge_them_in_order() {
    for (budget, threaded) in [
        (1 << 30, true),
        (64 << 10, true),
        (64 << 10, false),
        (1000, true),
        (1000, false),
    ] {
        let mut s = ExternalSorter::new(budget);
        if !threaded {
            s = s.one_thread();
        }
        for k in keys(20_000) {
            let v = k.repeat(2);
            s.push(k, v).unwrap();
        }
        let spilled = s.runs();
        assert_eq!(spilled > 0, budget < 1 << 30);
        let out: Vec<(Vec<u8>, Vec<u8>)> = s.finish().unwrap().map(|r| r.unwrap()).collect();
        assert_eq!(out.len(), 20_000);
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(out.iter().all(|(k, v)| *v == k.repeat(2)));
    }
}

#[test]
fn the_arena_stays_within_the_budget() {
    let budget = 256 << 10;
    let mut s = ExternalSorter::new(budget);
    for k in keys(50_000) {
        s.push_slices(&k, &[7u8; 40]).unwrap();
        // The arena being filled holds half; the run being written the other half.
        assert!(2 * s.arena.charge() <= budget, "{} bytes", s.arena.charge());
    }
    assert!(s.runs() > 1);
    // An entry larger than the budget is taken alone.
    s.push_slices(b"big", &vec![1u8; budget * 2]).unwrap();
    let mut sorted = s.finish().unwrap();
    let mut n = 0;
    let mut big = false;
    while let Some((k, v)) = sorted.next_entry().unwrap() {
        big |= k == b"big" && v.len() == budget * 2;
        n += 1;
    }
    assert_eq!(n, 50_001);
    assert!(big);
}

#[test]
fn a_key_given_twice_is_an_error() {
    for (budget, threaded) in [(1 << 30, true), (100, true), (100, false)] {
        let mut s = ExternalSorter::new(budget);
        if !threaded {
            s = s.one_thread();
        }
        for k in [&b"b"[..], b"a", b"c", b"a"] {
            s.push(k.to_vec(), b"v".to_vec()).unwrap();
        }
        let r: Result<Vec<_>> = s.finish().unwrap().collect();
        assert!(r.unwrap_err().to_string().contains("given twice"));
    }
}

proptest::proptest! {
    #[test]
    fn key_order_is_bytewise(a in proptest::collection::vec(0u8..3, 0..20), b in proptest::collection::vec(0u8..3, 0..20)) {
        proptest::prop_assert_eq!(key_cmp(&a, &b), a.cmp(&b));
    }

    /// Any entries, any budget: the output is the input sorted, or an error exactly when a
    /// key repeats.
    #[test]
    fn sorts_like_a_sort(
        entries in proptest::collection::vec(
            (proptest::collection::vec(0u8..4, 0..6), proptest::collection::vec(proptest::num::u8::ANY, 0..20)),
            0..300,
        ),
        budget in 1usize..4096,
        threaded: bool,
    ) {
        let mut s = ExternalSorter::new(budget);
        if !threaded {
            s = s.one_thread();
        }
        for (k, v) in &entries {
            s.push_slices(k, v).unwrap();
        }
        let got: Result<Vec<(Vec<u8>, Vec<u8>)>> = s.finish().unwrap().collect();
        let mut want = entries.clone();
        want.sort_by(|a, b| a.0.cmp(&b.0));
        let dup = want.windows(2).any(|w| w[0].0 == w[1].0);
        match got {
            Ok(got) => {
                proptest::prop_assert!(!dup);
                proptest::prop_assert_eq!(got, want);
            }
            Err(e) => {
                proptest::prop_assert!(dup, "{}", e);
            }
        }
    }
}

#[test]
fn a_damaged_sort_run_is_corruption_naming_the_run_and_the_entry() {
    use std::io::{Seek, Write};
    let run = |bytes: &[u8]| {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f.rewind().unwrap();
        f
    };
    // Run 1: one whole entry ("a" -> "1"), then a key length of 5 with one byte left.
    let cut = run(&[1, b'a', 1, b'1', 5, b'k']);
    // Run 2: a length that is not a varint32 (five continuation bytes).
    let bad_len = run(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    let good = run(&[1, b'b', 1, b'2']);
    let e = Merger::open([good, bad_len].into_iter()).err().unwrap();
    assert!(e.is_corruption(), "{e}");
    assert!(
        matches!(&e, Error::Corruption { file: Some(f), offset: Some(0), what }
            if f == "sort run 1" && what.contains("not a varint32")),
        "{e:?}"
    );
    let mut m = Merger::open([cut].into_iter()).unwrap();
    let mut first = None;
    let e = loop {
        match m.next() {
            Ok(Some((k, _))) => first = Some(k.to_vec()),
            Ok(None) => panic!("the cut entry must be an error"),
            Err(e) => break e,
        }
    };
    assert_eq!(first.as_deref(), Some(&b"a"[..]));
    assert_eq!(
        e.to_string(),
        "corruption in sort run 0 at offset 4: the run ends inside an entry"
    );
}
