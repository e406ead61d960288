//! The crate's one error type.
//!
//! Every error says what and where: the database's own errors are the table crate's
//! (file, offset, block), wrapped; a value that does not decode carries the byte offset and
//! which bytes the offset counts in (the row's value, the snappy-decompressed value, a blob
//! file); a blob file that cannot be used is named by its path.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::v8value::ValueError;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which bytes a [`ValueError`]'s offset counts in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ValuePlace {
    /// The record's value as stored (offsets from its first byte, the version varint's).
    Row,
    /// The value of the record's blob entry (its blob list).
    BlobEntry,
    /// The record's value after snappy decompression.
    Snappy,
    /// The blob file the value was moved to: its serialized value.
    BlobFile(PathBuf),
    /// The blob file the value was moved to: its wrapping (a cut header, bad snappy data).
    BlobFileWrapping(PathBuf),
}

/// Everything that can go wrong reading Chrome's storage.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The database could not be read: the table crate's error (it names the file, the
    /// offset and the block).
    Db(leveldb_table::Error),
    /// Bytes that do not decode: a serialized value, a blob entry or IndexedDB's wrapping
    /// of a value. The offset counts in the bytes `place` names.
    Value {
        /// What is wrong, and at which byte.
        source: ValueError,
        /// Which bytes the offset counts in.
        place: ValuePlace,
    },
    /// A record's value without its leading version varint.
    NoVersion,
    /// A key without an IndexedDB prefix where a record's key is needed.
    NotARecordKey,
    /// A value moved to a blob, with no database to look its blob entry up in.
    NoDatabase,
    /// The record's blob entry (its blob list) is not in the database.
    NoBlobEntry,
    /// The record's blob entry could not be read.
    BlobEntry {
        /// Why.
        source: leveldb_table::Error,
    },
    /// The value was moved to a blob its blob entry does not list.
    BlobNotListed {
        /// The blob's index in the record's blob list, as the value states it.
        index: u64,
    },
    /// The value was moved to a blob file, and the `.blob` folder is not known.
    NoBlobFolder {
        /// The blob file, relative to the folder.
        file: String,
    },
    /// The blob file a value was moved to cannot be read.
    BlobFile {
        /// The file.
        path: PathBuf,
        /// The size the record states.
        size: u64,
        /// The error from the operating system.
        source: io::Error,
    },
    /// The blob file a value was moved to has another size than the record states.
    BlobSize {
        /// The file.
        path: PathBuf,
        /// Its size.
        found: u64,
        /// The size the record states.
        expected: u64,
    },
    /// The blob file a value was moved to refers to another blob.
    BlobInBlob {
        /// The file.
        path: PathBuf,
    },
    /// A file that cannot be read.
    Io {
        /// The file.
        path: PathBuf,
        /// The error from the operating system.
        source: io::Error,
    },
    /// A SQLite IndexedDB database that cannot be read as one: the file, and what is wrong
    /// (SQLite's own message, or what our reading of its bytes found, with the offset).
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// A key as the SQLite backend stores it that does not decode.
    SortableKey {
        /// Offset in the key's bytes.
        offset: usize,
        /// What is wrong there.
        what: &'static str,
    },
    /// A SQLite record's value whose compression does not decode.
    Decompress {
        /// The record's `compression_type`.
        compression: i64,
        /// What is wrong.
        what: String,
    },
    /// Text that is not an IndexedDB key in its JSON form (`idb::parse_key_json`).
    KeyJson {
        /// The byte of the text where it goes wrong.
        offset: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// A database or object store name that names nothing in the catalog.
    NoSuchName {
        /// `"database"` or `"object store"`.
        what: &'static str,
        /// The name asked for.
        name: String,
        /// The databases there are, each with its stores: `db (store, store); db2 (...)`.
        known: String,
    },
}

impl From<leveldb_table::Error> for Error {
    fn from(e: leveldb_table::Error) -> Error {
        Error::Db(e)
    }
}

impl Error {
    /// A value error at `source.offset` of the bytes `place` names.
    pub fn value(source: ValueError, place: ValuePlace) -> Error {
        Error::Value { source, place }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Db(e) => write!(f, "{e}"),
            Error::Value { source, place } => match place {
                // The error's own context names a blob entry.
                ValuePlace::Row | ValuePlace::BlobEntry => write!(f, "{source}"),
                ValuePlace::Snappy => write!(f, "{source} of the snappy-decompressed value"),
                ValuePlace::BlobFile(p) => write!(f, "{source} of the blob file {}", p.display()),
                ValuePlace::BlobFileWrapping(p) => {
                    write!(f, "{source} in blob file {}", p.display())
                }
            },
            Error::NoVersion => f.write_str("the value has no version varint"),
            Error::NotARecordKey => f.write_str("not a record key"),
            Error::NoDatabase => f.write_str("the record's blob entry cannot be looked up here"),
            Error::NoBlobEntry => f.write_str("the record has no blob entry"),
            Error::BlobEntry { source } => write!(f, "its blob entry cannot be read: {source}"),
            Error::BlobNotListed { index } => write!(
                f,
                "the value was moved to blob {index} of the record, which its blob entry does \
                 not list"
            ),
            Error::NoBlobFolder { file } => write!(
                f,
                "the value was moved to blob file {file} of the .blob folder, which is not \
                 known for this directory"
            ),
            Error::BlobFile { path, size, source } => write!(
                f,
                "the value was moved to blob file {} ({size} bytes), which cannot be read: \
                 {source}",
                path.display()
            ),
            Error::BlobSize {
                path,
                found,
                expected,
            } => write!(
                f,
                "the value was moved to blob file {}, which has {found} bytes where the record \
                 says {expected}",
                path.display()
            ),
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Sqlite { path, what } => write!(f, "{}: {what}", path.display()),
            Error::SortableKey { offset, what } => {
                write!(f, "{what} at byte {offset} of the key")
            }
            Error::Decompress { compression, what } => {
                write!(
                    f,
                    "the value (compression_type {compression}) does not decompress: {what}"
                )
            }
            Error::BlobInBlob { path } => {
                write!(
                    f,
                    "blob file {} holds another blob reference",
                    path.display()
                )
            }
            Error::KeyJson { offset, what } => {
                write!(f, "not an IndexedDB key at byte {offset}: {what}")
            }
            Error::NoSuchName { what, name, known } => write!(
                f,
                "no {what} named {name:?}; the databases (and stores) are: {known}"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Db(e) | Error::BlobEntry { source: e } => Some(e),
            Error::Value { source, .. } => Some(source),
            Error::BlobFile { source, .. } | Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
