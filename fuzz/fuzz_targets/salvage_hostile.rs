//! Salvage of damaged tables: `salvage::salvage_bytes` on any bytes, and on a real table the
//! input damages.
//!
//! Input: `mode: u8 | rest`. Mode even: `rest` is the file. Mode odd: a table is built from
//! entries drawn from `rest` (snappy or none, bloom), then `rest`'s tail overwrites bytes of it
//! (pairs of offset, byte) and sometimes cuts it. Checked properties:
//! - nothing panics; every damaged stretch and every block lies inside the file;
//! - with the built table, every salvaged entry, through the index (`salvage_table`, when the
//!   damaged table still opens) or by checksum (`salvage_bytes`), is one of the entries written:
//!   salvage never turns damaged bytes into data.
#![no_main]

use std::collections::BTreeMap;

use leveldb_table::{
    table::salvage::salvage_bytes, table::salvage::salvage_table, table::salvage::Salvaged,
};
use leveldb_table::{
    table::CompressionProfile, Compression, Options, ReadOptions, OpenOptions, TableBuilder,
    TableReader,
};
use libfuzzer_sys::fuzz_target;

fn check(items: &[Salvaged], len: usize, written: Option<&BTreeMap<Vec<u8>, Vec<u8>>>) {
    for s in items {
        match s {
            Salvaged::Entries {
                handle, entries, ..
            } => {
                assert!(
                    handle.offset + handle.size + 5 <= len as u64,
                    "block past the end"
                );
                if let Some(w) = written {
                    for (k, v) in entries {
                        assert_eq!(w.get(k), Some(v), "salvage made up an entry");
                    }
                }
            }
            Salvaged::Damaged { offset, len: l, .. } => {
                assert!(*offset <= len as u64);
                if let Some(l) = l {
                    assert!(offset + l <= len as u64 + 5 + u64::from(u32::MAX));
                }
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        check(
            &salvage_bytes(rest, CompressionProfile::default()),
            rest.len(),
            None,
        );
        return;
    }
    // Entries: keys and values cut from the first half of `rest`.
    let half = rest.len() / 2;
    let mut written = BTreeMap::new();
    for (i, c) in rest[..half].chunks(7).enumerate() {
        let mut k = c.to_vec();
        k.extend_from_slice(&(i as u32).to_be_bytes());
        written.insert(k, c.repeat(1 + (i % 5)));
    }
    let compression = if mode & 2 == 0 {
        Compression::Snappy
    } else {
        Compression::None
    };
    let opts = Options::default()
        .compression(compression)
        .block_size(64)
        .bloom(10);
    let Ok(mut b) = TableBuilder::new(Vec::new(), &opts) else {
        return;
    };
    for (k, v) in &written {
        b.add(k, v).expect("sorted unique keys");
    }
    let Ok((mut file, _)) = b.finish() else {
        return;
    };
    // Damage: (offset, byte) pairs from the second half; mode bit 2 also cuts the file.
    for p in rest[half..].chunks_exact(3) {
        let at = u16::from_le_bytes([p[0], p[1]]) as usize % file.len().max(1);
        if let Some(x) = file.get_mut(at) {
            *x ^= p[2] | 1;
        }
    }
    if mode & 4 != 0 && !file.is_empty() {
        let cut = usize::from(mode >> 3) * file.len() / 32;
        file.truncate(file.len() - cut.min(file.len()));
    }
    check(
        &salvage_bytes(&file, CompressionProfile::default()),
        file.len(),
        Some(&written),
    );
    if let Ok(t) = TableReader::open(file.clone(), OpenOptions::default()) {
        check(
            &salvage_table(&t, ReadOptions::default()),
            file.len(),
            Some(&written),
        );
    }
});
