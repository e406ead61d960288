//! Chromium's SQLite IndexedDB backend (Chrome 149 on, first for new data): one SQLite
//! database per IndexedDB database, in WAL mode, read without writing a byte.
//!
//! ```text
//! folder   IndexedDB/<origin>/<one file per database>[-wal]      (folder.rs)
//! files    main file + -wal -> the database as of its last commit (wal.rs, image.rs)
//!          -> SQLite (deserialized from memory, read-only)         (database.rs)
//! rows     records.key: keys that sort by their bytes              (key.rs)
//!          records.value: Blink's serialized value, maybe zstd or snappy (record.rs)
//!          blobs + overflow_blob_chunks: Blobs' and Files' bytes         (blobs.rs)
//! history  older row versions in earlier WAL frames, free pages and main-file pages the
//!          log replaces                                            (history.rs, cells.rs)
//! ```
//! `header.rs` tells a SQLite file by its first page. The tables are described in
//! `database.rs` and `docs/indexeddb.md`.

mod blobs;
mod cells;
mod database;
mod folder;
mod header;
mod history;
mod image;
mod key;
mod record;
mod wal;

pub use blobs::SqliteBlob;
pub use database::{FileState, SqliteDatabase};
pub use folder::{database_files, is_sqlite_file, open_folder};
pub use header::{identify_sqlite, SqliteInfo};
pub use history::{older_records, OlderRecord, RowPlace, RowStatus};
pub use image::{build_image, Image, ImageError, SQLITE_MAGIC};
pub use key::{decode_sortable_key, encode_sortable_key, KeyError};
pub use record::{
    decompress, SqliteIndexEntry, SqliteRecord, COMPRESSION_NONE, COMPRESSION_SNAPPY,
    COMPRESSION_ZSTD,
};
pub use wal::{read_wal, wal_path, Frame, Wal};
