//! Point lookups past the block cache (`table/partial.rs`): a block the cache will not keep
//! is decoded only up to the lookup's key, through the outline (entry offsets) an earlier
//! read of the block left in the lookup record. Here the file changes under the reader after
//! the outlines are made, so the outlined decode meets damaged bytes.
//!
//! Input: `flags: u8 | rest`. Entries are cut from the first half of `rest` (at most 64 keys, internal keys,
//! some overwritten and deleted), built into a snappy table of small blocks with the
//! restart interval `flags` picks; a reader with a cache of one block and `fill_cache: false`
//! looks every key up twice (outlines made, then used), then the second half of `rest`
//! overwrites bytes of the file (pairs of offset, byte) and every key is looked up again,
//! with checksums on and off. Checked properties:
//! - nothing panics;
//! - before the damage, and with checksums on after it, every lookup answers as the
//!   entries say or (after the damage) fails naming a data block: damaged bytes are never
//!   data while checksums are verified.
#![no_main]

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, RwLock};

use bytes::Bytes;
use leveldb_table::raw::internal_key::{internal_key, ValueType};
use leveldb_table::{
    table::KeyFormat, BlockCache, Compression, Lookup, Options, RandomAccess, ReadOptions,
    OpenOptions, TableBuilder, TableReader,
};
use libfuzzer_sys::fuzz_target;

/// A file the target damages while a reader has it open.
struct Shared(Arc<RwLock<Vec<u8>>>);

impl RandomAccess for Shared {
    fn size(&self) -> io::Result<u64> {
        Ok(self.0.read().unwrap().len() as u64)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        let v = self.0.read().unwrap();
        let start = (offset as usize).min(v.len());
        let end = start.saturating_add(len).min(v.len());
        Ok(Bytes::copy_from_slice(&v[start..end]))
    }
}

/// User key -> newest version first: (sequence, value or deletion).
type Model = BTreeMap<Vec<u8>, Vec<(u64, Option<Vec<u8>>)>>;

fn expected(model: &Model, key: &[u8], snapshot: u64) -> Lookup {
    match model
        .get(key)
        .and_then(|v| v.iter().find(|(s, _)| *s <= snapshot))
    {
        None => Lookup::NotFound,
        Some((s, None)) => Lookup::Deleted { sequence: *s },
        Some((s, Some(v))) => Lookup::Found {
            value: v.clone(),
            sequence: Some(*s),
        },
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    // At most 64 keys: enough for a dozen blocks, few enough for many runs.
    let half = (rest.len() / 2).min(64 * 5);
    let mut model = Model::new();
    let mut seq = 1u64;
    for (i, c) in rest[..half].chunks(5).enumerate() {
        let mut k = c.to_vec();
        k.extend_from_slice(&(i as u16).to_be_bytes());
        let mut versions = vec![(seq, Some(c.repeat(1 + i % 9)))];
        if c[0] % 3 == 0 {
            versions.insert(0, (seq + 1, Some(c.repeat(2))));
        }
        if c[0] % 5 == 0 {
            versions.insert(0, (seq + 2, None));
        }
        seq += 3;
        model.insert(k, versions);
    }
    let restart_interval = [1, 2, 3, 16][usize::from(flags & 3)];
    let opts = Options::default()
        .compression(Compression::Snappy)
        .block_size(256)
        .block_restart_interval(restart_interval)
        .bloom(10)
        .keys(KeyFormat::Internal);
    let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
    for (k, versions) in &model {
        for (s, v) in versions {
            let (t, v) = match v {
                Some(v) => (ValueType::Value, v.as_slice()),
                None => (ValueType::Deletion, &[][..]),
            };
            b.add(&internal_key(k, *s, t), v).unwrap();
        }
    }
    let file = Arc::new(RwLock::new(b.finish().unwrap().0));
    let reader = |verify| {
        let ro = OpenOptions::default()
            .keys(KeyFormat::Internal)
            .block_cache(Some(Arc::new(BlockCache::new(300))))
            .verify_checksums(verify);
        TableReader::open(Shared(file.clone()), ro).unwrap()
    };
    let (checked, unchecked) = (reader(true), reader(false));
    let ro = ReadOptions::default().fill_cache(false);
    let probes: Vec<(Vec<u8>, u64)> = model
        .iter()
        .flat_map(|(k, v)| {
            let s = v.last().map_or(0, |x| x.0);
            let mut between = k.clone();
            between.push(0);
            [
                (k.clone(), u64::MAX >> 8),
                (k.clone(), s + 1),
                (k.clone(), s),
                (between, u64::MAX >> 8),
            ]
        })
        .collect();
    for _ in 0..2 {
        for (k, s) in &probes {
            assert_eq!(
                checked.get(k, &ro.snapshot(Some(*s))).unwrap(),
                expected(&model, k, *s)
            );
            assert_eq!(
                unchecked.get(k, &ro.snapshot(Some(*s))).unwrap(),
                expected(&model, k, *s)
            );
        }
    }
    {
        let mut f = file.write().unwrap();
        let len = f.len();
        for pair in rest[half..].chunks_exact(3) {
            let at = usize::from(u16::from_le_bytes([pair[0], pair[1]])) % len;
            f[at] = pair[2];
        }
    }
    for (k, s) in &probes {
        match checked.get(k, &ro.snapshot(Some(*s))) {
            Ok(got) => assert_eq!(got, expected(&model, k, *s), "damaged bytes became data"),
            Err(e) => assert!(e.block().is_some(), "an error without its block: {e}"),
        }
        let _ = unchecked.get(k, &ro.snapshot(Some(*s)));
    }
});
