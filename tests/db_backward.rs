//! The database read backward (`ReverseView`) against the forward view, on every directory
//! LevelDB and goleveldb wrote in testdata/db; and under salvage, where tables are walked
//! forward only, reading backward is an error.

use leveldb_table::db::engine::ReverseView;
use leveldb_table::db::reader::{Db, DbOptions};

fn backward(view: &mut ReverseView<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    while view.valid() {
        out.push((view.key().to_vec(), view.value().to_vec()));
        view.prev();
    }
    assert!(view.error().is_none());
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
            let mut f = db
                .view(&leveldb_table::ReadOptions::default().snapshot(Some(snap)))
                .unwrap();
            f.seek_to_first();
            let mut fwd = Vec::new();
            while f.valid() {
                fwd.push((f.key().to_vec(), f.value().to_vec()));
                f.next();
            }
            let mut v = ReverseView::new(db.merged().unwrap(), snap);
            v.seek_to_last();
            let back = backward(&mut v);
            fwd.reverse();
            assert_eq!(back, fwd, "{} at {snap}", dir.display());
            if let Some((mid, _)) = fwd.get(fwd.len() / 2) {
                let mut v = ReverseView::new(db.merged().unwrap(), snap);
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
    let opts = DbOptions {
        salvage: true,
        ..DbOptions::default()
    };
    let db = Db::open(dir, opts).unwrap();
    let mut v = ReverseView::new(db.merged().unwrap(), db.last_sequence());
    v.seek_to_last();
    assert!(!v.valid());
    let e = v.take_error().expect("an error");
    assert!(e.to_string().contains("backward is not supported"), "{e}");
}
