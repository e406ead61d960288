//! The database view and the merged cursor moved every way (seeks, steps, turning around)
//! against a model (the sorted list of every version); `tests/db_backward.rs` reads the
//! directories LevelDB and goleveldb wrote both ways.

use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::db::engine::{MemCursor, MemTable, Origin};
use crate::db::files::BatchRecord;
use crate::internal_key::InternalKeyComparator;
use crate::util::comparator::BytewiseComparator;

/// One version: (user key, sequence, is a value, value).
type Version = (Vec<u8>, u64, bool, Vec<u8>);

fn icmp() -> InternalKeyComparator {
    InternalKeyComparator::new(Arc::new(BytewiseComparator))
}

fn table(versions: &[Version]) -> MemTable {
    let origin = Origin {
        log: 1,
        offset: 0,
        offset_in_batch: 0,
    };
    MemTable::new(
        icmp(),
        versions.iter().map(|(k, s, put, v)| {
            let r = BatchRecord {
                sequence: *s,
                kind: if *put {
                    ValueType::Value
                } else {
                    ValueType::Deletion
                },
                key: k,
                value: v,
                offset: 0,
            };
            (r, origin)
        }),
    )
}

fn merged<'a>(tables: &'a [MemTable]) -> MergingCursor<'a> {
    let children: Vec<Box<dyn Cursor + 'a>> = tables
        .iter()
        .map(|t| Box::new(MemCursor::new(t)) as Box<dyn Cursor + 'a>)
        .collect();
    MergingCursor::new(children, icmp())
}

/// The live (key, value) pairs at `snapshot`, in key order, from the versions themselves.
fn model_view(versions: &[Version], snapshot: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut newest: std::collections::BTreeMap<&[u8], &Version> = Default::default();
    for v in versions.iter().filter(|v| v.1 <= snapshot) {
        let e = newest.entry(&v.0).or_insert(v);
        if v.1 > e.1 {
            *e = v;
        }
    }
    newest
        .into_values()
        .filter(|v| v.2)
        .map(|v| (v.0.clone(), v.3.clone()))
        .collect()
}

fn backward(view: &mut DbIter<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while view.valid() {
        out.push((view.key().to_vec(), view.value().to_vec()));
        view.prev();
    }
    assert!(view.status().is_ok());
    out
}

/// Versions with distinct sequences, spread over 1-4 tables.
fn versions() -> impl Strategy<Value = (Vec<Version>, Vec<usize>)> {
    proptest::collection::vec(
        (
            proptest::collection::vec(0u8..4, 0..3),
            any::<bool>(),
            proptest::collection::vec(any::<u8>(), 0..3),
            0usize..4,
        ),
        0..60,
    )
    .prop_map(|raw| {
        let mut vs = Vec::new();
        let mut at = Vec::new();
        for (i, (k, put, v, t)) in raw.into_iter().enumerate() {
            vs.push((k, i as u64 + 1, put, v));
            at.push(t);
        }
        (vs, at)
    })
}

fn split(vs: &[Version], at: &[usize]) -> Vec<MemTable> {
    (0..4)
        .map(|t| {
            let mine: Vec<Version> = vs
                .iter()
                .zip(at)
                .filter(|(_, &a)| a == t)
                .map(|(v, _)| v.clone())
                .collect();
            table(&mine)
        })
        .collect()
}

proptest! {
    /// Backward from the end or from any key: the model's live pairs, last first, at any
    /// snapshot; the same as the forward view reversed.
    #[test]
    fn backward_view_is_the_model_reversed(
        (vs, at) in versions(),
        snap in 0u64..70,
        bound in proptest::collection::vec(0u8..4, 0..3),
    ) {
        let tables = split(&vs, &at);
        let want = model_view(&vs, snap);
        let mut v = DbIter::new(merged(&tables), snap);
        v.seek_to_last();
        let got = backward(&mut v);
        prop_assert_eq!(&got, &want.iter().rev().cloned().collect::<Vec<_>>());

        let mut f = DbIter::new(merged(&tables), snap);
        f.seek_to_first();
        let mut fwd = Vec::new();
        while f.valid() {
            fwd.push((f.key().to_vec(), f.value().to_vec()));
            f.next();
        }
        prop_assert_eq!(&fwd, &want);
        // As a std iterator, from the first key without a seek.
        let it: Vec<_> = DbIter::new(merged(&tables), snap)
            .into_iter()
            .collect::<Result<_>>()
            .unwrap();
        prop_assert_eq!(&it, &want);

        let mut v = DbIter::new(merged(&tables), snap);
        v.seek_before(&bound);
        let below: Vec<_> = want.iter().rev().filter(|(k, _)| *k < bound).cloned().collect();
        prop_assert_eq!(backward(&mut v), below);
    }

    /// The view moved any way (seeks both ways, steps, turning around at any key) is
    /// always on the model's live entry.
    #[test]
    fn view_moves_both_ways(
        (vs, at) in versions(),
        snap in 0u64..70,
        ops in proptest::collection::vec((0u8..6, proptest::collection::vec(0u8..4, 0..3)), 1..40),
    ) {
        let tables = split(&vs, &at);
        let want = model_view(&vs, snap);
        let mut v = DbIter::new(merged(&tables), snap);
        let mut pos: Option<usize> = None;
        for (op, key) in ops {
            let lb = want.partition_point(|(k, _)| *k < key);
            match op {
                0 => { v.seek_to_first(); pos = (!want.is_empty()).then_some(0); }
                1 => { v.seek_to_last(); pos = want.len().checked_sub(1); }
                2 => { v.seek(&key); pos = (lb < want.len()).then_some(lb); }
                3 => { v.seek_before(&key); pos = lb.checked_sub(1); }
                4 => if let Some(p) = pos { v.next(); pos = (p + 1 < want.len()).then_some(p + 1); },
                _ => if let Some(p) = pos { v.prev(); pos = p.checked_sub(1); },
            }
            prop_assert_eq!(v.valid(), pos.is_some());
            prop_assert!(v.status().is_ok());
            if let Some(p) = pos {
                prop_assert_eq!(v.key(), &want[p].0[..]);
                prop_assert_eq!(v.value(), &want[p].1[..]);
            }
        }
    }

    /// The merged cursor moved any way (seeks, next, prev, turning around) is always on
    /// the model's entry.
    #[test]
    fn merged_cursor_moves_both_ways(
        (vs, at) in versions(),
        ops in proptest::collection::vec((0u8..6, proptest::collection::vec(0u8..4, 0..3), 0u64..70), 1..40),
    ) {
        let tables = split(&vs, &at);
        let cmp = icmp();
        let mut all: Vec<Vec<u8>> = vs
            .iter()
            .map(|(k, s, put, _)| {
                let t = if *put { ValueType::Value } else { ValueType::Deletion };
                internal_key::internal_key(k, *s, t)
            })
            .collect();
        all.sort_by(|a, b| cmp.compare(a, b));
        let mut m = merged(&tables);
        // The model's position: Some(index into `all`) or None (not valid).
        let mut pos: Option<usize> = None;
        for (op, key, seq) in ops {
            let mut target = Vec::new();
            internal_key::lookup_key(&mut target, &key, seq);
            let lb = all.partition_point(|k| cmp.compare(k, &target) == Ordering::Less);
            match op {
                0 => { m.seek_to_first(); pos = (!all.is_empty()).then_some(0); }
                1 => { m.seek_to_last(); pos = all.len().checked_sub(1); }
                2 => { m.seek(&target); pos = (lb < all.len()).then_some(lb); }
                3 => { m.seek_before(&target); pos = lb.checked_sub(1); }
                4 => if let Some(p) = pos { m.next(); pos = (p + 1 < all.len()).then_some(p + 1); },
                _ => if let Some(p) = pos { m.prev(); pos = p.checked_sub(1); },
            }
            prop_assert_eq!(m.valid(), pos.is_some());
            if let Some(p) = pos {
                prop_assert_eq!(m.key(), &all[p][..]);
            }
        }
    }
}
