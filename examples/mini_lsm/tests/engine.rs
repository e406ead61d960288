//! The engine's behaviour: snapshots and ranges across flushes and compactions,
//! seek-triggered compaction, obsolete files deleted, a directory without CURRENT, group
//! commit, compact-range, the bounded table cache.

mod common;

use common::*;

use std::sync::atomic::Ordering;

use mini_lsm::{Db, Options};

#[test]
fn snapshots_and_ranges_see_what_they_should_across_flushes_and_compactions() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), small()).unwrap();
    let mut model = Model::new();
    workload(&db, &mut model, 3_000, 5);
    let snap = db.snapshot();
    let frozen = model.clone();
    workload(&db, &mut model, 6_000, 6);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let it = db.iter(None, None, Some(&snap)).unwrap();
    let seen: Vec<_> = it.map(Result::unwrap).collect();
    assert_eq!(seen, frozen.clone().into_iter().collect::<Vec<_>>());
    for k in frozen.keys().step_by(50).chain(model.keys().step_by(50)) {
        assert_eq!(
            db.get_at(k, &snap).unwrap().as_ref(),
            frozen.get(k),
            "{k:?}"
        );
        assert_eq!(db.get(k).unwrap().as_ref(), model.get(k));
    }
    let (from, to) = (b"key00500".to_vec(), b"key01200".to_vec());
    let ranged: Vec<_> = db
        .iter(Some(&from), Some(&to), None)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want: Vec<_> = model
        .range(from..to)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(ranged, want);
}

/// Lookups that keep probing a table in vain before finding their key deeper make it
/// compact (LevelDB's seek-triggered compaction): with the size rules already met and no
/// write in between, gets alone start a compaction, and every answer stays right.
#[test]
fn lookups_that_probe_a_table_in_vain_compact_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (counts, opts) = counting_listener();
    let db = Db::open(tmp.path(), opts).unwrap();
    let mut model = Model::new();
    workload(&db, &mut model, 6_000, 11);
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let before = db.tables_per_level();
    let merged = counts[1].load(Ordering::Relaxed) + counts[2].load(Ordering::Relaxed);
    for round in 0..50 {
        for n in 0..2000 {
            let k = format!("key{n:05}").into_bytes();
            assert_eq!(db.get(&k).unwrap().as_ref(), model.get(&k), "round {round}");
        }
    }
    db.wait_for_compactions().unwrap();
    let after = counts[1].load(Ordering::Relaxed) + counts[2].load(Ordering::Relaxed);
    assert!(
        after > merged,
        "no compaction from lookups: {before:?} -> {:?}",
        db.tables_per_level()
    );
    assert_eq!(scan(&db), model.into_iter().collect::<Vec<_>>());
}

/// Obsolete files go: after reopens, flushes and compactions the directory holds one
/// MANIFEST (a new one per open, named by CURRENT), one log, the live tables and nothing
/// else but CURRENT and LOCK.
#[test]
fn obsolete_logs_tables_and_manifests_are_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let mut model = Model::new();
    let mut manifests = Vec::new();
    for round in 0..3 {
        let db = Db::open(tmp.path(), small()).unwrap();
        workload(&db, &mut model, 4_000, 20 + round);
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        let count = |suffix: &str| names.iter().filter(|n| n.ends_with(suffix)).count();
        let live: usize = db.tables_per_level().iter().sum();
        assert_eq!(count(".ldb"), live, "{names:?}");
        assert_eq!(count(".log"), 1, "{names:?}");
        let m: Vec<_> = names
            .iter()
            .filter(|n| n.starts_with("MANIFEST-"))
            .collect();
        assert_eq!(m.len(), 1, "{names:?}");
        let current = std::fs::read_to_string(tmp.path().join("CURRENT")).unwrap();
        assert_eq!(current, format!("{}\n", m[0]));
        assert!(!manifests.contains(m[0]), "a new MANIFEST per open");
        manifests.push(m[0].clone());
        assert_eq!(
            names.len(),
            live + 4,
            "only CURRENT, LOCK, one MANIFEST, one log: {names:?}"
        );
    }
}

/// What a crash during the very first open leaves (a MANIFEST and an empty log, no
/// CURRENT) opens as a new database, as LevelDB's `create_if_missing` does; tables or logged
/// writes without a CURRENT are refused, never silently dropped.
#[test]
fn a_directory_without_current_is_new_only_when_it_holds_no_data() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("MANIFEST-000003"), b"").unwrap();
    std::fs::write(dir.join("000002.log"), b"").unwrap();
    let db = Db::open(&dir, Options::default()).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    assert_eq!(
        leveldb_reads(&dir, false),
        vec![(b"k".to_vec(), b"v".to_vec())]
    );
    assert!(
        !dir.join("MANIFEST-000003").exists(),
        "the orphan MANIFEST is deleted"
    );

    for (name, bytes) in [("000007.log", &b"x"[..]), ("000007.ldb", &b""[..])] {
        let other = tmp.path().join(name);
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(name), bytes).unwrap();
        let e = Db::open(&other, Options::default()).err().expect("refused");
        assert!(e.to_string().contains("no CURRENT"), "{e}");
    }
}

/// Writers on many threads at once: every write lands, batches stay whole, and writers
/// waiting behind a synced write are committed in groups (fewer log records than writes).
#[test]
fn concurrent_writers_are_committed_in_groups() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options {
        sync: true,
        ..Options::default()
    };
    let db = Db::open(tmp.path(), opts.clone()).unwrap();
    let (threads, per_thread) = (8u32, 150u32);
    std::thread::scope(|s| {
        for t in 0..threads {
            let db = &db;
            s.spawn(move || {
                for i in 0..per_thread {
                    let mut b = leveldb_table::db::files::WriteBatch::new();
                    for part in 0..3 {
                        b.put(
                            format!("t{t}/{i:04}/{part}").as_bytes(),
                            format!("{t}.{i}").as_bytes(),
                        );
                    }
                    db.write(&mut b).unwrap();
                }
            });
        }
    });
    let all = scan(&db);
    assert_eq!(all.len() as u32, threads * per_thread * 3);
    drop(db);
    // The log holds every write (the memtable was never flushed), in fewer records.
    let logs: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    let mut records = 0;
    let mut entries = 0;
    for l in logs {
        let bytes = std::fs::read(l).unwrap();
        for item in leveldb_table::db::files::LogReader::new(&bytes) {
            if let leveldb_table::db::files::LogItem::Record { data, .. } = item {
                records += 1;
                entries += leveldb_table::db::files::WriteBatchReader::new(&data)
                    .unwrap()
                    .count();
            }
        }
    }
    assert_eq!(entries, threads * per_thread * 3);
    assert!(
        records < threads * per_thread,
        "{records} records for {} writes",
        threads * per_thread
    );
    let db = Db::open(tmp.path(), opts).unwrap();
    assert_eq!(scan(&db), all);
}

/// `compact_range` merges a range down to the deepest level holding it: deleted and
/// overwritten versions are gone from the tables, every answer stays right.
#[test]
fn compact_range_merges_a_range_down_and_drops_what_no_one_sees() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), small()).unwrap();
    let mut model = Model::new();
    workload(&db, &mut model, 8_000, 7);
    db.compact_range(Some(b"key00500"), Some(b"key01000"))
        .unwrap();
    assert_eq!(scan(&db), model.clone().into_iter().collect::<Vec<_>>());
    db.compact_range(None, None).unwrap();
    let levels = db.tables_per_level();
    assert_eq!(levels.iter().filter(|&&n| n > 0).count(), 1, "{levels:?}");
    assert_eq!(scan(&db), model.clone().into_iter().collect::<Vec<_>>());
    drop(db);
    // The tables hold exactly the live keys, one version each.
    let db = leveldb_table::Db::open(tmp.path(), leveldb_table::db::reader::DbOptions::default())
        .unwrap();
    let mut all = db.merged().unwrap();
    use leveldb_table::Cursor;
    all.seek_to_first();
    let mut versions = 0;
    while all.valid() {
        versions += 1;
        all.next();
    }
    assert_eq!(
        versions,
        model.len(),
        "one version per live key, no deletions"
    );
}

/// With `max_open_files` 15 the table cache keeps at most 5 tables open, however many
/// there are, and lookups and scans over all of them stay right.
#[test]
fn the_table_cache_keeps_at_most_its_capacity_open() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options {
        max_open_files: 15,
        write_buffer_size: 4 << 10,
        max_file_size: 1 << 10,
        ..small()
    };
    let db = Db::open(tmp.path(), opts).unwrap();
    let mut model = Model::new();
    workload(&db, &mut model, 10_000, 3);
    db.wait_for_compactions().unwrap();
    let tables: usize = db.tables_per_level().iter().sum();
    assert!(tables > 12, "{tables} tables");
    for (i, (k, v)) in model.iter().enumerate().step_by(3) {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "{i}");
        assert!(db.open_tables() <= 5, "{} open", db.open_tables());
    }
    assert_eq!(scan(&db), model.clone().into_iter().collect::<Vec<_>>());
    assert!(db.open_tables() <= 5, "{} open", db.open_tables());
}

/// An iterator keeps reading the tables of the version it started on after compactions
/// replaced them, though the table cache (one table) closed them: no table a reader may
/// still open is deleted.
#[test]
fn an_iterator_reads_its_version_after_compactions_replace_it() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = Options {
        max_open_files: 11,
        ..small()
    };
    let db = Db::open(tmp.path(), opts).unwrap();
    let mut model = Model::new();
    workload(&db, &mut model, 6_000, 11);
    db.flush().unwrap();
    let old = model.clone();
    let mut it = db.iter(None, None, None).unwrap();
    workload(&db, &mut model, 6_000, 12);
    db.compact_range(None, None).unwrap();
    db.wait_for_compactions().unwrap();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    assert_eq!(got, old.into_iter().collect::<Vec<_>>());
    drop(it);
    assert_eq!(scan(&db), model.into_iter().collect::<Vec<_>>());
}
