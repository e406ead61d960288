//! `sst get`: point lookups, filter first, as a database does them.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use leveldb_table::{BlockCache, Lookup, ReadOptions, TableReader};

use crate::exit::{self, CmdResult, Failure, EXIT_ERROR, EXIT_FAIL, EXIT_OK};
use crate::input::flags::Global;
use crate::input::{keys, lines};
use crate::render::output::{OutFormat, RowsOut};
use crate::render::{output, text};

const EXAMPLES: &str = "\
Examples:
  sst get 000005.ldb user:0000042:name               one key (a user key for DB tables)
  sst get 000005.ldb --hex 757365723a30               the key in hex
  sst get 000005.ldb --keys-from keys.txt --format jsonl
  cut -f1 keys.tsv | sst get t.ldb --keys-from -      keys on stdin, one per line

For tables of a LevelDB database (internal keys), KEY is a user key and the answer is the
newest version in the table: found, deleted, or not found.
--keys-from reads one key per line (hex with --hex, surrounding spaces ignored then); in
raw mode a line is the key's bytes exactly (no \\r stripping) and an empty line is the
empty key. Keys given as arguments come first.
jsonl, one line per key, in order:
  {\"key\":HEX,\"found\":true,\"value\":HEX}            (plain tables)
  {\"key\":HEX,\"found\":true,\"value\":HEX,\"seq\":N}     (database tables: the version's sequence)
  {\"key\":HEX,\"found\":false}
  {\"key\":HEX,\"found\":false,\"deleted\":true,\"seq\":N}
  {\"key\":HEX,\"error\":\"MESSAGE\"}            (the key's block cannot be read)
Exit: 0 every key found, 1 some key not found (or deleted), 2 any error or the table cannot
be opened.";

#[derive(clap::Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct Args {
    /// The table file.
    pub file: PathBuf,
    /// Keys to look up (user keys for internal-key tables).
    #[arg(id = "key_args", value_name = "KEY")]
    pub key_args: Vec<OsString>,
    /// Read keys from a file, one per line (`-` is stdin).
    #[arg(long, value_name = "PATH")]
    pub keys_from: Option<PathBuf>,
    /// Keys are given in hex; text output shows keys and values in hex.
    #[arg(long)]
    pub hex: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
}

/// The state of a run: the table, buffers, what went wrong so far.
struct Getter<'a, W: Write> {
    table: &'a TableReader<std::fs::File>,
    file: &'a std::path::Path,
    opts: ReadOptions,
    format: OutFormat,
    hex: bool,
    out: W,
    value: Vec<u8>,
    line: Vec<u8>,
    not_found: bool,
    error: bool,
}

impl<W: Write> Getter<'_, W> {
    fn get(&mut self, key: &[u8]) -> Result<(), Failure> {
        // One lookup answers found (with its sequence in a database table), deleted or
        // absent; the value lands in the reused buffer.
        let res = self.table.get_into(key, &self.opts, &mut self.value);
        let line = &mut self.line;
        line.clear();
        match self.format {
            OutFormat::Jsonl | OutFormat::Json => {
                line.extend_from_slice(b"{\"key\":\"");
                text::push_hex(line, key);
                line.push(b'"');
            }
            OutFormat::Text => text::push_text(line, key, self.hex),
        }
        match res {
            Ok(Lookup::Found { sequence, .. }) => match self.format {
                OutFormat::Jsonl | OutFormat::Json => {
                    line.extend_from_slice(b",\"found\":true,\"value\":\"");
                    text::push_hex(line, &self.value);
                    line.push(b'"');
                    if let Some(seq) = sequence {
                        line.extend_from_slice(b",\"seq\":");
                        line.extend_from_slice(seq.to_string().as_bytes());
                    }
                    line.extend_from_slice(b"}\n");
                }
                OutFormat::Text => {
                    line.extend_from_slice(b" => ");
                    text::push_text(line, &self.value, self.hex);
                    if let Some(seq) = sequence {
                        line.extend_from_slice(b" @ ");
                        line.extend_from_slice(seq.to_string().as_bytes());
                    }
                    line.push(b'\n');
                }
            },
            Ok(Lookup::NotFound) => {
                self.not_found = true;
                line.extend_from_slice(match self.format {
                    OutFormat::Jsonl | OutFormat::Json => b",\"found\":false}\n",
                    OutFormat::Text => b": not found\n",
                });
            }
            Ok(Lookup::Deleted { sequence }) => {
                self.not_found = true;
                match self.format {
                    OutFormat::Jsonl | OutFormat::Json => {
                        line.extend_from_slice(b",\"found\":false,\"deleted\":true,\"seq\":");
                        line.extend_from_slice(sequence.to_string().as_bytes());
                        line.extend_from_slice(b"}\n");
                    }
                    OutFormat::Text => {
                        line.extend_from_slice(b": deleted @ ");
                        line.extend_from_slice(sequence.to_string().as_bytes());
                        line.push(b'\n');
                    }
                }
            }
            Err(e) => {
                self.error = true;
                let msg = exit::describe(self.file, &e);
                match self.format {
                    OutFormat::Jsonl | OutFormat::Json => {
                        line.extend_from_slice(b",\"error\":");
                        text::push_json_str(line, &msg);
                        line.extend_from_slice(b"}\n");
                    }
                    OutFormat::Text => {
                        line.extend_from_slice(b": error: ");
                        line.extend_from_slice(msg.as_bytes());
                        line.push(b'\n');
                    }
                }
                exit::warn(&msg);
            }
        }
        self.out.write_all(line)?;
        Ok(())
    }
}

pub fn run(g: &Global, a: &Args) -> CmdResult {
    if a.key_args.is_empty() && a.keys_from.is_none() {
        return Err(Failure::error(
            "get: give keys as arguments or with --keys-from PATH|-",
        ));
    }
    let arg_keys: Vec<Vec<u8>> = a
        .key_args
        .iter()
        .map(|k| keys::key_arg(k, a.hex, "KEY"))
        .collect::<Result<_, _>>()?;
    let mut reader = a
        .keys_from
        .as_deref()
        .map(lines::LineReader::open)
        .transpose()?;
    // An 8 MiB block cache, LevelDB's default: repeated keys of a block decode it once.
    let cache = Arc::new(BlockCache::new(8 << 20));
    if let Some(msg) = crate::input::table_open::not_a_table(&a.file) {
        return Err(Failure::error(msg));
    }
    let file = std::fs::File::open(&a.file)
        .map_err(|e| Failure::error(format!("{}: cannot open: {e}", a.file.display())))?;
    let opts = crate::input::table_open::table_options(&a.file, g)
        .map_err(|e| Failure::error(e.message(&a.file)))?;
    let table = TableReader::open(file, opts.block_cache(Some(cache)))
        .map_err(|e| Failure::error(exit::describe(&a.file, &e)))?;
    crate::input::order::require_order(&table, &a.file, g, "to look keys up")?;
    let mut getter = Getter {
        table: &table,
        file: &a.file,
        opts: ReadOptions::default(),
        format: a.format,
        hex: a.hex,
        out: RowsOut::new(output::stdout(), a.format),
        value: Vec::new(),
        line: Vec::with_capacity(256),
        not_found: false,
        error: false,
    };
    for k in &arg_keys {
        getter.get(k)?;
    }
    if let Some(r) = reader.as_mut() {
        let mut raw = Vec::new();
        let mut key = Vec::new();
        while r.next_line(&mut raw)? {
            let k: &[u8] = if a.hex {
                r.unhex_line(&raw, &mut key)?;
                &key
            } else {
                &raw
            };
            getter.get(k)?;
        }
    }
    getter.out.finish()?;
    Ok(if getter.error {
        EXIT_ERROR
    } else if getter.not_found {
        EXIT_FAIL
    } else {
        EXIT_OK
    })
}
