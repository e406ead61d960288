//! `sst profile DIR` on a profile Chromium 156 wrote in two runs (testdata/idb_sqlite/
//! profile, tools/gen_idb_sqlite_fixture.sh): the first without the SQLite backend (an
//! origin's IndexedDB in LevelDB), the second with it (another origin's in SQLite), both
//! with localStorage and sessionStorage. Each area is listed with its backend and counts,
//! as the pages read them back; other LevelDB stores by path with their live keys.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

mod common;

use common::{json_lines, sst};

fn profile() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../testdata/idb_sqlite/profile")
}

fn expected(name: &str) -> Value {
    let p = profile().join(format!("../{name}.expected.json"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn both_backends_local_and_session_storage_with_their_counts() {
    let (code, out, err) = sst(&["profile", &profile().to_string_lossy(), "--format", "jsonl"]);
    assert_eq!(code, 0, "{err}");
    let rows = json_lines(&out);
    let (leveldb_run, sqlite_run) = (expected("leveldb"), expected("clean"));
    let origin = |e: &Value| e["origin"].as_str().unwrap().to_string();
    let find = |kind: &str, o: &str| -> Vec<&Value> {
        rows.iter()
            .filter(|r| r["kind"] == kind && r["origin"] == o)
            .collect()
    };
    let idb = find("indexeddb", &origin(&leveldb_run));
    assert_eq!(idb.len(), 1, "{out}");
    assert_eq!(idb[0]["backend"], "leveldb");
    assert_eq!(
        idb[0]["records"],
        leveldb_run["records"].as_array().unwrap().len()
    );
    assert!(idb[0]["path"]
        .as_str()
        .unwrap()
        .ends_with(".indexeddb.leveldb"));
    let idb = find("indexeddb", &origin(&sqlite_run));
    assert_eq!(idb.len(), 1, "{out}");
    assert_eq!(idb[0]["backend"], "sqlite");
    assert_eq!(
        idb[0]["records"],
        sqlite_run["records"].as_array().unwrap().len()
    );
    assert_eq!(idb[0]["databases"], 3);
    assert_eq!(
        idb[0]["path"],
        format!(
            "Default/IndexedDB/{}",
            origin(&sqlite_run).replace("://", "_").replace(':', "_")
        )
    );
    for run in [&leveldb_run, &sqlite_run] {
        let local = find("local_storage", &origin(run));
        assert_eq!(local.len(), 1, "{out}");
        assert_eq!(local[0]["records"], run["local_storage"]);
        assert_eq!(local[0]["path"], "Default/Local Storage/leveldb");
        assert!(local[0].get("backend").is_none());
    }
    // sessionStorage: the second run's tab; Chromium dropped the first run's sessions when
    // it started again (the database holds no namespace of that origin).
    let session = find("session_storage", &origin(&sqlite_run));
    assert_eq!(session.len(), 1, "{out}");
    assert_eq!(session[0]["records"], sqlite_run["session_storage"]);
    assert!(find("session_storage", &origin(&leveldb_run)).is_empty());
    // The other LevelDB stores, each with its live keys as `sst db scan` counts them.
    let others: BTreeMap<String, u64> = rows
        .iter()
        .filter(|r| r["kind"] == "leveldb")
        .map(|r| {
            (
                r["path"].as_str().unwrap().to_string(),
                r["records"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        others.contains_key("Default/Sync Data/LevelDB"),
        "{others:?}"
    );
    assert!(
        others.contains_key("Default/shared_proto_db/metadata"),
        "{others:?}"
    );
    for (path, n) in &others {
        let (code, scan, err) = sst(&[
            "db",
            "scan",
            &profile().join(path).to_string_lossy(),
            "--decode",
            "none",
        ]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(scan.lines().count() as u64, *n, "{path}");
    }
    assert!(rows.iter().all(|r| r.get("damage").is_none()), "{out}");
    // The text table by default.
    let (code, text, _) = sst(&["profile", &profile().to_string_lossy()]);
    assert_eq!(code, 0);
    assert!(text.starts_with("KIND"), "{text}");
    assert_eq!(text.lines().count(), rows.len() + 1);
}

#[test]
fn damage_is_reported_with_the_area() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("p");
    let status = std::process::Command::new("cp")
        .arg("-a")
        .arg(profile())
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let log = copy.join("Default/shared_proto_db/metadata/000003.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[20] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
    let (code, out, _) = sst(&["profile", &copy.to_string_lossy(), "--format", "jsonl"]);
    assert_eq!(code, 1, "{out}");
    let rows = json_lines(&out);
    let damaged: Vec<&Value> = rows.iter().filter(|r| r.get("damage").is_some()).collect();
    assert_eq!(damaged.len(), 1, "{out}");
    assert_eq!(damaged[0]["path"], "Default/shared_proto_db/metadata");
    assert!(
        damaged[0]["damage"][0]
            .as_str()
            .unwrap()
            .contains("000003.log"),
        "{out}"
    );
}
