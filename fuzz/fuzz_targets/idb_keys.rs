//! Any bytes as Chrome IndexedDB keys and values: three keys split from the input are
//! compared with `IdbComparator`, decoded for display and encoded back.
//!
//! Checked properties: nothing panics or overflows the stack (arrays nested without bound);
//! the order is antisymmetric and transitive on the three keys; a malformed key sorts after
//! a well-formed one; a decoded record key re-encodes to a key the comparator calls equal.
#![no_main]

use std::cmp::Ordering;

use leveldb_table::Comparator;
use libfuzzer_sys::fuzz_target;
use sst_chrome::idb::{
    decode_exists_value, decode_key, decode_record_value, is_well_formed, IdbComparator, KeyBody,
};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0xfd);
    let a = parts.next().unwrap_or(&[]);
    let b = parts.next().unwrap_or(&[]);
    let c = parts.next().unwrap_or(&[]);
    let cmp = |x: &[u8], y: &[u8]| IdbComparator.compare(x, y);
    for (x, y) in [(a, b), (b, c), (a, c)] {
        assert_eq!(cmp(x, y), cmp(y, x).reverse());
        if is_well_formed(x) && !is_well_formed(y) {
            assert_eq!(cmp(x, y), Ordering::Less);
        }
    }
    let mut v = [a, b, c];
    v.sort_by(|x, y| cmp(x, y));
    assert!(cmp(v[0], v[2]).is_le());
    for k in [a, b, c] {
        if let Some(d) = decode_key(k) {
            let _ = d.to_string();
            if let KeyBody::Record(Some(key)) = &d.body {
                let again = key.record_key(d.prefix.database, d.prefix.store);
                // The same record to Chromium: equal prefix ids, equal key (bytes after the
                // key, or a wider id encoding, are not compared).
                if is_well_formed(k) {
                    assert_eq!(cmp(&again, k), Ordering::Equal);
                }
            }
        }
        let _ = decode_record_value(k);
        let _ = decode_exists_value(k);
    }
});
