//! `sst manifest FILE`: dump a MANIFEST, its VersionEdits field by field, with offsets;
//! damage is reported where it is and reading goes on (as LevelDB's log reader does).

use std::io::Write;
use std::path::PathBuf;

use leveldb_table::db::files::VersionEdit;
use serde_json::{json, Value};

use crate::exit::{CmdResult, EXIT_FAIL, EXIT_OK};
use crate::input::filekind::Kind;
use crate::input::log_file::{bad_record, for_each_record, read_as};
use crate::render::output::{OutFormat, RowsOut};
use crate::render::{output, text};

/// `sst manifest FILE`
#[derive(clap::Args, Debug)]
#[command(after_help = "\
Examples:
  sst manifest db/MANIFEST-000002                 every VersionEdit, field by field
  sst manifest db/MANIFEST-000002 --format jsonl  one row per VersionEdit
Exit: 0 clean, 1 damage found, 2 the file cannot be read.")]
pub struct Args {
    /// The MANIFEST file.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
}

fn edit_json(offset: u64, e: &VersionEdit) -> Value {
    json!({
        "offset": offset,
        "comparator": e.comparator,
        "log_number": e.log_number,
        "prev_log_number": e.prev_log_number,
        "next_file_number": e.next_file_number,
        "last_sequence": e.last_sequence,
        "compact_pointers": e.compact_pointers.iter().map(|(l, k)| json!({"level": l, "key": text::hex(k)})).collect::<Vec<_>>(),
        "deleted_files": e.deleted_files.iter().map(|(l, n)| json!({"level": l, "number": n})).collect::<Vec<_>>(),
        "new_files": e.new_files.iter().map(|f| json!({
            "level": f.level, "number": f.number, "size": f.size,
            "smallest": text::hex(&f.smallest), "largest": text::hex(&f.largest),
        })).collect::<Vec<_>>(),
    })
}

/// Runs `sst manifest`.
pub fn run(a: &Args) -> CmdResult {
    let bytes = read_as(&a.file, &[Kind::Manifest], "a MANIFEST")?;
    let mut out = RowsOut::new(output::stdout(), a.format);
    let damaged = for_each_record(&a.file, &bytes, |offset, data| {
        let e = match VersionEdit::decode(data) {
            Ok(e) => e,
            Err(err) => {
                bad_record(&a.file, offset, err);
                return Ok(true);
            }
        };
        match a.format {
            OutFormat::Json | OutFormat::Jsonl => {
                serde_json::to_writer(&mut out, &edit_json(offset, &e))
                    .map_err(std::io::Error::from)?;
                out.write_all(b"\n")?;
            }
            OutFormat::Text => {
                writeln!(out, "--- VersionEdit at offset {offset}")?;
                if let Some(c) = &e.comparator {
                    writeln!(out, "  comparator        {c}")?;
                }
                for (name, v) in [
                    ("log number       ", e.log_number),
                    ("prev log number  ", e.prev_log_number),
                    ("next file number ", e.next_file_number),
                    ("last sequence    ", e.last_sequence),
                ] {
                    if let Some(v) = v {
                        writeln!(out, "  {name} {v}")?;
                    }
                }
                for (l, k) in &e.compact_pointers {
                    writeln!(
                        out,
                        "  compact pointer   level {l} at {}",
                        text::key_text(k, true)
                    )?;
                }
                for (l, n) in &e.deleted_files {
                    writeln!(out, "  deleted file      level {l} {n:06}.ldb")?;
                }
                for f in &e.new_files {
                    writeln!(
                        out,
                        "  new file          level {} {:06}.ldb {} bytes {} .. {}",
                        f.level,
                        f.number,
                        f.size,
                        text::key_text(&f.smallest, true),
                        text::key_text(&f.largest, true)
                    )?;
                }
            }
        }
        Ok(false)
    })?;
    out.finish()?;
    Ok(if damaged { EXIT_FAIL } else { EXIT_OK })
}
