//! `sst blocks`: every block of a table, each checked on its own.
//!
//! Works from the footer with the raw block layer rather than `TableReader::open`, so a
//! damaged index or metaindex is listed (and, when its bytes still decode, followed) instead
//! of stopping everything. Handles, checksums and decompression are the library's
//! (`raw::format`); a block whose checksum fails is decoded anyway, to show what it holds.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use bytes::Bytes;
use leveldb_table::raw::format::{
    self, ReadBlockOptions, BLOCK_TRAILER_LEN, FILTER_META_PREFIX, FOOTER_LEN,
};
use leveldb_table::raw::internal_key;
use leveldb_table::raw::{compress, Block, FilterBlockReader};
use leveldb_table::{
    error::BlockKind, filter::BloomFilterPolicy, raw::format::BlockHandle, raw::format::Footer,
    table::CompressionProfile, table::KeyFormat, BytewiseComparator, Error, RandomAccess,
};
use serde_json::{json, Value};

use leveldb_table::Cursor;

use crate::exit::{self, CmdResult, Failure, EXIT_FAIL, EXIT_OK};
use crate::input::flags::Global;
use crate::render::output::{OutFormat, RowsOut};
use crate::render::{output, text};

const EXAMPLES: &str = "\
Examples:
  sst blocks 000005.ldb
  sst blocks 000005.ldb --format jsonl | grep '\"checksum_ok\":false'

One row per block: data blocks in index order, then the filter block, the metaindex and
the index. jsonl fields: type (data|filter|metaindex|index), offset, size (stored size,
without the 5-byte trailer), compression (none|snappy|zstd|zlib|raw-deflate|unknown),
checksum_ok (null with --no-verify), raw_size (uncompressed), entries (for the filter
block: the number of filters), first_key and last_key (hex; null for the filter block),
and error (only for a bad block). A bad block does not stop the listing.
Exit: 0 every block good, 1 some block bad, 2 the file cannot be read or its footer is
unusable.";

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The table file.
    pub file: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
}

/// What one block looks like.
struct Row {
    kind: BlockKind,
    handle: BlockHandle,
    compression: Option<&'static str>,
    checksum_ok: Option<bool>,
    raw_size: Option<usize>,
    entries: Option<u64>,
    first_key: Option<Vec<u8>>,
    last_key: Option<Vec<u8>>,
    error: Option<String>,
}

impl Row {
    fn bad(&self) -> bool {
        self.error.is_some() || self.checksum_ok == Some(false)
    }

    fn json(&self) -> Value {
        let mut v = json!({
            "type": self.kind.to_string(),
            "offset": self.handle.offset,
            "size": self.handle.size,
            "compression": self.compression,
            "checksum_ok": self.checksum_ok,
            "raw_size": self.raw_size,
            "entries": self.entries,
            "first_key": self.first_key.as_deref().map(text::hex),
            "last_key": self.last_key.as_deref().map(text::hex),
        });
        if let Some(e) = &self.error {
            v["error"] = Value::String(e.clone());
        }
        v
    }
}

struct Inspector<'a> {
    file: &'a File,
    path: &'a std::path::Path,
    data_end: u64,
    verify: bool,
}

impl Inspector<'_> {
    /// Reads, checks and decodes one block. With `entries` also walks its entries; returns
    /// the row and the uncompressed bytes (if they could be had).
    fn inspect(&self, kind: BlockKind, handle: BlockHandle, entries: bool) -> (Row, Option<Bytes>) {
        let mut row = Row {
            kind,
            handle,
            compression: None,
            checksum_ok: None,
            raw_size: None,
            entries: None,
            first_key: None,
            last_key: None,
            error: None,
        };
        let err = |e: &Error| exit::describe(self.path, e);
        if let Err(e) = format::check_handle(handle, kind, self.data_end) {
            row.checksum_ok = Some(false);
            row.error = Some(err(&e));
            return (row, None);
        }
        let n = handle.size as usize + BLOCK_TRAILER_LEN;
        let raw = match self.file.read_at(handle.offset, n) {
            Ok(r) if r.len() == n => r,
            Ok(r) => {
                row.checksum_ok = Some(false);
                row.error = Some(err(&Error::TruncatedBlock {
                    kind,
                    handle,
                    got: r.len(),
                }));
                return (row, None);
            }
            Err(e) => {
                row.checksum_ok = Some(false);
                row.error = Some(err(&Error::Io {
                    source: std::sync::Arc::new(e),
                    block: Some((kind, handle)),
                }));
                return (row, None);
            }
        };
        let size = handle.size as usize;
        row.compression = Some(compress::name(
            raw[size],
            &raw[..size],
            CompressionProfile::Auto,
        ));
        // The library checks the trailer's checksum (and decompresses); a block whose
        // checksum fails is still decoded, without the check, to show what it holds.
        let opts = |verify_checksum| ReadBlockOptions {
            verify_checksum,
            profile: CompressionProfile::Auto,
        };
        let stored =
            match format::StoredBlock::from_raw(raw.clone(), handle, kind, opts(self.verify)) {
                Err(e @ Error::ChecksumMismatch { .. }) => {
                    row.checksum_ok = Some(false);
                    row.error = Some(err(&e));
                    format::StoredBlock::from_raw(raw, handle, kind, opts(false))
                }
                Ok(s) => {
                    row.checksum_ok = s.checksum_verified.then_some(true);
                    Ok(s)
                }
                other => other,
            };
        let contents = match stored.and_then(format::StoredBlock::decompress) {
            Ok(c) => c,
            Err(e) => {
                row.error.get_or_insert_with(|| err(&e));
                return (row, None);
            }
        };
        row.raw_size = Some(contents.data.len());
        if entries {
            match Block::new(contents.data.clone(), kind, handle) {
                Ok(block) => {
                    let mut it = block.iter(&BytewiseComparator);
                    it.seek_to_first();
                    let mut count = 0u64;
                    while it.valid() {
                        if count == 0 {
                            row.first_key = Some(it.key().to_vec());
                        }
                        count += 1;
                        it.next();
                    }
                    if count > 0 {
                        // The last key: walk again is wasteful; seek_to_last is cheap.
                        let mut last = block.iter(&BytewiseComparator);
                        last.seek_to_last();
                        if last.valid() {
                            row.last_key = Some(last.key().to_vec());
                        }
                    }
                    row.entries = Some(count);
                    if let Err(e) = it.status() {
                        row.error.get_or_insert_with(|| err(&e));
                    }
                }
                Err(e) => {
                    row.error.get_or_insert_with(|| err(&e));
                }
            }
        }
        (row, Some(contents.data))
    }
}

/// The (key, value) pairs of a decoded block, as far as they decode.
fn block_entries(data: Bytes, kind: BlockKind, handle: BlockHandle) -> Vec<(Vec<u8>, Vec<u8>)> {
    let Ok(block) = Block::new(data, kind, handle) else {
        return Vec::new();
    };
    let mut it = block.iter(&BytewiseComparator);
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

/// A key for the text listing (see [`text::key_text`]), `-` when there is none.
fn text_key(k: &Option<Vec<u8>>, internal: bool) -> String {
    match k {
        None => "-".into(),
        Some(k) => text::key_text(k, internal),
    }
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    let path = &a.file;
    if let Some(msg) = crate::input::table_open::not_a_table(path) {
        return Err(Failure::error(msg));
    }
    let file = File::open(path)
        .map_err(|e| Failure::error(format!("{}: cannot open: {e}", path.display())))?;
    let file_size = file
        .size()
        .map_err(|e| Failure::error(format!("{}: cannot read: {e}", path.display())))?;
    if file_size < FOOTER_LEN as u64 {
        return Err(Failure::error(exit::describe(
            path,
            &Error::TooShort { file_size },
        )));
    }
    let footer_at = file_size - FOOTER_LEN as u64;
    let raw = file
        .read_at(footer_at, FOOTER_LEN)
        .map_err(|e| Failure::error(format!("{}: cannot read the footer: {e}", path.display())))?;
    let buf: [u8; FOOTER_LEN] = raw.as_ref().try_into().map_err(|_| {
        Failure::error(exit::describe(
            path,
            &Error::TooShort {
                file_size: raw.len() as u64,
            },
        ))
    })?;
    let footer =
        Footer::decode(&buf, file_size).map_err(|e| Failure::error(exit::describe(path, &e)))?;
    let ins = Inspector {
        file: &file,
        path,
        data_end: footer_at,
        verify: g.verify,
    };

    let (index_row, index_data) = ins.inspect(BlockKind::Index, footer.index, true);
    let (meta_row, meta_data) = ins.inspect(BlockKind::Metaindex, footer.metaindex, true);
    let mut rows = Vec::new();
    let index_entries = index_data
        .map(|d| block_entries(d, BlockKind::Index, footer.index))
        .unwrap_or_default();
    for (_, v) in &index_entries {
        let mut v: &[u8] = v;
        match BlockHandle::decode_from(&mut v) {
            Some(h) => rows.push(ins.inspect(BlockKind::Data, h, true).0),
            None => {
                let e = Error::BadIndexValue {
                    kind: BlockKind::Index,
                    handle: footer.index,
                };
                rows.push(Row {
                    kind: BlockKind::Data,
                    handle: BlockHandle::default(),
                    compression: None,
                    checksum_ok: Some(false),
                    raw_size: None,
                    entries: None,
                    first_key: None,
                    last_key: None,
                    error: Some(exit::describe(path, &e)),
                });
            }
        }
    }
    let meta_entries = meta_data
        .map(|d| block_entries(d, BlockKind::Metaindex, footer.metaindex))
        .unwrap_or_default();
    for (k, v) in &meta_entries {
        if !k.starts_with(FILTER_META_PREFIX) {
            continue;
        }
        let mut v: &[u8] = v;
        let Some(h) = BlockHandle::decode_from(&mut v) else {
            continue;
        };
        let (mut row, data) = ins.inspect(BlockKind::Filter, h, false);
        if let Some(d) = data {
            let f = FilterBlockReader::new(std::sync::Arc::new(BloomFilterPolicy::new(10)), d);
            row.entries = Some(f.num_filters() as u64);
        }
        rows.push(row);
    }
    rows.push(meta_row);
    rows.push(index_row);

    let mut out = RowsOut::new(output::stdout(), a.format);
    match a.format {
        OutFormat::Jsonl | OutFormat::Json => {
            for r in &rows {
                serde_json::to_writer(&mut out, &r.json()).map_err(std::io::Error::from)?;
                out.write_all(b"\n")?;
            }
        }
        OutFormat::Text => {
            // Internal keys: as asked, or when every data block's keys parse as such.
            let internal = match g.keys {
                KeyFormat::Internal => true,
                KeyFormat::Plain => false,
                KeyFormat::Auto => {
                    let data: Vec<&Row> =
                        rows.iter().filter(|r| r.kind == BlockKind::Data).collect();
                    data.iter().any(|r| r.first_key.is_some())
                        && data.iter().all(|r| {
                            [&r.first_key, &r.last_key].iter().all(|k| {
                                k.iter()
                                    .all(|k| internal_key::parse_internal_key(k).is_some())
                            })
                        })
                }
            };
            writeln!(
                out,
                "{:<9} {:>10} {:>9} {:<11} {:<8} {:>9} {:>7}  first_key .. last_key",
                "type", "offset", "size", "compression", "checksum", "raw_size", "entries"
            )?;
            for r in &rows {
                let ck = match r.checksum_ok {
                    Some(true) => "ok",
                    Some(false) => "BAD",
                    None => "-",
                };
                let opt = |v: Option<String>| v.unwrap_or_else(|| "-".into());
                write!(
                    out,
                    "{:<9} {:>10} {:>9} {:<11} {:<8} {:>9} {:>7}",
                    r.kind.to_string(),
                    r.handle.offset,
                    r.handle.size,
                    r.compression.unwrap_or("-"),
                    ck,
                    opt(r.raw_size.map(|n| n.to_string())),
                    opt(r.entries.map(|n| n.to_string())),
                )?;
                if r.kind != BlockKind::Filter {
                    let internal = internal && r.kind != BlockKind::Metaindex;
                    write!(
                        out,
                        "  {} .. {}",
                        text_key(&r.first_key, internal),
                        text_key(&r.last_key, internal)
                    )?;
                }
                writeln!(out)?;
                if let Some(e) = &r.error {
                    writeln!(out, "  error: {e}")?;
                }
            }
        }
    }
    out.finish()?;
    Ok(if rows.iter().any(Row::bad) {
        EXIT_FAIL
    } else {
        EXIT_OK
    })
}
