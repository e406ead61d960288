//! # leveldb-table
//!
//! A bit-exact reader and writer for the LevelDB table format (`.ldb` / `.sst` files), built
//! around LevelDB's filter block and bloom filter policy.
//!
//! - [`TableBuilder`] writes what LevelDB's `TableBuilder` writes: prefix-compressed blocks
//!   with restart points, snappy (kept only when it saves more than 12.5%), one bloom filter
//!   per 2 KiB of data-block offset, metaindex, index and the 48-byte footer.
//!   [`TableFileBuilder`] writes a file atomically (temp file, fsync, rename).
//! - [`TableReader`] opens tables from files, byte buffers or any [`RandomAccess`] source.
//!   Point lookups consult the filter *before* reading a data block; cursors never skip a
//!   damaged block; checksums are verified by default.
//! - Tables written by a LevelDB database (internal keys: user key + sequence/type tag) are
//!   detected and read as they are: [`TableReader::lookup`] answers found / deleted / not found
//!   for a user key at a snapshot.
//! - The building blocks (coding, CRC32C, hash, blocks, filter blocks, footer) are public under
//!   [`raw`] for tools and tests.
//! - Bloom filters on their own (counting, scalable, shared through Redis) are the workspace's
//!   `sst-bloom` crate (`bloom/`, `docs/bloom.md`), so table users build no Redis client.
//!
//! ```
//! use leveldb_table::{Options, ReaderOptions, TableBuilder, TableReader};
//!
//! # fn main() -> leveldb_table::Result<()> {
//! let opts = Options::default().bloom(10);
//! let mut builder = TableBuilder::new(Vec::new(), &opts)?;
//! builder.add(b"apple", b"red")?;
//! builder.add(b"banana", b"yellow")?;
//! let (bytes, _stats) = builder.finish()?;
//!
//! let table = TableReader::open(bytes, ReaderOptions::default())?;
//! assert_eq!(table.get(b"banana")?, Some(b"yellow".to_vec()));
//! assert_eq!(table.get(b"cherry")?, None);
//! # Ok(())
//! # }
//! ```
// All `unsafe` code is in `os.rs`: the memory map (behind the `unsafe fn`s `map_file`,
// `TableReader::open_mmap` and `Db::open_mmap`, whose callers promise the file is not
// changed while mapped) and `madvise` advice that block buffers be backed by huge pages;
// everything else is checked by the compiler. (`db/reader.rs` and `table.rs` only call
// those `unsafe fn`s, inside their own `unsafe fn`s.)
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod atomic_file;
mod block;
mod cache;
mod compress;
mod error;
mod filter;
mod format;
mod internal_key;
mod io;
mod options;
mod search;
mod table;
mod table_builder;
mod util;

pub mod db;
pub mod dom_storage;
pub mod idb;
pub mod refilter;
pub mod salvage;
pub mod v8value;

pub use cache::{BlockCache, CachePolicy};
pub use compress::{Compression, CompressionProfile, DecompressError};
pub use error::{BlockKind, Error, Result, RocksDbFormat};
pub use filter::{
    BloomFilter, BloomFilterPolicy, CacheLocalBloomPolicy, FilterPolicy, LegacyBloomFilterPolicy,
};
pub use format::{BlockHandle, Footer};
pub use internal_key::{InternalFilterPolicy, InternalKeyComparator, ParsedInternalKey, ValueType};
pub use io::{CountingReader, RandomAccess};
pub use options::{KeyFormat, Options, ReadOptions, ReaderOptions};
pub use table::VerifyReport;
pub use table::{Entries, TableIter};
pub use table::{FilterStatus, Lookup, LookupKind, TableReader};
pub use table_builder::file::TableFileBuilder;

pub use atomic_file::{write_atomically, AtomicFile};
pub use table_builder::{TableBuilder, TableStats};
pub use util::comparator::{BytewiseComparator, Comparator};
#[cfg(feature = "mmap")]
pub use util::os::map_file;

/// The layers under the table: encodings, checksums, hash, blocks, filter blocks, footer.
/// For tools, tests and other engines that need LevelDB's pieces one by one.
pub mod raw {
    pub use crate::block::builder::BlockBuilder;
    pub use crate::block::{Block, BlockIter};
    pub use crate::filter::block::{FilterBlockBuilder, FilterBlockReader};

    /// Fixed-width and varint encodings (LevelDB's `util/coding.h`).
    pub mod coding {
        pub use crate::format::coding::*;
    }
    /// CRC32C and LevelDB's mask (`util/crc32c.h`).
    pub mod crc32c {
        pub use crate::util::crc32c::*;
    }
    /// LevelDB's `Hash` (`util/hash.cc`).
    pub mod hash {
        pub use crate::util::hash::*;
    }
    /// Format constants, handles, footer, trailers, `read_block`.
    pub mod format {
        pub use crate::block::stored::check_handle;
        pub use crate::block::stored::*;
        pub use crate::format::*;
    }
    /// Block codecs.
    pub mod compress {
        pub use crate::compress::snappy_prefix::SnappyPrefix;
        pub use crate::compress::*;
    }
    /// Internal keys of LevelDB databases.
    pub mod internal_key {
        pub use crate::internal_key::*;
    }
    /// LevelDB's bloom filter, probe by probe (`util/bloom.cc`).
    pub mod bloom {
        pub use crate::filter::{k_for_bits_per_key, probes};
    }
}
