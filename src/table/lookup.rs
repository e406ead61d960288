//! Point lookups: one pipeline for every table, LevelDB's `Table::InternalGet`.
//!
//! ```text
//! route:   index search -> data block (position, handle) -> filter: "may match"?  no: absent
//! block:   the first of these that has it
//!            1. the block's lookup record, which holds the block while the cache does
//!            2. in place: an uncompressed block of a zero-copy source, with its directory
//!            3. past the cache: a block the cache would turn away, read for this lookup
//!               and dropped
//!            4. the block cache or the file (the block then enters the cache)
//! search:  the first entry >= the seek key in that block -> the caller's answer
//! ```
//!
//! Plain tables look for the key itself; database tables (internal keys) for the newest
//! version of the user key at a snapshot. Both take the same steps: only the seek key, the
//! key the filter is asked about and the reading of the entry found differ ([`Probe`]).
//! Steps 1 to 3 need the decoded index ([`ParsedIndex`]); without one (a comparator that is
//! not bytewise-based) a lookup routes through the index block and goes to step 4.

use std::cell::Cell;
use std::cmp::Ordering;

use super::reader::TableReader;
use super::records::{BlockView, HeldLookup, InPlaceLookup, Probe, SCRATCH};
use crate::error::Result;
use crate::format::MAX_SEQUENCE;
use crate::internal_key::{self, ValueType};
use crate::io::RandomAccess;
use crate::options::ReadOptions;

thread_local! {
    /// Scratch space for the internal lookup key of a database-table lookup.
    static SEEK_KEY: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The answer of a point lookup ([`TableReader::get`], [`Db::get`](crate::Db::get)): the
/// newest version of the key visible at the read's snapshot is a value or a deletion, or
/// there is none.
///
/// `get` returns it with the value (`Lookup<Vec<u8>>`, the default); `get_into` copies the
/// value into the caller's buffer and returns `Lookup<()>`: one type for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup<V = Vec<u8>> {
    /// The key has a value.
    Found {
        /// The value (`()` from `get_into`: the value is in the caller's buffer).
        value: V,
        /// Sequence number of the version found (database tables and databases; `None`
        /// for plain tables).
        sequence: Option<u64>,
    },
    /// The newest visible version is a deletion (database tables and databases only).
    Deleted {
        /// Sequence number of the deletion.
        sequence: u64,
    },
    /// No version of the key is visible.
    NotFound,
}

/// What the `get_into` lookups return: a [`Lookup`] whose value is in the caller's buffer.
pub(crate) type LookupKind = Lookup<()>;

impl<V> Lookup<V> {
    /// Whether a value was found.
    pub fn is_found(&self) -> bool {
        matches!(self, Lookup::Found { .. })
    }

    /// The sequence number of the version found (a value or a deletion), if known.
    pub fn sequence(&self) -> Option<u64> {
        match self {
            Lookup::Found { sequence, .. } => *sequence,
            Lookup::Deleted { sequence } => Some(*sequence),
            Lookup::NotFound => None,
        }
    }

    /// The same answer with the value replaced by `f(value)`.
    pub fn map<W>(self, f: impl FnOnce(V) -> W) -> Lookup<W> {
        match self {
            Lookup::Found { value, sequence } => Lookup::Found {
                value: f(value),
                sequence,
            },
            Lookup::Deleted { sequence } => Lookup::Deleted { sequence },
            Lookup::NotFound => Lookup::NotFound,
        }
    }
}

impl Lookup {
    /// The value, if one was found.
    pub fn value(&self) -> Option<&[u8]> {
        match self {
            Lookup::Found { value, .. } => Some(value),
            _ => None,
        }
    }

    /// The value, if one was found.
    pub fn into_value(self) -> Option<Vec<u8>> {
        match self {
            Lookup::Found { value, .. } => Some(value),
            _ => None,
        }
    }
}

impl<R: RandomAccess> TableReader<R> {
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
        let (in_cache, len) =
            match self.held_lookup(route.lookup, route.handle, |view| search(view, &mut f)) {
                HeldLookup::Hit(r) => return r,
                HeldLookup::Miss { probe, len } => (probe, len),
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
            let r = self.find_transient(&route, len, opts, &mut f, search)?;
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

    /// Whether the filter rules out `key` (a user key for internal tables) in the data
    /// block the index routes it to. `false` means a lookup would read that block (always
    /// for a key the order calls equal to other bytes:
    /// [`Comparator::equal_keys_identical`](crate::Comparator::equal_keys_identical)).
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
        Ok(self.user_comparator.equal_keys_identical(key)
            && self
                .filter()
                .is_some_and(|f| !f.key_may_match(handle.offset, key)))
    }

    /// Looks up `key`: for a plain table, the entry whose key equals it; for a database
    /// table (internal keys), the newest version of the user key `key` with a sequence
    /// number up to `opts.snapshot` (all of them when it is `None`): a value, a deletion,
    /// or nothing. One path for both: index, filter (a key the filter rules out reads no
    /// data block), block.
    ///
    /// ```
    /// use leveldb_table::{Lookup, Options, ReadOptions, OpenOptions, TableBuilder, TableReader};
    ///
    /// # fn main() -> leveldb_table::Result<()> {
    /// let mut b = TableBuilder::new(Vec::new(), &Options::default().bloom(10))?;
    /// b.add(b"k", b"v")?;
    /// let table = TableReader::open(b.finish()?.0, OpenOptions::default())?;
    /// let read = ReadOptions::default();
    /// assert_eq!(table.get(b"k", &read)?.into_value(), Some(b"v".to_vec()));
    /// assert_eq!(table.get(b"x", &read)?, Lookup::NotFound);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// A block on the way that cannot be read or is corrupt (the error names it).
    pub fn get(&self, key: &[u8], opts: &ReadOptions) -> Result<Lookup> {
        let mut value = Vec::new();
        Ok(self.get_into(key, opts, &mut value)?.map(|()| value))
    }

    /// [`get`](Self::get) that copies a found value into `value` (cleared first) instead of
    /// allocating one: with a warm cache and a buffer of sufficient capacity a lookup
    /// allocates nothing (docs/performance.md measures what that saves: `cargo bench
    /// --bench table_get -- hit_filter_get`).
    ///
    /// # Errors
    /// As [`get`](Self::get).
    pub fn get_into(
        &self,
        key: &[u8],
        opts: &ReadOptions,
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
            let found = self.find(*opts, &probe, |k, v| {
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
        internal_key::lookup_key(&mut seek, key, opts.snapshot.unwrap_or(MAX_SEQUENCE));
        let probe = Probe {
            seek: &seek,
            filter: key,
            exact: false,
        };
        let ucmp = &*self.user_comparator;
        let found = self.find(
            *opts,
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
