//! The engine against a `BTreeMap` model (proptest, many seeds): random puts, deletions,
//! batches, flushes, reopens and snapshots, with tiny memtables and tables so that flushes
//! and compactions happen all along; lookups, forward and backward scans over ranges, and
//! cursors that change direction, each checked against the model.

mod common;

use std::ops::Bound;

use common::*;
use leveldb_table::db::files::WriteBatch;
use mini_lsm::{Db, DbIter, Options};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Put(u16, u8),
    Delete(u16),
    Batch(Vec<(u16, Option<u8>)>),
    Get(u16),
    Scan(u16, u16),
    ScanBack(Option<u16>, Option<u16>),
    /// A cursor over a range, moved by the steps (true: next, false: prev) after a seek.
    Walk(u16, u16, u16, Vec<bool>),
    Snapshot,
    ReadSnapshot(u16),
    Flush,
    CompactRange(u16, u16),
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let key = 0u16..400;
    let end = prop::option::of(0u16..410);
    prop_oneof![
        40 => (key.clone(), any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        10 => key.clone().prop_map(Op::Delete),
        5 => prop::collection::vec((key.clone(), prop::option::of(any::<u8>())), 1..8).prop_map(Op::Batch),
        10 => key.clone().prop_map(Op::Get),
        3 => (key.clone(), key.clone()).prop_map(|(a, b)| Op::Scan(a.min(b), a.max(b))),
        3 => (end.clone(), end).prop_map(|(a, b)| match (a, b) {
            (Some(a), Some(b)) => Op::ScanBack(Some(a.min(b)), Some(a.max(b))),
            (a, b) => Op::ScanBack(a, b),
        }),
        4 => (key.clone(), key.clone(), key.clone(), prop::collection::vec(any::<bool>(), 0..40))
            .prop_map(|(a, b, s, steps)| Op::Walk(a.min(b), a.max(b), s, steps)),
        2 => Just(Op::Snapshot),
        4 => key.clone().prop_map(Op::ReadSnapshot),
        1 => Just(Op::Flush),
        1 => (key.clone(), key).prop_map(|(a, b)| Op::CompactRange(a.min(b), a.max(b))),
        1 => Just(Op::Reopen),
    ]
}

fn k(n: u16) -> Vec<u8> {
    format!("k{n:04}").into_bytes()
}

fn v(n: u16, x: u8) -> Vec<u8> {
    // Values of 1-300 bytes: tables fill after some dozens of writes.
    vec![x; 1 + (usize::from(n) * 7 + usize::from(x)) % 300]
}

fn bound(n: Option<u16>, f: fn(Vec<u8>) -> Bound<Vec<u8>>) -> Bound<Vec<u8>> {
    n.map_or(Bound::Unbounded, |n| f(k(n)))
}

/// Where a cursor over `[lo, hi)` of `model` is after `seek(s)` then `steps`, as the model
/// says: the key's index in the range, or `None` off either end (where it stays).
fn walk_model(model: &Model, lo: u16, hi: u16, s: u16, steps: &[bool]) -> Vec<Option<Vec<u8>>> {
    let keys: Vec<Vec<u8>> = model.range(k(lo)..k(hi)).map(|(x, _)| x.clone()).collect();
    let mut at = keys.iter().position(|x| *x >= k(s));
    let mut seen = vec![at.map(|i| keys[i].clone())];
    for &forward in steps {
        at = match (at, forward) {
            (None, _) => None,
            (Some(i), true) => Some(i + 1).filter(|&j| j < keys.len()),
            (Some(i), false) => i.checked_sub(1),
        };
        seen.push(at.map(|i| keys[i].clone()));
    }
    seen
}

fn walk_engine(it: &mut DbIter, s: u16, steps: &[bool]) -> Vec<Option<Vec<u8>>> {
    let at = |it: &DbIter| it.valid().then(|| it.key().to_vec());
    it.seek(&k(s));
    let mut seen = vec![at(it)];
    for &forward in steps {
        if it.valid() {
            match forward {
                true => it.next(),
                false => it.prev(),
            }
        }
        seen.push(at(it));
    }
    it.status().unwrap();
    seen
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Random operations against a BTreeMap, with snapshots (a frozen copy of the model),
    /// reopens (a snapshot does not survive one), flushes, compact-range and background
    /// compactions; scans both ways and cursors changing direction.
    #[test]
    fn the_engine_agrees_with_a_btreemap(ops in prop::collection::vec(op(), 1..400)) {
        let tmp = tempfile::tempdir().unwrap();
        let opts = Options { write_buffer_size: 2 << 10, max_file_size: 2 << 10, level1_max_bytes: 8 << 10, max_open_files: 20, mmap_reads: false, ..Options::default() };
        let mut db = Db::open(tmp.path(), opts.clone()).unwrap();
        let mut model = Model::new();
        let mut snap: Option<(mini_lsm::Snapshot, Model)> = None;
        for op in ops {
            match op {
                Op::Put(n, x) => { db.put(&k(n), &v(n, x)).unwrap(); model.insert(k(n), v(n, x)); }
                Op::Delete(n) => { db.delete(&k(n)).unwrap(); model.remove(&k(n)); }
                Op::Batch(items) => {
                    let mut b = WriteBatch::new();
                    for (n, x) in items {
                        match x {
                            Some(x) => { b.put(&k(n), &v(n, x)); model.insert(k(n), v(n, x)); }
                            None => { b.delete(&k(n)); model.remove(&k(n)); }
                        }
                    }
                    db.write(&mut b).unwrap();
                }
                Op::Get(n) => prop_assert_eq!(db.get(&k(n)).unwrap(), model.get(&k(n)).cloned()),
                Op::Scan(a, b) => {
                    let got: Vec<_> = db.iter(Some(&k(a)), Some(&k(b)), None).unwrap().map(Result::unwrap).collect();
                    let want: Vec<_> = model.range(k(a)..k(b)).map(|(x, y)| (x.clone(), y.clone())).collect();
                    prop_assert_eq!(got, want);
                }
                Op::ScanBack(a, b) => {
                    let (lo, hi) = (a.map(k), b.map(k));
                    let got: Vec<_> = db.iter_rev(lo.as_deref(), hi.as_deref(), None).unwrap().map(Result::unwrap).collect();
                    let want: Vec<_> = model
                        .range((bound(a, Bound::Included), bound(b, Bound::Excluded)))
                        .rev()
                        .map(|(x, y)| (x.clone(), y.clone()))
                        .collect();
                    prop_assert_eq!(got, want);
                }
                Op::Walk(lo, hi, s, steps) => {
                    let mut it = db.iter(Some(&k(lo)), Some(&k(hi)), None).unwrap();
                    prop_assert_eq!(walk_engine(&mut it, s, &steps), walk_model(&model, lo, hi, s, &steps));
                }
                Op::Snapshot => snap = Some((db.snapshot(), model.clone())),
                Op::ReadSnapshot(n) => {
                    if let Some((s, frozen)) = &snap {
                        prop_assert_eq!(db.get_at(&k(n), s).unwrap(), frozen.get(&k(n)).cloned());
                        let got: Vec<_> = db.iter_rev(None, Some(&k(n)), Some(s)).unwrap().map(Result::unwrap).collect();
                        let want: Vec<_> = frozen.range(..k(n)).rev().map(|(x, y)| (x.clone(), y.clone())).collect();
                        prop_assert_eq!(got, want);
                    }
                }
                Op::Flush => db.flush().unwrap(),
                Op::CompactRange(a, b) => db.compact_range(Some(&k(a)), Some(&k(b))).unwrap(),
                Op::Reopen => {
                    snap = None;
                    drop(db);
                    db = Db::open(tmp.path(), opts.clone()).unwrap();
                }
            }
        }
        if let Some((s, frozen)) = &snap {
            let got: Vec<_> = db.iter(None, None, Some(s)).unwrap().map(Result::unwrap).collect();
            prop_assert_eq!(got, frozen.clone().into_iter().collect::<Vec<_>>());
        }
        drop(snap);
        db.wait_for_compactions().unwrap();
        prop_assert_eq!(scan(&db), model.clone().into_iter().collect::<Vec<_>>());
        let back: Vec<_> = db.iter_rev(None, None, None).unwrap().map(Result::unwrap).collect();
        prop_assert_eq!(back, model.clone().into_iter().rev().collect::<Vec<_>>());
        drop(db);
        let db = Db::open(tmp.path(), opts).unwrap();
        prop_assert_eq!(scan(&db), model.into_iter().collect::<Vec<_>>());
    }
}
