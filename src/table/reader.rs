//! [`TableReader`]: an open table. Opening reads the footer, the metaindex and the index
//! block; the filter block is read on first use. Point lookups (`lookup.rs`, `route.rs`),
//! block reads (`blocks.rs`), cursors (`iter.rs`) and verification (`verify.rs`) are
//! `impl` blocks of their own.

use std::fs::File;
use std::path::Path;
use std::sync::{Arc, OnceLock};

#[cfg(feature = "mmap")]
use bytes::Bytes;

use super::metaindex::{check_not_rocksdb, list_too_long, read_metaindex, LIST_ENTRY_BYTES};
use super::records::{InPlace, Lookups};
use crate::block::stored::{read_block, ReadBlockOptions};
use crate::block::Block;
use crate::cache::BlockCache;
use crate::cursor::Cursor;
use crate::error::{BlockKind, Error, Result};
use crate::filter::block::FilterBlockReader;
use crate::filter::{
    BloomFilterPolicy, CacheLocalBloomPolicy, FilterPolicy, LegacyBloomFilterPolicy,
};
use crate::format::{
    BlockHandle, Footer, BLOOM_POLICY_NAME, CACHE_LOCAL_BLOOM_NAME, FILTER_META_PREFIX, FOOTER_LEN,
    LEGACY_BLOOM_POLICY_NAME,
};
use crate::internal_key::{self, InternalKeyComparator};
use crate::io::RandomAccess;
use crate::options::{CompressionProfile, KeyFormat, OpenOptions, ReadOptions};
use crate::search::index::ParsedIndex;
use crate::util::comparator::{BytewiseComparator, Comparator};

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
    pub(super) file: R,
    pub(super) file_size: u64,
    pub(super) footer: Footer,
    pub(super) index: Block,
    pub(super) metaindex: Vec<(Vec<u8>, BlockHandle)>,
    /// The filter and its status, loaded on first use (or set at open when there is
    /// nothing to load).
    pub(super) filter: OnceLock<(Option<FilterBlockReader>, FilterStatus)>,
    /// Policy and handle of a filter still to be read.
    pub(super) filter_to_load: Option<(Arc<dyn FilterPolicy>, BlockHandle)>,
    pub(super) filter_handle: Option<BlockHandle>,
    pub(super) meta_read: ReadBlockOptions,
    /// Verify every block's checksum ([`OpenOptions::verify_checksums`]).
    pub(super) verify_checksums: bool,
    pub(super) comparator: Arc<dyn Comparator>,
    pub(super) user_comparator: Arc<dyn Comparator>,
    pub(super) internal: bool,
    pub(super) cache: Option<Arc<BlockCache>>,
    pub(super) cache_id: u64,
    pub(super) profile: CompressionProfile,
    /// The index decoded for lookups, built on the first one (`None` inside: not possible
    /// for this index or comparator, use the block).
    pub(super) parsed_index: OnceLock<Option<ParsedIndex>>,
    /// For a zero-copy source with a block cache: the data blocks point lookups have read,
    /// checksum verified, with their search directories, by index position. Such a block
    /// is a view of the source's memory, so what is kept is the verification and the
    /// directory (at most 1/8 of the block's bytes); LevelDB does not cache these blocks at
    /// all. Kept for the table's lifetime, outside the block cache's budget, and looked up
    /// without hashing.
    pub(super) in_place: OnceLock<Box<[OnceLock<InPlace>]>>,
    /// What a point lookup needs per data block after the index search, by index position,
    /// in one 256-byte record: see [`BlockLookup`].
    pub(super) lookups: OnceLock<Arc<Lookups>>,
}

impl TableReader<File> {
    /// Opens the table file at `path` read-only (reads through `pread`; see
    /// [`open_mmap`](TableReader::open_mmap) for a memory map).
    ///
    /// # Errors
    /// I/O errors and every corruption [`TableReader::open`] reports, in
    /// [`Error::InFile`](crate::Error::InFile) naming `path`.
    pub fn open_path(path: impl AsRef<Path>, opts: OpenOptions) -> Result<Self> {
        let path = path.as_ref();
        File::open(path)
            .map_err(crate::Error::from)
            .and_then(|f| Self::open(f, opts))
            .map_err(|e| e.in_file(path.display()))
    }
}

#[cfg(feature = "mmap")]
impl TableReader<Bytes> {
    /// Opens the table file at `path` through a read-only memory map ([`map_file`](crate::raw::map_file)):
    /// blocks are read without system calls or copies, and uncompressed blocks are parsed in
    /// place. The file must not be truncated or modified while the table is open (see
    /// [`map_file`](crate::raw::map_file)); use [`TableReader::open`] with a [`File`] for files that may change.
    ///
    /// # Errors
    /// I/O errors and every corruption [`TableReader::open`] reports, in
    /// [`Error::InFile`](crate::Error::InFile) naming `path`.
    ///
    /// # Safety
    /// As [`map_file`](crate::raw::map_file): the file must not be truncated or modified while the table
    /// (or any block read from it) is alive.
    #[allow(unsafe_code)]
    pub unsafe fn open_mmap(path: impl AsRef<Path>, opts: OpenOptions) -> Result<Self> {
        let path = path.as_ref();
        let named = |e: crate::Error| e.in_file(path.display());
        let file = File::open(path).map_err(|e| named(e.into()))?;
        // SAFETY: the caller upholds `map_file`'s contract (this function's own).
        let map = unsafe { crate::util::os::map_file(&file) }.map_err(|e| named(e.into()))?;
        Self::open(map, opts).map_err(named)
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
    pub fn open(file: R, opts: OpenOptions) -> Result<Self> {
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
        let index_contents = read_block(&file, footer.index, BlockKind::Index, footer_at, rb)?;
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
            verify_checksums: opts.verify_checksums,
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
        let Ok(block) = self.read_data_block(h, &ReadOptions::default().fill_cache(false)) else {
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
        n > 0 || it.status().is_err()
    }

    /// Finds the filter named in the metaindex and its policy. Returns the final status
    /// when there is nothing to read; otherwise the block is read on first use.
    fn plan_filter(&mut self, opts: &OpenOptions) -> Option<FilterStatus> {
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
        let policy: Arc<dyn FilterPolicy> = match opts
            .filter_policies
            .iter()
            .find(|p| p.name() == name)
        {
            Some(p) => p.clone(),
            None if name == BLOOM_POLICY_NAME => Arc::new(BloomFilterPolicy::new(10)),
            None if name == LEGACY_BLOOM_POLICY_NAME => Arc::new(LegacyBloomFilterPolicy::new(10)),
            None if name == CACHE_LOCAL_BLOOM_NAME => Arc::new(CacheLocalBloomPolicy::new(10.0)),
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
            match read_block(&self.file, *handle, kind, self.data_end(), self.meta_read) {
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
        it.status()?;
        Ok(out)
    }
}
