//! Per-data-block records for point lookups (one 256-byte record per block: handle, filter,
//! the cached block while the cache holds it) and the in-place lookups of zero-copy tables.

use super::*;

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
pub(super) struct BlockLookup {
    pub(super) handle: BlockHandle,
    pub(super) filter: BlockFilter,
    /// Set once the in-place path (`in_place`) has found it has nothing for this block
    /// (stored compressed, or no directory): lookups then skip its slot, another cache line.
    pub(super) not_in_place: AtomicBool,
    pub(super) slot: RwLock<Slot>,
}

// Four cache lines, no more.
const _: () = assert!(std::mem::size_of::<BlockLookup>() == 256);

/// What a [`BlockLookup`]'s slot holds.
pub(super) enum Slot {
    /// Never filled: the cache may hold the block anyway (a scan or another path loaded it).
    Never,
    /// The cache let the block go, or did not take it: probing it would only miss. With
    /// the block's outline when known, so that a lookup the cache will not keep the block
    /// for decodes it only up to its key (`partial.rs`).
    Gone(Option<BlockOutline>),
    /// The block, while the cache holds it.
    Held(Held),
}

/// A cached block as a lookup record holds it: what a lookup reads, without the cache
/// entry's line (the entry is kept for its identity and reference count).
pub(super) struct Held {
    pub(super) entry: Arc<CachedBlock>,
    pub(super) block: Block,
    pub(super) hints: Option<RestartHints>,
}

/// The lookup records of a table, shared with the cache so that it can empty a record's
/// slot when it evicts the block.
pub(super) struct Lookups(pub(super) Box<[BlockLookup]>);

impl SlotOwner for Lookups {
    fn release(&self, index: usize, entry: &Arc<CachedBlock>) {
        if let Some(Ok(mut slot)) = self.0.get(index).map(|l| l.slot.write()) {
            if let Slot::Held(h) = &*slot {
                if Arc::ptr_eq(&h.entry, entry) {
                    // Hints that hold every restart point are already an outline.
                    let outline = h.hints.as_ref().and_then(|hints| hints.outline(&h.block));
                    *slot = Slot::Gone(outline);
                }
            }
        }
    }
}

/// What `load_data_block` runs on a block's cache entry while the cache holds it.
type Install<'a> = dyn Fn(&Arc<CachedBlock>) + 'a;

/// What [`TableReader::held_lookup`] found.
pub(super) enum HeldLookup<T> {
    /// The record held the block: the lookup's result.
    Hit(T),
    /// Not held; `probe`: the cache may hold the block all the same; the block's outline
    /// if the record keeps one.
    Miss {
        probe: bool,
        outline: Option<BlockOutline>,
    },
}

/// Filter bytes a [`BlockLookup`] holds inline (a 4 KiB block of 100-byte entries at 10
/// bits per key has a 50-byte filter).
pub(super) const INLINE_FILTER: usize = 86;

/// How a [`BlockLookup`] answers the filter question (LevelDB's rules, `FilterSpan`).
pub(super) enum BlockFilter {
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
pub(super) struct Route<'a> {
    /// Position of the block in the decoded index, when the table has one.
    pub(super) pos: Option<usize>,
    /// The block's lookup record, when the table has a decoded index.
    pub(super) lookup: Option<&'a BlockLookup>,
    pub(super) handle: BlockHandle,
    /// The decoded index's prefix of the key (0 without a decoded index).
    pub(super) tp: u64,
}

/// What a lookup through `in_place` did.
pub(super) enum InPlaceLookup<T> {
    /// Answered: the caller's answer on the entry equal to the key, or `None` if the block
    /// has no such entry.
    Done(Option<T>),
    /// Read and verified the block, which has no directory: search it.
    Read(Block),
    /// The block is not kept in place: search it through the block cache.
    NotHere,
}

/// A data block of a zero-copy source that a point lookup has read and verified (`dir`
/// `None`: not kept, searched through the block cache, e.g. a compressed block).
pub(super) struct InPlace {
    pub(super) handle: BlockHandle,
    /// Its search directory; `None` when the block is compressed or does not have the shape
    /// for one (lookups then search it through the block cache).
    pub(super) dir: Option<BlockDir>,
}

impl<R: RandomAccess> TableReader<R> {
    /// The block at `handle` as stored (compressed or not), read past the cache, its
    /// trailer checked, and its checksum if `verify`.
    ///
    /// # Errors
    /// As [`StoredBlock::read`].
    pub(crate) fn stored_block(
        &self,
        handle: BlockHandle,
        kind: BlockKind,
        verify: bool,
    ) -> Result<StoredBlock> {
        let rb = ReadBlockOptions {
            verify_checksum: verify,
            profile: self.profile,
        };
        StoredBlock::read(&self.file, handle, kind, self.data_end(), rb)
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
        self.stored_block(handle, kind, verify_checksum)?
            .decompress()
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
    pub(super) fn load_data_block(
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
        let mut readahead = if zero_copy { None } else { readahead };
        // A block headed for the cache is verified even when this read does not ask for it:
        // the cache serves later readers that may (otherwise, with checksums off, nothing
        // would be cached at all and every lookup would read and decompress its block). If
        // that check fails, the read goes on unverified, as asked, and nothing is cached.
        let to_cache = opts.fill_cache && self.cache.is_some();
        // Blocks headed for the cache decompress into buffers of blocks it evicted.
        let pool = match &self.cache {
            Some(c) if opts.fill_cache => Some(c.pool()),
            _ => None,
        };
        let mut read = |verify: bool| -> Result<BlockContents> {
            let stored = match readahead.as_deref_mut() {
                None => self.stored_block(handle, BlockKind::Data, verify)?,
                Some(ra) => {
                    let raw = ra.fetch(&self.file, handle, self.data_end())?;
                    let rb = ReadBlockOptions {
                        verify_checksum: verify,
                        profile: self.profile,
                    };
                    let mut s = StoredBlock::from_raw(raw, handle, BlockKind::Data, rb)?;
                    if s.compression == format::COMPRESSION_NONE && to_cache {
                        // A slice of the window would keep the whole window alive in the
                        // cache.
                        s.data = Bytes::copy_from_slice(&s.data);
                    }
                    s
                }
            };
            stored.decompress_in(pool)
        };
        let contents = match read(opts.verify_checksums || to_cache) {
            Err(Error::ChecksumMismatch { .. }) if !opts.verify_checksums => read(false)?,
            r => r?,
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

    /// Step 2 of a point lookup (`lookup.rs`): `f` on the entry equal to `key` in the data
    /// block `route` leads to, read in place from a zero-copy source (see `in_place`), found
    /// through the block's search directory. Only uncompressed blocks are read in place,
    /// and only with checksums verified and cache filling on (so that what is kept was
    /// verified).
    pub(super) fn find_in_place<T, F: FnOnce(&[u8], &[u8]) -> T>(
        &self,
        route: &Route<'_>,
        opts: ReadOptions,
        key: &[u8],
        f: &mut Option<F>,
    ) -> Result<InPlaceLookup<T>> {
        let handle = route.handle;
        if route
            .lookup
            .is_some_and(|l| l.not_in_place.load(AtomicOrdering::Relaxed))
        {
            return Ok(InPlaceLookup::NotHere);
        }
        let Some(slot) = route.pos.and_then(|p| self.in_place_slot(p)) else {
            return Ok(InPlaceLookup::NotHere);
        };
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
                    self.not_in_place(route, slot);
                    return Ok(InPlaceLookup::NotHere);
                }
                let c = self
                    .stored_block(handle, BlockKind::Data, true)?
                    .decompress()?;
                let block = Block::new(c.data, BlockKind::Data, handle)?;
                let dir = BlockDir::build(&block);
                let ip = slot.get_or_init(|| InPlace { handle, dir });
                if ip.dir.is_none() {
                    return Ok(InPlaceLookup::Read(block));
                }
                ip
            }
        };
        let (Some(dir), true) = (&ip.dir, ip.handle == handle) else {
            self.not_in_place(route, slot);
            return Ok(InPlaceLookup::NotHere);
        };
        let Some(i) = dir.find_exact(key) else {
            return Ok(InPlaceLookup::Done(None));
        };
        // The block was read (and verified) from these bytes, so its range is inside them.
        let start = usize::try_from(handle.offset).unwrap_or(usize::MAX);
        let block = start
            .checked_add(usize::try_from(handle.size).unwrap_or(usize::MAX))
            .and_then(|end| mem.get(start..end));
        let p = dir.entry_offset(i);
        match block.and_then(|b| crate::block::value_range_in(b, p).map(|r| &b[r])) {
            Some(v) => Ok(InPlaceLookup::Done(f.take().map(|f| f(key, v)))),
            None => Err(Error::BadEntry {
                kind: BlockKind::Data,
                handle,
                entry_offset: p,
            }),
        }
    }

    /// Marks the record of `route`'s block as not kept in place when its `in_place` slot was
    /// filled without a directory: lookups then skip the slot (another cache line).
    fn not_in_place(&self, route: &Route<'_>, slot: &OnceLock<InPlace>) {
        if let (Some(l), Some(ip)) = (route.lookup, slot.get()) {
            if ip.dir.is_none() && ip.handle == route.handle {
                l.not_in_place.store(true, AtomicOrdering::Relaxed);
            }
        }
    }

    /// The slot of the data block at index position `pos` in `in_place`, when this table
    /// keeps blocks in place (zero-copy source, block cache, decoded index).
    #[inline]
    pub(super) fn in_place_slot(&self, pos: usize) -> Option<&OnceLock<InPlace>> {
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
    pub(super) fn block_lookup(&self, pos: usize) -> Option<&BlockLookup> {
        let index = self.parsed_index()?;
        self.lookups
            .get_or_init(|| {
                let filter = self.filter();
                let mut records = Vec::with_capacity(index.len());
                // Records of a large table span megabytes, one touched per lookup at random:
                // in 4 KiB pages nearly every lookup would also miss the TLB. Advised before
                // the first write, so the pages are huge from the start.
                #[cfg(target_os = "linux")]
                crate::util::os::advise_huge_pages(records.spare_capacity_mut());
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
    pub(super) fn lookup_may_match(&self, lookup: &BlockLookup, key: &[u8]) -> bool {
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
}
