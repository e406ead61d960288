//! Reading a database: point lookups (the memtable, then level 0 newest first, then one
//! table per deeper level, as LevelDB's `Version::Get`) and the merged, snapshot-aware
//! cursors over every source.

use super::*;
use crate::internal_key::ValueType;

impl Db {
    /// What the database holds for `user_key` as of `opts.snapshot` (the newest sequence
    /// when `None`): its newest visible version, a value or a deletion (each with its
    /// sequence number), or nothing. The memtable first, then level-0 tables newest
    /// first, then one table per deeper level, as LevelDB's `Version::Get`; each table
    /// consults its filter before reading a data block. Under salvage the answer is the
    /// merged view's (damaged blocks skipped as scans skip them), so a lookup agrees with
    /// a scan and with the `records` listing.
    ///
    /// # Errors
    /// A table that cannot be opened or read (the error names it).
    pub fn get(&self, user_key: &[u8], opts: &ReadOptions) -> Result<Lookup> {
        let mut value = Vec::new();
        Ok(self.get_into(user_key, opts, &mut value)?.map(|()| value))
    }

    /// [`get`](Self::get) that copies a found value into `value` (cleared first) instead of
    /// allocating one (see [`TableReader::get_into`](crate::TableReader::get_into)).
    ///
    /// # Errors
    /// As [`get`](Self::get).
    pub fn get_into(
        &self,
        user_key: &[u8],
        opts: &ReadOptions,
        value: &mut Vec<u8>,
    ) -> Result<LookupKind> {
        let snapshot = opts.snapshot.unwrap_or(self.last_sequence);
        let opts = &ReadOptions {
            snapshot: Some(snapshot),
            ..*opts
        };
        value.clear();
        if self.salvage {
            return self.lookup_merged(user_key, snapshot, value);
        }
        match self.mem.get(user_key, snapshot) {
            MemLookup::Found(v, seq) => {
                value.extend_from_slice(v);
                return Ok(LookupKind::Found {
                    value: (),
                    sequence: Some(seq),
                });
            }
            MemLookup::Deleted(seq) => return Ok(LookupKind::Deleted { sequence: seq }),
            MemLookup::NotFound => {}
        }
        let ucmp = self.icmp.user_comparator();
        let in_range = |f: &FileMeta| {
            ucmp.compare(user_key, internal_key::user_key(&f.smallest)) != Ordering::Less
                && ucmp.compare(user_key, internal_key::user_key(&f.largest)) != Ordering::Greater
        };
        // The answer of table `f` (at `slot` of the table list): found or deleted (with its
        // sequence), or not there (`None`: go on).
        let mut probe = |f: &FileMeta, slot: u32| -> Result<Option<LookupKind>> {
            let t = self.table_at(slot, f.number)?;
            Ok(
                match t
                    .get_into(user_key, opts, value)
                    .map_err(|e| in_table(f.number, e))?
                {
                    LookupKind::Found { sequence, .. } => Some(LookupKind::Found {
                        value: (),
                        sequence: Some(sequence.unwrap_or(0)),
                    }),
                    d @ LookupKind::Deleted { .. } => Some(d),
                    LookupKind::NotFound => None,
                },
            )
        };
        for (level, files) in self.state.levels.iter().enumerate() {
            if files.is_empty() {
                continue;
            }
            if let Some(search) = self.search.get(level).and_then(Option::as_ref) {
                // Levels >= 1 in bytewise order: the prefix search (level_search.rs).
                if let Some((i, slot)) = search.find(files, user_key) {
                    if let Some(answer) = probe(&files[i], slot)? {
                        return Ok(answer);
                    }
                }
                continue;
            }
            let candidates: &[FileMeta] = if level == 0 {
                files
            } else {
                let i = files.partition_point(|f| {
                    ucmp.compare(internal_key::user_key(&f.largest), user_key) == Ordering::Less
                });
                files.get(i..(i + 1).min(files.len())).unwrap_or(&[])
            };
            for f in candidates.iter().filter(|f| in_range(f)) {
                if let Some(answer) = probe(f, self.tables.slot(f.number))? {
                    return Ok(answer);
                }
            }
        }
        Ok(LookupKind::NotFound)
    }

    /// A lookup through the merged cursor: the first version of `user_key` at or below
    /// `snapshot`, exactly as the view finds it.
    fn lookup_merged(
        &self,
        user_key: &[u8],
        snapshot: u64,
        value: &mut Vec<u8>,
    ) -> Result<LookupKind> {
        let ucmp = self.icmp.user_comparator();
        let mut m = self.merged()?;
        let mut target = Vec::with_capacity(user_key.len() + 8);
        internal_key::lookup_key(&mut target, user_key, snapshot);
        m.seek(&target);
        while m.valid() {
            // A key that is not an internal key is no version of anything (the view skips
            // it too).
            let Some(p) = internal_key::parse_internal_key(m.key()) else {
                m.next();
                continue;
            };
            if ucmp.compare(p.user_key, user_key) != Ordering::Equal {
                break;
            }
            if p.sequence > snapshot {
                m.next();
                continue;
            }
            return Ok(match p.value_type {
                ValueType::Value => {
                    value.extend_from_slice(m.value());
                    LookupKind::Found {
                        value: (),
                        sequence: Some(p.sequence),
                    }
                }
                ValueType::Deletion => LookupKind::Deleted {
                    sequence: p.sequence,
                },
            });
        }
        m.status()?;
        Ok(LookupKind::NotFound)
    }

    /// A cursor over every internal key of the database (memtable, level 0 newest first,
    /// levels 1-6), merged in internal-key order: every version, deletions included.
    ///
    /// # Errors
    /// A level-0 table that cannot be opened.
    pub fn merged(&self) -> Result<MergingCursor<'_>> {
        let mut children: Vec<Box<dyn Cursor + '_>> = vec![Box::new(MemCursor::new(&self.mem))];
        for f in &self.state.levels[0] {
            children.push(Box::new(self.cursor(f.number, self.read)?));
        }
        for files in self.state.levels.iter().skip(1) {
            if !files.is_empty() {
                children.push(Box::new(LevelCursor::new(
                    files,
                    self,
                    self.icmp.clone(),
                    self.read,
                )));
            }
        }
        Ok(MergingCursor::new(children, self.icmp.clone()))
    }

    /// The live view as of `opts.snapshot` (the newest sequence when `None`): user keys in
    /// order with their newest visible values, deletions left out; a [`Cursor`] both ways,
    /// not positioned. As a std iterator it starts at the first key:
    /// `for entry in db.iter(&read)` yields every live `(key, value)`, then the error that
    /// stopped the view, if one did (a level-0 table that could not be opened, a damaged
    /// block).
    pub fn iter(&self, opts: &ReadOptions) -> DbIter<'_> {
        let snapshot = opts.snapshot.unwrap_or(self.last_sequence);
        match self.merged() {
            Ok(m) => DbIter::new(m, snapshot),
            Err(e) => DbIter::failed(MergingCursor::new(Vec::new(), self.icmp.clone()), e),
        }
    }

    /// The live entries whose user keys lie in `range`, in order, as a std iterator (as
    /// [`iter`](Self::iter) between two keys; Python's `scan(start, stop)`).
    pub fn range<K: AsRef<[u8]>>(
        &self,
        range: impl std::ops::RangeBounds<K>,
        opts: &ReadOptions,
    ) -> Entries<DbIter<'_>> {
        Entries::in_range(
            self.iter(opts),
            self.icmp.user_comparator().clone(),
            range.start_bound().map(AsRef::as_ref),
            range.end_bound().map(AsRef::as_ref),
        )
    }
}
