//! Tables and directories real writers made, from the repository's `testdata/`: C++ LevelDB
//! 1.22 (plyvel), goleveldb, LevelDB main (zstd), Mojang's fork, Chromium; and the damaged
//! and hostile tables kept there.
//!
//! The expected answer is this project's reader's, checked here against the listing the
//! writer left beside each fixture (`X.entries.jsonl[.gz]`: `key` or `ikey`, and `value` or
//! `value_len` + `value_sha256`; a directory's `expected.json` `scan`): if they disagree the
//! kit refuses to run.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use leveldb_table::Comparator;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::dirs::dir_case;
use super::tables::read_case;
use super::{Case, Group};
use crate::error::{Error, Result};
use crate::oracle;
use crate::protocol::Entry;

/// Folders of tables, with who wrote them.
const TABLE_FOLDERS: [(&str, &str); 4] = [
    ("cases", "C++ LevelDB 1.22 (plyvel 1.5.1)"),
    ("goleveldb", "goleveldb"),
    ("leveldb_zstd", "LevelDB main with zstd"),
    ("mojang", "Mojang's LevelDB (Minecraft Bedrock)"),
];

/// Directories, with who wrote them.
const DIRS: [(&str, &str); 8] = [
    (
        "db/basic",
        "C++ LevelDB 1.22: tables at levels 0-2, overwrites, deletions, a live log",
    ),
    (
        "db/snapshot",
        "C++ LevelDB 1.22: old versions kept by a snapshot, a live log",
    ),
    (
        "db/biglog",
        "C++ LevelDB 1.22: no tables, a 70 KB batch over three log blocks, two live logs",
    ),
    (
        "db/flush_race",
        "C++ LevelDB 1.22: the MANIFEST's last sequence covers batches of the live log \
         (writes during a flush)",
    ),
    (
        "db/goleveldb",
        "goleveldb: compacted tables, overwrites and deletions, a live journal",
    ),
    (
        "idb/values/local_storage",
        "Chromium's localStorage (logs only)",
    ),
    (
        "idb/values/session_storage",
        "Chromium's sessionStorage (logs only)",
    ),
    ("idb/chromium", "Chromium's IndexedDB (comparator idb_cmp1)"),
];

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

/// The entries of `dir`, sorted; none if it does not exist (`cases` notes the folders
/// that are missing).
fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    if !dir.is_dir() {
        return Ok(Vec::new());
    }
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io(dir))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    v.sort();
    Ok(v)
}

fn fixture_error(path: &Path, reason: impl Into<String>) -> Error {
    Error::Fixture {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// The listing beside `table` (`X.entries.jsonl` or `.jsonl.gz`), as rows.
fn listing(table: &Path) -> Result<Option<Vec<Value>>> {
    let stem = table
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let plain = table.with_file_name(format!("{stem}.entries.jsonl"));
    let gz = table.with_file_name(format!("{stem}.entries.jsonl.gz"));
    let text = if plain.exists() {
        std::fs::read_to_string(&plain).map_err(io(&plain))?
    } else if gz.exists() {
        let raw = std::fs::read(&gz).map_err(io(&gz))?;
        let mut s = String::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_string(&mut s)
            .map_err(io(&gz))?;
        s
    } else {
        return Ok(None);
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).map_err(|e| fixture_error(table, format!("listing: {e}"))))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

fn unhex(v: &Value) -> Option<Vec<u8>> {
    v.as_str().and_then(|s| hex::decode(s).ok())
}

fn hex_field(row: &Value, names: &[&str]) -> Option<Vec<u8>> {
    names.iter().find_map(|n| row.get(n)).and_then(unhex)
}

/// Whether `row` of a listing says `entry`.
fn row_matches(row: &Value, entry: &Entry) -> bool {
    if hex_field(row, &["key", "ikey"]).as_deref() != Some(&entry.0[..]) {
        return false;
    }
    if let Some(v) = hex_field(row, &["value"]) {
        return v == entry.1;
    }
    let len = row.get("value_len").and_then(Value::as_u64);
    let sha = row.get("value_sha256").and_then(Value::as_str);
    len == Some(entry.1.len() as u64) && sha == Some(&hex::encode(Sha256::digest(&entry.1))[..])
}

/// This project's reading of `table`, checked against its listing.
fn checked_table(table: &Path) -> Result<(Vec<u8>, Vec<Entry>)> {
    let bytes = std::fs::read(table).map_err(io(table))?;
    let entries = oracle::table_entries(&bytes).map_err(|e| fixture_error(table, e))?;
    if let Some(rows) = listing(table)? {
        if rows.len() != entries.len() {
            let msg = format!("{} entries read, {} listed", entries.len(), rows.len());
            return Err(fixture_error(table, msg));
        }
        if let Some(i) = (0..rows.len()).find(|&i| !row_matches(&rows[i], &entries[i])) {
            return Err(fixture_error(
                table,
                format!("entry {i} differs from the listing"),
            ));
        }
    }
    Ok((bytes, entries))
}

fn table_cases(testdata: &Path, out: &mut Vec<Case>) -> Result<()> {
    for (folder, writer) in TABLE_FOLDERS {
        let root = testdata.join(folder);
        let mut tables = Vec::new();
        if folder == "cases" {
            for sub in sorted_entries(&root)?.into_iter().filter(|p| p.is_dir()) {
                let found: Vec<PathBuf> = sorted_entries(&sub)?
                    .into_iter()
                    .filter(|p| p.extension().is_some_and(|e| e == "ldb"))
                    .collect();
                let case = sub
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default()
                    .to_string();
                let many = found.len() > 1;
                for t in found {
                    let stem = t.file_stem().and_then(|n| n.to_str()).unwrap_or_default();
                    let name = if many {
                        format!("{case}-{stem}")
                    } else {
                        case.clone()
                    };
                    let w = if case.starts_with("mojang") {
                        TABLE_FOLDERS[3].1
                    } else {
                        writer
                    };
                    tables.push((name, w, t));
                }
            }
        } else {
            for t in sorted_entries(&root)? {
                if t.extension().is_some_and(|e| e == "ldb") {
                    let stem = t.file_stem().and_then(|n| n.to_str()).unwrap_or_default();
                    tables.push((stem.to_string(), writer, t));
                }
            }
        }
        for (name, writer, path) in tables {
            let (bytes, entries) = checked_table(&path)?;
            let about = format!("written by {writer}: testdata/{}", rel(testdata, &path));
            let name = format!("fixture-{folder}-{name}");
            out.push(read_case(
                &name,
                Group::Tables,
                &about,
                &path,
                &bytes,
                Arc::new(entries),
            )?);
        }
    }
    Ok(())
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

/// The compressions of every table of a directory.
fn dir_compressions(dir: &Path) -> Result<Vec<&'static str>> {
    let mut out = Vec::new();
    for p in sorted_entries(dir)? {
        if p.extension().is_some_and(|e| e == "ldb" || e == "sst") {
            let bytes = std::fs::read(&p).map_err(io(&p))?;
            for c in oracle::compressions(&bytes).map_err(|e| fixture_error(&p, e))? {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
    }
    Ok(out)
}

fn dir_cases(
    testdata: &Path,
    comparators: &[Arc<dyn Comparator>],
    notes: &mut Vec<String>,
    out: &mut Vec<Case>,
) -> Result<()> {
    let mut dirs: Vec<(PathBuf, &str)> = DIRS.iter().map(|(d, w)| (testdata.join(d), *w)).collect();
    let idb = testdata.join("idb/values/IndexedDB");
    if idb.is_dir() {
        for p in sorted_entries(&idb)? {
            if p.extension().is_some_and(|e| e == "leveldb") {
                dirs.push((
                    p,
                    "Chromium's IndexedDB with values of every kind, blobs (comparator idb_cmp1)",
                ));
            }
        }
    }
    for (dir, about) in dirs {
        if !dir.is_dir() {
            continue;
        }
        let comparator = match oracle::db_comparator(&dir, comparators) {
            Ok(c) => c,
            Err(e) => {
                notes.push(format!("testdata/{} left out: {e}", rel(testdata, &dir)));
                continue;
            }
        };
        let entries = oracle::db_entries(&dir, comparators).map_err(|e| fixture_error(&dir, e))?;
        let expected = dir.join("expected.json");
        if expected.exists() {
            let text = std::fs::read_to_string(&expected).map_err(io(&expected))?;
            let doc: Value =
                serde_json::from_str(&text).map_err(|e| fixture_error(&expected, e.to_string()))?;
            let listed: Vec<Entry> = doc["scan"]
                .as_array()
                .map(|rows| {
                    rows.iter()
                        .filter_map(|r| Some((unhex(&r[0])?, unhex(&r[1])?)))
                        .collect()
                })
                .unwrap_or_default();
            if listed != entries {
                let msg = format!(
                    "the live view ({} keys) differs from expected.json's scan ({} keys)",
                    entries.len(),
                    listed.len()
                );
                return Err(fixture_error(&dir, msg));
            }
        }
        let name = format!(
            "fixture-{}",
            rel(testdata, &dir)
                .replace('/', "-")
                .replace(".indexeddb.leveldb", "")
        );
        let about = format!("{about}: testdata/{}", rel(testdata, &dir));
        let mut c = dir_case(
            &name,
            Group::Directories,
            &about,
            &dir,
            entries,
            dir_compressions(&dir)?,
        )?;
        c.comparator = comparator;
        out.push(c);
    }
    Ok(())
}

fn damaged_cases(testdata: &Path, out: &mut Vec<Case>) -> Result<()> {
    let corrupt = testdata.join("corrupt");
    let mut found = Vec::new();
    for p in sorted_entries(&corrupt)? {
        if p.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&p).map_err(io(&p))?;
            let doc: Value =
                serde_json::from_str(&text).map_err(|e| fixture_error(&p, e.to_string()))?;
            let from = doc["derived_from"]
                .as_str()
                .ok_or_else(|| fixture_error(&p, "no derived_from"))?;
            let what = doc["mutation"].as_str().unwrap_or("damaged").to_string();
            found.push((
                p.with_extension("ldb"),
                testdata
                    .join("cases")
                    .join(from.trim_start_matches("cases/")),
                what,
            ));
        }
    }
    // The hostile blocks of the robustness work, made from small_snappy (tests/robust_regressions.rs).
    let small = testdata.join("cases/small_snappy/000005.ldb");
    for (name, what) in [
        (
            "metaindex_long_shared_keys",
            "a metaindex of 5000 entries sharing one 4000-byte key (the entries are intact)",
        ),
        (
            "index_long_shared_keys",
            "an index of 5000 entries sharing one 4000-byte key, pointing at offset 0",
        ),
    ] {
        found.push((
            testdata.join(format!("regressions/{name}.ldb")),
            small.clone(),
            what.to_string(),
        ));
    }
    for (table, base, what) in found {
        if !table.is_file() || !base.is_file() {
            continue;
        }
        let (base_bytes, entries) = checked_table(&base)?;
        let stem = table
            .file_stem()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let folder = table
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let about = format!(
            "{what}: testdata/{} (from {})",
            rel(testdata, &table),
            rel(testdata, &base)
        );
        let name = format!("fixture-{folder}-{stem}");
        out.push(read_case(
            &name,
            Group::Damaged,
            &about,
            &table,
            &base_bytes,
            Arc::new(entries),
        )?);
    }
    Ok(())
}

/// The fixture cases (tables, directories, damaged), with notes on those left out.
pub(super) fn cases(
    testdata: &Path,
    comparators: &[Arc<dyn Comparator>],
    notes: &mut Vec<String>,
) -> Result<Vec<Case>> {
    let folders = TABLE_FOLDERS
        .iter()
        .map(|f| f.0)
        .chain(DIRS.iter().map(|d| d.0));
    for f in folders.chain(["corrupt", "regressions"]) {
        if !testdata.join(f).is_dir() {
            notes.push(format!("no testdata/{f}: its fixtures are left out"));
        }
    }
    let mut out = Vec::new();
    table_cases(testdata, &mut out)?;
    dir_cases(testdata, comparators, notes, &mut out)?;
    damaged_cases(testdata, &mut out)?;
    Ok(out)
}
