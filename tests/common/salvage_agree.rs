//! Shared by `tests/db_salvage.rs` and `chrome/tests/db_salvage.rs` (included by path): copies
//! of directories, the salvage agreement (view, records and lookups say the same), and the
//! harms done to copies.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use leveldb_table::db::reader::Db;
use leveldb_table::db::reader::{records, RecordStatus};
use leveldb_table::raw::internal_key::ValueType;
use leveldb_table::Cursor;
use leveldb_table::Lookup;
use proptest::prelude::*;

/// A copy of a directory's LevelDB files (not `expected.json`, not `LOCK`).
pub fn copy_of(src: &Path) -> tempfile::TempDir {
    let dst = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        let n = e.file_name().to_string_lossy().into_owned();
        if n != "expected.json" && n != "LOCK" {
            std::fs::copy(e.path(), dst.path().join(&n)).unwrap();
        }
    }
    dst
}

pub fn remove(dir: &Path, pred: impl Fn(&str) -> bool) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if pred(&e.file_name().to_string_lossy()) {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
}

/// (user key -> (value, sequence)) of the view at the newest sequence.
pub type Live = BTreeMap<Vec<u8>, (Vec<u8>, u64)>;

pub fn view(db: &Db) -> Vec<(Vec<u8>, Vec<u8>, u64)> {
    let mut v = db.iter(&leveldb_table::ReadOptions::default());
    v.seek_to_first();
    let mut out = Vec::new();
    while v.valid() {
        out.push((v.key().to_vec(), v.value().to_vec(), v.sequence()));
        v.next();
    }
    v.status().unwrap_or_else(|e| panic!("{e}"));
    out
}

/// The agreement: the view's keys (in order, with values and sequences) are the live
/// records; a lookup of every key records lists (and of keys never written) says what the
/// view and the records say. Returns the live map.
pub fn check_agreement(db: &Db) -> Live {
    let shown = view(db);
    let all = records(db).unwrap();
    let live: Vec<(Vec<u8>, Vec<u8>, u64)> = all
        .iter()
        .filter(|r| r.status == RecordStatus::Live)
        .map(|r| (r.key.clone(), r.value.clone(), r.sequence))
        .collect();
    assert_eq!(
        shown.iter().map(|r| &r.0).collect::<Vec<_>>(),
        live.iter().map(|r| &r.0).collect::<Vec<_>>(),
        "the keys the view shows are the keys records marks live"
    );
    assert_eq!(shown, live, "with the same values and sequences");
    // What a lookup must say of each key: the newest version a read sees (the first of the
    // key's records in the live files, which records lists newest first).
    let last = db.last_sequence();
    let mut newest: BTreeMap<Vec<u8>, (ValueType, Vec<u8>, u64)> = BTreeMap::new();
    for r in all
        .iter()
        .filter(|r| r.status != RecordStatus::ObsoleteFile)
    {
        if r.sequence <= last {
            newest
                .entry(r.key.clone())
                .or_insert((r.kind, r.value.clone(), r.sequence));
        }
    }
    let mut value = Vec::new();
    for r in &all {
        let got = db
            .get_into(
                &r.key,
                &leveldb_table::ReadOptions::default().snapshot(Some(last)),
                &mut value,
            )
            .unwrap();
        match newest.get(&r.key) {
            Some((ValueType::Value, v, s)) => {
                assert_eq!(
                    got,
                    Lookup::Found {
                        value: (),
                        sequence: Some(*s)
                    },
                    "{:?}",
                    r.key
                );
                assert_eq!(&value, v);
            }
            Some((ValueType::Deletion, _, s)) => {
                assert_eq!(got, Lookup::Deleted { sequence: *s }, "{:?}", r.key)
            }
            None => assert_eq!(got, Lookup::NotFound, "{:?}", r.key),
        }
    }
    for k in [&b""[..], b"\xff\xff\xff\xff", b"never/written"] {
        if !newest.contains_key(k) {
            assert_eq!(
                db.get_into(
                    k,
                    &leveldb_table::ReadOptions::default().snapshot(Some(last)),
                    &mut value
                )
                .unwrap(),
                Lookup::NotFound
            );
        }
    }
    shown.into_iter().map(|(k, v, s)| (k, (v, s))).collect()
}

/// One way to damage a copy.
#[derive(Debug, Clone)]
pub enum Harm {
    /// Remove the file.
    Remove(usize),
    /// Keep this fraction (per mille) of it.
    Truncate(usize, u32),
    /// Flip bit `bit` of the byte at this fraction (per mille) of it.
    Flip(usize, u32, u8),
}

pub fn harm() -> impl Strategy<Value = Harm> {
    prop_oneof![
        (0..16usize).prop_map(Harm::Remove),
        (0..16usize, 0..1000u32).prop_map(|(f, p)| Harm::Truncate(f, p)),
        (0..16usize, 0..1000u32, 0..8u8).prop_map(|(f, p, b)| Harm::Flip(f, p, b)),
        (0..16usize, 0..1000u32, 0..8u8).prop_map(|(f, p, b)| Harm::Flip(f, p, b)),
    ]
}

pub fn apply(dir: &Path, h: &Harm) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    if files.is_empty() {
        return;
    }
    let pick = |i: usize| files[i % files.len()].clone();
    match *h {
        Harm::Remove(f) => std::fs::remove_file(pick(f)).unwrap(),
        Harm::Truncate(f, p) => {
            let path = pick(f);
            let bytes = std::fs::read(&path).unwrap();
            let keep = bytes.len() * p as usize / 1000;
            std::fs::write(&path, &bytes[..keep]).unwrap();
        }
        Harm::Flip(f, p, bit) => {
            let path = pick(f);
            let mut bytes = std::fs::read(&path).unwrap();
            if !bytes.is_empty() {
                let at = (bytes.len() * p as usize / 1000).min(bytes.len() - 1);
                bytes[at] ^= 1 << bit;
                std::fs::write(&path, &bytes).unwrap();
            }
        }
    }
}
