//! Entry rows: one entry of a table as a text or jsonl line, as `scan` prints it (and
//! `scan --salvage`, so both print the same rows).

use leveldb_table::raw::internal_key::{self, ValueType};

use crate::common;

/// Appends one entry as a jsonl line.
pub fn push_jsonl(line: &mut Vec<u8>, internal: bool, key: &[u8], value: &[u8], idb: bool) {
    line.extend_from_slice(b"{\"key\":\"");
    common::push_hex(line, key);
    line.extend_from_slice(b"\",\"value\":\"");
    common::push_hex(line, value);
    line.push(b'"');
    if internal {
        if let Some(p) = internal_key::parse_internal_key(key) {
            line.extend_from_slice(b",\"user_key\":\"");
            common::push_hex(line, p.user_key);
            line.extend_from_slice(b"\",\"seq\":");
            line.extend_from_slice(p.sequence.to_string().as_bytes());
            line.extend_from_slice(match p.value_type {
                ValueType::Value => b",\"kind\":\"value\"",
                ValueType::Deletion => b",\"kind\":\"deletion\"",
            });
        }
    }
    if idb {
        let uk = if internal {
            internal_key::user_key(key)
        } else {
            key
        };
        crate::idb::push_json_field(line, uk, Some(value));
    }
    line.extend_from_slice(b"}\n");
}

/// Appends one entry as a text line.
pub fn push_text_line(
    line: &mut Vec<u8>,
    internal: bool,
    key: &[u8],
    value: &[u8],
    as_hex: bool,
    idb: bool,
) {
    let mut user_key = key;
    if internal {
        match internal_key::parse_internal_key(key) {
            Some(p) => {
                user_key = p.user_key;
                push_key(line, p.user_key, as_hex, idb);
                line.extend_from_slice(b" @ ");
                line.extend_from_slice(p.sequence.to_string().as_bytes());
                line.extend_from_slice(match p.value_type {
                    ValueType::Value => b" : val => ",
                    ValueType::Deletion => b" : del => ",
                });
            }
            None => {
                common::push_text(line, key, as_hex);
                line.extend_from_slice(b" : bad internal key => ");
            }
        }
    } else {
        push_key(line, key, as_hex, idb);
        line.extend_from_slice(b" => ");
    }
    if idb {
        crate::idb::push_value_text(line, user_key, value, as_hex);
    } else {
        common::push_text(line, value, as_hex);
    }
    line.push(b'\n');
}

fn push_key(line: &mut Vec<u8>, key: &[u8], as_hex: bool, idb: bool) {
    if idb {
        crate::idb::push_key_text(line, key, as_hex);
    } else {
        common::push_text(line, key, as_hex);
    }
}
