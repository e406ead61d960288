//! A record's Blobs, Files and handles (`blobs`, `blob_references`) and a blob's bytes
//! (`blobs.bytes`, then `overflow_blob_chunks` in order, or the legacy file).
//!
//! ```text
//! blob list of a record = its Blobs and Files by blobs.row_id, then its handles
//!   (the order the value's blob indexes count in; Chromium's
//!   AddExternalObjectMetadataToValue)
//! bytes = blobs.bytes (at most 5 MiB) + chunk 1 + chunk 2 ...; NULL bytes: the file
//!   <database file>_/<row id, hex> (a blob moved from LevelDB)
//! ```

use std::path::PathBuf;

use super::database::SqliteDatabase;
use crate::error::{Error, Result};
use crate::idb::{ExternalKind, ExternalObject};

/// A Blob, File or handle of a record, as `blobs` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteBlob {
    /// What the value's blob indexes refer to (`blob_number` = `blobs.row_id`).
    pub object: ExternalObject,
    /// Where the bytes are: `None` in the database, else the legacy file.
    pub legacy_file: Option<PathBuf>,
}

impl SqliteDatabase {
    /// The Blobs, Files and handles of the record with `row_id`, in the order the value's
    /// blob indexes count in.
    ///
    /// # Errors
    /// SQLite cannot read the tables; a `blobs` row of an unknown object type.
    pub fn blobs(&self, record_row_id: i64) -> Result<Vec<SqliteBlob>> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT blobs.row_id, object_type, mime_type, size_bytes, file_name, \
                 last_modified, bytes IS NULL, bytes FROM blobs INNER JOIN blob_references \
                 ON blob_references.blob_row_id = blobs.row_id \
                 WHERE blob_references.record_row_id = ? \
                 ORDER BY object_type = 2, blobs.row_id",
            )
            .map_err(|e| self.sql(e))?;
        let mut rows = st.query([record_row_id]).map_err(|e| self.sql(e))?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            let row = (|| {
                let id: i64 = r.get(0)?;
                let kind = match r.get::<_, i64>(1)? {
                    0 => Some(ExternalKind::Blob),
                    1 => Some(ExternalKind::File),
                    2 => Some(ExternalKind::FileSystemAccessHandle),
                    _ => None,
                };
                Ok::<_, rusqlite::Error>((
                    id,
                    kind,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, Option<i64>>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, Option<i64>>(5)?,
                    r.get::<_, bool>(6)?,
                    r.get::<_, Option<Vec<u8>>>(7)?,
                ))
            })()
            .map_err(|e| self.sql(e))?;
            let (id, kind, mime, size, file_name, modified, legacy, bytes) = row;
            let Some(kind) = kind else {
                return Err(Error::Sqlite {
                    path: self.path.clone(),
                    what: format!("blobs row {id} has an unknown object_type"),
                });
            };
            let handle = kind == ExternalKind::FileSystemAccessHandle;
            out.push(SqliteBlob {
                object: ExternalObject {
                    kind,
                    blob_number: id,
                    mime: mime.unwrap_or_default(),
                    size: size.unwrap_or(0),
                    file_name: if kind == ExternalKind::File {
                        file_name
                    } else {
                        None
                    },
                    last_modified_us: if kind == ExternalKind::File {
                        modified
                    } else {
                        None
                    },
                    token: if handle {
                        bytes.unwrap_or_default()
                    } else {
                        Vec::new()
                    },
                },
                legacy_file: (legacy && !handle).then(|| self.legacy_blob_path(id)),
            });
        }
        Ok(out)
    }

    /// Where a blob kept outside the database (moved from LevelDB) is:
    /// `<database file>_/<blob number, hex>`.
    pub fn legacy_blob_path(&self, blob_row_id: i64) -> PathBuf {
        let mut dir = self.path.as_os_str().to_owned();
        dir.push("_");
        PathBuf::from(dir).join(format!("{blob_row_id:x}"))
    }

    /// A blob's bytes: `blobs.bytes` and its overflow chunks in order (or the legacy file).
    ///
    /// # Errors
    /// No such blob, a chunk missing or out of order, a total that is not `size_bytes`, a
    /// legacy file that cannot be read.
    pub fn blob_bytes(&self, blob_row_id: i64) -> Result<Vec<u8>> {
        let bad = |what: String| Error::Sqlite {
            path: self.path.clone(),
            what: format!("blob {blob_row_id}: {what}"),
        };
        let (size, first): (Option<i64>, Option<Vec<u8>>) = self
            .conn
            .query_row(
                "SELECT size_bytes, bytes FROM blobs WHERE row_id = ?",
                [blob_row_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| bad(e.to_string()))?;
        let Some(mut out) = first else {
            let path = self.legacy_blob_path(blob_row_id);
            return std::fs::read(&path).map_err(|source| Error::Io { path, source });
        };
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT chunk_index, bytes FROM overflow_blob_chunks WHERE blob_row_id = ? \
                 ORDER BY chunk_index",
            )
            .map_err(|e| self.sql(e))?;
        let mut rows = st.query([blob_row_id]).map_err(|e| self.sql(e))?;
        let mut next = 1i64;
        while let Some(r) = rows.next().map_err(|e| self.sql(e))? {
            let index: i64 = r.get(0).map_err(|e| self.sql(e))?;
            if index != next {
                return Err(bad(format!(
                    "overflow chunk {next} is missing (found {index})"
                )));
            }
            out.extend_from_slice(
                r.get_ref(1)
                    .and_then(|v| Ok(v.as_blob()?))
                    .map_err(|e| self.sql(e))?,
            );
            next += 1;
        }
        if let Some(size) = size.filter(|s| *s != out.len() as i64) {
            return Err(bad(format!(
                "{} bytes where size_bytes says {size}",
                out.len()
            )));
        }
        Ok(out)
    }
}
