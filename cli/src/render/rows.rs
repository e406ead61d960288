//! Entry rows: the one formatter of the entries `scan`, `scan --salvage`, `db scan` and
//! `db get` print, so the same entry reads the same everywhere. Keys and values go through
//! the command's [`Decoding`] (IndexedDB, localStorage, sessionStorage, or bytes).
//!
//! ```text
//! table, internal keys   KEY @ SEQ : val => VALUE      {"key","value","user_key","seq","kind"[,decoded]}
//!                        KEY @ SEQ : del => ''
//! table, plain keys      KEY => VALUE                  {"key","value"[,decoded]}
//! database row           KEY @ SEQ => VALUE            {"key","value","seq"[,decoded]}
//! ```
//!
//! In a table row `"key"` is the key as stored (the internal key) and KEY the user key; a
//! database row's `"key"` is the user key. The decoded field (`"idb"`, `"local_storage"`,
//! `"session_storage"`) is the [`Decoding`]'s, for the user key.

use leveldb_table::raw::internal_key::{self, ValueType};

use crate::render::chrome::Decoding;
use crate::render::output::OutFormat;
use crate::render::text;

/// One entry to print.
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    /// An entry of a table, its key as stored: an internal key (user key + 8-byte tag) when
    /// `internal`.
    Table {
        /// The key as stored.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
        /// The table's keys are internal keys.
        internal: bool,
    },
    /// A row of a database's view: a user key and its visible value, written at `seq`.
    Db {
        /// The user key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
        /// The sequence number it was written at.
        seq: u64,
    },
}

/// Writes entries as lines: text or JSON (`json` and `jsonl` rows are the same objects),
/// keys and values in hex with `hex`, decoded as `dec` says.
pub struct RowWriter<'d, 'a> {
    /// Output format.
    pub format: OutFormat,
    /// Text shows keys and values in hex.
    pub hex: bool,
    /// What keys and values are decoded as.
    pub dec: &'d Decoding<'a>,
}

impl RowWriter<'_, '_> {
    /// Appends `e` as one line (with its `\n`).
    pub fn push(&self, line: &mut Vec<u8>, e: Entry<'_>) {
        match self.format {
            OutFormat::Text => self.push_text(line, e),
            OutFormat::Json | OutFormat::Jsonl => self.push_json(line, e),
        }
        line.push(b'\n');
    }

    fn push_text(&self, line: &mut Vec<u8>, e: Entry<'_>) {
        let (dec, hex) = (self.dec, self.hex);
        match e {
            Entry::Table {
                key,
                value,
                internal: true,
            } => match internal_key::parse_internal_key(key) {
                Some(p) => {
                    dec.push_key_text(line, p.user_key, hex);
                    line.extend_from_slice(b" @ ");
                    line.extend_from_slice(p.sequence.to_string().as_bytes());
                    line.extend_from_slice(match p.value_type {
                        ValueType::Value => b" : val => ",
                        ValueType::Deletion => b" : del => ",
                    });
                    dec.push_value_text(line, p.user_key, value, hex);
                }
                None => {
                    text::push_text(line, key, hex);
                    line.extend_from_slice(b" : bad internal key => ");
                    text::push_text(line, value, hex);
                }
            },
            Entry::Table { key, value, .. } => {
                dec.push_key_text(line, key, hex);
                line.extend_from_slice(b" => ");
                dec.push_value_text(line, key, value, hex);
            }
            Entry::Db { key, value, seq } => {
                dec.push_key_text(line, key, hex);
                line.extend_from_slice(b" @ ");
                line.extend_from_slice(seq.to_string().as_bytes());
                line.extend_from_slice(b" => ");
                dec.push_value_text(line, key, value, hex);
            }
        }
    }

    fn push_json(&self, line: &mut Vec<u8>, e: Entry<'_>) {
        let (Entry::Table { key, value, .. } | Entry::Db { key, value, .. }) = e;
        line.extend_from_slice(b"{\"key\":\"");
        text::push_hex(line, key);
        line.extend_from_slice(b"\",\"value\":\"");
        text::push_hex(line, value);
        line.push(b'"');
        // The user key and the value it holds, for the decoded field.
        let decoded = match e {
            Entry::Table {
                internal: true,
                key,
                value,
            } => internal_key::parse_internal_key(key).map(|p| {
                line.extend_from_slice(b",\"user_key\":\"");
                text::push_hex(line, p.user_key);
                line.extend_from_slice(b"\",\"seq\":");
                line.extend_from_slice(p.sequence.to_string().as_bytes());
                line.extend_from_slice(b",\"kind\":\"");
                line.extend_from_slice(kind_name(p.value_type).as_bytes());
                line.push(b'"');
                let value = (p.value_type == ValueType::Value).then_some(value);
                (p.user_key, value)
            }),
            Entry::Table { key, value, .. } => Some((key, Some(value))),
            Entry::Db { key, value, seq } => {
                line.extend_from_slice(b",\"seq\":");
                line.extend_from_slice(seq.to_string().as_bytes());
                Some((key, Some(value)))
            }
        };
        if let Some((user_key, value)) = decoded {
            self.dec.push_json(line, user_key, value);
        }
        line.push(b'}');
    }
}

/// What a record is, as the JSON rows name it (`"kind"`): `value` or `deletion`.
pub fn kind_name(t: ValueType) -> &'static str {
    match t {
        ValueType::Value => "value",
        ValueType::Deletion => "deletion",
    }
}
