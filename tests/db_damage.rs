//! A damaged database directory: clear errors naming the file and offset; with `salvage`,
//! the rest is read and every skip is listed. Copies of `testdata/db/basic` (written by
//! C++ LevelDB) are damaged here.

use std::path::{Path, PathBuf};

use leveldb_table::db::files::LogWriter;
use leveldb_table::db::files::WriteBatch;
use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::Cursor;
use leveldb_table::Error;

fn copy_of(name: &str) -> tempfile::TempDir {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/db")
        .join(name);
    let dst = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.path().join(e.file_name())).unwrap();
    }
    dst
}

fn salvage() -> DbOptions {
    DbOptions::default().salvage(true)
}

fn live_log(dir: &Path) -> PathBuf {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    logs.pop().unwrap()
}

fn scan(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut v = db.iter(&leveldb_table::ReadOptions::default());
    v.seek_to_first();
    let mut out = Vec::new();
    while v.valid() {
        out.push((v.key().to_vec(), v.value().to_vec()));
        v.next();
    }
    assert!(v.status().is_ok());
    out
}

#[test]
fn a_bad_crc_mid_log_names_file_and_offset_and_salvage_keeps_the_rest() {
    let d = copy_of("basic");
    let log = live_log(d.path());
    let name = log.file_name().unwrap().to_string_lossy().into_owned();
    let mut bytes = std::fs::read(&log).unwrap();
    // The second record's payload (records are ~51 bytes: damage byte 60).
    bytes[60] ^= 0x55;
    std::fs::write(&log, &bytes).unwrap();
    let e = Db::open(d.path(), DbOptions::default())
        .err()
        .expect("strict open fails");
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!(
            "{name}: log record at offset 51: checksum mismatch"
        )),
        "{msg}"
    );
    assert!(matches!(e, Error::InFile { .. }));
    let db = Db::open(d.path(), salvage()).unwrap();
    assert!(
        db.notes().iter().any(|n| n.contains("checksum mismatch")),
        "{:?}",
        db.notes()
    );
    // LevelDB drops the rest of the 32 KiB block; the records before the damage are kept.
    let intact = Db::open(copy_of("basic").path(), DbOptions::default()).unwrap();
    assert!(!db.memtable().is_empty() && db.memtable().len() < intact.memtable().len());
    assert_eq!(
        db.get(b"key/00000", &Default::default())
            .unwrap()
            .into_value(),
        intact
            .get(b"key/00000", &Default::default())
            .unwrap()
            .into_value(),
        "the first record, before the damage, is kept"
    );
}

#[test]
fn a_torn_log_tail_is_reported_not_an_error() {
    let d = copy_of("basic");
    let log = live_log(d.path());
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() - 3]).unwrap();
    let db = Db::open(d.path(), DbOptions::default()).unwrap();
    let torn = db
        .logs()
        .iter()
        .find_map(|l| l.torn_tail)
        .expect("torn tail reported");
    assert!(torn.0 < bytes.len() as u64 && torn.0 + torn.1 == bytes.len() as u64 - 3);
    assert!(db.notes().iter().any(|n| n.contains("incomplete")));
}

#[test]
fn a_damaged_manifest_is_an_error_and_salvage_reads_every_table() {
    let d = copy_of("basic");
    let intact = Db::open(d.path(), DbOptions::default()).unwrap();
    let want = scan(&intact);
    drop(intact);
    let m = d.path().join("MANIFEST-000002");
    let mut bytes = std::fs::read(&m).unwrap();
    // In the payload of the second record (at 35, header 7 bytes).
    bytes[45] ^= 0x01;
    std::fs::write(&m, &bytes).unwrap();
    let e = Db::open(d.path(), DbOptions::default())
        .err()
        .expect("strict open fails");
    assert!(
        e.to_string()
            .starts_with("MANIFEST-000002: log record at offset 35: checksum mismatch"),
        "{e}"
    );
    let db = Db::open(d.path(), salvage()).unwrap();
    assert!(db.is_repair_view());
    assert!(
        db.notes()[0].contains("reading every table and log"),
        "{:?}",
        db.notes()
    );
    // This directory has no obsolete tables, so the repair view is the same view.
    assert_eq!(scan(&db), want);
    for (k, v) in want.iter().step_by(13) {
        assert_eq!(
            db.get(k, &Default::default()).unwrap().value(),
            Some(&v[..])
        );
    }
    // A length damaged into running past the end reads as a torn tail (LevelDB: the writer
    // died mid-record), which leaves the MANIFEST without the entries LevelDB requires.
    let mut bytes = std::fs::read(&m).unwrap();
    bytes[45] ^= 0x01;
    bytes[40] ^= 0x01;
    std::fs::write(&m, &bytes).unwrap();
    let e = Db::open(d.path(), DbOptions::default()).err().unwrap();
    assert!(e.to_string().contains("no next-file-number entry"), "{e}");
    // A missing CURRENT: the same.
    std::fs::remove_file(d.path().join("CURRENT")).unwrap();
    let e = Db::open(d.path(), DbOptions::default()).err().unwrap();
    assert!(e.to_string().starts_with("CURRENT: "), "{e}");
    assert_eq!(scan(&Db::open(d.path(), salvage()).unwrap()), want);
}

#[test]
fn a_missing_table_is_named_and_salvage_reads_the_others() {
    let d = copy_of("basic");
    std::fs::remove_file(d.path().join("000007.ldb")).unwrap();
    let e = Db::open(d.path(), DbOptions::default()).err().unwrap();
    assert!(
        matches!(&e, Error::MissingFile { file } if file == "000007.ldb"),
        "{e}"
    );
    let db = Db::open(d.path(), salvage()).unwrap();
    assert!(db.notes().iter().any(|n| n.contains("000007.ldb")));
    assert!(!scan(&db).is_empty());
}

#[test]
fn a_damaged_table_block_is_an_error_naming_the_table() {
    let d = copy_of("basic");
    let t = d.path().join("000005.ldb");
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[100] ^= 0x08;
    std::fs::write(&t, &bytes).unwrap();
    let db = Db::open(d.path(), DbOptions::default()).unwrap();
    let mut v = db.iter(&leveldb_table::ReadOptions::default());
    v.seek_to_first();
    while v.valid() {
        v.next();
    }
    let e = v.status().expect_err("the scan stops at the damaged block");
    assert!(
        e.to_string()
            .starts_with("000005.ldb: block checksum mismatch"),
        "{e}"
    );
    assert_eq!(e.offset(), Some(0));
    // A point lookup in that block: the same error, never "not found".
    let r = db.get(b"key/00001", &Default::default());
    assert!(
        matches!(&r, Err(Error::InFile { file, .. }) if file == "000005.ldb"),
        "{r:?}"
    );
}

#[test]
fn an_unknown_comparator_is_refused_by_name() {
    // A directory whose MANIFEST names another comparator: LevelDB's own log and
    // VersionEdit encoders (ours, checked against LevelDB's bytes elsewhere) write it.
    let d = tempfile::tempdir().unwrap();
    let mut edit = leveldb_table::db::files::VersionEdit {
        comparator: Some("rocksdb.ReverseBytewiseComparator".into()),
        log_number: Some(3),
        next_file_number: Some(4),
        last_sequence: Some(0),
        ..Default::default()
    };
    let mut rec = Vec::new();
    edit.encode(&mut rec);
    let mut w = LogWriter::new(Vec::new());
    w.add_record(&rec).unwrap();
    std::fs::write(d.path().join("MANIFEST-000002"), w.into_inner()).unwrap();
    std::fs::write(d.path().join("CURRENT"), "MANIFEST-000002\n").unwrap();
    let mut b = WriteBatch::new();
    b.put(b"k", b"v");
    b.set_sequence(1);
    let mut w = LogWriter::new(Vec::new());
    w.add_record(b.as_bytes()).unwrap();
    std::fs::write(d.path().join("000003.log"), w.into_inner()).unwrap();
    let e = Db::open(d.path(), DbOptions::default()).err().unwrap();
    assert!(
        matches!(&e, Error::UnknownComparator { name } if name == "rocksdb.ReverseBytewiseComparator"),
        "{e}"
    );
    // With the bytewise name, the same directory opens and reads the log.
    edit.comparator = Some("leveldb.BytewiseComparator".into());
    let mut rec = Vec::new();
    edit.encode(&mut rec);
    let mut w = LogWriter::new(Vec::new());
    w.add_record(&rec).unwrap();
    std::fs::write(d.path().join("MANIFEST-000002"), w.into_inner()).unwrap();
    let db = Db::open(d.path(), DbOptions::default()).unwrap();
    assert_eq!(
        db.get(b"k", &Default::default()).unwrap(),
        leveldb_table::Lookup::Found {
            value: b"v".to_vec(),
            sequence: Some(1)
        }
    );
}
