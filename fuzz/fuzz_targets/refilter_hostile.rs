//! Arbitrary bytes as a table, refiltered: `flags` (the first byte) chooses the policy
//! (LevelDB's bloom, the cache-local bloom, none), the helper threads (0, 1 or 2) and the
//! blocks per run (1, 2 or 64), so small inputs reach the multi-threaded path too. Nothing
//! may panic; every division of the work gives the same answer (the same bytes, or an error
//! of the same kind); a refiltered table opens and scans to the same entries as the input.
#![no_main]

use std::sync::Arc;

use bytes::Bytes;
use leveldb_table::Cursor;
use leveldb_table::{
    filter::BloomFilterPolicy, filter::CacheLocalBloomPolicy, FilterPolicy, ReadOptions,
    OpenOptions, TableReader,
};
use leveldb_table::{refilter::refilter_with, refilter::RefilterOptions};
use libfuzzer_sys::fuzz_target;

const MAX_STEPS: usize = 20_000;

/// The entries of `t` (at most MAX_STEPS), or None on an error.
fn entries(t: &TableReader<Bytes>) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut v = Vec::new();
    while it.valid() && v.len() < MAX_STEPS {
        v.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    if it.status().is_err() {
        return None;
    }
    Some(v)
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let Ok(table) = TableReader::open(Bytes::copy_from_slice(rest), OpenOptions::default())
    else {
        return;
    };
    let policy: Option<Arc<dyn FilterPolicy>> = match flags % 3 {
        0 => Some(Arc::new(BloomFilterPolicy::new(10))),
        1 => Some(Arc::new(CacheLocalBloomPolicy::new(9.5))),
        _ => None,
    };
    let threads = usize::from(flags / 3 % 3);
    let run_blocks = [1, 2, 64][usize::from(flags / 9 % 3)];
    let mut out = Vec::new();
    let r = refilter_with(
        &table,
        policy.clone(),
        &mut out,
        RefilterOptions::default().threads(threads).run_blocks(run_blocks),
    );
    let mut one = Vec::new();
    let r1 = refilter_with(
        &table,
        policy,
        &mut one,
        RefilterOptions::default().threads(0).run_blocks(64),
    );
    match (&r, &r1) {
        (Ok(_), Ok(_)) => assert!(out == one, "the division of the work changed the output"),
        (Err(a), Err(b)) => assert_eq!(
            std::mem::discriminant(a),
            std::mem::discriminant(b),
            "{a} / {b}"
        ),
        _ => panic!("one division failed, the other did not: {r:?} / {r1:?}"),
    }
    if r.is_ok() {
        let again = TableReader::open(Bytes::from(out), OpenOptions::default())
            .expect("a refiltered table opens");
        if let Some(want) = entries(&table) {
            assert_eq!(entries(&again), Some(want), "the same entries");
        }
    }
});
