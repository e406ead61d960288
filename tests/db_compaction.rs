//! Compaction output (`db::compaction::write_compaction_output`) against a model: the
//! versions it keeps give, at every snapshot the compaction must preserve, the same view as
//! all the writes; a user key's versions never straddle two tables; and C++ LevelDB opens a
//! directory made of the output and reads the same newest view.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use leveldb_table::db::files::BatchRecord;
use leveldb_table::db::files::LogWriter;
use leveldb_table::db::files::VersionEdit;
use leveldb_table::{db::engine::write_compaction_output, db::engine::CompactionOptions};
use leveldb_table::{db::engine::DbIter, db::engine::MergingCursor};
use leveldb_table::{db::engine::MemCursor, db::engine::TableFile, Cursor};
use leveldb_table::{db::engine::MemTable, db::engine::Origin};
use leveldb_table::{
    raw::internal_key::InternalKeyComparator, raw::internal_key::ValueType, table::KeyFormat,
    BytewiseComparator, OpenOptions, Options, ReadOptions, TableReader,
};

struct Write {
    key: Vec<u8>,
    value: Vec<u8>,
    delete: bool,
}

fn writes(n: usize, seed: u64) -> Vec<Write> {
    let mut x = seed | 1;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            Write {
                key: format!("key{:04}", x % 300).into_bytes(),
                value: format!("value {i} ")
                    .repeat(1 + (x % 5) as usize)
                    .into_bytes(),
                delete: x % 7 == 0,
            }
        })
        .collect()
}

fn model(ws: &[Write], snapshot: u64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut m = BTreeMap::new();
    for w in ws.iter().take(snapshot as usize) {
        if w.delete {
            m.remove(&w.key);
        } else {
            m.insert(w.key.clone(), w.value.clone());
        }
    }
    m.into_iter().collect()
}

fn view(mut v: DbIter<'_>) -> Vec<(Vec<u8>, Vec<u8>)> {
    v.seek_to_first();
    let mut out = Vec::new();
    while v.valid() {
        out.push((v.key().to_vec(), v.value().to_vec()));
        v.next();
    }
    assert!(v.status().is_ok());
    out
}

fn compact(
    dir: &Path,
    ws: &[Write],
    smallest_snapshot: u64,
) -> Vec<leveldb_table::db::files::NewFile> {
    let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
    // The writes spread over three sources, as a compaction's inputs.
    let mut sources: Vec<Vec<(BatchRecord<'_>, Origin)>> = vec![Vec::new(), Vec::new(), Vec::new()];
    for (i, w) in ws.iter().enumerate() {
        let r = BatchRecord {
            sequence: i as u64 + 1,
            kind: if w.delete {
                ValueType::Deletion
            } else {
                ValueType::Value
            },
            key: &w.key,
            value: if w.delete { &[] } else { &w.value },
            offset: 0,
        };
        sources[i % 3].push((
            r,
            Origin {
                log: 0,
                offset: 0,
                offset_in_batch: 0,
            },
        ));
    }
    let mems: Vec<MemTable> = sources
        .into_iter()
        .map(|s| MemTable::new(icmp.clone(), s))
        .collect();
    let children: Vec<Box<dyn Cursor + '_>> = mems
        .iter()
        .map(|m| Box::new(MemCursor::new(m)) as Box<dyn Cursor>)
        .collect();
    let mut merged = MergingCursor::new(children, icmp);
    merged.seek_to_first();
    let opts = CompactionOptions::default()
        .table(Options::default().bloom(10))
        .target_file_size(2048)
        .smallest_snapshot(smallest_snapshot)
        .bottommost(true)
        .level(1);
    let mut n = 10;
    let stats = write_compaction_output(&mut merged, dir, &opts, || {
        n += 1;
        n
    })
    .unwrap();
    assert_eq!(stats.read, ws.len() as u64);
    stats.files
}

fn open_all(
    dir: &Path,
    files: &[leveldb_table::db::files::NewFile],
) -> Vec<TableReader<TableFile>> {
    files
        .iter()
        .map(|f| {
            let src: TableFile =
                Box::new(std::fs::File::open(dir.join(format!("{:06}.ldb", f.number))).unwrap());
            TableReader::open(src, OpenOptions::default().keys(KeyFormat::Internal)).unwrap()
        })
        .collect()
}

#[test]
fn the_output_keeps_every_view_from_the_smallest_snapshot_on() {
    for (seed, snapshot_at) in [(1u64, 0.5f64), (2, 0.9), (3, 0.0), (4, 1.0)] {
        let ws = writes(3000, seed);
        let last = ws.len() as u64;
        let s = ((last as f64) * snapshot_at) as u64;
        let dir = tempfile::tempdir().unwrap();
        let files = compact(dir.path(), &ws, s);
        let total: u64 = files.iter().map(|f| f.size).sum();
        assert!(!files.is_empty());
        if total > 3 * 2048 {
            assert!(files.len() >= 2, "{} files for {total} bytes", files.len());
        }
        // Tables in key order, a user key in one table only, sizes near the target.
        for w in files.windows(2) {
            let a = &w[0].largest[..w[0].largest.len() - 8];
            let b = &w[1].smallest[..w[1].smallest.len() - 8];
            assert!(a < b, "a user key straddles two tables");
        }
        let tables = open_all(dir.path(), &files);
        let icmp = InternalKeyComparator::new(Arc::new(BytewiseComparator));
        for snap in [s, (s + last) / 2, last] {
            let children: Vec<Box<dyn Cursor + '_>> = tables
                .iter()
                .map(|t| Box::new(t.iter(&ReadOptions::default())) as Box<dyn Cursor>)
                .collect();
            let v = DbIter::new(MergingCursor::new(children, icmp.clone()), snap);
            assert_eq!(
                view(v),
                model(&ws, snap),
                "seed {seed}, S {s}, read at {snap}"
            );
        }
        // Something was dropped (older versions hidden from every reader), unless S is 0.
        let kept: u64 = tables
            .iter()
            .map(|t| t.iter(&Default::default()).into_iter().count() as u64)
            .sum();
        if s > 0 {
            assert!(kept < last, "nothing dropped");
        } else {
            assert_eq!(kept, last, "every version is needed at snapshot 0");
        }
    }
}

#[test]
fn leveldb_opens_a_directory_made_of_compaction_output() {
    let ws = writes(4000, 7);
    let last = ws.len() as u64;
    let dir = tempfile::tempdir().unwrap();
    let files = compact(dir.path(), &ws, last);
    let edit = VersionEdit {
        comparator: Some("leveldb.BytewiseComparator".into()),
        log_number: Some(100),
        prev_log_number: Some(0),
        next_file_number: Some(101),
        last_sequence: Some(last),
        new_files: files.clone(),
        ..VersionEdit::default()
    };
    let mut rec = Vec::new();
    edit.encode(&mut rec);
    let mut w = LogWriter::new(Vec::new());
    w.add_record(&rec).unwrap();
    std::fs::write(dir.path().join("MANIFEST-000099"), w.into_inner()).unwrap();
    std::fs::write(dir.path().join("CURRENT"), "MANIFEST-000099\n").unwrap();
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, plyvel\n\
             db = plyvel.DB(sys.argv[1], paranoid_checks=True)\n\
             for k, v in db.iterator():\n    print(k.hex(), v.hex())\n\
             db.close()\n",
        )
        .arg(dir.path())
        .output()
        .expect("python3 with plyvel");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<(Vec<u8>, Vec<u8>)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (hex::decode(k).unwrap(), hex::decode(v).unwrap())
        })
        .collect();
    assert_eq!(got, model(&ws, last));
}
