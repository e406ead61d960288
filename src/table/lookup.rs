//! Point lookups: one pipeline for every table, LevelDB's `Table::InternalGet`.
//!
//! ```text
//! route:   index search -> data block (position, handle) -> filter: "may match"?  no: absent
//! block:   the first of these that has it
//!            1. the block's lookup record, which holds the block while the cache does
//!            2. in place: an uncompressed block of a zero-copy source, with its directory
//!            3. past the cache: a block the cache would turn away, read for this lookup
//!               (a snappy block with a known outline decoded only up to the key)
//!            4. the block cache or the file (the block then enters the cache)
//! search:  the first entry >= the seek key in that block -> the caller's answer
//! ```
//!
//! Plain tables look for the key itself; database tables (internal keys) for the newest
//! version of the user key at a snapshot. Both take the same steps: only the seek key, the
//! key the filter is asked about and the reading of the entry found differ ([`Probe`]).
//! Steps 1 to 3 need the decoded index ([`ParsedIndex`]); without one (a comparator that is
//! not bytewise-based) a lookup routes through the index block and goes to step 4.

use super::*;

/// What a point lookup looks for.
pub(super) struct Probe<'k> {
    /// The search's target: the first entry at or after it answers.
    pub(super) seek: &'k [u8],
    /// What the filter is asked about (the user key of a database table).
    pub(super) filter: &'k [u8],
    /// Only an entry equal to `seek` answers (plain tables): a block's search directory
    /// may then answer instead of a search.
    pub(super) exact: bool,
}

/// A block as a point lookup searches it: with its restart hints and its search directory,
/// when it has them.
#[derive(Clone, Copy)]
pub(super) struct BlockView<'a> {
    pub(super) block: &'a Block,
    pub(super) hints: Option<&'a RestartHints>,
    pub(super) dir: Option<&'a BlockDir>,
}

impl<'a> BlockView<'a> {
    /// A block without search aids.
    pub(super) fn bare(block: &'a Block) -> Self {
        BlockView {
            block,
            hints: None,
            dir: None,
        }
    }

    /// A cached block with the aids its entry holds.
    pub(super) fn of(entry: &'a CachedBlock) -> Self {
        BlockView {
            block: &entry.block,
            hints: entry.hints.as_ref(),
            dir: entry.dir.as_ref(),
        }
    }
}

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
    pub(super) fn index_lookup(&self, seek_key: &[u8]) -> Result<Option<BlockHandle>> {
        if let Some(p) = self.parsed_index() {
            return Ok(p.seek(self.index.data(), &*self.comparator, seek_key));
        }
        let mut scratch = INDEX_SCRATCH.take();
        let found = self
            .index
            .seek_value_range(&*self.comparator, seek_key, &mut scratch);
        INDEX_SCRATCH.set(scratch);
        match found? {
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

    /// The point-lookup pipeline (see the module docs): `f` runs on the first entry at or
    /// after `probe.seek` in the data block the index routes it to, unless the filter rules
    /// the block out. `Ok(None)`: no such entry (or, for an exact probe, none equal).
    pub(super) fn find<T, F: FnOnce(&[u8], &[u8]) -> T>(
        &self,
        opts: ReadOptions,
        probe: &Probe<'_>,
        f: F,
    ) -> Result<Option<T>> {
        let Some(route) = self.route(probe.seek, probe.filter)? else {
            return Ok(None);
        };
        let mut f = Some(f);
        let search = |view: BlockView<'_>, f: &mut Option<F>| self.search(view, probe, route.tp, f);
        // 1. The block the lookup record holds.
        let (in_cache, outline) =
            match self.held_lookup(route.lookup, route.handle, |view| search(view, &mut f)) {
                HeldLookup::Hit(r) => return r,
                HeldLookup::Miss { probe, outline } => (probe, outline),
            };
        // 2. In place (a directory answers only exact probes).
        if probe.exact {
            match self.find_in_place(&route, opts, probe.seek, &mut f)? {
                InPlaceLookup::Done(r) => return Ok(r),
                InPlaceLookup::Read(block) => return search(BlockView::bare(&block), &mut f),
                InPlaceLookup::NotHere => {}
            }
        }
        // 3. Past the cache, when the record knows the cache does not hold the block.
        if !in_cache {
            let r = self.find_transient(&route, outline, opts, probe.seek, &mut f, search)?;
            if let Some(r) = r {
                return Ok(r);
            }
        }
        // 4. The block cache or the file.
        let entry = self.load_for_lookup(route.pos, route.handle, opts, in_cache)?;
        search(BlockView::of(&entry), &mut f)
    }

    /// The search step of [`find`](Self::find): `f` on the first entry at or after
    /// `probe.seek` in `view` (`tp`: the decoded index's prefix of it), through the block's
    /// restart hints when it has them; for an exact probe in a block with a search
    /// directory, on the entry the directory finds equal to it.
    #[inline]
    pub(super) fn search<T, F: FnOnce(&[u8], &[u8]) -> T>(
        &self,
        view: BlockView<'_>,
        probe: &Probe<'_>,
        tp: u64,
        f: &mut Option<F>,
    ) -> Result<Option<T>> {
        let block = view.block;
        if let (Some(dir), true) = (view.dir, probe.exact) {
            let Some(i) = dir.find_exact(probe.seek) else {
                return Ok(None);
            };
            let p = dir.entry_offset(i);
            // The directory was built from this block's decoded entries.
            let r = block.value_at(p).ok_or_else(|| block.bad_entry(p))?;
            return Ok(f.take().map(|f| f(probe.seek, &block.data()[r])));
        }
        let hints = view.hints.map(|h| (h, tp));
        let mut key = SCRATCH.take();
        let found = block
            .seek(&*self.comparator, probe.seek, hints, &mut key)
            .map(|r| r.and_then(|r| f.take().map(|f| f(&key, &block.data()[r]))));
        SCRATCH.set(key);
        found
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
        let Some(handle) = self.index_lookup(seek_key)? else {
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
        f: impl FnOnce(BlockView<'_>) -> T,
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
                let r = f(BlockView {
                    block: &h.block,
                    hints: h.hints.as_ref(),
                    dir: None,
                });
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
        let Some(handle) = self.index_lookup(seek_key)? else {
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
        let r = self.lookup_into(key, MAX_SEQUENCE, opts, value)?;
        Ok(matches!(r, LookupKind::Found { .. }))
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
            let probe = Probe {
                seek: key,
                filter: key,
                exact: true,
            };
            let cmp = &*self.comparator;
            let found = self.find(opts, &probe, |k, v| {
                let equal = cmp.compare(k, key) == Ordering::Equal;
                if equal {
                    value.extend_from_slice(v);
                }
                equal
            })?;
            return Ok(match found {
                Some(true) => LookupKind::Found {
                    value: (),
                    sequence: None,
                },
                _ => LookupKind::NotFound,
            });
        }
        let mut seek = SEEK_KEY.take();
        internal_key::lookup_key(&mut seek, key, snapshot);
        let probe = Probe {
            seek: &seek,
            filter: key,
            exact: false,
        };
        let ucmp = &*self.user_comparator;
        let found = self.find(
            opts,
            &probe,
            |k, v| match internal_key::parse_internal_key(k) {
                Some(p) if ucmp.compare(p.user_key, key) == Ordering::Equal => match p.value_type {
                    ValueType::Value => {
                        value.extend_from_slice(v);
                        Some(LookupKind::Found {
                            value: (),
                            sequence: Some(p.sequence),
                        })
                    }
                    ValueType::Deletion => Some(LookupKind::Deleted {
                        sequence: p.sequence,
                    }),
                },
                _ => None,
            },
        );
        SEEK_KEY.set(seek);
        Ok(found?.flatten().unwrap_or(LookupKind::NotFound))
    }
}
