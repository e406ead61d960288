//! A Chrome IndexedDB directory being written, replayed under readers: the history a real
//! Chromium left while it wrote, flushed and compacted (`testdata/live/chromium_history.zst`,
//! made by `tools/gen_idb_live_history.sh`: 106 instants, 16 tables and the logs deleted
//! along the way). For every state, two `Db`s are opened in it, one is read half way, then
//! the directory moves on as Chromium moved it (new tables, logs appended, rotated and
//! deleted, tables deleted by compactions) until a table of the state is gone, and the
//! reads go on: the one half way ends with exactly what a read of that state alone gives,
//! and the other, begun only now, looks keys up and scans that state too.

use std::path::PathBuf;

use leveldb_table::db::reader::Db;
use leveldb_table::ReadOptions;

#[path = "../../tests/live/history.rs"]
mod history;

use history::History;
use leveldb_table::Cursor;

type Rows = Vec<(Vec<u8>, Vec<u8>, u64)>;

fn chromium() -> History {
    History::load(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/live/chromium_history.zst"),
    )
}

/// The whole live view of `db`, with each entry's sequence.
fn scan(db: &Db) -> Rows {
    let mut v = db.iter(&ReadOptions::default());
    v.seek_to_first();
    let mut rows = Vec::new();
    while v.valid() {
        rows.push((v.key().to_vec(), v.value().to_vec(), v.sequence()));
        v.next();
    }
    v.status().unwrap_or_else(|e| panic!("{e}"));
    rows
}

/// The names of `db`'s live tables.
fn tables(db: &Db) -> Vec<String> {
    (0..7)
        .flat_map(|l| db.level_files(l).iter().map(|f| f.number))
        .filter_map(|n| db.table_name(n).map(str::to_string))
        .collect()
}

#[test]
fn a_read_begun_in_any_state_of_chromium_s_history_ends_in_that_state() {
    let h = chromium();
    let mut read_through_deletion = 0;
    for k in 0..h.states.len() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(&h.dir);
        h.materialize(&dir, k);
        // What state k holds: a read of it alone.
        let want = scan(&Db::open(&dir, sst_chrome::db_options()).unwrap());
        assert!(!want.is_empty() || k == 0);

        // Two reads of state k: one opened and not begun yet, one read half way.
        let fresh = Db::open(&dir, sst_chrome::db_options()).unwrap();
        let db = Db::open(&dir, sst_chrome::db_options()).unwrap();
        assert_eq!(db.open_attempts(), 1);
        let held = tables(&db);
        let mut v = db.iter(&ReadOptions::default());
        v.seek_to_first();
        let mut rows = Rows::new();
        while v.valid() && rows.len() < want.len() / 2 {
            rows.push((v.key().to_vec(), v.value().to_vec(), v.sequence()));
            v.next();
        }
        // Chromium goes on until a table of the Db is deleted (or its history ends).
        let mut at = k;
        while at + 1 < h.states.len() && held.iter().all(|t| dir.join(t).exists()) {
            h.advance(&dir, at, at + 1);
            at += 1;
        }
        let deleted = held.iter().any(|t| !dir.join(t).exists());
        read_through_deletion += usize::from(deleted);
        while v.valid() {
            rows.push((v.key().to_vec(), v.value().to_vec(), v.sequence()));
            v.next();
        }
        v.status().unwrap_or_else(|e| panic!("state {k}: {e}"));
        assert!(
            rows == want,
            "state {k}, read on in state {at}: {} rows, not the {} of state {k}",
            rows.len(),
            want.len()
        );
        // The read not begun: lookups first (every seventh key, with its sequence), then
        // a whole scan, all of state k.
        for (key, value, seq) in want.iter().step_by(7) {
            let got = fresh
                .get(key, &ReadOptions::default())
                .unwrap_or_else(|e| panic!("state {k}, read in state {at}: {e}"));
            assert_eq!(got.value(), Some(&value[..]), "state {k}");
            assert_eq!(got.sequence(), Some(*seq), "state {k}");
        }
        assert!(scan(&fresh) == want, "state {k}, read in state {at}");
        // And the directory now reads as state `at` does.
        let tmp2 = tempfile::tempdir().unwrap();
        h.materialize(&tmp2.path().join("d"), at);
        assert!(
            scan(&Db::open(&dir, sst_chrome::db_options()).unwrap())
                == scan(&Db::open(tmp2.path().join("d"), sst_chrome::db_options()).unwrap()),
            "state {at}, reached by replay"
        );
    }
    // Every state but the last few has a table deleted under its read.
    assert!(
        read_through_deletion * 10 >= h.states.len() * 8,
        "{read_through_deletion} of {} reads had a table deleted under them",
        h.states.len()
    );
}
