//! The database's cursor (`Db::iter`, a `DbIter`) on every directory LevelDB and goleveldb
//! wrote in testdata/db: backward equals forward reversed, as a std iterator it yields every
//! live entry from the first call, and `Db::range` yields exactly the entries between its
//! bounds; under salvage, where tables are walked forward only, reading backward is an error.

use std::ops::{Bound, RangeBounds};

use leveldb_table::db::engine::DbIter;
use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::{Cursor, Error, ReadOptions};

fn backward(view: &mut DbIter<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while view.valid() {
        out.push((view.key().to_vec(), view.value().to_vec()));
        view.prev();
    }
    assert!(view.status().is_ok());
    out
}

/// Every directory LevelDB and goleveldb wrote in testdata/db: backward equals forward
/// reversed, at the newest sequence and at earlier snapshots, and from inside the range
/// (tables at levels 0-2 and live logs).
#[test]
fn real_directories_read_backward() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/db");
    let mut dirs = 0;
    for e in std::fs::read_dir(root).unwrap() {
        let dir = e.unwrap().path();
        if !dir.join("CURRENT").exists() {
            continue;
        }
        dirs += 1;
        let db = Db::open(&dir, DbOptions::default()).unwrap();
        let last = db.last_sequence();
        for snap in [last, last / 2, last / 3, 1] {
            let read = ReadOptions::default().snapshot(Some(snap));
            let mut f = db.iter(&read);
            f.seek_to_first();
            let mut fwd = Vec::new();
            while f.valid() {
                fwd.push((f.key().to_vec(), f.value().to_vec()));
                f.next();
            }
            // As a std iterator, from the first call (no seek).
            let all: Vec<_> = db
                .iter(&read)
                .into_iter()
                .collect::<Result<_, _>>()
                .unwrap();
            assert_eq!(all, fwd, "{} at {snap}", dir.display());
            ranges_agree(&db, &read, &fwd);
            let mut v = db.iter(&read);
            v.seek_to_last();
            let back = backward(&mut v);
            fwd.reverse();
            assert_eq!(back, fwd, "{} at {snap}", dir.display());
            if let Some((mid, _)) = fwd.get(fwd.len() / 2) {
                let mut v = db.iter(&read);
                v.seek_before(mid);
                let want: Vec<_> = fwd.iter().filter(|(k, _)| k < mid).cloned().collect();
                assert_eq!(backward(&mut v), want, "{} before {mid:?}", dir.display());
            }
        }
    }
    assert!(dirs >= 4);
}

/// Under salvage tables are walked forward only: reading backward is an error, not a
/// silently partial answer.
#[test]
fn salvage_walks_refuse_to_go_backward() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/db/basic");
    let opts = DbOptions::default().salvage(true);
    let db = Db::open(dir, opts).unwrap();
    let mut v = db.iter(&ReadOptions::default());
    v.seek_to_last();
    assert!(!v.valid());
    let e = v.status().expect_err("an error");
    assert!(
        matches!(&e, Error::Unsupported { .. })
            || matches!(&e, Error::InFile { source, .. } if matches!(**source, Error::Unsupported { .. })),
        "{e:?}"
    );
    assert!(e.to_string().contains("backward is not supported"), "{e}");
    // Forward, the same view reads every entry.
    assert!(db.iter(&ReadOptions::default()).into_iter().count() > 0);
}

/// `Db::range` with every kind of bound, at keys of the database and between them: exactly
/// the live entries (`fwd`, in order) the bounds take in.
fn ranges_agree(db: &Db, read: &ReadOptions, fwd: &[(Vec<u8>, Vec<u8>)]) {
    let mut probes: Vec<Vec<u8>> = vec![Vec::new(), vec![0xff; 4]];
    for i in [0, fwd.len() / 3, fwd.len() / 2, fwd.len().saturating_sub(1)] {
        if let Some((k, _)) = fwd.get(i) {
            probes.push(k.clone());
            let mut after = k.clone();
            after.push(0);
            probes.push(after);
        }
    }
    let bounds = |k: &[u8]| [Bound::Included(k.to_vec()), Bound::Excluded(k.to_vec())];
    for a in &probes {
        for b in &probes {
            for start in bounds(a).into_iter().chain([Bound::Unbounded]) {
                for end in bounds(b).into_iter().chain([Bound::Unbounded]) {
                    let want: Vec<_> = fwd
                        .iter()
                        .filter(|(k, _)| (start.clone(), end.clone()).contains(k))
                        .cloned()
                        .collect();
                    let got: Vec<_> = db
                        .range::<&[u8]>(
                            (
                                start.as_ref().map(Vec::as_slice),
                                end.as_ref().map(Vec::as_slice),
                            ),
                            read,
                        )
                        .collect::<Result<_, _>>()
                        .unwrap();
                    assert_eq!(got, want, "{start:?}..{end:?}");
                }
            }
        }
    }
    // A range that only names its start, the way most callers write one.
    if let Some((k, _)) = fwd.get(fwd.len() / 2) {
        let got = db.range(k.as_slice().., read).count();
        assert_eq!(got, fwd.len() - fwd.len() / 2);
    }
}
