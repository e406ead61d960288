//! A record's blob list: the value of its blob entry (index id 3), and where Chrome keeps
//! each blob's bytes.
//!
//! ```text
//! blob entry value = external object*          (no count: read to the end)
//! external object  = type byte
//!   0 Blob / 1 File: varint blob number, varint n + n UTF-16BE units (MIME type),
//!                    varint size; File: varint n + n UTF-16BE units (file name),
//!                    varint last modified (microseconds since 1601-01-01)
//!   2 File System Access handle: varint n + n bytes (token)
//! blob file = <origin>.indexeddb.blob/<database id, hex>/<(number >> 8) & 0xff, 2 hex
//!             digits>/<number, hex>       e.g. file__0.indexeddb.blob/1/00/2
//! ```
//! (Chromium's `EncodeExternalObjects` / `DecodeExternalObjects` in
//! `content/browser/indexed_db/instance/backing_store.cc` and `GetBlobFileNameForKey` in
//! `file_path_util.cc`.) A value's Blob/File host objects are indexes into this list.

use super::coding::{read_binary, read_byte, read_prefix, read_string, read_varint, KeyPrefix};
use super::format::INDEX_BLOB;
use crate::v8value::{ValueError, ValueErrorKind};

/// What an external object is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExternalKind {
    /// A Blob.
    Blob,
    /// A File.
    File,
    /// A File System Access handle.
    FileSystemAccessHandle,
}

/// One entry of a record's blob list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalObject {
    /// Blob, File or handle.
    pub kind: ExternalKind,
    /// The blob's number (names its file); 0 for a handle.
    pub blob_number: i64,
    /// MIME type.
    pub mime: String,
    /// Size in bytes.
    pub size: i64,
    /// A File's name.
    pub file_name: Option<String>,
    /// A File's modification time, microseconds since 1601-01-01 (Windows' epoch).
    pub last_modified_us: Option<i64>,
    /// A handle's token.
    pub token: Vec<u8>,
}

/// Microseconds from 1601-01-01 to 1970-01-01.
const UNIX_EPOCH_FROM_WINDOWS_US: i64 = 11_644_473_600 * 1_000_000;

impl ExternalObject {
    /// A File's `lastModified` as JavaScript reads it: milliseconds since 1970.
    pub fn last_modified_ms(&self) -> Option<i64> {
        self.last_modified_us
            .map(|us| (us - UNIX_EPOCH_FROM_WINDOWS_US).div_euclid(1000))
    }
}

/// Decodes a blob entry's value into its list of external objects.
///
/// # Errors
/// An unknown type byte, a blob number below 1, a field cut short; with the offset.
pub fn decode_external_objects(value: &[u8]) -> Result<Vec<ExternalObject>, ValueError> {
    let mut s = value;
    let mut out = Vec::new();
    let at = |s: &[u8]| value.len() - s.len();
    while !s.is_empty() {
        let start = at(s);
        let bad =
            |what| ValueError::new(start, ValueErrorKind::Invalid(what)).in_context("blob entry");
        let cut = |s: &[u8], what| {
            ValueError::new(at(s), ValueErrorKind::Truncated(what)).in_context("blob entry")
        };
        let kind = match read_byte(&mut s) {
            Some(0) => ExternalKind::Blob,
            Some(1) => ExternalKind::File,
            Some(2) => ExternalKind::FileSystemAccessHandle,
            _ => return Err(bad("an unknown external object type")),
        };
        if kind == ExternalKind::FileSystemAccessHandle {
            let token = read_binary(&mut s).ok_or_else(|| cut(s, "a handle token"))?;
            out.push(ExternalObject {
                kind,
                blob_number: 0,
                mime: String::new(),
                size: 0,
                file_name: None,
                last_modified_us: None,
                token: token.to_vec(),
            });
            continue;
        }
        let blob_number = read_varint(&mut s).ok_or_else(|| cut(s, "a blob number"))?;
        if blob_number < 1 {
            return Err(bad("a blob number below 1"));
        }
        let mime = read_string(&mut s).ok_or_else(|| cut(s, "a MIME type"))?;
        let size = read_varint(&mut s).ok_or_else(|| cut(s, "a blob size"))?;
        if size < 0 {
            return Err(bad("a negative blob size"));
        }
        let (mut file_name, mut last_modified_us) = (None, None);
        if kind == ExternalKind::File {
            let name = read_string(&mut s).ok_or_else(|| cut(s, "a file name"))?;
            file_name = Some(utf16be(name));
            last_modified_us = Some(read_varint(&mut s).ok_or_else(|| cut(s, "a file time"))?);
        }
        out.push(ExternalObject {
            kind,
            blob_number,
            mime: utf16be(mime),
            size,
            file_name,
            last_modified_us,
            token: Vec::new(),
        });
    }
    Ok(out)
}

fn utf16be(b: &[u8]) -> String {
    let units: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    String::from_utf16_lossy(&units)
}

/// The key of the blob entry of the record with key `record_key`: the same database, store
/// and IDB key with index id 3. `None` if `record_key` has no prefix.
pub fn blob_entry_key(record_key: &[u8]) -> Option<Vec<u8>> {
    let mut rest = record_key;
    let p = read_prefix(&mut rest)?;
    let mut out = Vec::with_capacity(record_key.len());
    KeyPrefix {
        index: INDEX_BLOB,
        ..p
    }
    .encode_into(&mut out);
    out.extend_from_slice(rest);
    Some(out)
}

/// Where a blob's bytes are, relative to the database's `.blob` directory:
/// `<database id hex>/<second byte of the number, 2 hex digits>/<number hex>`.
pub fn blob_file_path(database_id: i64, blob_number: i64) -> String {
    format!(
        "{:x}/{:02x}/{:x}",
        database_id,
        (blob_number & 0xff00) >> 8,
        blob_number
    )
}

/// The `.blob` directory beside a LevelDB directory named `<origin>.indexeddb.leveldb`.
pub fn blob_dir_name(leveldb_dir_name: &str) -> Option<String> {
    leveldb_dir_name
        .strip_suffix(".leveldb")
        .filter(|s| s.ends_with(".indexeddb"))
        .map(|s| format!("{s}.blob"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_and_file_entries() {
        // Blob #2 "text/plain" (10 units) size 5; File #3 "" size 7 "a.txt" at 1601 + 1 s.
        let mut v = vec![0, 2, 10];
        v.extend("text/plain".encode_utf16().flat_map(|u| u.to_be_bytes()));
        v.extend([5, 1, 3, 0, 7, 5]);
        v.extend("a.txt".encode_utf16().flat_map(|u| u.to_be_bytes()));
        v.extend([0xc0, 0x84, 0x3d]); // 1,000,000 as a varint
        let list = decode_external_objects(&v).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(
            (
                list[0].kind,
                list[0].blob_number,
                list[0].mime.as_str(),
                list[0].size
            ),
            (ExternalKind::Blob, 2, "text/plain", 5)
        );
        assert_eq!(list[1].file_name.as_deref(), Some("a.txt"));
        assert_eq!(list[1].last_modified_ms(), Some(1000 - 11_644_473_600_000));
        assert!(decode_external_objects(&[9]).is_err());
        assert!(decode_external_objects(&[0, 0, 0, 0]).is_err()); // blob number 0
        let e = decode_external_objects(&[1, 2, 4, 0]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the bytes end inside a MIME type at offset 3 of the blob entry"
        );
    }

    #[test]
    fn blob_entry_keys() {
        // db 1, store 2, index 1, number key -> index 3, same key.
        let rec = [0x00, 1, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f];
        let mut want = rec.to_vec();
        want[3] = 3;
        assert_eq!(blob_entry_key(&rec), Some(want));
        assert_eq!(blob_entry_key(&[]), None);
    }

    #[test]
    fn blob_paths() {
        assert_eq!(blob_file_path(1, 2), "1/00/2");
        assert_eq!(blob_file_path(0x1a, 0x1234), "1a/12/1234");
        assert_eq!(
            blob_dir_name("https_x.com_0.indexeddb.leveldb").as_deref(),
            Some("https_x.com_0.indexeddb.blob")
        );
        assert_eq!(blob_dir_name("leveldb"), None);
    }
}
