//! The crate's one error type.
//!
//! Every corruption error says what went wrong and where: the kind of block, its handle (file
//! offset and size) and, inside a block, the entry's offset. Messages follow LevelDB's wording
//! ("bad block handle", "block checksum mismatch", "not an sstable (bad magic number)") so that
//! they can be searched for next to LevelDB's own reports.

use std::fmt;
use std::io;
use std::sync::Arc;

pub use crate::compress::DecompressError;
use crate::format::{BlockHandle, FOOTER_LEN};

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which block of a table an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// A data block (keys and values).
    Data,
    /// The index block (separator keys to data-block handles).
    Index,
    /// The metaindex block (meta block names to handles).
    Metaindex,
    /// The filter block.
    Filter,
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BlockKind::Data => "data",
            BlockKind::Index => "index",
            BlockKind::Metaindex => "metaindex",
            BlockKind::Filter => "filter",
        })
    }
}

/// Which table format a RocksDB file uses (for [`Error::RocksDb`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RocksDbFormat {
    /// Block-based table with RocksDB's own magic (format_version >= 1).
    BlockBased,
    /// Block-based table with the legacy (LevelDB) magic, recognised by its metaindex.
    LegacyBlockBased,
    /// PlainTable.
    Plain,
    /// CuckooTable.
    Cuckoo,
}

/// Everything that can go wrong reading or writing a table.
///
/// Cloning is cheap (an I/O error is shared), so that a cursor can report the error that
/// stopped it each time it is asked.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// An I/O error from the underlying file or writer.
    Io {
        /// The error from the operating system.
        source: Arc<io::Error>,
        /// What was being read, if a block.
        block: Option<(BlockKind, BlockHandle)>,
    },
    /// The file is shorter than the 48-byte footer.
    TooShort {
        /// The file's size.
        file_size: u64,
    },
    /// The last 8 bytes are not the table magic.
    BadMagic {
        /// The 8 bytes at `file_size - 8`, as a little-endian u64.
        found: u64,
        /// Offset of the magic in the file.
        offset: u64,
    },
    /// The file ends with the first bytes of the table magic: it was cut short by `missing`
    /// bytes (a copy or download that stopped early), so the footer is lost.
    Truncated {
        /// The file's size.
        file_size: u64,
        /// How many bytes are missing at the end (1 to 5: enough of the magic is left, at least
        /// 3 bytes, that a match by chance is unlikely; a shorter remnant is `BadMagic`).
        missing: u64,
    },
    /// The file is a RocksDB table, which this crate does not read.
    RocksDb {
        /// Which RocksDB table format.
        format: RocksDbFormat,
        /// The format_version stored in the footer, if the format has one.
        format_version: Option<u32>,
    },
    /// A footer handle does not decode.
    BadFooterHandle {
        /// File offset of the footer.
        footer_offset: u64,
    },
    /// A block handle points outside the file (or overflows).
    BadBlockHandle {
        /// Which block the handle is for.
        kind: BlockKind,
        /// The handle as read.
        handle: BlockHandle,
        /// The offset the block plus trailer must end at or before.
        limit: u64,
    },
    /// An index (or metaindex) value is not a block handle.
    BadIndexValue {
        /// The block holding the value.
        kind: BlockKind,
        /// Where that block is.
        handle: BlockHandle,
    },
    /// Fewer bytes came back than the block needs.
    TruncatedBlock {
        /// Which block.
        kind: BlockKind,
        /// Its handle.
        handle: BlockHandle,
        /// Bytes read.
        got: usize,
    },
    /// The trailer's CRC does not match the block.
    ChecksumMismatch {
        /// Which block.
        kind: BlockKind,
        /// Its handle.
        handle: BlockHandle,
        /// Unmasked CRC stored in the trailer.
        expected: u32,
        /// CRC of the stored bytes and type.
        actual: u32,
    },
    /// The block could not be decompressed (or its compression id is unknown).
    Decompress {
        /// Which block.
        kind: BlockKind,
        /// Its handle.
        handle: BlockHandle,
        /// The trailer's type byte.
        compression: u8,
        /// What the decompressor found.
        reason: crate::compress::DecompressError,
    },
    /// The block's restart array does not fit ("bad block contents").
    BadBlockContents {
        /// Which block.
        kind: BlockKind,
        /// Its handle.
        handle: BlockHandle,
        /// What is wrong.
        reason: &'static str,
    },
    /// An entry inside a block does not decode ("bad entry in block").
    BadEntry {
        /// Which block.
        kind: BlockKind,
        /// Its handle.
        handle: BlockHandle,
        /// Offset of the entry inside the uncompressed block.
        entry_offset: usize,
    },
    /// Keys in a block are not in comparator order (found by `verify`).
    KeyOrder {
        /// Which block.
        kind: BlockKind,
        /// Its handle.
        handle: BlockHandle,
        /// The earlier key.
        previous: Vec<u8>,
        /// The key that should have been greater.
        key: Vec<u8>,
    },
    /// A key fails its filter although it is in the table (found by `verify`).
    FilterMiss {
        /// The data block holding the key.
        handle: BlockHandle,
        /// The key.
        key: Vec<u8>,
    },
    /// A key in a table opened with internal keys is not an internal key.
    BadInternalKey {
        /// The data block holding the key.
        handle: BlockHandle,
        /// The key.
        key: Vec<u8>,
    },
    /// A key given to a builder is not greater than the one before it.
    OutOfOrder {
        /// The previous key.
        previous: Vec<u8>,
        /// The key that was added.
        got: Vec<u8>,
    },
    /// A builder hit an error earlier and takes no more input (LevelDB's sticky status).
    BuilderFailed {
        /// The first error, rendered.
        first: String,
    },
    /// An argument is invalid (for example a block size of 0): the caller's mistake, never
    /// damaged data (that is [`Error::Corruption`] or one of the block errors above).
    InvalidArgument(String),
    /// Data that does not decode as what it must be, outside a table's blocks (whose
    /// damage has the variants above): an entry of a sort run spilled to disk cut short, a
    /// key handed to compaction that is not an internal key.
    Corruption {
        /// The file, when one is known (a path, or a name such as `sort run 3`).
        file: Option<String>,
        /// Where in it, when known.
        offset: Option<u64>,
        /// What is wrong.
        what: String,
    },
    /// A helper thread stopped before its work was done (it panicked: a bug, reported
    /// instead of passed on as a panic).
    ThreadFailed {
        /// What the thread was doing.
        task: &'static str,
    },
    /// What was asked is not supported for this input (for example reading backward
    /// through a walk that skips damage, which goes forward only).
    Unsupported {
        /// What, and why.
        reason: String,
    },
    /// Salvage (`salvage::salvage_bytes`) found no block whose checksum checks out in a
    /// stretch of a table whose footer or index is lost.
    NoBlockFound {
        /// Where the stretch starts.
        offset: u64,
        /// Its length in bytes.
        len: u64,
        /// Why the search stopped there.
        reason: &'static str,
    },
    /// An error in one file: the file's name, then the error. Every I/O error of a call
    /// given a path (opening a table by path, writing a table file, a database directory)
    /// comes wrapped in this.
    InFile {
        /// The file: relative to the database directory for a database's files (e.g.
        /// `000005.ldb`, `MANIFEST-000002`), else the path as given.
        file: String,
        /// What went wrong in it.
        source: Box<Error>,
    },
    /// A log (or MANIFEST) record is damaged: bad checksum, bad length, a fragment out of
    /// place, an unknown record type.
    BadLogRecord {
        /// Offset in the log file of the damaged record (or block).
        offset: u64,
        /// Bytes dropped because of it.
        dropped: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A WriteBatch (one log record of a database's write-ahead log) does not decode.
    BadWriteBatch {
        /// Offset in the batch of the field that is wrong.
        offset: u64,
        /// What is wrong.
        reason: &'static str,
    },
    /// A VersionEdit (one MANIFEST record) does not decode.
    BadVersionEdit {
        /// Offset in the record of the field that is wrong.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// CURRENT is missing, empty, does not end in a newline or does not name a MANIFEST.
    BadCurrent {
        /// What is wrong.
        reason: String,
    },
    /// The MANIFEST names a comparator this reader does not have: reading in another order
    /// would give wrong answers, so the database is refused.
    UnknownComparator {
        /// The name in the MANIFEST.
        name: String,
    },
    /// A file the MANIFEST lists as live is missing from the directory.
    MissingFile {
        /// Its name.
        file: String,
    },
    /// The order of a database's keys cannot be settled (no MANIFEST names it and the keys
    /// fit no known order, or not the one given; or the order given contradicts the
    /// MANIFEST's): reading in a guessed order would give wrong answers.
    UnsettledOrder {
        /// Why, and where the keys break each order.
        reason: String,
    },
    /// A folder opened as a LevelDB database holds none (empty, the parent of databases,
    /// SQLite files, a cache), or the path is a file.
    NotADatabase {
        /// What it holds instead.
        reason: String,
    },
    /// A database directory changed under the reader faster than it could read one
    /// consistent state of it: its owner (LevelDB, a browser) is compacting or writing it.
    OwnerRewriting {
        /// What changed.
        reason: String,
    },
}

impl Error {
    /// This error, said to be in `file` ([`Error::InFile`]), unless it already names one.
    pub(crate) fn in_file(self, file: impl std::fmt::Display) -> Error {
        match self {
            e @ Error::InFile { .. } => e,
            e => Error::InFile {
                file: file.to_string(),
                source: Box::new(e),
            },
        }
    }

    /// This error, said to be in `file` if it is an I/O error (or a builder's sticky
    /// failure, which was one): for the I/O of calls given a path.
    pub(crate) fn io_in(self, file: impl std::fmt::Display) -> Error {
        match self {
            e @ (Error::Io { .. } | Error::BuilderFailed { .. }) => e.in_file(file),
            e => e,
        }
    }

    pub(crate) fn io_at(source: io::Error, kind: BlockKind, handle: BlockHandle) -> Error {
        Error::Io {
            source: Arc::new(source),
            block: Some((kind, handle)),
        }
    }

    /// True for errors that mean the file's bytes are damaged or not a LevelDB table
    /// (as opposed to I/O errors and misuse).
    pub fn is_corruption(&self) -> bool {
        !matches!(
            self,
            Error::Io { .. }
                | Error::OutOfOrder { .. }
                | Error::BuilderFailed { .. }
                | Error::InvalidArgument(_)
                | Error::ThreadFailed { .. }
                | Error::Unsupported { .. }
                | Error::UnknownComparator { .. }
                | Error::UnsettledOrder { .. }
                | Error::OwnerRewriting { .. }
                | Error::NotADatabase { .. }
        ) && !matches!(self, Error::InFile { source, .. } if !source.is_corruption())
    }

    /// The block an error is about, if any.
    pub fn block(&self) -> Option<(BlockKind, BlockHandle)> {
        match *self {
            Error::Io { block, .. } => block,
            Error::InFile { ref source, .. } => source.block(),
            Error::BadBlockHandle { kind, handle, .. }
            | Error::BadIndexValue { kind, handle }
            | Error::TruncatedBlock { kind, handle, .. }
            | Error::ChecksumMismatch { kind, handle, .. }
            | Error::Decompress { kind, handle, .. }
            | Error::BadBlockContents { kind, handle, .. }
            | Error::BadEntry { kind, handle, .. }
            | Error::KeyOrder { kind, handle, .. } => Some((kind, handle)),
            Error::FilterMiss { handle, .. } | Error::BadInternalKey { handle, .. } => {
                Some((BlockKind::Data, handle))
            }
            _ => None,
        }
    }

    /// The file offset an error is about (a block's start, the footer, the magic), if any.
    /// For a bad entry it is the start of its block: the entry's own offset is inside the
    /// uncompressed block (see [`Error::BadEntry`]).
    pub fn offset(&self) -> Option<u64> {
        match *self {
            Error::BadMagic { offset, .. } => Some(offset),
            Error::Truncated { file_size, .. } => Some(file_size),
            Error::BadFooterHandle { footer_offset } => Some(footer_offset),
            Error::TooShort { .. } => Some(0),
            Error::NoBlockFound { offset, .. } => Some(offset),
            Error::InFile { ref source, .. } => source.offset(),
            Error::BadLogRecord { offset, .. } => Some(offset),
            Error::Corruption { offset, .. } => offset,
            _ => self.block().map(|(_, h)| h.offset),
        }
    }
}

mod display;

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(&**source),
            _ => None,
        }
    }
}

impl From<io::Error> for Error {
    fn from(source: io::Error) -> Self {
        Error::Io {
            source: Arc::new(source),
            block: None,
        }
    }
}
