//! `sst db info` on SQLite: each database's file, name, version, stores and indexes with
//! their record counts, and what its files hold (pages, the log's frames and commits, how
//! many pages are only in the log, free pages).

use std::io::Write;
use std::path::Path;

use serde_json::{json, Value};
use sst_chrome::idb::KeyPath;

use crate::exit::{CmdResult, Failure, EXIT_OK};
use crate::render::output::{self, OutFormat};

use super::open::open;

fn key_path(k: &Option<KeyPath>) -> Value {
    match k {
        Some(KeyPath::String(s)) => json!(s),
        Some(KeyPath::Array(a)) => json!(a),
        _ => Value::Null,
    }
}

/// Runs `sst db info` on SQLite.
pub fn info(path: &Path, format: OutFormat) -> CmdResult {
    let dbs = open(path)?;
    let fail = |e: sst_chrome::Error| Failure::error(format!("{}: {e}", path.display()));
    let mut list = Vec::new();
    for db in &dbs {
        let mut stores = Vec::new();
        for (id, s) in &db.info.stores {
            let mut n = 0u64;
            db.for_each_record(*id, |_| {
                n += 1;
                Ok(true)
            })
            .map_err(fail)?;
            let indexes: Vec<Value> = s
                .indexes
                .iter()
                .map(|(iid, i)| {
                    json!({
                        "id": iid, "name": i.name, "key_path": key_path(&i.key_path),
                        "unique": i.unique, "multi_entry": i.multi_entry,
                    })
                })
                .collect();
            stores.push(json!({
                "id": id, "name": s.name, "key_path": key_path(&s.key_path),
                "auto_increment": s.auto_increment, "key_generator": db.key_generators.get(id),
                "records": n, "indexes": indexes,
            }));
        }
        let f = &db.files;
        let wal = &f.wal;
        list.push(json!({
            "file": db.path().file_name().map(|n| n.to_string_lossy().into_owned()),
            "name": db.info.name, "version": db.info.version,
            "records": db.record_count().map_err(fail)?,
            "stores": stores,
            "page_size": f.page_size, "pages": f.pages, "main_file_bytes": f.main_len,
            "wal": f.wal_len.map(|len| json!({
                "bytes": len, "frames": wal.frames.len(),
                "committed_frames": wal.committed().count(), "commits": wal.commits(),
                "uncommitted_frames": wal.frames.len() - wal.committed().count(),
                "pages_only_in_wal": f.pages_from_wal,
                "stop": wal.stop.map(|(o, why)| json!({"offset": o, "why": why})),
            })),
        }));
    }
    let v = json!({"path": path.display().to_string(), "backend": "sqlite", "databases": list});
    let mut out = output::stdout();
    match format {
        OutFormat::Json | OutFormat::Jsonl => output::write_document(&mut out, &v, format)?,
        OutFormat::Text => {
            writeln!(
                out,
                "{}: Chromium's SQLite IndexedDB, {} database(s)",
                path.display(),
                dbs.len()
            )?;
            for d in &list {
                writeln!(
                    out,
                    "database {} (version {}): file {}, {} records, {} pages of {} bytes",
                    d["name"],
                    d["version"],
                    d["file"].as_str().unwrap_or("?"),
                    d["records"],
                    d["pages"],
                    d["page_size"]
                )?;
                if let Some(w) = d["wal"].as_object() {
                    writeln!(out, "  wal: {} bytes, {} frames ({} committed in {} commits, {} uncommitted); {} pages only in the wal",
                        w["bytes"], w["frames"], w["committed_frames"], w["commits"], w["uncommitted_frames"], w["pages_only_in_wal"])?;
                }
                for s in d["stores"].as_array().into_iter().flatten() {
                    writeln!(
                        out,
                        "  store {} {}: {} records, key path {}, autoIncrement {}",
                        s["id"], s["name"], s["records"], s["key_path"], s["auto_increment"]
                    )?;
                    for i in s["indexes"].as_array().into_iter().flatten() {
                        writeln!(
                            out,
                            "    index {} {}: key path {}, unique {}, multiEntry {}",
                            i["id"], i["name"], i["key_path"], i["unique"], i["multi_entry"]
                        )?;
                    }
                }
            }
        }
    }
    out.flush()?;
    Ok(EXIT_OK)
}
