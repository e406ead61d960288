//! `sst db records DIR`: every record of every table and log of a database directory, with
//! its file, its position to the byte, its sequence and what became of it (the library's
//! `leveldb_table::db::reader::records`). Under `--salvage` the live files are read past the same
//! damage as `db scan` and `db get`, so the three agree.

use std::io::Write;

use leveldb_table::db::reader::{records, Location};
use leveldb_table::raw::internal_key::ValueType;

use super::open::{damage_code, describe, open, DbArgs};
use crate::exit::{CmdResult, Failure};
use crate::input::flags::Global;
use crate::render::chrome::Decoding;
use crate::render::output::{OutFormat, RowsOut};
use crate::render::rows::kind_name;
use crate::render::{output, text};

/// `sst db records DIR`
#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArgs,
    /// Output format: text, json or jsonl `{"key", "value", "seq", "kind", "status",
    /// "file", "offset", ...}` (key and value hex), with the record's own position: in a
    /// table `"block_offset", "block_size", "offset_in_block"` (the entry's byte offset in
    /// the decompressed block), in a log `"batch_offset", "offset_in_batch"`.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// Text output shows keys and values in hex.
    #[arg(long)]
    pub hex: bool,
    #[command(flatten)]
    pub decode: crate::render::chrome::DecodeArgs,
}

/// `sst db records`.
pub fn run(g: &Global, a: &Args) -> CmdResult {
    if crate::render::chrome::sqlite::is_sqlite_target(&a.db.dir) {
        return crate::render::chrome::sqlite::records(&a.db.dir, a.format, a.hex, &a.decode);
    }
    let db = open(&a.db, g)?;
    let all = records(&db).map_err(|e| Failure::error(describe(&a.db, &e)))?;
    let dec = Decoding::for_db(&db, &a.db.dir, &a.decode, Some(&all))?;
    let mut out = RowsOut::new(output::stdout(), a.format);
    let mut line = Vec::with_capacity(256);
    for r in all.iter().filter(|r| dec.keep(&r.key)) {
        line.clear();
        let kind = kind_name(r.kind);
        match a.format {
            OutFormat::Text => {
                dec.push_key_text(&mut line, &r.key, a.hex);
                line.extend_from_slice(
                    format!(
                        " @ {} : {kind} [{}] {}:{} => ",
                        r.sequence,
                        r.status.as_str(),
                        r.file,
                        r.offset
                    )
                    .as_bytes(),
                );
                dec.push_value_text(&mut line, &r.key, &r.value, a.hex);
                line.push(b'\n');
            }
            OutFormat::Json | OutFormat::Jsonl => {
                line.extend_from_slice(b"{\"key\":\"");
                text::push_hex(&mut line, &r.key);
                line.extend_from_slice(b"\",\"value\":\"");
                text::push_hex(&mut line, &r.value);
                line.extend_from_slice(
                    format!(
                        "\",\"seq\":{},\"kind\":\"{kind}\",\"status\":\"{}\",\"file\":",
                        r.sequence,
                        r.status.as_str()
                    )
                    .as_bytes(),
                );
                text::push_json_str(&mut line, &r.file);
                line.extend_from_slice(format!(",\"offset\":{}", r.offset).as_bytes());
                let at = match r.location {
                    Location::Table {
                        block_offset,
                        block_size,
                        offset_in_block,
                    } => format!(
                        ",\"block_offset\":{block_offset},\"block_size\":{block_size},\
                         \"offset_in_block\":{offset_in_block}"
                    ),
                    Location::Log {
                        batch_offset,
                        offset_in_batch,
                    } => format!(
                        ",\"batch_offset\":{batch_offset},\"offset_in_batch\":{offset_in_batch}"
                    ),
                };
                line.extend_from_slice(at.as_bytes());
                let value = (r.kind == ValueType::Value).then_some(&r.value[..]);
                dec.push_json(&mut line, &r.key, value);
                line.extend_from_slice(b"}\n");
            }
        }
        out.write_all(&line)?;
    }
    out.finish()?;
    Ok(damage_code(&db, &a.db))
}
