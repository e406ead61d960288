//! A row of `records` or `index_references` as SQLite gives it, and a record's value
//! decompressed.
//!
//! ```text
//! records.compression_type: 0 none, 1 zstd (one frame stating its size; Chromium on
//!   desktop, values of 64 bytes or more when zstd saves 20%), 2 snappy (Android, Fuchsia)
//! ```
//! (Chromium's `CompressionType` and `DoDecompress` in
//! `content/browser/indexed_db/instance/sqlite/database_connection.cc`.)

use std::borrow::Cow;

use super::key::decode_sortable_key;
use crate::error::{Error, Result};
use crate::idb::IdbKey;

/// `compression_type` values (Chromium's `CompressionType`, persisted).
pub const COMPRESSION_NONE: i64 = 0;
/// zstd, one frame with its size.
pub const COMPRESSION_ZSTD: i64 = 1;
/// Snappy (raw).
pub const COMPRESSION_SNAPPY: i64 = 2;
/// Values are refused past this size after decompression.
const MAX_VALUE: u64 = 1 << 32;

/// One row of `records`, borrowed from SQLite while it is read.
#[derive(Debug, Clone, Copy)]
pub struct SqliteRecord<'a> {
    /// `row_id`.
    pub row_id: i64,
    /// `object_store_id`.
    pub store: i64,
    /// `key` as stored.
    pub key: &'a [u8],
    /// `compression_type`.
    pub compression: i64,
    /// `value` as stored.
    pub value: &'a [u8],
}

impl SqliteRecord<'_> {
    /// The key, decoded.
    ///
    /// # Errors
    /// Bytes that are no key ([`Error::SortableKey`]).
    pub fn idb_key(&self) -> Result<IdbKey> {
        decode_sortable_key(self.key).map_err(|e| Error::SortableKey {
            offset: e.offset,
            what: e.what,
        })
    }

    /// The serialized value (Blink's envelope first), decompressed.
    ///
    /// # Errors
    /// An unknown compression type, data that does not decompress.
    pub fn serialized(&self) -> Result<Cow<'_, [u8]>> {
        decompress(self.compression, self.value)
    }
}

/// One row of `index_references`, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct SqliteIndexEntry<'a> {
    /// `index_id`.
    pub index: i64,
    /// The index key as stored.
    pub key: &'a [u8],
    /// The record's key as stored.
    pub primary_key: &'a [u8],
    /// The record's `row_id`.
    pub record_row_id: i64,
}

/// The serialized value of a record, decompressed as `compression` says.
///
/// # Errors
/// An unknown compression type, data that does not decompress, a size past 4 GiB.
pub fn decompress(compression: i64, value: &[u8]) -> Result<Cow<'_, [u8]>> {
    let fail = |what: String| Error::Decompress { compression, what };
    match compression {
        COMPRESSION_NONE => Ok(Cow::Borrowed(value)),
        COMPRESSION_ZSTD => {
            let size = zstd::zstd_safe::get_frame_content_size(value)
                .map_err(|_| fail("not a zstd frame".into()))?
                .ok_or_else(|| fail("the zstd frame does not state its size".into()))?;
            if size > MAX_VALUE {
                return Err(fail(format!("the zstd frame states {size} bytes")));
            }
            let out =
                zstd::bulk::decompress(value, size as usize).map_err(|e| fail(e.to_string()))?;
            if out.len() as u64 != size {
                return Err(fail(format!(
                    "{} bytes where the frame states {size}",
                    out.len()
                )));
            }
            Ok(Cow::Owned(out))
        }
        COMPRESSION_SNAPPY => {
            let mut out = Vec::new();
            leveldb_table::raw::compress::snappy_into(value, &mut out)
                .map_err(|e| fail(e.to_string()))?;
            Ok(Cow::Owned(out))
        }
        n => Err(fail(format!(
            "compression type {n} is not one Chromium writes"
        ))),
    }
}
