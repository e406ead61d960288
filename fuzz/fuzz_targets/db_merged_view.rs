//! The merged, snapshot-aware view against a model: writes (puts and deletions with
//! increasing sequence numbers) are spread over several sorted sources (memtables standing
//! for the log, level-0 tables and levels), merged with `MergingCursor`, and read through
//! `DbIter` at a snapshot; the result must equal a model that applies the writes with a
//! sequence <= the snapshot in order. Seeks are checked too.
#![no_main]

use std::collections::BTreeMap;
use std::sync::Arc;

use arbitrary::Arbitrary;
use leveldb_table::db::files::BatchRecord;
use leveldb_table::{db::engine::DbIter, db::engine::MergingCursor};
use leveldb_table::{db::engine::MemCursor, Cursor};
use leveldb_table::{db::engine::MemTable, db::engine::Origin};
use leveldb_table::{
    raw::internal_key::InternalKeyComparator, raw::internal_key::ValueType, BytewiseComparator,
};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Write {
    key: u8,
    delete: bool,
    source: u8,
    value: u8,
}

#[derive(Arbitrary, Debug)]
struct Input {
    writes: Vec<Write>,
    snapshot: u16,
    seeks: Vec<u8>,
}

fuzz_target!(|input: Input| {
    let writes = &input.writes[..input.writes.len().min(400)];
    let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
    let keys: Vec<Vec<u8>> = (0..=255u8).map(|k| vec![b'k', k % 37]).collect();
    let values: Vec<Vec<u8>> = writes
        .iter()
        .map(|w| vec![w.value; 1 + w.value as usize % 5])
        .collect();
    let mut sources: Vec<Vec<(BatchRecord<'_>, Origin)>> = (0..4).map(|_| Vec::new()).collect();
    for (i, w) in writes.iter().enumerate() {
        let r = BatchRecord {
            sequence: i as u64 + 1,
            kind: if w.delete {
                ValueType::Deletion
            } else {
                ValueType::Value
            },
            key: &keys[w.key as usize],
            value: if w.delete { &[] } else { &values[i] },
            offset: 0,
        };
        let o = Origin {
            log: 0,
            offset: 0,
            offset_in_batch: 0,
        };
        sources[(w.source % 4) as usize].push((r, o));
    }
    let mems: Vec<MemTable> = sources
        .into_iter()
        .map(|s| MemTable::new(icmp.clone(), s))
        .collect();
    let snapshot = u64::from(input.snapshot) % (writes.len() as u64 + 2);
    // The model: writes with sequence <= snapshot, applied in order.
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (i, w) in writes.iter().enumerate().take(snapshot as usize) {
        if w.delete {
            model.remove(&keys[w.key as usize]);
        } else {
            model.insert(keys[w.key as usize].clone(), values[i].clone());
        }
    }
    fn view<'a>(mems: &'a [MemTable], icmp: &InternalKeyComparator, snapshot: u64) -> DbIter<'a> {
        let children: Vec<Box<dyn Cursor + 'a>> = mems
            .iter()
            .map(|m| Box::new(MemCursor::new(m)) as Box<dyn Cursor + 'a>)
            .collect();
        DbIter::new(MergingCursor::new(children, icmp.clone()), snapshot)
    }
    let mut v = view(&mems, &icmp, snapshot);
    v.seek_to_first();
    let mut got = BTreeMap::new();
    let mut last: Option<Vec<u8>> = None;
    while v.valid() {
        if let Some(l) = &last {
            assert!(l.as_slice() < v.key(), "keys out of order");
        }
        assert!(v.sequence() <= snapshot);
        last = Some(v.key().to_vec());
        got.insert(v.key().to_vec(), v.value().to_vec());
        v.next();
    }
    assert!(v.status().is_ok());
    assert_eq!(got, model);
    for &s in input.seeks.iter().take(16) {
        let target = vec![b'k', s % 40];
        let mut v = view(&mems, &icmp, snapshot);
        v.seek(&target);
        let want = model.range(target.clone()..).next();
        match want {
            Some((k, val)) => {
                assert!(v.valid());
                assert_eq!((v.key(), v.value()), (k.as_slice(), val.as_slice()));
            }
            None => assert!(!v.valid()),
        }
    }
});
