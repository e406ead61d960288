//! Reads a table (LevelDB's `table/table.cc`).
//!
//! ```text
//! open:  footer (last 48 bytes) -> metaindex -> index block (kept in memory)
//! first lookup: "filter.<name>" -> filter block (kept in memory), index decoded for search
//! get:   index.seek(key) -> data-block handle
//!        -> filter.key_may_match(handle.offset, key)?   no: not found, no block read
//!        -> block cache or read_block -> block.seek(key)
//! ```
//!
//! Tables written by a LevelDB database hold internal keys; [`TableReader`] detects them (or is
//! told) and then orders keys with [`InternalKeyComparator`] and probes filters with user keys.

use std::cell::Cell;
use std::cmp::Ordering;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Arc, OnceLock, RwLock, Weak};

use bytes::Bytes;

use crate::block::{Block, RestartHints};
use crate::block_dir::BlockDir;
use crate::block_read::{self, BlockContents, ReadBlockOptions};
use crate::cache::{self, BlockCache, CachedBlock, SlotOwner};
use crate::comparator::{BytewiseComparator, Comparator};
use crate::error::{BlockKind, Error, Result};
use crate::filter::{BloomFilterPolicy, FilterPolicy, LegacyBloomFilterPolicy};
use crate::filter_block::{FilterBlockReader, FilterSpan};
use crate::format::{
    self, BlockHandle, Footer, BLOOM_POLICY_NAME, FILTER_META_PREFIX, FOOTER_LEN,
    LEGACY_BLOOM_POLICY_NAME, MAX_SEQUENCE,
};
use crate::index::ParsedIndex;
use crate::internal_key::{self, InternalKeyComparator, ValueType};
use crate::io::RandomAccess;
use crate::options::{CompressionProfile, KeyFormat, ReadOptions, ReaderOptions};

thread_local! {
    /// Scratch space for keys rebuilt during point lookups, so a warm `get` allocates nothing.
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    /// Scratch space for index keys when the index is searched as a block.
    static INDEX_SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    /// Scratch space for the internal lookup key of a database-table lookup.
    static SEEK_KEY: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The answer of a point lookup: found (with the value), deleted, or not found.
///
/// [`TableReader::lookup`] returns it with the value (`Lookup<Vec<u8>>`, the default);
/// [`TableReader::lookup_into`] puts the value in the caller's buffer and returns
/// [`LookupKind`] (`Lookup<()>`): one type for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<V = Vec<u8>> {
    /// The key has a value. `sequence` is set for internal-key tables.
    Found {
        /// The value (`()` from `lookup_into`, whose value is in the caller's buffer).
        value: V,
        /// Sequence number of the version found (internal keys only).
        sequence: Option<u64>,
    },
    /// The newest visible version is a deletion (internal keys only).
    Deleted {
        /// Sequence number of the deletion.
        sequence: u64,
    },
    /// The table has no version of the key.
    NotFound,
}

/// What [`TableReader::lookup_into`] found: a [`Lookup`] whose value is in the caller's
/// buffer.
pub type LookupKind = Lookup<()>;

/// Why a table has no usable filter.
#[derive(Debug)]
pub enum FilterStatus {
    /// The table has a filter and it is used for lookups.
    Used,
    /// The table was written without a filter.
    Absent,
    /// The table's filter has a policy name this reader does not know.
    UnknownPolicy(String),
    /// Filters are turned off in the reader options.
    Disabled,
    /// The metaindex or filter block could not be read; the table works without it.
    Unreadable(Error),
}

/// An open table.
pub struct TableReader<R> {
    file: R,
    file_size: u64,
    footer: Footer,
    index: Block,
    metaindex: Vec<(Vec<u8>, BlockHandle)>,
    /// The filter and its status, loaded on first use (or set at open when there is
    /// nothing to load).
    filter: OnceLock<(Option<FilterBlockReader>, FilterStatus)>,
    /// Policy and handle of a filter still to be read.
    filter_to_load: Option<(Arc<dyn FilterPolicy>, BlockHandle)>,
    filter_handle: Option<BlockHandle>,
    meta_read: ReadBlockOptions,
    comparator: Arc<dyn Comparator>,
    user_comparator: Arc<dyn Comparator>,
    internal: bool,
    cache: Option<Arc<BlockCache>>,
    cache_id: u64,
    profile: CompressionProfile,
    /// The index decoded for lookups, built on the first one (`None` inside: not possible
    /// for this index or comparator, use the block).
    parsed_index: OnceLock<Option<ParsedIndex>>,
    /// For a zero-copy source with a block cache: the data blocks point lookups have read,
    /// checksum verified, with their search directories, by index position. Such a block
    /// is a view of the source's memory, so what is kept is the verification and the
    /// directory (at most 1/8 of the block's bytes); LevelDB does not cache these blocks at
    /// all. Kept for the table's lifetime, outside the block cache's budget, and looked up
    /// without hashing.
    in_place: OnceLock<Box<[OnceLock<InPlace>]>>,
    /// What a point lookup needs per data block after the index search, by index position,
    /// in one 256-byte record: see [`BlockLookup`].
    lookups: OnceLock<Arc<Lookups>>,
}

/// Per data block, for point lookups: its handle, its filter, and the block itself while
/// the cache holds it, in one 256-byte record (four cache lines in two adjacent pairs, which
/// the CPU fetches together).
///
/// After the index search has found the block's position, everything else a lookup needs
/// before the block's bytes is here: in the index's entries and the filter block it would be
/// three more dependent cache misses (the handle, the filter's offset, the filter's bits),
/// and through the cache a hash probe and the cache entry. The slot holds the cached
/// block (its bytes, restart hints and cache entry) while the cache keeps it: the cache
/// tells the record when it evicts the block ([`SlotOwner`]), so the cache alone decides
/// what stays in memory, and a hit reads the block's bytes straight from the record. Uses
/// are still reported to the cache's eviction policy (`CachedBlock::mark_used`, the
/// cache's frequency sketch).
#[repr(align(128))]
struct BlockLookup {
    handle: BlockHandle,
    filter: BlockFilter,
    /// Set once the in-place path (`in_place`) has found it has nothing for this block
    /// (stored compressed, or no directory): lookups then skip its slot, another cache line.
    not_in_place: AtomicBool,
    slot: RwLock<Slot>,
}

// Four cache lines, no more.
const _: () = assert!(std::mem::size_of::<BlockLookup>() == 256);

/// What a [`BlockLookup`]'s slot holds.
enum Slot {
    /// Never filled: the cache may hold the block anyway (a scan or another path loaded it).
    Never,
    /// The cache let the block go, or did not take it: probing it would only miss.
    Gone,
    /// The block, while the cache holds it.
    Held(Held),
}

/// A cached block as a lookup record holds it: what a lookup reads, without the cache
/// entry's line (the entry is kept for its identity and reference count).
struct Held {
    entry: Arc<CachedBlock>,
    block: Block,
    hints: Option<RestartHints>,
}

/// The lookup records of a table, shared with the cache so that it can empty a record's
/// slot when it evicts the block.
struct Lookups(Box<[BlockLookup]>);

impl SlotOwner for Lookups {
    fn release(&self, index: usize, entry: &Arc<CachedBlock>) {
        if let Some(Ok(mut slot)) = self.0.get(index).map(|l| l.slot.write()) {
            if matches!(&*slot, Slot::Held(h) if Arc::ptr_eq(&h.entry, entry)) {
                *slot = Slot::Gone;
            }
        }
    }
}

/// What `load_data_block` runs on a block's cache entry while the cache holds it.
type Install<'a> = dyn Fn(&Arc<CachedBlock>) + 'a;

/// What [`TableReader::held_lookup`] found.
enum HeldLookup<T> {
    /// The record held the block: the lookup's result.
    Hit(T),
    /// Not held; `probe`: the cache may hold the block all the same.
    Miss { probe: bool },
}

/// Filter bytes a [`BlockLookup`] holds inline (a 4 KiB block of 100-byte entries at 10
/// bits per key has a 50-byte filter).
const INLINE_FILTER: usize = 86;

/// How a [`BlockLookup`] answers the filter question (LevelDB's rules, `FilterSpan`).
enum BlockFilter {
    /// No filter applies: every key may match.
    MayMatch,
    /// No key matches (LevelDB's malformed empty filter).
    NoMatch,
    /// The filter's bytes, copied.
    Inline { len: u8, bits: [u8; INLINE_FILTER] },
    /// A longer filter: its place in the filter block.
    At { start: u32, len: u32 },
}

/// Where a point lookup goes after the index search and the filter (`TableReader::route`).
struct Route<'a> {
    /// Position of the block in the decoded index, when the table has one.
    pos: Option<usize>,
    /// The block's lookup record, when the table has a decoded index.
    lookup: Option<&'a BlockLookup>,
    handle: BlockHandle,
    /// The decoded index's prefix of the key (0 without a decoded index).
    tp: u64,
}

/// What a lookup through `in_place` did.
enum InPlaceLookup {
    /// Answered: found (value copied) or not.
    Done(bool),
    /// Read and verified the block, which has no directory: search it.
    Read(Block),
    /// The block is not kept in place: search it through the block cache.
    NotHere,
}

/// A data block of a zero-copy source that a point lookup has read and verified (`dir`
/// `None`: not kept, searched through the block cache, e.g. a compressed block).
struct InPlace {
    handle: BlockHandle,
    /// Its search directory; `None` when the block is compressed or does not have the shape
    /// for one (lookups then search it through the block cache).
    dir: Option<BlockDir>,
}

impl TableReader<File> {
    /// Opens the table file at `path` read-only with default options.
    ///
    /// # Errors
    /// I/O errors and every corruption [`TableReader::open`] reports.
    pub fn open_path(path: impl AsRef<Path>) -> Result<Self> {
        Self::open(File::open(path)?, ReaderOptions::default())
    }
}

#[cfg(feature = "mmap")]
impl TableReader<Bytes> {
    /// Opens the table file at `path` through a read-only memory map ([`crate::map_file`]):
    /// blocks are read without system calls or copies, and uncompressed blocks are parsed in
    /// place. The file must not be truncated or modified while the table is open (see
    /// [`crate::map_file`]); use [`TableReader::open`] with a [`File`] for files that may change.
    ///
    /// # Errors
    /// I/O errors and every corruption [`TableReader::open`] reports.
    ///
    /// # Safety
    /// As [`crate::map_file`]: the file must not be truncated or modified while the table
    /// (or any block read from it) is alive.
    #[allow(unsafe_code)]
    pub unsafe fn open_mmap(path: impl AsRef<Path>, opts: ReaderOptions) -> Result<Self> {
        // SAFETY: the caller upholds `map_file`'s contract (this function's own).
        let map = unsafe { crate::os::map_file(&File::open(path)?)? };
        Self::open(map, opts)
    }
}

impl<R: RandomAccess> TableReader<R> {
    /// Opens a table: reads the footer, the metaindex and the index. The filter block is
    /// read (and its checksum verified) on the first lookup that needs it, so opening a
    /// table only to scan it never reads the filter.
    ///
    /// A metaindex or filter block that cannot be read leaves the table usable without a
    /// filter ([`filter_status`](Self::filter_status) says why).
    ///
    /// # Errors
    /// A file under 48 bytes, a bad magic (RocksDB files are named), a bad footer, an index
    /// block that cannot be read or validated.
    pub fn open(file: R, opts: ReaderOptions) -> Result<Self> {
        let file_size = file.size()?;
        if file_size < FOOTER_LEN as u64 {
            return Err(Error::TooShort { file_size });
        }
        let footer_at = file_size - FOOTER_LEN as u64;
        let raw = file.read_at(footer_at, FOOTER_LEN)?;
        let buf: &[u8; FOOTER_LEN] = raw.as_ref().try_into().map_err(|_| Error::TooShort {
            file_size: raw.len() as u64,
        })?;
        let footer = Footer::decode(buf, file_size)?;
        let rb = ReadBlockOptions {
            verify_checksum: opts.verify_checksums,
            profile: opts.compression_profile,
        };
        // The metaindex first: a RocksDB file with the legacy magic is recognised by its
        // meta block names, before its index (perhaps in a codec we do not read) is touched.
        let (metaindex, meta_err) = match read_metaindex(&file, footer.metaindex, footer_at, rb) {
            Ok(m) => (m, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        check_not_rocksdb(&metaindex)?;
        let index_contents =
            block_read::read_block(&file, footer.index, BlockKind::Index, footer_at, rb)?;
        let index = Block::new(index_contents.data, BlockKind::Index, footer.index)?;

        let mut table = TableReader {
            file,
            file_size,
            footer,
            index,
            metaindex,
            filter: OnceLock::new(),
            filter_to_load: None,
            filter_handle: None,
            meta_read: rb,
            comparator: opts.comparator.clone(),
            user_comparator: opts.comparator.clone(),
            internal: false,
            cache: opts.block_cache.clone(),
            cache_id: opts.block_cache.as_ref().map_or(0, |c| c.new_id()),
            profile: opts.compression_profile,
            parsed_index: OnceLock::new(),
            in_place: OnceLock::new(),
            lookups: OnceLock::new(),
        };
        table.internal = match opts.keys {
            KeyFormat::Plain => false,
            KeyFormat::Internal => true,
            KeyFormat::Auto => table.detect_internal_keys(),
        };
        if table.internal {
            table.comparator = Arc::new(InternalKeyComparator::new(opts.comparator.clone()));
        }
        let ready = match meta_err {
            Some(e) => Some(FilterStatus::Unreadable(e)),
            None => table.plan_filter(&opts),
        };
        if let Some(status) = ready {
            let _ = table.filter.set((None, status));
        }
        Ok(table)
    }

    fn detect_internal_keys(&self) -> bool {
        let mut it = self.index.iter(&BytewiseComparator);
        it.seek_to_first();
        let mut first_handle = None;
        while it.valid() {
            if internal_key::parse_internal_key(it.key()).is_none() {
                return false;
            }
            if first_handle.is_none() {
                let mut v = it.value();
                first_handle = BlockHandle::decode_from(&mut v);
            }
            it.next();
        }
        let Some(h) = first_handle else { return false };
        // Every key of the first data block must be an internal key too.
        let Ok(block) = self.read_data_block(
            h,
            ReadOptions {
                verify_checksums: true,
                fill_cache: false,
            },
        ) else {
            return true;
        };
        let mut it = block.iter(&BytewiseComparator);
        it.seek_to_first();
        let mut n = 0;
        while it.valid() {
            if internal_key::parse_internal_key(it.key()).is_none() {
                return false;
            }
            n += 1;
            it.next();
        }
        n > 0 || it.error().is_some()
    }

    /// Finds the filter named in the metaindex and its policy. Returns the final status
    /// when there is nothing to read; otherwise the block is read on first use.
    fn plan_filter(&mut self, opts: &ReaderOptions) -> Option<FilterStatus> {
        let Some((name, handle)) = self
            .metaindex
            .iter()
            .find(|(k, _)| k.starts_with(FILTER_META_PREFIX))
            .map(|(k, h)| (k[FILTER_META_PREFIX.len()..].to_vec(), *h))
        else {
            return Some(FilterStatus::Absent);
        };
        self.filter_handle = Some(handle);
        if !opts.use_filter {
            return Some(FilterStatus::Disabled);
        }
        let name = String::from_utf8_lossy(&name).into_owned();
        let policy: Arc<dyn FilterPolicy> =
            match opts.filter_policies.iter().find(|p| p.name() == name) {
                Some(p) => p.clone(),
                None if name == BLOOM_POLICY_NAME => Arc::new(BloomFilterPolicy::new(10)),
                None if name == LEGACY_BLOOM_POLICY_NAME => {
                    Arc::new(LegacyBloomFilterPolicy::new(10))
                }
                None if name == crate::format::CACHE_LOCAL_BLOOM_NAME => {
                    Arc::new(crate::filter::CacheLocalBloomPolicy::new(10.0))
                }
                None => return Some(FilterStatus::UnknownPolicy(name)),
            };
        self.filter_to_load = Some((policy, handle));
        None
    }

    /// The filter, read (and its checksum verified) on first use. A filter block that
    /// cannot be read leaves the table without a filter.
    fn filter_state(&self) -> &(Option<FilterBlockReader>, FilterStatus) {
        self.filter.get_or_init(|| {
            let Some((policy, handle)) = &self.filter_to_load else {
                return (None, FilterStatus::Absent);
            };
            let kind = BlockKind::Filter;
            match block_read::read_block(&self.file, *handle, kind, self.data_end(), self.meta_read)
            {
                Ok(c) => (
                    Some(FilterBlockReader::new(policy.clone(), c.data)),
                    FilterStatus::Used,
                ),
                Err(e) => (None, FilterStatus::Unreadable(e)),
            }
        })
    }

    /// Offset of the footer: every block must end at or before it.
    pub fn data_end(&self) -> u64 {
        self.file_size - FOOTER_LEN as u64
    }

    /// Size of the file.
    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    /// The decoded footer.
    pub fn footer(&self) -> Footer {
        self.footer
    }

    /// Whether keys are read as internal keys.
    pub fn is_internal(&self) -> bool {
        self.internal
    }

    /// The comparator keys are ordered by (internal-key comparator for internal keys).
    pub fn comparator(&self) -> &dyn Comparator {
        &*self.comparator
    }

    /// The index block.
    pub fn index_block(&self) -> &Block {
        &self.index
    }

    /// Metaindex entries (name, handle), in file order.
    pub fn metaindex(&self) -> &[(Vec<u8>, BlockHandle)] {
        &self.metaindex
    }

    /// The filter block reader, if the filter is used.
    pub fn filter(&self) -> Option<&FilterBlockReader> {
        self.filter_state().0.as_ref()
    }

    /// Handle of the filter block named in the metaindex, if any.
    pub fn filter_handle(&self) -> Option<BlockHandle> {
        self.filter_handle
    }

    /// Whether the filter is used, and if not, why.
    pub fn filter_status(&self) -> &FilterStatus {
        &self.filter_state().1
    }

    /// How compression id 2 is read.
    pub fn compression_profile(&self) -> CompressionProfile {
        self.profile
    }

    /// The underlying source.
    pub fn source(&self) -> &R {
        &self.file
    }

    /// Reads and checks any block of the table, bypassing the cache.
    ///
    /// # Errors
    /// As [`block_read::read_block`].
    pub fn read_block_contents(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        verify_checksum: bool,
    ) -> Result<BlockContents> {
        let rb = ReadBlockOptions {
            verify_checksum,
            profile: self.profile,
        };
        block_read::read_block(&self.file, handle, kind, self.data_end(), rb)
    }

    /// The data block at `handle`, from the cache or the file.
    ///
    /// Only blocks whose checksum was verified are put into the cache, so a cached block
    /// is always a verified block.
    ///
    /// # Errors
    /// As [`block_read::read_block`] and [`Block::new`].
    pub fn read_data_block(&self, handle: BlockHandle, opts: ReadOptions) -> Result<Block> {
        self.read_data_block_ra(handle, opts, None)
    }

    /// [`read_data_block`](Self::read_data_block), serving file reads from `readahead` (and
    /// refilling it with one large read) when given: a forward scan then costs one read per
    /// window instead of one per block.
    pub(crate) fn read_data_block_ra(
        &self,
        handle: BlockHandle,
        opts: ReadOptions,
        readahead: Option<&mut Readahead>,
    ) -> Result<Block> {
        Ok(self
            .load_data_block(handle, opts, readahead, false, true, None)?
            .block
            .clone())
    }

    /// The data block at `handle` as the cache holds it (with its search directory when it
    /// has one), from the cache or the file. Blocks read from a zero-copy source are used
    /// where they are, never through readahead. `for_lookup`: a point lookup reads the
    /// block, so a directory is worth building if the block is cached (scans do not search).
    /// `probe_cache`: false when the caller knows the cache does not hold the block.
    /// `install` runs on the entry while the cache holds it (found there or admitted),
    /// under the cache's lock.
    fn load_data_block(
        &self,
        handle: BlockHandle,
        opts: ReadOptions,
        readahead: Option<&mut Readahead>,
        for_lookup: bool,
        probe_cache: bool,
        install: Option<&Install<'_>>,
    ) -> Result<Arc<CachedBlock>> {
        let install = |e: &Arc<CachedBlock>| {
            if let Some(f) = install {
                if e.block.handle() == handle {
                    f(e);
                }
            }
        };
        if let Some(cache) = &self.cache {
            if !probe_cache {
                cache.note_use(self.cache_id, handle.offset);
            } else if let Some(e) = cache.get_entry_with(self.cache_id, handle.offset, install) {
                if e.block.handle() == handle {
                    return Ok(e);
                }
            }
        }
        let zero_copy = self.file.is_zero_copy();
        let readahead = if zero_copy { None } else { readahead };
        let rb = ReadBlockOptions {
            verify_checksum: opts.verify_checksums,
            profile: self.profile,
        };
        // Blocks headed for the cache decompress into buffers of blocks it evicted.
        let pool = match &self.cache {
            Some(c) if opts.fill_cache => Some(c.pool()),
            _ => None,
        };
        let contents = match readahead {
            None => block_read::read_block_in(
                &self.file,
                handle,
                BlockKind::Data,
                self.data_end(),
                rb,
                pool,
            )?,
            Some(ra) => {
                let raw = ra.fetch(&self.file, handle, self.data_end())?;
                let mut c = block_read::decode_block_in(raw, handle, BlockKind::Data, rb, pool)?;
                if c.compression == format::COMPRESSION_NONE
                    && opts.fill_cache
                    && self.cache.is_some()
                {
                    // A slice of the window would keep the whole window alive in the cache.
                    c.data = Bytes::copy_from_slice(&c.data);
                }
                c
            }
        };
        let owns_bytes = !(zero_copy && contents.compression == format::COMPRESSION_NONE);
        let block = Block::new(contents.data, BlockKind::Data, handle)?;
        match &self.cache {
            Some(cache) if opts.fill_cache && contents.checksum_verified => {
                // The directory orders keys bytewise: plain tables with a bytewise comparator.
                // It is built for blocks read in place from a map or buffer, whose entry
                // costs nothing else. For a block the cache holds a copy of, its bytes
                // would be charged next to the block's, and a full cache then holds ~8%
                // fewer blocks: measured, the extra decompressions cost more than the
                // directory saves (docs/performance.md).
                let dir =
                    (for_lookup && !owns_bytes && !self.internal && self.comparator.is_bytewise())
                        .then(|| BlockDir::build(&block))
                        .flatten();
                // Restart hints for owned blocks a lookup brings in (56 bytes of bookkeeping
                // next to ~4 KiB; a scan's blocks go without).
                let hints = (for_lookup && owns_bytes)
                    .then(|| self.parsed_index())
                    .flatten()
                    .and_then(|p| block.restart_hints(|k| p.key_prefix(k)));
                let e = Arc::new(CachedBlock::new(block, dir, owns_bytes).with_hints(hints));
                cache.insert_entry_with(self.cache_id, handle.offset, e.clone(), install);
                Ok(e)
            }
            _ => Ok(Arc::new(CachedBlock::new(block, None, owns_bytes))),
        }
    }

    /// A lookup of `key` in the data block at `handle` read in place from a zero-copy source
    /// (see `in_place`). Only uncompressed blocks are read in place, and only with checksums
    /// verified and cache filling on (so that what is kept was verified).
    fn get_in_place(
        &self,
        slot: &OnceLock<InPlace>,
        handle: BlockHandle,
        key: &[u8],
        opts: ReadOptions,
        value: &mut Vec<u8>,
    ) -> Result<InPlaceLookup> {
        let Some(mem) = self.file.as_slice() else {
            return Ok(InPlaceLookup::NotHere);
        };
        if !opts.verify_checksums || !opts.fill_cache {
            return Ok(InPlaceLookup::NotHere);
        }
        let ip = match slot.get() {
            Some(ip) => ip,
            None => {
                // The block's compression byte, read where it is: a compressed block is
                // searched through the block cache (it must be decompressed anyway).
                let type_at = handle
                    .offset
                    .checked_add(handle.size)
                    .and_then(|t| usize::try_from(t).ok());
                if type_at.and_then(|t| mem.get(t)) != Some(&format::COMPRESSION_NONE) {
                    slot.get_or_init(|| InPlace { handle, dir: None });
                    return Ok(InPlaceLookup::NotHere);
                }
                let rb = ReadBlockOptions {
                    verify_checksum: true,
                    profile: self.profile,
                };
                let c = block_read::read_block(
                    &self.file,
                    handle,
                    BlockKind::Data,
                    self.data_end(),
                    rb,
                )?;
                let block = Block::new(c.data, BlockKind::Data, handle)?;
                let dir = BlockDir::build(&block);
                let ip = slot.get_or_init(|| InPlace { handle, dir });
                if ip.dir.is_none() {
                    return Ok(InPlaceLookup::Read(block));
                }
                ip
            }
        };
        let Some(dir) = &ip.dir else {
            return Ok(InPlaceLookup::NotHere);
        };
        if ip.handle != handle {
            return Ok(InPlaceLookup::NotHere);
        }
        let Some(i) = dir.find_exact(key) else {
            return Ok(InPlaceLookup::Done(false));
        };
        // The block was read (and verified) from these bytes, so its range is inside them.
        let start = usize::try_from(handle.offset).unwrap_or(usize::MAX);
        let block = start
            .checked_add(usize::try_from(handle.size).unwrap_or(usize::MAX))
            .and_then(|end| mem.get(start..end));
        let p = dir.entry_offset(i);
        match block.and_then(|b| crate::block::value_range_in(b, p).map(|r| &b[r])) {
            Some(v) => {
                value.extend_from_slice(v);
                Ok(InPlaceLookup::Done(true))
            }
            None => Err(Error::BadEntry {
                kind: BlockKind::Data,
                handle,
                entry_offset: p,
            }),
        }
    }

    /// The slot of the data block at index position `pos` in `in_place`, when this table
    /// keeps blocks in place (zero-copy source, block cache, decoded index).
    #[inline]
    fn in_place_slot(&self, pos: usize) -> Option<&OnceLock<InPlace>> {
        if self.cache.is_none() || self.file.as_slice().is_none() {
            return None;
        }
        let n = self.parsed_index()?.len();
        self.in_place
            .get_or_init(|| (0..n).map(|_| OnceLock::new()).collect())
            .get(pos)
    }

    /// The lookup record of the data block at index position `pos`, when this table has a
    /// decoded index (built on first use, with the filter).
    fn block_lookup(&self, pos: usize) -> Option<&BlockLookup> {
        let index = self.parsed_index()?;
        self.lookups
            .get_or_init(|| {
                let filter = self.filter();
                let mut records = Vec::with_capacity(index.len());
                // Records of a large table span megabytes, one touched per lookup at random:
                // in 4 KiB pages nearly every lookup would also miss the TLB. Advised before
                // the first write, so the pages are huge from the start.
                #[cfg(target_os = "linux")]
                crate::os::advise_huge_pages(records.spare_capacity_mut());
                records.extend((0..index.len()).map(|i| {
                    // ok: i < index.len().
                    let handle = index.handle(i).unwrap_or_default();
                    let span = match filter {
                        Some(f) => f.filter_span(handle.offset),
                        None => FilterSpan::MayMatch,
                    };
                    let filter = match (span, filter) {
                        (FilterSpan::Filter(r), Some(f)) if r.len() <= INLINE_FILTER => {
                            let mut bits = [0u8; INLINE_FILTER];
                            bits[..r.len()].copy_from_slice(&f.data()[r.clone()]);
                            BlockFilter::Inline {
                                len: r.len() as u8,
                                bits,
                            }
                        }
                        (FilterSpan::Filter(r), _) => {
                            match (u32::try_from(r.start), u32::try_from(r.len())) {
                                (Ok(start), Ok(len)) => BlockFilter::At { start, len },
                                _ => BlockFilter::MayMatch,
                            }
                        }
                        (FilterSpan::NoMatch, _) => BlockFilter::NoMatch,
                        (FilterSpan::MayMatch, _) => BlockFilter::MayMatch,
                    };
                    BlockLookup {
                        handle,
                        filter,
                        not_in_place: AtomicBool::new(false),
                        slot: RwLock::new(Slot::Never),
                    }
                }));
                Arc::new(Lookups(records.into_boxed_slice()))
            })
            .0
            .get(pos)
    }

    /// Whether `key` may be in the block of `lookup`, by its filter.
    #[inline]
    fn lookup_may_match(&self, lookup: &BlockLookup, key: &[u8]) -> bool {
        // Records say other than "may match" only when built with this filter block.
        let Some(f) = self.filter() else {
            return true;
        };
        let bits = match &lookup.filter {
            BlockFilter::MayMatch => return true,
            BlockFilter::NoMatch => return false,
            BlockFilter::Inline { len, bits } => &bits[..usize::from(*len)],
            // ok: the span was taken from this filter block (`block_lookup`).
            BlockFilter::At { start, len } => &f.data()[*start as usize..][..*len as usize],
        };
        f.policy().key_may_match(key, bits)
    }

    /// The index decoded for searching, built on first use; `None` when the comparator is
    /// not bytewise-based or the index does not store whole keys.
    fn parsed_index(&self) -> Option<&ParsedIndex> {
        self.parsed_index
            .get_or_init(|| {
                // The prefix search needs keys ordered bytewise (plain or by user key).
                (self.user_comparator.name() == BytewiseComparator.name())
                    .then(|| ParsedIndex::build(&self.index, self.internal))
                    .flatten()
            })
            .as_ref()
    }

    /// The handle of the data block that may hold `seek_key` (a table key), if any.
    fn index_lookup(&self, seek_key: &[u8], scratch: &mut Vec<u8>) -> Result<Option<BlockHandle>> {
        if let Some(p) = self.parsed_index() {
            return Ok(p.seek(self.index.data(), &*self.comparator, seek_key));
        }
        match self
            .index
            .seek_value_range(&*self.comparator, seek_key, scratch)?
        {
            None => Ok(None),
            Some(r) => {
                let mut v = &self.index.data()[r];
                BlockHandle::decode_from(&mut v)
                    .map(Some)
                    .ok_or(Error::BadIndexValue {
                        kind: BlockKind::Index,
                        handle: self.footer.index,
                    })
            }
        }
    }

    /// LevelDB's `InternalGet`: finds the first entry `>= seek_key`, consulting the filter
    /// with `filter_key` before reading the block, and hands it to `f`.
    fn find<T, F: FnOnce(&[u8], &[u8]) -> T>(
        &self,
        opts: ReadOptions,
        seek_key: &[u8],
        filter_key: &[u8],
        f: F,
    ) -> Result<Option<T>> {
        let Some(Route {
            pos,
            lookup,
            handle,
            tp,
        }) = self.route(seek_key, filter_key)?
        else {
            return Ok(None);
        };
        let cmp = &*self.comparator;
        let search = |block: &Block, hints: Option<&RestartHints>, f: &mut Option<_>| {
            let mut key = SCRATCH.take();
            let res = cache::seek_value_range(block, hints, cmp, seek_key, tp, &mut key)
                .map(|r| r.and_then(|r| f.take().map(|f: F| f(&key, &block.data()[r]))));
            SCRATCH.set(key);
            res
        };
        let mut f = Some(f);
        let probe = match self.held_lookup(lookup, handle, |b, h| search(b, h, &mut f)) {
            HeldLookup::Hit(r) => return r,
            HeldLookup::Miss { probe } => probe,
        };
        let entry = self.load_for_lookup(pos, handle, opts, probe)?;
        search(&entry.block, entry.hints.as_ref(), &mut f)
    }

    /// Where a point lookup for `seek_key` (a table key) goes: the data block the index
    /// routes it to, if any and if the filter does not rule out `filter_key` (the user key
    /// for database tables). Through the decoded index and the block's lookup record when
    /// the table has them, else through the index block and the filter block.
    #[inline]
    fn route(&self, seek_key: &[u8], filter_key: &[u8]) -> Result<Option<Route<'_>>> {
        if let Some(p) = self.parsed_index() {
            let Some(pos) = p.seek_position(self.index.data(), &*self.comparator, seek_key) else {
                return Ok(None);
            };
            let Some(l) = self.block_lookup(pos) else {
                return Ok(None);
            };
            return Ok(self.lookup_may_match(l, filter_key).then(|| Route {
                pos: Some(pos),
                lookup: Some(l),
                handle: l.handle,
                tp: p.key_prefix(seek_key),
            }));
        }
        let Some(handle) = self.index_lookup_scratch(seek_key)? else {
            return Ok(None);
        };
        let excluded = self
            .filter()
            .is_some_and(|f| !f.key_may_match(handle.offset, filter_key));
        Ok((!excluded).then_some(Route {
            pos: None,
            lookup: None,
            handle,
            tp: 0,
        }))
    }

    /// Runs `f` on the block at `handle` if its lookup record holds it (under the slot's
    /// read lock), reporting the use to the cache's policy; otherwise says whether the cache
    /// may hold the block anyway: only if the slot was never filled (a scan or another
    /// reader of the table loaded it). A slot the cache emptied was evicted; probing would
    /// only miss (a cold hash-table line).
    #[inline]
    fn held_lookup<T>(
        &self,
        lookup: Option<&BlockLookup>,
        handle: BlockHandle,
        f: impl FnOnce(&Block, Option<&RestartHints>) -> T,
    ) -> HeldLookup<T> {
        let (Some(l), Some(cache)) = (lookup, &self.cache) else {
            return HeldLookup::Miss { probe: true };
        };
        let Ok(slot) = l.slot.read() else {
            return HeldLookup::Miss { probe: true };
        };
        match &*slot {
            Slot::Held(h) if h.block.handle() == handle => {
                // The entry's reference count is read first and written after the search:
                // its line (not otherwise needed) then arrives during the search, and the
                // lock's release (an atomic read-modify-write, which waits for earlier
                // stores) does not wait for it.
                let refs = h.entry.references();
                let r = f(&h.block, h.hints.as_ref());
                h.entry.mark_used(refs);
                drop(slot);
                cache.note_use(self.cache_id, handle.offset);
                HeldLookup::Hit(r)
            }
            Slot::Never => HeldLookup::Miss { probe: true },
            _ => HeldLookup::Miss { probe: false },
        }
    }

    /// The block at `handle` for a point lookup, from the cache (if `probe`) or the file;
    /// the lookup record at index position `pos` holds it from then on while the cache does.
    fn load_for_lookup(
        &self,
        pos: Option<usize>,
        handle: BlockHandle,
        opts: ReadOptions,
        probe: bool,
    ) -> Result<Arc<CachedBlock>> {
        let links = self.cache.as_ref().is_some_and(|c| c.holds_record_links());
        let owner = self.lookups.get().filter(|_| links);
        let record = owner
            .zip(pos)
            .and_then(|(o, p)| o.0.get(p).map(|l| (o, p, l)));
        let Some((owner, pos, l)) = record else {
            return self.load_data_block(handle, opts, None, true, probe, None);
        };
        let installed = Cell::new(false);
        let install = |e: &Arc<CachedBlock>| {
            // A block with a search directory is searched through its entry (the record
            // holds no directory).
            if e.dir.is_some() {
                return;
            }
            installed.set(true);
            if let Ok(mut slot) = l.slot.write() {
                *slot = Slot::Held(Held {
                    entry: e.clone(),
                    block: e.block.clone(),
                    hints: e.hints.clone(),
                });
            }
            let owner: Weak<dyn SlotOwner> = Arc::downgrade(owner) as Weak<Lookups>;
            e.link_to(owner, pos);
        };
        let e = self.load_data_block(handle, opts, None, true, probe, Some(&install))?;
        if !installed.get() && e.dir.is_none() {
            // Not taken by the cache: later lookups read it again without probing.
            if let Ok(mut slot) = l.slot.write() {
                if matches!(*slot, Slot::Never) {
                    *slot = Slot::Gone;
                }
            }
        }
        Ok(e)
    }

    /// [`index_lookup`](Self::index_lookup) with thread-local scratch space (only used when
    /// the index is searched as a block).
    fn index_lookup_scratch(&self, seek_key: &[u8]) -> Result<Option<BlockHandle>> {
        if let Some(p) = self.parsed_index() {
            return Ok(p.seek(self.index.data(), &*self.comparator, seek_key));
        }
        let mut scratch = INDEX_SCRATCH.take();
        let res = self.index_lookup(seek_key, &mut scratch);
        INDEX_SCRATCH.set(scratch);
        res
    }

    /// Whether the filter rules out `key` (a user key for internal tables) in the data
    /// block the index routes it to. `false` means a lookup would read that block.
    ///
    /// # Errors
    /// If the index entry is corrupt.
    pub fn filter_excludes(&self, key: &[u8]) -> Result<bool> {
        let mut seek = Vec::new();
        let seek_key = if self.internal {
            internal_key::lookup_key(&mut seek, key, MAX_SEQUENCE);
            &seek[..]
        } else {
            key
        };
        let mut scratch = Vec::new();
        let Some(handle) = self.index_lookup(seek_key, &mut scratch)? else {
            return Ok(true);
        };
        Ok(self
            .filter()
            .is_some_and(|f| !f.key_may_match(handle.offset, key)))
    }

    /// Looks up `key` and copies its value into `value` (cleared first). For internal-key
    /// tables `key` is a user key, and the newest version counts: a deletion is "not found".
    /// Returns whether a value was found. With a warm cache and a `value` of sufficient
    /// capacity this allocates nothing.
    ///
    /// # Errors
    /// If a block on the way cannot be read or is corrupt.
    pub fn get_into(&self, key: &[u8], opts: ReadOptions, value: &mut Vec<u8>) -> Result<bool> {
        value.clear();
        if !self.internal {
            return self.get_plain(key, opts, value);
        }
        let r = self.lookup_internal(key, MAX_SEQUENCE, opts, |v| value.extend_from_slice(v))?;
        Ok(matches!(r, Some(ValueType::Value)))
    }

    /// [`get_into`](Self::get_into) for plain tables: through the cached block's search
    /// directory when it has one, else by searching the block.
    fn get_plain(&self, key: &[u8], opts: ReadOptions, value: &mut Vec<u8>) -> Result<bool> {
        let Some(Route {
            pos,
            lookup,
            handle,
            tp,
        }) = self.route(key, key)?
        else {
            return Ok(false);
        };
        let cmp = &*self.comparator;
        let probe = match self.held_lookup(lookup, handle, |block, hints| {
            Self::value_in_block(cmp, block, hints, key, tp, value)
        }) {
            HeldLookup::Hit(r) => return r,
            HeldLookup::Miss { probe } => probe,
        };
        let mut fresh = None;
        let in_place = match lookup {
            Some(l) if l.not_in_place.load(AtomicOrdering::Relaxed) => None,
            _ => pos.and_then(|p| self.in_place_slot(p)),
        };
        if let Some(slot) = in_place {
            match self.get_in_place(slot, handle, key, opts, value)? {
                InPlaceLookup::Done(found) => return Ok(found),
                InPlaceLookup::Read(block) => {
                    fresh = Some(Arc::new(CachedBlock::new(block, None, false)));
                }
                InPlaceLookup::NotHere => {
                    // A slot that was filled without a directory stays that way.
                    if let (Some(l), Some(ip)) = (lookup, slot.get()) {
                        if ip.dir.is_none() && ip.handle == handle {
                            l.not_in_place.store(true, AtomicOrdering::Relaxed);
                        }
                    }
                }
            }
        }
        let entry = match fresh {
            Some(e) => e,
            None => self.load_for_lookup(pos, handle, opts, probe)?,
        };
        self.get_in_block(&entry, key, tp, value)
    }

    /// The value of `key` in a data block of a plain table, copied into `value`. `tp` is the
    /// decoded index's prefix of `key` (used only with the entry's hints, which exist only
    /// for tables with a decoded index).
    #[inline]
    fn get_in_block(
        &self,
        entry: &CachedBlock,
        key: &[u8],
        tp: u64,
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        let block = &entry.block;
        if let Some(dir) = &entry.dir {
            let Some(i) = dir.find_exact(key) else {
                return Ok(false);
            };
            let p = dir.entry_offset(i);
            // ok: the directory was built from this block's decoded entries.
            let r = block.value_at(p).ok_or_else(|| block.bad_entry(p))?;
            value.extend_from_slice(&block.data()[r]);
            return Ok(true);
        }
        Self::value_in_block(
            &*self.comparator,
            block,
            entry.hints.as_ref(),
            key,
            tp,
            value,
        )
    }

    /// The value of `key` in `block` (searched through `hints` if any), copied into
    /// `value`; whether it was found.
    #[inline]
    fn value_in_block(
        cmp: &dyn Comparator,
        block: &Block,
        hints: Option<&RestartHints>,
        key: &[u8],
        tp: u64,
        value: &mut Vec<u8>,
    ) -> Result<bool> {
        let mut k = SCRATCH.take();
        let found = match cache::seek_value_range(block, hints, cmp, key, tp, &mut k) {
            Ok(Some(r)) if k == key => {
                value.extend_from_slice(&block.data()[r]);
                Ok(true)
            }
            Ok(_) => Ok(false),
            Err(e) => Err(e),
        };
        SCRATCH.set(k);
        found
    }

    /// Looks up `key` with default [`ReadOptions`]; see [`get_into`](Self::get_into).
    ///
    /// # Errors
    /// As [`get_into`](Self::get_into).
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut v = Vec::new();
        Ok(self
            .get_into(key, ReadOptions::default(), &mut v)?
            .then_some(v))
    }

    /// Full lookup: for internal-key tables the newest version of user key `key` with a
    /// sequence number `<= snapshot` (found, deleted or absent); for plain tables `snapshot`
    /// is ignored.
    ///
    /// # Errors
    /// As [`get_into`](Self::get_into).
    pub fn lookup(&self, key: &[u8], snapshot: u64, opts: ReadOptions) -> Result<Lookup> {
        let mut value = Vec::new();
        Ok(match self.lookup_into(key, snapshot, opts, &mut value)? {
            LookupKind::Found { sequence, .. } => Lookup::Found { value, sequence },
            LookupKind::Deleted { sequence } => Lookup::Deleted { sequence },
            LookupKind::NotFound => Lookup::NotFound,
        })
    }

    /// [`lookup`](Self::lookup) that copies a found value into `value` (cleared first)
    /// instead of allocating: one lookup says found, deleted or absent.
    ///
    /// # Errors
    /// As [`get_into`](Self::get_into).
    pub fn lookup_into(
        &self,
        key: &[u8],
        snapshot: u64,
        opts: ReadOptions,
        value: &mut Vec<u8>,
    ) -> Result<LookupKind> {
        value.clear();
        if !self.internal {
            return Ok(match self.get_into(key, opts, value)? {
                true => LookupKind::Found {
                    value: (),
                    sequence: None,
                },
                false => LookupKind::NotFound,
            });
        }
        let mut seq = 0;
        let r = self.lookup_internal_seq(key, snapshot, opts, |v, s| {
            value.extend_from_slice(v);
            seq = s;
        })?;
        Ok(match r {
            Some(ValueType::Value) => LookupKind::Found {
                value: (),
                sequence: Some(seq),
            },
            Some(ValueType::Deletion) => LookupKind::Deleted { sequence: seq },
            None => LookupKind::NotFound,
        })
    }

    fn lookup_internal(
        &self,
        user_key: &[u8],
        snapshot: u64,
        opts: ReadOptions,
        on_value: impl FnOnce(&[u8]),
    ) -> Result<Option<ValueType>> {
        self.lookup_internal_seq(user_key, snapshot, opts, |v, _| on_value(v))
    }

    fn lookup_internal_seq(
        &self,
        user_key: &[u8],
        snapshot: u64,
        opts: ReadOptions,
        on_value: impl FnOnce(&[u8], u64),
    ) -> Result<Option<ValueType>> {
        let mut seek = SEEK_KEY.take();
        internal_key::lookup_key(&mut seek, user_key, snapshot);
        let user_cmp = &*self.user_comparator;
        let r = self.lookup_seek(&seek, user_key, user_cmp, opts, on_value);
        SEEK_KEY.set(seek);
        r
    }

    fn lookup_seek(
        &self,
        seek: &[u8],
        user_key: &[u8],
        user_cmp: &dyn Comparator,
        opts: ReadOptions,
        on_value: impl FnOnce(&[u8], u64),
    ) -> Result<Option<ValueType>> {
        let r = self.find(
            opts,
            seek,
            user_key,
            |k, v| match internal_key::parse_internal_key(k) {
                Some(p) if user_cmp.compare(p.user_key, user_key) == Ordering::Equal => {
                    if p.value_type == ValueType::Value {
                        on_value(v, p.sequence);
                    } else {
                        on_value(&[], p.sequence);
                    }
                    Some(p.value_type)
                }
                _ => None,
            },
        )?;
        Ok(r.flatten())
    }

    /// Roughly where the data for `key` starts in the file (LevelDB's
    /// `ApproximateOffsetOf`): the offset of the data block the index routes `key` to, or the
    /// metaindex offset for keys past the last one.
    pub fn approximate_offset_of(&self, key: &[u8]) -> u64 {
        let mut it = self.index.iter(&*self.comparator);
        it.seek(key);
        if it.valid() {
            let mut v = it.value();
            if let Some(h) = BlockHandle::decode_from(&mut v) {
                return h.offset;
            }
        }
        self.footer.metaindex.offset
    }

    /// Data-block handles in index order, with their separator keys.
    ///
    /// # Errors
    /// If the index block has a bad entry or a value that is not a handle.
    pub fn data_block_handles(&self) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
        let mut it = self.index.iter(&BytewiseComparator);
        it.seek_to_first();
        let mut out = Vec::new();
        let mut key_bytes = 0usize;
        while it.valid() {
            let mut v = it.value();
            let h = BlockHandle::decode_from(&mut v).ok_or(Error::BadIndexValue {
                kind: BlockKind::Index,
                handle: self.footer.index,
            })?;
            key_bytes += it.key().len() + LIST_ENTRY_BYTES;
            if key_bytes > self.index.size().saturating_mul(8).saturating_add(1 << 16) {
                return Err(list_too_long(BlockKind::Index, self.footer.index));
            }
            out.push((it.key().to_vec(), h));
            it.next();
        }
        match it.take_error() {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// A shared, zero-copy view of a cached or freshly read data block's bytes.
    ///
    /// # Errors
    /// As [`read_data_block`](Self::read_data_block).
    pub fn data_block_bytes(&self, handle: BlockHandle, opts: ReadOptions) -> Result<Bytes> {
        Ok(self.read_data_block(handle, opts)?.data().clone())
    }
}

fn read_metaindex<R: RandomAccess>(
    file: &R,
    h: BlockHandle,
    data_end: u64,
    rb: ReadBlockOptions,
) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
    let contents = block_read::read_block(file, h, BlockKind::Metaindex, data_end, rb)?;
    let block = Block::new(contents.data, BlockKind::Metaindex, h)?;
    let mut it = block.iter(&BytewiseComparator);
    let mut out = Vec::new();
    let mut key_bytes = 0usize;
    it.seek_to_first();
    while it.valid() {
        let mut v = it.value();
        let handle = BlockHandle::decode_from(&mut v).ok_or(Error::BadIndexValue {
            kind: BlockKind::Metaindex,
            handle: h,
        })?;
        key_bytes += it.key().len() + LIST_ENTRY_BYTES;
        if key_bytes > block.size().saturating_add(1 << 16) {
            return Err(list_too_long(BlockKind::Metaindex, h));
        }
        out.push((it.key().to_vec(), handle));
        it.next();
    }
    match it.take_error() {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// What one entry of a list copied out of an index or metaindex block costs besides its key.
///
/// Such lists are bounded: the index list (`data_block_handles`) by 8x the index block plus
/// 64 KiB, the metaindex list by the block plus 64 KiB. A real index entry takes at least
/// its key plus 5 bytes in the block (LevelDB-family writers store index keys whole), so its
/// list entry costs at most 8x that; a real metaindex holds a few short names. But entries
/// that share one long key cost 5 bytes each in the block and the whole key each when
/// copied out: without a bound a hostile block of `b` bytes could cost `b * b / 5`.
const LIST_ENTRY_BYTES: usize = std::mem::size_of::<(Vec<u8>, BlockHandle)>();

fn list_too_long(kind: BlockKind, handle: BlockHandle) -> Error {
    Error::BadBlockContents {
        kind,
        handle,
        reason: "entries too many or keys too long to list",
    }
}

/// A RocksDB block-based table with the legacy (LevelDB) magic is recognised by the names
/// of its meta blocks.
fn check_not_rocksdb(metaindex: &[(Vec<u8>, BlockHandle)]) -> Result<()> {
    let rocks = metaindex.iter().any(|(k, _)| {
        k.starts_with(b"rocksdb.")
            || k.starts_with(b"filter.rocksdb.")
            || k.starts_with(b"fullfilter.")
            || k.starts_with(b"partitionedfilter.")
    });
    if rocks {
        return Err(Error::RocksDb {
            format: crate::error::RocksDbFormat::LegacyBlockBased,
            format_version: Some(0),
        });
    }
    Ok(())
}

/// Bytes read ahead of a forward scan: one large read serves many consecutive blocks.
#[derive(Default)]
pub(crate) struct Readahead {
    start: u64,
    buf: Bytes,
}

/// Size of one readahead read.
const READAHEAD_BYTES: u64 = 256 * 1024;

impl Readahead {
    /// The stored block plus trailer at `handle`, from the window or after refilling it.
    fn fetch<R: RandomAccess>(
        &mut self,
        file: &R,
        handle: BlockHandle,
        data_end: u64,
    ) -> Result<Bytes> {
        format::check_handle(handle, BlockKind::Data, data_end)?;
        // ok: check_handle proved offset + size + 5 <= data_end.
        let n = handle.size + format::BLOCK_TRAILER_LEN as u64;
        let inside =
            handle.offset >= self.start && handle.offset + n <= self.start + self.buf.len() as u64;
        if !inside {
            let len = n.max(READAHEAD_BYTES).min(data_end - handle.offset);
            self.buf = file
                .read_at(handle.offset, len as usize)
                .map_err(|e| Error::io_at(e, BlockKind::Data, handle))?;
            self.start = handle.offset;
            if (self.buf.len() as u64) < n {
                return Err(Error::TruncatedBlock {
                    kind: BlockKind::Data,
                    handle,
                    got: self.buf.len(),
                });
            }
        }
        let at = (handle.offset - self.start) as usize;
        Ok(self.buf.slice(at..at + n as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{Compression, Options};
    use crate::table_builder::TableBuilder;

    fn key(i: usize) -> Vec<u8> {
        format!("key{i:08}").into_bytes()
    }

    /// 400 bytes, half a repeat of the other half: snappy keeps every block compressed, so
    /// every block a lookup uses is decompressed into a buffer the cache owns.
    fn value(i: usize) -> Vec<u8> {
        let half: Vec<u8> = (0..200)
            .map(|j| b'a' + ((i * 31 + j * 7) % 26) as u8)
            .collect();
        [half.clone(), half].concat()
    }

    /// A snappy table of `n` entries (about 10 per block) with a cache of `blocks` blocks.
    fn table(n: usize, blocks: u64) -> (TableReader<Vec<u8>>, Arc<BlockCache>) {
        let opts = Options::default()
            .block_size(4096)
            .compression(Compression::Snappy)
            .bloom(10);
        let mut b = TableBuilder::new(Vec::new(), &opts).unwrap();
        for i in 0..n {
            b.add(&key(i), &value(i)).unwrap();
        }
        let (bytes, _) = b.finish().unwrap();
        let cache = Arc::new(BlockCache::new(blocks * 4400));
        let ro = ReaderOptions::default()
            .keys(KeyFormat::Plain)
            .block_cache(cache.clone());
        (TableReader::open(bytes, ro).unwrap(), cache)
    }

    /// Records holding a block, each checked to hold exactly what the cache holds for it.
    fn held_blocks(t: &TableReader<Vec<u8>>, cache: &BlockCache) -> usize {
        let records = &t.lookups.get().expect("records built by the lookups").0;
        let mut held = 0;
        for l in records.iter() {
            if let Slot::Held(h) = &*l.slot.read().unwrap() {
                let cached = cache.get_entry(t.cache_id, l.handle.offset);
                assert!(
                    cached.is_some_and(|e| Arc::ptr_eq(&e, &h.entry)),
                    "a record holds a block the cache let go (offset {})",
                    l.handle.offset
                );
                assert_eq!(h.block.handle(), l.handle);
                held += 1;
            }
        }
        held
    }

    /// A record holds a block only while the cache holds it: after lookups all over a table
    /// five times the cache's size (the cache evicting and declining blocks throughout),
    /// every held block is the cache's current entry, and lookups stay right.
    #[test]
    fn records_hold_blocks_only_while_the_cache_does() {
        let (t, cache) = table(2000, 20);
        let mut v = Vec::new();
        let mut x = 7u64;
        for round in 0..6000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            // Skewed: a quarter of the table gets most lookups, so blocks both stay and go.
            let i = if round % 3 == 0 {
                (x >> 33) as usize % 2000
            } else {
                (x >> 33) as usize % 500
            };
            assert!(t.get_into(&key(i), ReadOptions::default(), &mut v).unwrap());
            assert_eq!(v, value(i));
            if round % 500 == 0 {
                assert!(held_blocks(&t, &cache) <= cache.len());
            }
        }
        let held = held_blocks(&t, &cache);
        assert!(held > 5, "lookups went through held blocks ({held})");
        assert!(cache.charge() <= cache.capacity());
    }

    /// The same with threads looking up at once.
    #[test]
    fn records_and_cache_agree_under_threads() {
        let (t, cache) = table(2000, 16);
        std::thread::scope(|s| {
            for thread in 0..4u64 {
                let t = &t;
                s.spawn(move || {
                    let mut v = Vec::new();
                    let mut x = thread * 7919 + 1;
                    for _ in 0..4000 {
                        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                        let i = (x >> 33) as usize % 700;
                        assert!(t.get_into(&key(i), ReadOptions::default(), &mut v).unwrap());
                        assert_eq!(v, value(i));
                    }
                });
            }
        });
        assert!(held_blocks(&t, &cache) <= cache.len());
        assert!(cache.charge() <= cache.capacity());
    }
}
