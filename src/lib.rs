//! # leveldb-table
//!
//! A bit-exact reader and writer for the LevelDB table format (`.ldb` / `.sst` files), built
//! around LevelDB's filter block and bloom filter policy.
//!
//! - [`TableBuilder`] writes what LevelDB's `TableBuilder` writes: prefix-compressed blocks
//!   with restart points, snappy (kept only when it saves more than 12.5%), one bloom filter
//!   per 2 KiB of data-block offset, metaindex, index and the 48-byte footer.
//!   [`table::TableFileBuilder`] writes a file atomically (temp file, fsync, rename).
//! - [`TableReader`] opens tables from files, byte buffers or any [`RandomAccess`] source.
//!   [`TableReader::get`] is the point lookup: it consults the filter *before* reading a
//!   data block and answers with a [`Lookup`] (found, deleted, not found). Cursors never
//!   skip a damaged block; every block's checksum is verified unless
//!   [`OpenOptions::verify_checksums`] is turned off.
//! - Tables written by a LevelDB database (internal keys: user key + sequence/type tag) are
//!   detected and read as they are: a lookup takes a user key and
//!   [`ReadOptions::snapshot`].
//! - [`db`]: a LevelDB directory ([`Db`], read-only, with the same [`Lookup`] answers) and
//!   the pieces its writers use (logs, write batches, the MANIFEST, compaction output).
//!   An application's order (a comparator of its own) reaches the database reader through
//!   [`db::reader::DbOptions::comparators`].
//! - The building blocks (coding, CRC32C, hash, blocks, filter blocks, footer, internal
//!   keys) and helpers for tools (memory maps, atomic files, a read-counting source) are
//!   public under [`raw`].
//! - Bloom filters on their own (counting, scalable, shared through Redis) are the workspace's
//!   `sst-bloom` crate (`bloom/`, `docs/bloom.md`), so table users build no Redis client.
//!
//! ```
//! use leveldb_table::{Lookup, Options, ReadOptions, OpenOptions, TableBuilder, TableReader};
//!
//! # fn main() -> leveldb_table::Result<()> {
//! let opts = Options::default().bloom(10);
//! let mut builder = TableBuilder::new(Vec::new(), &opts)?;
//! builder.add(b"apple", b"red")?;
//! builder.add(b"banana", b"yellow")?;
//! let (bytes, _stats) = builder.finish()?;
//!
//! let table = TableReader::open(bytes, OpenOptions::default())?;
//! let read = ReadOptions::default();
//! assert_eq!(table.get(b"banana", &read)?.value(), Some(&b"yellow"[..]));
//! assert_eq!(table.get(b"cherry", &read)?, Lookup::NotFound);
//! # Ok(())
//! # }
//! ```
// `unsafe` is denied crate-wide and allowed (`#[allow(unsafe_code)]`) on eight items in four
// files: three `unsafe fn`s and ten `unsafe` blocks, each block with its SAFETY note.
// - util/os.rs, the OS operations (eight blocks):
//   `map_file`, an `unsafe fn` whose caller promises the file is not changed while mapped
//   (one block: the map); `advise_huge_pages` (one block: `madvise`, that block buffers be
//   backed by huge pages); `prefetch_lines` (one block: the x86_64 prefetch hint over a
//   block about to be read); `lock_whole_file` (two blocks: a zeroed `flock`, the `fcntl`
//   lock on a database's LOCK file); `open_files_budget` (three blocks: a zeroed `rlimit`,
//   `getrlimit`, `setrlimit`).
// - table/reader.rs: `TableReader::open_mmap`, an `unsafe fn` (one block: `map_file`).
// - db/reader/mod.rs: `Db::open_mmap`, an `unsafe fn` (no block: its caller makes the
//   promise for every table of the directory).
// - db/reader/open_table.rs: `open_table`, a safe fn (one block: `map_file`, only for a `Db`
//   opened with `Db::open_mmap`).
// Everything else is checked by the compiler.
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod atomic_file; // files written whole: temp file, fsync, rename
mod block; // blocks: reader, search, builder, reading a stored block
mod cache; // the block cache
mod compress; // codecs, the buffers blocks are decompressed into
mod format; // constants, encodings, handles
mod internal_key; // LevelDB's internal keys, comparator, filter adapter
mod io; // RandomAccess sources
mod options;
mod search; // in-memory search aids: the decoded index, block directories
mod table_builder;
mod util; // crc32c, hash, comparator, the OS (the `unsafe` operations)

pub mod cursor;
pub mod db;
pub mod error;
pub mod filter;
pub mod refilter;
pub mod table;

/// The README's Rust examples, compiled and run as doc tests (`cargo test --doc`).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeExamples;

pub use cache::BlockCache;
pub use cursor::Cursor;
pub use db::reader::Db;
pub use error::{Error, Result};
pub use filter::FilterPolicy;
pub use io::RandomAccess;
pub use options::{Compression, OpenOptions, Options, ReadOptions};
pub use table::{Lookup, TableBuilder, TableReader};
pub use util::comparator::{BytewiseComparator, Comparator};

/// The layers under the table: encodings, checksums, hash, blocks, filter blocks, footer,
/// internal keys; and the helpers tools use (a read-counting source, memory maps, atomic
/// file writes). For tools, tests and other engines that need LevelDB's pieces one by one.
pub mod raw {
    pub use crate::atomic_file::{write_atomically, AtomicFile};
    pub use crate::block::builder::BlockBuilder;
    pub use crate::block::{Block, BlockIter};
    pub use crate::filter::block::{FilterBlockBuilder, FilterBlockReader};
    pub use crate::io::CountingReader;
    #[cfg(feature = "mmap")]
    pub use crate::util::os::map_file;

    /// Fixed-width and varint encodings (LevelDB's `util/coding.h`).
    pub mod coding {
        pub use crate::format::coding::{
            decode_fixed32, decode_fixed64, decode_varint32, decode_varint64, get_fixed32,
            get_fixed64, get_length_prefixed_slice, get_varint32, get_varint64, put_fixed32,
            put_fixed64, put_length_prefixed_slice, put_varint32, put_varint64, varint_length,
        };
    }
    /// CRC32C and LevelDB's mask (`util/crc32c.h`).
    pub mod crc32c {
        pub use crate::util::crc32c::{extend, mask, unmask, value};
    }
    /// LevelDB's `Hash` (`util/hash.cc`).
    pub mod hash {
        pub use crate::util::hash::{hash, hash_signed_tail};
    }
    /// Format constants, handles, footer, trailers, `read_block`.
    pub mod format {
        pub use crate::block::stored::{
            block_trailer, check_handle, read_block, BlockContents, ReadBlockOptions, StoredBlock,
        };
        pub use crate::format::{
            BlockHandle, Footer, BLOCK_TRAILER_LEN, BLOOM_HASH_SEED, BLOOM_MAX_K, BLOOM_MIN_BITS,
            BLOOM_POLICY_NAME, CACHE_LOCAL_BLOOM_NAME, COMPRESSION_ID2_ZSTD_OR_ZLIB,
            COMPRESSION_MOJANG_RAW_DEFLATE, COMPRESSION_MOJANG_ZSTD, COMPRESSION_NONE,
            COMPRESSION_SNAPPY, CRC_MASK_DELTA, DEFAULT_BLOCK_SIZE, DEFAULT_RESTART_INTERVAL,
            FILTER_BASE_LG, FILTER_META_PREFIX, FOOTER_LEN, HASH_M, HASH_R, INDEX_RESTART_INTERVAL,
            INTERNAL_TAG_LEN, LEGACY_BLOOM_POLICY_NAME, MAX_BLOCK_HANDLE_LEN, MAX_SEQUENCE,
            ROCKSDB_BLOCK_BASED_MAGIC, ROCKSDB_CUCKOO_MAGIC, ROCKSDB_FOOTER_VERSION_FROM_END,
            ROCKSDB_LEGACY_PLAIN_MAGIC, ROCKSDB_PLAIN_MAGIC, TABLE_MAGIC, TYPE_DELETION,
            TYPE_VALUE, ZSTD_FRAME_MAGIC,
        };
    }
    /// Block codecs.
    pub mod compress {
        pub use crate::compress::{
            compress, decompress, name, snappy_into, Compression, CompressionProfile, Compressor,
            DecompressError, MAX_BLOCK_BYTES,
        };
    }
    /// Internal keys of LevelDB databases.
    pub mod internal_key {
        pub use crate::internal_key::{
            append_internal_key, internal_key, lookup_key, pack_tag, parse_internal_key, user_key,
            InternalFilterPolicy, InternalKeyComparator, ParsedInternalKey, ValueType,
        };
    }
    /// LevelDB's bloom filter, probe by probe (`util/bloom.cc`).
    pub mod bloom {
        pub use crate::filter::bloom::{k_for_bits_per_key, probes, BloomFilter};
    }
}
