//! Options, one type per role: [`Options`] (writing a table), [`OpenOptions`] (opening one)
//! and [`ReadOptions`] (one read). Defaults are LevelDB's, except where `docs/compat.md` says
//! otherwise (block checksums are verified by default).
//!
//! Every option is a public field and a setter of the same name, so options read as
//! `Options::default().block_size(8192).bloom(10)`; the structs are `#[non_exhaustive]`, so
//! options can be added without breaking callers.

use std::sync::Arc;

use crate::cache::BlockCache;
pub use crate::compress::{Compression, CompressionProfile};
use crate::filter::{BloomFilterPolicy, FilterPolicy};
use crate::format::{DEFAULT_BLOCK_SIZE, DEFAULT_RESTART_INTERVAL};
use crate::internal_key::{InternalFilterPolicy, InternalKeyComparator};
use crate::util::comparator::{BytewiseComparator, Comparator};

/// How a table is written (the fields of LevelDB's `Options` the table layer uses).
#[derive(Clone)]
#[non_exhaustive]
pub struct Options {
    /// Uncompressed size at which a data block is cut (4096).
    pub block_size: usize,
    /// Keys between restart points in data and metaindex blocks (16).
    pub block_restart_interval: usize,
    /// Block compression (snappy). A block is stored compressed only if that saves more
    /// than 12.5%.
    pub compression: Compression,
    /// Filter policy (none). [`bloom(10)`](Self::bloom) is what most databases use.
    pub filter_policy: Option<Arc<dyn FilterPolicy>>,
    /// Key order (bytewise).
    pub comparator: Arc<dyn Comparator>,
    /// Compress data blocks on a helper thread while the builder fills the next block
    /// (false). The file is byte for byte the one the builder writes without it;
    /// `file_size` then trails by the blocks still being compressed (at most 16).
    pub parallel_compression: bool,
    /// Plain keys, or a database's internal keys ([`KeyFormat::Plain`]). With
    /// [`KeyFormat::Internal`], `comparator` and `filter_policy` are the *user* ones, and the
    /// builder orders keys by [`InternalKeyComparator`] over `comparator` and builds filters
    /// over user keys ([`InternalFilterPolicy`]), as a LevelDB database writes its tables.
    /// Independent of the other options' order. A writer has nothing to detect:
    /// [`KeyFormat::Auto`] writes plain keys.
    pub keys: KeyFormat,
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
            keys: KeyFormat::Plain,
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
            .field("keys", &self.keys)
            .finish()
    }
}

impl Options {
    /// Sets [`block_size`](Self::block_size).
    pub fn block_size(mut self, n: usize) -> Self {
        self.block_size = n;
        self
    }

    /// Sets [`block_restart_interval`](Self::block_restart_interval).
    pub fn block_restart_interval(mut self, n: usize) -> Self {
        self.block_restart_interval = n;
        self
    }

    /// Sets [`compression`](Self::compression).
    pub fn compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }

    /// Sets [`filter_policy`](Self::filter_policy) (`None`: no filter).
    pub fn filter_policy(mut self, p: Option<Arc<dyn FilterPolicy>>) -> Self {
        self.filter_policy = p;
        self
    }

    /// Sets [`filter_policy`](Self::filter_policy) to LevelDB's bloom filter with
    /// `bits_per_key` bits per key ([`BloomFilterPolicy`]).
    pub fn bloom(self, bits_per_key: usize) -> Self {
        self.filter_policy(Some(Arc::new(BloomFilterPolicy::new(bits_per_key))))
    }

    /// Sets [`filter_policy`](Self::filter_policy) to this crate's cache-local bloom filter
    /// with `bits_per_key` bits per key ([`CacheLocalBloomPolicy`](crate::filter::CacheLocalBloomPolicy):
    /// one cache line per probe, fewer false positives; LevelDB reads such tables unfiltered).
    pub fn local_bloom(self, bits_per_key: f64) -> Self {
        self.filter_policy(Some(Arc::new(crate::filter::CacheLocalBloomPolicy::new(
            bits_per_key,
        ))))
    }

    /// Sets [`comparator`](Self::comparator).
    pub fn comparator(mut self, c: Arc<dyn Comparator>) -> Self {
        self.comparator = c;
        self
    }

    /// Sets [`parallel_compression`](Self::parallel_compression).
    pub fn parallel_compression(mut self, on: bool) -> Self {
        self.parallel_compression = on;
        self
    }

    /// Sets [`keys`](Self::keys).
    pub fn keys(mut self, keys: KeyFormat) -> Self {
        self.keys = keys;
        self
    }

    /// Whether the builder writes internal keys ([`keys`](Self::keys) is
    /// [`KeyFormat::Internal`]).
    pub(crate) fn internal_keys(&self) -> bool {
        self.keys == KeyFormat::Internal
    }

    /// The comparator the builder orders keys by: `comparator`, wrapped in
    /// [`InternalKeyComparator`] for internal keys.
    pub(crate) fn key_comparator(&self) -> Arc<dyn Comparator> {
        if self.internal_keys() {
            Arc::new(InternalKeyComparator::new(self.comparator.clone()))
        } else {
            self.comparator.clone()
        }
    }

    /// The filter policy the builder uses: `filter_policy`, wrapped in
    /// [`InternalFilterPolicy`] (filters over user keys) for internal keys.
    pub(crate) fn key_filter_policy(&self) -> Option<Arc<dyn FilterPolicy>> {
        let p = self.filter_policy.clone()?;
        Some(if self.internal_keys() {
            Arc::new(InternalFilterPolicy::new(p))
        } else {
            p
        })
    }
}

/// Whether a table's keys are plain keys or a database's internal keys (for writing,
/// [`Options::keys`]; for reading, [`OpenOptions::keys`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyFormat {
    /// Decide when opening: internal if every index key and every key of the first data
    /// block is at least 8 bytes with a type byte of 0 or 1. A writer writes plain keys.
    #[default]
    Auto,
    /// Keys are stored as given.
    Plain,
    /// Keys are LevelDB internal keys.
    Internal,
}

/// How a table is opened ([`TableReader::open`](crate::TableReader::open)), and how a
/// database opens its tables (`DbOptions::table` in `db::reader`).
#[derive(Clone)]
#[non_exhaustive]
pub struct OpenOptions {
    /// The user key order (bytewise). For internal keys it is wrapped in
    /// [`InternalKeyComparator`].
    pub comparator: Arc<dyn Comparator>,
    /// Plain or internal keys, or detect ([`KeyFormat::Auto`]).
    pub keys: KeyFormat,
    /// Use the table's filter for point lookups (true).
    pub use_filter: bool,
    /// Filter policies to recognise besides the built-in bloom filters, matched by the
    /// name in the metaindex (none).
    pub filter_policies: Vec<Arc<dyn FilterPolicy>>,
    /// Block cache, possibly shared with other tables (none).
    pub block_cache: Option<Arc<BlockCache>>,
    /// Verify the checksum of every block read from the table (true): the index and
    /// metaindex at open, the filter block when it is first used, each data block when it
    /// is read. LevelDB's `paranoid_checks` and `ReadOptions::verify_checksums` in one (both
    /// off by default in LevelDB). With `false`, a block is still verified when it goes into
    /// a block cache (which may be shared with readers that verify): it is cached only if
    /// it checks out, and otherwise read as it is.
    pub verify_checksums: bool,
    /// How to read the ambiguous compression id 2 ([`CompressionProfile::Auto`]).
    pub compression_profile: CompressionProfile,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
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

impl std::fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let policies: Vec<&str> = self.filter_policies.iter().map(|p| p.name()).collect();
        f.debug_struct("OpenOptions")
            .field("comparator", &self.comparator.name())
            .field("keys", &self.keys)
            .field("use_filter", &self.use_filter)
            .field("filter_policies", &policies)
            .field("block_cache", &self.block_cache)
            .field("verify_checksums", &self.verify_checksums)
            .field("compression_profile", &self.compression_profile)
            .finish()
    }
}

impl OpenOptions {
    /// Sets [`comparator`](Self::comparator).
    pub fn comparator(mut self, c: Arc<dyn Comparator>) -> Self {
        self.comparator = c;
        self
    }

    /// Sets [`keys`](Self::keys).
    pub fn keys(mut self, keys: KeyFormat) -> Self {
        self.keys = keys;
        self
    }

    /// Sets [`use_filter`](Self::use_filter).
    pub fn use_filter(mut self, on: bool) -> Self {
        self.use_filter = on;
        self
    }

    /// Sets [`filter_policies`](Self::filter_policies).
    pub fn filter_policies(mut self, policies: Vec<Arc<dyn FilterPolicy>>) -> Self {
        self.filter_policies = policies;
        self
    }

    /// Sets [`block_cache`](Self::block_cache).
    pub fn block_cache(mut self, cache: Option<Arc<BlockCache>>) -> Self {
        self.block_cache = cache;
        self
    }

    /// Sets [`verify_checksums`](Self::verify_checksums).
    pub fn verify_checksums(mut self, on: bool) -> Self {
        self.verify_checksums = on;
        self
    }

    /// Sets [`compression_profile`](Self::compression_profile).
    pub fn compression_profile(mut self, p: CompressionProfile) -> Self {
        self.compression_profile = p;
        self
    }
}

/// How one read is made (LevelDB's `ReadOptions`), given to each `get`, `iter` and
/// `range`; checksums are an option of opening, [`OpenOptions::verify_checksums`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Put the blocks read into the block cache (true).
    pub fill_cache: bool,
    /// Read as of this sequence number: versions written later are not seen (`None`, the
    /// default: the newest). Only database tables and databases have sequence numbers;
    /// plain tables ignore it.
    pub snapshot: Option<u64>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            fill_cache: true,
            snapshot: None,
        }
    }
}

impl ReadOptions {
    /// Sets [`fill_cache`](Self::fill_cache).
    pub fn fill_cache(mut self, on: bool) -> Self {
        self.fill_cache = on;
        self
    }

    /// Sets [`snapshot`](Self::snapshot).
    pub fn snapshot(mut self, sequence: Option<u64>) -> Self {
        self.snapshot = sequence;
        self
    }
}
