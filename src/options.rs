//! Options for writing and reading tables. Defaults are LevelDB's, except where
//! `docs/compat.md` says otherwise (checksums are verified by default when reading).

use std::sync::Arc;

use crate::cache::BlockCache;
pub use crate::compress::{Compression, CompressionProfile};
use crate::filter::{BloomFilterPolicy, FilterPolicy};
use crate::format::{DEFAULT_BLOCK_SIZE, DEFAULT_RESTART_INTERVAL};
use crate::internal_key::{InternalFilterPolicy, InternalKeyComparator};
use crate::util::comparator::{BytewiseComparator, Comparator};

/// How a table is written (LevelDB's `Options`, the fields the table layer uses).
#[derive(Clone)]
pub struct Options {
    /// Uncompressed size at which a data block is cut (4096).
    pub block_size: usize,
    /// Keys between restart points in data and metaindex blocks (16).
    pub block_restart_interval: usize,
    /// Block compression (snappy). A block is stored compressed only if that saves more
    /// than 12.5%.
    pub compression: Compression,
    /// Filter policy (none). `Some(bloom(10))` is what most databases use.
    pub filter_policy: Option<Arc<dyn FilterPolicy>>,
    /// Key order (bytewise).
    pub comparator: Arc<dyn Comparator>,
    /// Compress data blocks on a helper thread while the builder fills the next block (off).
    /// The file is byte-for-byte the one the builder writes without it; `file_size` then
    /// trails by the blocks still being compressed (the blocks in flight, at most 16).
    pub parallel_compression: bool,
    /// Keys are a database's internal keys (false): `comparator` and `filter_policy` are
    /// the *user* ones, and the builder orders keys by [`InternalKeyComparator`] over
    /// `comparator` and builds filters over user keys ([`InternalFilterPolicy`]). Set by
    /// [`internal_keys`](Self::internal_keys), in any order with the other setters.
    pub internal: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            block_size: DEFAULT_BLOCK_SIZE,
            block_restart_interval: DEFAULT_RESTART_INTERVAL,
            compression: Compression::Snappy,
            filter_policy: None,
            comparator: Arc::new(BytewiseComparator),
            parallel_compression: false,
            internal: false,
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("block_size", &self.block_size)
            .field("block_restart_interval", &self.block_restart_interval)
            .field("compression", &self.compression)
            .field(
                "filter_policy",
                &self.filter_policy.as_ref().map(|p| p.name().to_string()),
            )
            .field("comparator", &self.comparator.name())
            .field("parallel_compression", &self.parallel_compression)
            .field("internal", &self.internal)
            .finish()
    }
}

impl Options {
    /// Sets the data block size.
    pub fn block_size(mut self, n: usize) -> Self {
        self.block_size = n;
        self
    }

    /// Sets the restart interval.
    pub fn restart_interval(mut self, n: usize) -> Self {
        self.block_restart_interval = n;
        self
    }

    /// Sets the compression.
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }

    /// Uses LevelDB's bloom filter with `bits_per_key` bits per key.
    pub fn bloom(mut self, bits_per_key: usize) -> Self {
        self.filter_policy = Some(Arc::new(BloomFilterPolicy::new(bits_per_key)));
        self
    }

    /// Uses this crate's cache-local bloom filter with `bits_per_key` bits per key
    /// ([`CacheLocalBloomPolicy`](crate::CacheLocalBloomPolicy): one cache line per probe,
    /// fewer false positives; LevelDB reads such tables unfiltered).
    pub fn local_bloom(mut self, bits_per_key: f64) -> Self {
        self.filter_policy = Some(Arc::new(crate::filter::CacheLocalBloomPolicy::new(
            bits_per_key,
        )));
        self
    }

    /// Compresses data blocks on a helper thread (see the field).
    pub fn parallel_compression(mut self, on: bool) -> Self {
        self.parallel_compression = on;
        self
    }

    /// Uses no filter.
    pub fn no_filter(mut self) -> Self {
        self.filter_policy = None;
        self
    }

    /// Writes a table as a LevelDB database does: keys are internal keys (user key + 8-byte
    /// tag), ordered by [`InternalKeyComparator`], and filters are built over user keys
    /// ([`InternalFilterPolicy`]). The comparator and filter stay the user ones and are
    /// wrapped when a builder is created, so this may come before or after
    /// [`bloom`](Self::bloom) and the others, and more than once.
    pub fn internal_keys(mut self) -> Self {
        self.internal = true;
        self
    }

    /// The comparator the builder orders keys by: [`comparator`](Self::comparator), wrapped
    /// in [`InternalKeyComparator`] for internal keys.
    pub fn key_comparator(&self) -> Arc<dyn Comparator> {
        if self.internal {
            Arc::new(InternalKeyComparator::new(self.comparator.clone()))
        } else {
            self.comparator.clone()
        }
    }

    /// The filter policy the builder uses: [`filter_policy`](Self::filter_policy), wrapped
    /// in [`InternalFilterPolicy`] (filters over user keys) for internal keys.
    pub fn key_filter_policy(&self) -> Option<Arc<dyn FilterPolicy>> {
        let p = self.filter_policy.clone()?;
        Some(if self.internal {
            Arc::new(InternalFilterPolicy::new(p))
        } else {
            p
        })
    }
}

/// Whether a table's keys are plain keys or a database's internal keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyFormat {
    /// Decide when opening: internal if every index key and every key of the first data
    /// block is at least 8 bytes with a type byte of 0 or 1.
    #[default]
    Auto,
    /// Keys are stored as given.
    Plain,
    /// Keys are LevelDB internal keys.
    Internal,
}

/// How a table is opened.
#[derive(Clone)]
pub struct ReaderOptions {
    /// The user key order (bytewise). For internal keys it is wrapped in
    /// [`InternalKeyComparator`].
    pub comparator: Arc<dyn Comparator>,
    /// Plain or internal keys, or detect.
    pub keys: KeyFormat,
    /// Use the table's filter for point lookups (true).
    pub use_filter: bool,
    /// Filter policies to recognise besides the built-in bloom filters (matched by name).
    pub filter_policies: Vec<Arc<dyn FilterPolicy>>,
    /// Block cache to use, possibly shared with other tables (none).
    pub block_cache: Option<Arc<BlockCache>>,
    /// Verify the checksums of the index, metaindex and filter blocks when opening (true;
    /// LevelDB's `paranoid_checks`).
    pub verify_checksums: bool,
    /// How to read the ambiguous compression id 2.
    pub compression_profile: CompressionProfile,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            comparator: Arc::new(BytewiseComparator),
            keys: KeyFormat::Auto,
            use_filter: true,
            filter_policies: Vec::new(),
            block_cache: None,
            verify_checksums: true,
            compression_profile: CompressionProfile::Auto,
        }
    }
}

impl ReaderOptions {
    /// Sets the key format.
    pub fn keys(mut self, keys: KeyFormat) -> Self {
        self.keys = keys;
        self
    }

    /// Sets the block cache.
    pub fn block_cache(mut self, cache: Arc<BlockCache>) -> Self {
        self.block_cache = Some(cache);
        self
    }

    /// Turns checksum verification of metadata blocks on or off.
    pub fn verify_checksums(mut self, on: bool) -> Self {
        self.verify_checksums = on;
        self
    }

    /// Turns the use of the filter on or off.
    pub fn use_filter(mut self, on: bool) -> Self {
        self.use_filter = on;
        self
    }

    /// Sets the compression profile.
    pub fn compression_profile(mut self, p: CompressionProfile) -> Self {
        self.compression_profile = p;
        self
    }
}

/// Per-read options (LevelDB's `ReadOptions`).
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    /// Compare each data block's CRC before using it (true; LevelDB's default is false).
    /// Blocks that enter the block cache are checked either way (`fill_cache` with a
    /// cache), so a damaged block never reaches a later reader through the cache; turning
    /// this off skips the check only for blocks read past the cache.
    pub verify_checksums: bool,
    /// Put blocks read into the block cache (true).
    pub fill_cache: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_checksums: true,
            fill_cache: true,
        }
    }
}
