//! Point lookups: the index search, routing a key to its block and filter, `get`, `lookup`.

use super::*;

impl<R: RandomAccess> TableReader<R> {
    /// The index decoded for searching, built on first use; `None` when the comparator is
    /// not bytewise-based or the index does not store whole keys.
    pub(super) fn parsed_index(&self) -> Option<&ParsedIndex> {
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
    pub(super) fn index_lookup(
        &self,
        seek_key: &[u8],
        scratch: &mut Vec<u8>,
    ) -> Result<Option<BlockHandle>> {
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
    pub(super) fn find<T, F: FnOnce(&[u8], &[u8]) -> T>(
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
            HeldLookup::Miss {
                probe: false,
                outline,
            } => {
                // Known not to be cached: perhaps not worth caching either (partial.rs).
                let search = |b: &Block, f: &mut Option<F>| search(b, None, f);
                let t = self
                    .find_transient(lookup, handle, outline, opts, seek_key, tp, &mut f, search)?;
                if let Some(r) = t {
                    return Ok(r);
                }
                false
            }
            HeldLookup::Miss { probe, .. } => probe,
        };
        let entry = self.load_for_lookup(pos, handle, opts, probe)?;
        search(&entry.block, entry.hints.as_ref(), &mut f)
    }

    /// Where a point lookup for `seek_key` (a table key) goes: the data block the index
    /// routes it to, if any and if the filter does not rule out `filter_key` (the user key
    /// for database tables). Through the decoded index and the block's lookup record when
    /// the table has them, else through the index block and the filter block.
    #[inline]
    pub(super) fn route(&self, seek_key: &[u8], filter_key: &[u8]) -> Result<Option<Route<'_>>> {
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
    pub(super) fn held_lookup<T>(
        &self,
        lookup: Option<&BlockLookup>,
        handle: BlockHandle,
        f: impl FnOnce(&Block, Option<&RestartHints>) -> T,
    ) -> HeldLookup<T> {
        let miss = |probe| HeldLookup::Miss {
            probe,
            outline: None,
        };
        let (Some(l), Some(cache)) = (lookup, &self.cache) else {
            return miss(true);
        };
        let Ok(slot) = l.slot.read() else {
            return miss(true);
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
            Slot::Never => miss(true),
            Slot::Gone(outline) => HeldLookup::Miss {
                probe: false,
                outline: *outline,
            },
            Slot::Held(_) => miss(false),
        }
    }

    /// The block at `handle` for a point lookup, from the cache (if `probe`) or the file;
    /// the lookup record at index position `pos` holds it from then on while the cache does.
    pub(super) fn load_for_lookup(
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
                if matches!(*slot, Slot::Never | Slot::Gone(None)) {
                    *slot = Slot::Gone(self.outline_of(&e.block));
                }
            }
        }
        Ok(e)
    }

    /// [`index_lookup`](Self::index_lookup) with thread-local scratch space (only used when
    /// the index is searched as a block).
    pub(super) fn index_lookup_scratch(&self, seek_key: &[u8]) -> Result<Option<BlockHandle>> {
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
    pub(super) fn get_plain(
        &self,
        key: &[u8],
        opts: ReadOptions,
        value: &mut Vec<u8>,
    ) -> Result<bool> {
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
            HeldLookup::Miss { probe, .. } => probe,
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
    pub(super) fn get_in_block(
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
    pub(super) fn value_in_block(
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

    pub(super) fn lookup_internal(
        &self,
        user_key: &[u8],
        snapshot: u64,
        opts: ReadOptions,
        on_value: impl FnOnce(&[u8]),
    ) -> Result<Option<ValueType>> {
        self.lookup_internal_seq(user_key, snapshot, opts, |v, _| on_value(v))
    }

    pub(super) fn lookup_internal_seq(
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

    pub(super) fn lookup_seek(
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
}
