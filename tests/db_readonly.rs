//! Reading never writes: a database directory held open by C++ LevelDB in another process
//! (plyvel, which takes LevelDB's fcntl LOCK) is read whole, and afterwards every file is
//! byte-identical with the same mtime, and no file was added or removed.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use leveldb_table::db::reader::records;
use leveldb_table::db::reader::{Db, DbOptions};
use leveldb_table::Cursor;

type Snapshot = BTreeMap<String, (Vec<u8>, SystemTime, u32)>;

fn snapshot(dir: &Path) -> Snapshot {
    use std::os::unix::fs::PermissionsExt;
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                (
                    std::fs::read(e.path()).unwrap(),
                    m.modified().unwrap(),
                    m.permissions().mode(),
                ),
            )
        })
        .collect()
}

/// Whether LevelDB refuses to open `dir` because another process holds its LOCK.
fn leveldb_says_locked(dir: &Path) -> bool {
    let out = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, plyvel\n\
             try:\n    plyvel.DB(sys.argv[1])\nexcept plyvel.IOError as e:\n    print(e)\n",
        )
        .arg(dir)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout);
    s.contains("lock") || s.contains("LOCK")
}

#[test]
fn a_directory_leveldb_holds_is_read_without_a_byte_changed() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/db/basic");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir(&dir).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    // LevelDB opens the directory (recovering its log into a table, as it does) and then
    // holds it, idle, until its stdin closes.
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(
            "import sys, plyvel\n\
             db = plyvel.DB(sys.argv[1], paranoid_checks=True)\n\
             print('open', flush=True)\n\
             sys.stdin.read()\n\
             db.close()\n",
        )
        .arg(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 with plyvel (scripts/setup.sh installs it)");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "open", "LevelDB could not open the directory");
    assert!(leveldb_says_locked(&dir), "LevelDB holds the LOCK");

    let before = snapshot(&dir);
    // Read everything: open, every get, the whole view, every record of every file.
    let db = Db::open(&dir, DbOptions::default()).unwrap();
    let mut view = db.iter(&leveldb_table::ReadOptions::default());
    view.seek_to_first();
    let mut keys = Vec::new();
    while view.valid() {
        keys.push(view.key().to_vec());
        view.next();
    }
    assert!(view.status().is_ok());
    assert!(keys.len() > 500);
    for k in &keys {
        assert!(db.get(k, &Default::default()).unwrap().is_found());
    }
    let all = records(&db).unwrap();
    assert!(all.len() >= keys.len());
    drop(view);
    drop(db);
    let after = snapshot(&dir);

    drop(child.stdin.take());
    let status = child.wait().unwrap();
    assert!(status.success());
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "no file added or removed"
    );
    for (name, (bytes, mtime, mode)) in &before {
        let (b2, m2, p2) = &after[name];
        assert!(bytes == b2, "{name} changed");
        assert_eq!(mtime, m2, "{name}: mtime changed");
        assert_eq!(mode, p2, "{name}: mode changed");
    }
    // And the reader saw what LevelDB itself holds: the same newest values.
    let e: serde_json::Value =
        serde_json::from_slice(&std::fs::read(src.join("expected.json")).unwrap()).unwrap();
    assert_eq!(keys.len(), e["scan"].as_array().unwrap().len());
}
