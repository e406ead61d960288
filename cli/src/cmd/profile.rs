//! `sst profile DIR`: every storage area of a Chrome or Electron profile or user-data
//! folder, one row each: IndexedDB (LevelDB or SQLite backend), localStorage and
//! sessionStorage per origin, other LevelDB databases; with live record counts and any
//! damage met (`sst_chrome::profile::survey`). Nothing is written.
//!
//! ```text
//! jsonl  {"kind":"indexeddb","origin":"http://127.0.0.1:8080","backend":"sqlite",
//!         "path":"Default/IndexedDB/http_127.0.0.1_8080","records":76,"databases":3}
//!        {"kind":"local_storage","origin":...,"path":"Default/Local Storage/leveldb","records":4}
//!        {"kind":"leveldb","path":"Default/Sync Data/LevelDB","records":12,"damage":[...]}
//! ```

use std::io::Write;
use std::path::PathBuf;

use serde_json::{json, Map, Value};
use sst_chrome::profile::{survey, Area};

use crate::exit::{CmdResult, Failure, EXIT_FAIL, EXIT_OK};
use crate::render::output::{self, OutFormat};

const EXAMPLES: &str = "\
Examples:
  sst profile ~/.config/chromium                 every profile of a user-data folder
  sst profile ~/.config/Slack --format jsonl     an Electron app's storage, one JSON row each

Rows: kind (indexeddb, local_storage, session_storage, leveldb), origin (where the area has
one), backend (IndexedDB: leveldb or sqlite), path (relative to DIR), records (live
records: IndexedDB object-store records, storage items, LevelDB keys), databases
(IndexedDB), damage (what reading met, when it met any). Nothing is written.
Exit: 0 every area read cleanly; 1 damage met; 2 DIR cannot be listed.";

/// `sst profile DIR`
#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// A Chrome or Electron user-data folder, or one profile (`Default`, `Profile 1`).
    pub dir: PathBuf,
    /// Output format: a text table, json (an array of the rows) or jsonl.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
}

fn row(a: &Area) -> Value {
    let mut m = Map::new();
    m.insert("kind".into(), json!(a.kind.as_str()));
    if let Some(o) = &a.origin {
        m.insert("origin".into(), json!(o));
    }
    if let Some(b) = a.backend {
        m.insert("backend".into(), json!(b.as_str()));
    }
    m.insert("path".into(), json!(a.path.to_string_lossy()));
    m.insert("records".into(), json!(a.records));
    if let Some(n) = a.databases {
        m.insert("databases".into(), json!(n));
    }
    if !a.damage.is_empty() {
        m.insert("damage".into(), json!(a.damage));
    }
    Value::Object(m)
}

/// Runs `sst profile`.
pub fn run(a: &Args) -> CmdResult {
    let areas = survey(&a.dir).map_err(|e| Failure::error(e.to_string()))?;
    let mut out = output::stdout();
    match a.format {
        OutFormat::Jsonl => {
            for x in &areas {
                serde_json::to_writer(&mut out, &row(x)).map_err(std::io::Error::from)?;
                writeln!(out)?;
            }
        }
        OutFormat::Json => {
            let rows: Vec<Value> = areas.iter().map(row).collect();
            output::write_document(&mut out, &Value::Array(rows), a.format)?;
        }
        OutFormat::Text => {
            writeln!(
                out,
                "{:<16} {:<8} {:<32} {:>8}  PATH",
                "KIND", "BACKEND", "ORIGIN", "RECORDS"
            )?;
            for x in &areas {
                writeln!(
                    out,
                    "{:<16} {:<8} {:<32} {:>8}  {}",
                    x.kind.as_str(),
                    x.backend.map_or("-", |b| b.as_str()),
                    x.origin.as_deref().unwrap_or("-"),
                    x.records,
                    x.path.display()
                )?;
                for d in &x.damage {
                    writeln!(out, "  damage: {d}")?;
                }
            }
        }
    }
    out.flush()?;
    Ok(if areas.iter().any(|x| !x.damage.is_empty()) {
        EXIT_FAIL
    } else {
        EXIT_OK
    })
}
