//! Opening while the owner changes the directory, step by step: the history C++ LevelDB
//! left while it wrote, flushed and compacted (`testdata/live/leveldb_history.zst`, made by
//! `tools/gen_leveldb_live_history.sh`) is replayed between the steps of an attempt
//! (`live::Step`), every interleaving of two of the owner's moves with the steps, from every
//! state where the owner deletes a file: each open succeeds and reads the writer's state
//! after one of its batches (known in closed form), and those that met a table deleted
//! before they held it read again. A directory whose CURRENT changes
//! under every attempt ends in `Error::OwnerRewriting`.

use std::path::{Path, PathBuf};

use super::live::{Step, AT_STEP, MAX_ATTEMPTS};
use super::{Db, DbOptions};
use crate::error::Error;
use crate::options::ReadOptions;

#[path = "../../../tests/live/history.rs"]
mod history;

use crate::cursor::Cursor;
use history::History;

const STEPS: [Step; 4] = [
    Step::Listed,
    Step::ManifestRead,
    Step::TablesHeld,
    Step::Relisted,
];

fn leveldb() -> History {
    History::load(
        &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/live/leveldb_history.zst"),
    )
}

/// The whole live view of `db` and its sequence.
fn scan(db: &Db) -> (u64, Rows) {
    let mut v = db.iter(&ReadOptions::default());
    v.seek_to_first();
    let mut rows = Vec::new();
    while v.valid() {
        rows.push((v.key().to_vec(), v.value().to_vec()));
        v.next();
    }
    v.status().unwrap_or_else(|e| panic!("{e}"));
    (db.last_sequence(), rows)
}

type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// What the writer of the history (`tools/gen_leveldb_live_history.sh`) left after batch
/// `i`: batch i sets `counter` to i and makes 10 writes, write t = 10i + j to key
/// `k%05d` % (t mod 1500), a deletion when (i + j) mod 4 == 0, else `value t ` 8 times.
fn state(i: u64) -> Rows {
    let mut out = vec![(b"counter".to_vec(), i.to_string().into_bytes())];
    let last = i * 10 + 9;
    for k in 0..1500u64 {
        let Some(t) = last.checked_sub((last + 1500 - k) % 1500) else {
            continue;
        };
        if t < 10 || (t / 10 + t % 10) % 4 == 0 {
            continue;
        }
        out.push((
            format!("k{k:05}").into_bytes(),
            format!("value {t} ").repeat(8).into_bytes(),
        ));
    }
    out.sort();
    out
}

/// The batch a read is of, checked: its rows are the state after that batch, and its
/// sequence is that batch's last (11 records a batch).
fn batch_of((seq, rows): &(u64, Rows), what: &str) -> u64 {
    if rows.is_empty() {
        assert_eq!(*seq, 0, "{what}");
        return 0;
    }
    let i: u64 = rows
        .iter()
        .find(|(k, _)| k == b"counter")
        .and_then(|(_, v)| std::str::from_utf8(v).ok()?.parse().ok())
        .unwrap_or_else(|| panic!("{what}: no counter"));
    assert!(*rows == state(i), "{what}: not the state after batch {i}");
    assert_eq!(*seq, 11 * i, "{what}: the sequence of batch {i}");
    i
}

/// Opens `dir` with `at` running at every step of every attempt.
fn open_with_steps(dir: &Path, at: impl FnMut(Step) + 'static) -> crate::Result<Db> {
    AT_STEP.with(|h| *h.borrow_mut() = Some(Box::new(at)));
    let db = Db::open(dir, DbOptions::default());
    AT_STEP.with(|h| *h.borrow_mut() = None);
    db
}

#[test]
fn every_interleaving_of_the_owner_s_moves_with_an_opening_reads_one_state() {
    let h = std::rc::Rc::new(leveldb());
    let n = h.states.len();
    // The batch each state is at (each read alone, checked).
    let batches: Vec<u64> = (0..n)
        .map(|k| {
            let tmp = tempfile::tempdir().unwrap();
            h.materialize(tmp.path(), k);
            let db = Db::open(tmp.path(), DbOptions::default()).unwrap();
            batch_of(&scan(&db), &format!("state {k}"))
        })
        .collect();
    let mut read_again = 0;
    let mut opens = 0;
    for k in 0..n - 2 {
        // Only where the owner deletes a file in the next two moves.
        let gone = |a: usize, b: usize| {
            h.states[a]
                .iter()
                .any(|f| !h.states[b].iter().any(|g| g.0 == f.0))
        };
        if !gone(k, k + 1) && !gone(k + 1, k + 2) {
            continue;
        }
        for (i, &first) in STEPS.iter().enumerate() {
            for &second in &STEPS[i..] {
                let tmp = tempfile::tempdir().unwrap();
                let dir = tmp.path().to_path_buf();
                h.materialize(&dir, k);
                let (hh, d) = (h.clone(), dir.clone());
                let mut at = k;
                let db = open_with_steps(&dir, move |step| {
                    // The first attempt only: the owner's two moves at `first` and `second`.
                    if at == k && step == first {
                        hh.advance(&d, k, k + 1);
                        at = k + 1;
                    }
                    if at == k + 1 && step == second {
                        hh.advance(&d, k + 1, k + 2);
                        at = k + 2;
                    }
                })
                .unwrap_or_else(|e| panic!("state {k}, moves at {first:?}, {second:?}: {e}"));
                // One state of the writer's, between state k's and state k + 2's.
                let what = format!("state {k}, moves at {first:?}, {second:?}");
                let i = batch_of(&scan(&db), &what);
                assert!(batches[k] <= i && i <= batches[k + 2], "{what}: batch {i}");
                opens += 1;
                read_again += usize::from(db.open_attempts() > 1);
            }
        }
    }
    assert!(opens > 200, "{opens} opens");
    assert!(read_again > 0, "no opening met a file deleted under it");
}

#[test]
fn a_directory_whose_current_changes_under_every_attempt_is_refused() {
    let h = leveldb();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    h.materialize(&dir, h.states.len() - 1);
    let (current, _) = crate::db::files::read_current(&dir).unwrap();
    let d = dir.clone();
    let mut names = vec![current];
    let mut attempts = 0;
    let e = open_with_steps(&dir, move |step| {
        // Every attempt, once it read the MANIFEST: the owner opens the database again, so
        // CURRENT names a new MANIFEST (as LevelDB's recovery writes one).
        if step == Step::ManifestRead {
            attempts += 1;
            let old = names.last().unwrap().clone();
            let new = format!("MANIFEST-{:06}", 900_000 + attempts);
            std::fs::copy(d.join(&old), d.join(&new)).unwrap();
            std::fs::write(d.join("CURRENT.tmp"), format!("{new}\n")).unwrap();
            std::fs::rename(d.join("CURRENT.tmp"), d.join("CURRENT")).unwrap();
            std::fs::remove_file(d.join(&old)).unwrap();
            names.push(new);
        }
    })
    .err()
    .expect("refused");
    assert!(matches!(e, Error::OwnerRewriting { .. }), "{e}");
    assert!(
        e.to_string().contains(&format!("{MAX_ATTEMPTS} attempts")),
        "{e}"
    );
    assert!(e.to_string().contains("copy it"), "{e}");
}
