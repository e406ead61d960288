//! Arbitrary bytes as one block: `raw::Block::from_bytes`, then `BlockIter` scans, seeks and
//! steps, and `Block::seek_value_range`, with the bytewise and the internal-key comparator.
//!
//! Input: `flags: u8 | block bytes`. Checked properties:
//! - a forward scan visits strictly increasing entry offsets, so at most `size / 3 + 1` steps;
//! - a backward scan visits strictly decreasing entry offsets;
//! - `seek_value_range` agrees with `BlockIter::seek` (same key and value) whenever it finds
//!   something, and finds something whenever the cursor does.
#![no_main]

use std::sync::Arc;

use leveldb_table::raw::Block;
use leveldb_table::Cursor;
use leveldb_table::{raw::internal_key::InternalKeyComparator, BytewiseComparator, Comparator};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&flags, body)) = data.split_first() else {
        return;
    };
    let Ok(block) = Block::from_bytes(body.to_vec()) else {
        return;
    };
    let internal = InternalKeyComparator::new(Arc::new(BytewiseComparator));
    let cmp: &dyn Comparator = if flags & 1 == 0 {
        &BytewiseComparator
    } else {
        &internal
    };
    let size = body.len();

    let mut keys: Vec<Vec<u8>> = Vec::new();
    let mut it = block.iter(cmp);
    it.seek_to_first();
    let mut steps = 0usize;
    let mut last: Option<usize> = None;
    while it.valid() {
        let off = it.entry_offset();
        if let Some(l) = last {
            assert!(off > l, "forward step went from entry {l} to {off}");
        }
        last = Some(off);
        steps += 1;
        assert!(
            steps <= size / 3 + 1,
            "forward scan longer than the block allows"
        );
        if keys.len() < 16 {
            keys.push(it.key().to_vec());
        }
        assert!(it.value().len() <= size);
        it.next();
    }
    let _ = it.status();

    it.seek_to_last();
    last = None;
    steps = 0;
    while it.valid() {
        let off = it.entry_offset();
        if let Some(l) = last {
            assert!(off < l, "backward step went from entry {l} to {off}");
        }
        last = Some(off);
        steps += 1;
        assert!(
            steps <= size + 1,
            "backward scan longer than the block allows"
        );
        if steps <= 4 {
            keys.push(it.key().to_vec());
        }
        it.prev();
    }

    // Targets: keys seen, their neighbours, windows of the input, edge keys.
    let mut targets = keys.clone();
    for k in &keys {
        let mut a = k.clone();
        a.push(0);
        targets.push(a);
        let mut b = k.clone();
        b.pop();
        targets.push(b);
    }
    targets.push(Vec::new());
    targets.push(vec![0xff; 12]);
    for w in body.chunks(61).take(6) {
        targets.push(w[..w.len().min(1 + (flags as usize >> 2))].to_vec());
    }

    let mut scratch = Vec::new();
    for t in &targets {
        it.seek(t);
        let cursor = if it.valid() {
            Some((it.key().to_vec(), it.value().to_vec()))
        } else {
            None
        };
        let cursor_err = it.status().is_err();
        match block.seek_value_range(cmp, t, &mut scratch) {
            Ok(Some(r)) => {
                assert!(r.start <= r.end && r.end <= size);
                let (k, v) = cursor
                    .clone()
                    .expect("seek_value_range found an entry, the cursor did not");
                assert_eq!(
                    k, scratch,
                    "seek_value_range and BlockIter::seek disagree on the key"
                );
                assert_eq!(&v[..], &block.data()[r], "… and on the value");
            }
            Ok(None) => assert!(
                cursor.is_none(),
                "the cursor found an entry, seek_value_range did not"
            ),
            Err(_) => assert!(cursor.is_none() || cursor_err),
        }
        // A few steps both ways from the seek position.
        for _ in 0..3 {
            it.next();
        }
        it.seek(t);
        for _ in 0..3 {
            it.prev();
        }
    }
});
