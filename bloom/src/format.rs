//! Constants of the filters' stored forms: the local filter files and the Redis layout. The
//! layouts themselves are drawn in `scalable_file.rs` and `redis/mod.rs`. None of this is a
//! LevelDB format (table filters are the table crate's).

/// First 8 bytes of a scalable-filter file written by [`crate::ScalableBloomFilter::save`].
pub const SCALABLE_FILE_MAGIC: [u8; 8] = *b"SSTBLOOM";
/// Version of the scalable-filter file layout (bumped on any layout change).
pub const SCALABLE_FILE_VERSION: u32 = 1;
/// First 8 bytes of a counting-filter file written by [`crate::CountingBloomFilter::save`].
pub const COUNTING_FILE_MAGIC: [u8; 8] = *b"SSTCOUNT";
/// Version of the counting-filter file layout.
pub const COUNTING_FILE_VERSION: u32 = 1;
/// Version of the Redis layout, stored in the metadata hash's `version` field.
#[cfg(feature = "redis")]
pub const REDIS_FORMAT_VERSION: u32 = 1;
/// Most bits in one Redis bitmap: 2^20 bits = 128 KiB per Redis value. Layers larger than
/// this are split into several bitmaps; a key's hash picks one of them.
#[cfg(feature = "redis")]
pub const REDIS_BITMAP_MAX_BITS: u64 = 1 << 20;
/// Most layers a scalable filter opens. With growth 2 the last layer holds 2^39 times the
/// first layer's capacity; reaching it is reported as an error rather than growing further.
pub const MAX_LAYERS: u32 = 40;
/// A layer is full when its fraction of set bits passes this (with the optimal k a layer at
/// capacity is about half full, so this only triggers when keys collide more than expected).
pub const MAX_LAYER_FILL: f64 = 0.5;
/// Smallest bit array of a layer (as LevelDB's filters, at least 64 bits).
pub const MIN_BITS: u64 = 64;
/// Largest k: LevelDB's own limit (`BLOOM_MAX_K`).
pub const MAX_K: u32 = 30;
/// The false-positive rate is clamped to at least this (as LevelDB's `BloomFilter::for_capacity`).
pub const MIN_FP_RATE: f64 = 1e-9;
/// The false-positive rate is clamped to at most this.
pub const MAX_FP_RATE: f64 = 0.5;
/// Largest counter of a [`crate::CountingBloomFilter`] (4 bits): it saturates there.
pub const COUNTER_MAX: u8 = 15;
/// LevelDB's CRC mask delta (`util/crc32c.h` `kMaskDelta`), for the files' checksums.
pub const CRC_MASK_DELTA: u32 = 0xa282_ead8;
