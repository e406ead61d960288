//! Reading a database: point lookups (the memtable, then level 0 newest first, then one
//! table per deeper level, as LevelDB's `Version::Get`) and the merged, snapshot-aware
//! cursors over every source.

use super::*;

impl Db {
    /// The newest value of `user_key` at the newest sequence: its value and sequence.
    ///
    /// # Errors
    /// A table that cannot be opened or read (the error names it).
    pub fn get(&self, user_key: &[u8]) -> Result<Option<(Vec<u8>, u64)>> {
        self.get_at(user_key, self.last_sequence)
    }

    /// The newest value of `user_key` with a sequence <= `snapshot`.
    ///
    /// # Errors
    /// As [`get`](Self::get).
    pub fn get_at(&self, user_key: &[u8], snapshot: u64) -> Result<Option<(Vec<u8>, u64)>> {
        let mut v = Vec::new();
        Ok(self
            .get_into(user_key, snapshot, &mut v)?
            .map(|seq| (v, seq)))
    }

    /// [`get_at`](Self::get_at) into a reused buffer: the sequence of the value found.
    ///
    /// # Errors
    /// As [`get`](Self::get).
    pub fn get_into(
        &self,
        user_key: &[u8],
        snapshot: u64,
        value: &mut Vec<u8>,
    ) -> Result<Option<u64>> {
        match self.mem.get(user_key, snapshot) {
            MemLookup::Found(v, seq) => {
                value.clear();
                value.extend_from_slice(v);
                return Ok(Some(seq));
            }
            MemLookup::Deleted(_) => return Ok(None),
            MemLookup::NotFound => {}
        }
        let ucmp = self.icmp.user_comparator();
        if self.repair_view {
            // No levels to trust: the newest version over every table.
            let mut best: Option<(u64, bool, Vec<u8>)> = None;
            for f in &self.state.levels[0] {
                let mut v = Vec::new();
                let t = self.table(f.number)?;
                let r = t
                    .lookup_into(user_key, snapshot, self.read, &mut v)
                    .map_err(|e| in_table(f.number, e))?;
                let (seq, found) = match r {
                    LookupKind::Found { sequence, .. } => (sequence.unwrap_or(0), true),
                    LookupKind::Deleted { sequence } => (sequence, false),
                    LookupKind::NotFound => continue,
                };
                if best.as_ref().is_none_or(|b| seq > b.0) {
                    best = Some((seq, found, v));
                }
            }
            return Ok(match best {
                Some((seq, true, v)) => {
                    *value = v;
                    Some(seq)
                }
                _ => None,
            });
        }
        let in_range = |f: &FileMeta| {
            ucmp.compare(user_key, internal_key::user_key(&f.smallest)) != Ordering::Less
                && ucmp.compare(user_key, internal_key::user_key(&f.largest)) != Ordering::Greater
        };
        // The answer of table `f` (at `slot` of the table list): found (with its sequence),
        // deleted, or not there (`None`: go on).
        let mut probe = |f: &FileMeta, slot: u32| -> Result<Option<Option<u64>>> {
            let t = self.table_at(slot, f.number)?;
            Ok(
                match t
                    .lookup_into(user_key, snapshot, self.read, value)
                    .map_err(|e| in_table(f.number, e))?
                {
                    LookupKind::Found { sequence, .. } => Some(Some(sequence.unwrap_or(0))),
                    LookupKind::Deleted { .. } => Some(None),
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
        Ok(None)
    }

    /// A cursor over every internal key of the database (memtable, level 0 newest first,
    /// levels 1-6), merged in internal-key order: every version, deletions included.
    ///
    /// # Errors
    /// A level-0 table that cannot be opened.
    pub fn merged(&self) -> Result<MergingCursor<'_>> {
        let mut children: Vec<Box<dyn Cursor + '_>> = vec![Box::new(MemCursor::new(&self.mem))];
        for f in &self.state.levels[0] {
            children.push(Box::new(TableCursor::new(self.table(f.number)?, self.read)));
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

    /// The live view at `snapshot`: user keys in order with their newest visible values.
    /// Position it with `seek_to_first` or `seek`.
    ///
    /// # Errors
    /// As [`merged`](Self::merged).
    pub fn view_at(&self, snapshot: u64) -> Result<ViewCursor<'_>> {
        Ok(ViewCursor::new(self.merged()?, snapshot))
    }

    /// The live view at the newest sequence.
    ///
    /// # Errors
    /// As [`merged`](Self::merged).
    pub fn view(&self) -> Result<ViewCursor<'_>> {
        self.view_at(self.last_sequence)
    }
}
