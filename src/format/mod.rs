//! On-disk constants, the fixed-width and varint encodings (`coding.rs`), block handles and
//! the footer's layout. Reading a stored block is `block/stored.rs`; decoding the footer,
//! with its errors, is `table/footer.rs`.
//!
//! ```text
//! table file
//! +--------------------+---------+
//! | data block 0       | trailer |   trailer = type: u8 | masked crc32c: fixed32
//! | ...                |         |   crc32c covers the stored block bytes + type
//! | data block N-1     | trailer |
//! | filter block       | trailer |   (only with a filter policy; always type 0)
//! | metaindex block    | trailer |   "filter.<policy name>" -> BlockHandle
//! | index block        | trailer |   separator key -> BlockHandle of a data block
//! | footer (48 bytes)            |
//! +------------------------------+
//!
//! BlockHandle  = varint64 offset | varint64 size        (size excludes the trailer)
//! footer       = metaindex handle | index handle | zero padding to byte 40
//!                | magic 0xdb4775248b80fb57 as fixed64 LE (bytes 40..48)
//! ```
//!
//! Every format constant of the crate lives in this module, each with the place in LevelDB
//! (or the other writer) that defines it.

pub(crate) mod coding;

/// Table magic number: `kTableMagicNumber` in LevelDB's `table/format.h` (the first 64 bits of
/// the SHA-1 of `http://code.google.com/p/leveldb/`). Also RocksDB's legacy block-based magic.
pub const TABLE_MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// Encoded length of the footer: `Footer::kEncodedLength` = 2 * 20 + 8 (`table/format.h`).
pub const FOOTER_LEN: usize = 48;
/// Longest encoding of a block handle, two varint64s (`BlockHandle::kMaxEncodedLength`).
pub const MAX_BLOCK_HANDLE_LEN: usize = 20;
/// Block trailer: 1-byte type + 4-byte masked CRC (`kBlockTrailerSize`, `table/format.h`).
pub const BLOCK_TRAILER_LEN: usize = 5;

/// Compression id 0: stored raw (`kNoCompression`, `include/leveldb/options.h`).
pub const COMPRESSION_NONE: u8 = 0;
/// Compression id 1: raw snappy (`kSnappyCompression`).
pub const COMPRESSION_SNAPPY: u8 = 1;
/// Compression id 2: zstd in google/leveldb main (`kZstdCompression`, commit 1d6e8d6);
/// a zlib stream in Mojang's leveldb-mcpe and in RocksDB.
pub const COMPRESSION_ID2_ZSTD_OR_ZLIB: u8 = 2;
/// Compression id 3: zstd in Mojang's fork.
pub const COMPRESSION_MOJANG_ZSTD: u8 = 3;
/// Compression id 4: raw deflate (RFC 1951) in Mojang's fork (`leveldb::ZlibCompressorRaw`).
pub const COMPRESSION_MOJANG_RAW_DEFLATE: u8 = 4;

/// Magic at the start of a zstd frame (RFC 8878, section 3.1.1), `28 b5 2f fd` on disk.
pub const ZSTD_FRAME_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// CRC mask delta: `kMaskDelta` in `util/crc32c.h`.
pub const CRC_MASK_DELTA: u32 = 0xa282_ead8;

/// Default data block size: `Options::block_size` (`include/leveldb/options.h`).
pub const DEFAULT_BLOCK_SIZE: usize = 4096;
/// Default restart interval: `Options::block_restart_interval`.
pub const DEFAULT_RESTART_INTERVAL: usize = 16;
/// The index block always uses restart interval 1 (`TableBuilder::Rep`, `table/table_builder.cc`).
pub const INDEX_RESTART_INTERVAL: usize = 1;
/// Prefix of the metaindex key that names the filter block (`"filter."`, `table/table.cc`).
pub const FILTER_META_PREFIX: &[u8] = b"filter.";

/// `kFilterBaseLg` in `table/filter_block.cc`: one filter per 2 KiB of data-block offset.
pub const FILTER_BASE_LG: u8 = 11;

/// Multiplier of LevelDB's `Hash` (`util/hash.cc`).
pub const HASH_M: u32 = 0xc6a4_a793;
/// Final shift of LevelDB's `Hash` tail step (`util/hash.cc`).
pub const HASH_R: u32 = 24;
/// Seed of the bloom hash: `BloomHash` in `util/bloom.cc`.
pub const BLOOM_HASH_SEED: u32 = 0xbc9f_1d34;
/// Name of LevelDB's bloom policy since 1.18 (`util/bloom.cc`).
pub const BLOOM_POLICY_NAME: &str = "leveldb.BuiltinBloomFilter2";
/// Name of the bloom policy before LevelDB 1.18, still written by goleveldb.
pub const LEGACY_BLOOM_POLICY_NAME: &str = "leveldb.BuiltinBloomFilter";
/// Name of this crate's cache-local bloom policy, layout version 1 (`filter/local.rs`);
/// LevelDB does not know it and reads such tables unfiltered.
pub const CACHE_LOCAL_BLOOM_NAME: &str = "leveldb-table.CacheLocalBloom.1";
/// Largest probe count a bloom filter may carry; larger k bytes are "reserved" and match all.
pub const BLOOM_MAX_K: u8 = 30;
/// Smallest bloom filter, in bits (`util/bloom.cc`: "for small n, we can see a very high false
/// positive rate. Fix it by enforcing a minimum bloom filter length").
pub const BLOOM_MIN_BITS: usize = 64;

/// Bytes of an internal key's tag: fixed64(sequence << 8 | type) (`db/dbformat.h`).
pub const INTERNAL_TAG_LEN: usize = 8;
/// `kMaxSequenceNumber` = 2^56 - 1 (`db/dbformat.h`).
pub const MAX_SEQUENCE: u64 = (1 << 56) - 1;
/// `kTypeDeletion` (`db/dbformat.h`).
pub const TYPE_DELETION: u8 = 0;
/// `kTypeValue`, also `kValueTypeForSeek` (`db/dbformat.h`).
pub const TYPE_VALUE: u8 = 1;

/// RocksDB block-based table magic, format_version >= 1 (`table/block_based/block_based_table_builder.cc`).
pub const ROCKSDB_BLOCK_BASED_MAGIC: u64 = 0x88e2_41b7_85f4_cff7;
/// RocksDB PlainTable magic (`table/plain/plain_table_builder.cc`).
pub const ROCKSDB_PLAIN_MAGIC: u64 = 0x8242_2296_63bf_9564;
/// RocksDB legacy PlainTable magic.
pub const ROCKSDB_LEGACY_PLAIN_MAGIC: u64 = 0x4f34_18eb_7a8f_13b8;
/// RocksDB CuckooTable magic (`table/cuckoo/cuckoo_table_builder.cc`).
pub const ROCKSDB_CUCKOO_MAGIC: u64 = 0x9267_89d0_c5f1_7873;
/// RocksDB footers for format_version >= 1 are 53 bytes; the version is the u32 at `len - 12`.
pub const ROCKSDB_FOOTER_VERSION_FROM_END: usize = 12;

/// Pointer to a block: where it starts in the file and how long it is, without its trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BlockHandle {
    /// File offset of the first byte of the block.
    pub offset: u64,
    /// Length of the stored block, excluding the 5-byte trailer.
    pub size: u64,
}

impl BlockHandle {
    /// A handle for `size` bytes at `offset`.
    pub const fn new(offset: u64, size: u64) -> Self {
        BlockHandle { offset, size }
    }

    /// Appends the encoding (two varint64s) to `dst`.
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        coding::put_varint64(dst, self.offset);
        coding::put_varint64(dst, self.size);
    }

    /// Decodes a handle from the front of `input`, consuming it. Trailing bytes are left
    /// in `input` (LevelDB ignores extra bytes after an index value's handle).
    pub fn decode_from(input: &mut &[u8]) -> Option<Self> {
        let offset = coding::get_varint64(input)?;
        let size = coding::get_varint64(input)?;
        Some(BlockHandle { offset, size })
    }

    /// File offset just past this block's trailer, or `None` on overflow.
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(BLOCK_TRAILER_LEN as u64)
    }
}

/// The two handles stored in the last 48 bytes of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// Handle of the metaindex block.
    pub metaindex: BlockHandle,
    /// Handle of the index block.
    pub index: BlockHandle,
}

impl Footer {
    /// Encodes the footer: both handles, zero padding to byte 40, then the magic.
    pub fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut v = Vec::with_capacity(FOOTER_LEN);
        self.metaindex.encode_to(&mut v);
        self.index.encode_to(&mut v);
        v.resize(FOOTER_LEN - 8, 0);
        coding::put_fixed64(&mut v, TABLE_MAGIC);
        let mut out = [0u8; FOOTER_LEN];
        out.copy_from_slice(&v);
        out
    }
}
