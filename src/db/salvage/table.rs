//! One table of a database read under salvage, two ways (as `sst scan TABLE --salvage`):
//!
//! - [`SkipIter`]: the table opens; its data blocks are walked through the index, and a
//!   block that cannot be read (checksum, decompression, a bad entry) is recorded in the
//!   [`DamageLog`] and skipped: the walk goes on with the next block.
//! - [`FoundTable`]: the table does not open (footer or index lost, a cut file); its data
//!   blocks are found by their checksums ([`crate::table::salvage::salvage_bytes`]) and their
//!   entries kept sorted in memory, read through a [`FoundCursor`].
//!
//! Both are [`Cursor`]s that go forward only (a walk past damage cannot be retraced): moved
//! backward, the walk stops with [`Error::Unsupported`].
//!
//! ```text
//! index: [sep0 -> block0] [sep1 -> block1 (damaged: recorded, skipped)] [sep2 -> block2]
//! walk:   block0 entries ........................................... block2 entries
//! entry position: (data block handle, offset of the entry in the decompressed block)
//! ```
//!
//! A seek steps through its block from the first entry (no restart search): the entries a
//! seek can land on are exactly those a walk from the start yields, so lookups and scans
//! built on these agree even on a block holding a bad entry.

use std::cmp::Ordering;

use crate::block::BlockIter;
use crate::compress::CompressionProfile;
use crate::cursor::Cursor;
use crate::db::salvage::{Damage, DamageLog};
use crate::error::{BlockKind, Error, Result};
use crate::format::{BlockHandle, BLOCK_TRAILER_LEN};
use crate::internal_key::{self, InternalKeyComparator};
use crate::io::RandomAccess;
use crate::options::ReadOptions;
use crate::table::salvage::{salvage_bytes, Salvaged};
use crate::table::{TableIter, TableReader};
use crate::util::comparator::Comparator;

/// Where an entry of a table is: its data block, and its offset in the decompressed block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryPos {
    /// The data block.
    pub block: BlockHandle,
    /// The entry's byte offset in the decompressed block.
    pub offset_in_block: usize,
}

/// Where a cursor over one table's entries is.
pub trait EntryPosition {
    /// Where the current entry is in the table, when the cursor is on one.
    fn position(&self) -> Option<EntryPos>;
}

impl<R: RandomAccess> EntryPosition for TableIter<'_, R> {
    fn position(&self) -> Option<EntryPos> {
        self.block_handle()
            .zip(self.entry_offset())
            .map(|(block, offset_in_block)| EntryPos {
                block,
                offset_in_block,
            })
    }
}

/// The error of a walk under salvage asked to go backward.
fn forward_only() -> Error {
    Error::Unsupported {
        reason: "reading backward is not supported under salvage (tables are walked forward, \
                 past their damage): read forward"
            .into(),
    }
}

/// A walk over a table's data blocks that skips (and records) the damaged ones; without a
/// damage log it stops at the first damage with an error instead.
pub struct SkipIter<'a, R> {
    table: &'a TableReader<R>,
    file: &'a str,
    damage: Option<&'a DamageLog>,
    opts: ReadOptions,
    index: BlockIter<'a>,
    block: Option<(BlockHandle, BlockIter<'a>)>,
    err: Option<Error>,
}

impl<'a, R: RandomAccess> SkipIter<'a, R> {
    /// A walk over `table` (the file `file` of the directory), not positioned. Damage is
    /// recorded in `damage` and skipped; with `None`, the first damage stops the walk.
    pub fn new(
        table: &'a TableReader<R>,
        file: &'a str,
        damage: Option<&'a DamageLog>,
        opts: ReadOptions,
    ) -> Self {
        SkipIter {
            table,
            file,
            damage,
            opts,
            index: table.index_block().iter(table.comparator()),
            block: None,
            err: None,
        }
    }
}

impl<R: RandomAccess> Cursor for SkipIter<'_, R> {
    fn valid(&self) -> bool {
        self.block.as_ref().is_some_and(|(_, b)| b.valid())
    }

    /// The current key (as stored).
    fn key(&self) -> &[u8] {
        self.block.as_ref().map_or(&[], |(_, b)| b.key())
    }

    fn value(&self) -> &[u8] {
        self.block.as_ref().map_or(&[], |(_, b)| b.value())
    }

    /// The error that stopped a walk without a damage log, or one moved backward.
    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    fn seek_to_first(&mut self) {
        self.err = None;
        self.index.seek_to_first();
        self.settle(None);
    }

    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        self.index.seek(target);
        self.settle(Some(target));
    }

    fn next(&mut self) {
        let Some((handle, b)) = self.block.as_mut() else {
            return;
        };
        b.next();
        if b.valid() {
            return;
        }
        let handle = *handle;
        if let Err(e) = b.status() {
            self.block = None;
            if !self.skip(handle.offset, Some(block_len(handle)), e) {
                return;
            }
        }
        self.index.next();
        self.settle(None);
    }

    fn seek_to_last(&mut self) {
        self.block = None;
        self.err = Some(forward_only());
    }

    fn seek_before(&mut self, _target: &[u8]) {
        self.seek_to_last();
    }

    fn prev(&mut self) {
        self.seek_to_last();
    }
}

impl<R: RandomAccess> EntryPosition for SkipIter<'_, R> {
    fn position(&self) -> Option<EntryPos> {
        self.block.as_ref().map(|(h, b)| EntryPos {
            block: *h,
            offset_in_block: b.entry_offset(),
        })
    }
}

impl<R: RandomAccess> SkipIter<'_, R> {
    /// Records a damaged range (or stops on it): whether the walk goes on.
    fn skip(&mut self, offset: u64, len: Option<u64>, e: Error) -> bool {
        self.block = None;
        match self.damage {
            Some(log) => {
                log.record(Damage::new(self.file, offset, len, &e));
                true
            }
            None => {
                self.err = Some(e);
                false
            }
        }
    }

    /// From the index cursor's position, the first entry (>= `target`) of the first data
    /// block that reads.
    fn settle(&mut self, target: Option<&[u8]>) {
        self.block = None;
        let cmp = self.table.comparator();
        loop {
            if let Err(e) = self.index.status() {
                let ih = self.table.footer().index;
                self.skip(ih.offset, None, e);
                return;
            }
            if !self.index.valid() {
                return;
            }
            let mut v = self.index.value();
            let Some(handle) = BlockHandle::decode_from(&mut v) else {
                let ih = self.table.footer().index;
                let e = Error::BadIndexValue {
                    kind: BlockKind::Index,
                    handle: ih,
                };
                // The rest of the index cannot be trusted: the walk ends here.
                self.skip(ih.offset, None, e);
                return;
            };
            match self.table.read_data_block(handle, &self.opts) {
                Ok(block) => {
                    let mut b = block.iter(cmp);
                    b.seek_to_first();
                    if let Some(t) = target {
                        while b.valid() && cmp.compare(b.key(), t) == Ordering::Less {
                            b.next();
                        }
                    }
                    if b.valid() {
                        self.block = Some((handle, b));
                        return;
                    }
                    if let Err(e) = b.status() {
                        if !self.skip(handle.offset, Some(block_len(handle)), e) {
                            return;
                        }
                    }
                }
                Err(e) => {
                    if !self.skip(handle.offset, Some(block_len(handle)), e) {
                        return;
                    }
                }
            }
            self.index.next();
        }
    }
}

fn block_len(h: BlockHandle) -> u64 {
    h.size.saturating_add(BLOCK_TRAILER_LEN as u64)
}

/// One entry of a [`FoundTable`].
#[derive(Debug, Clone)]
pub struct FoundEntry {
    /// The internal key.
    pub key: Vec<u8>,
    /// The value.
    pub value: Vec<u8>,
    /// Where it is.
    pub pos: EntryPos,
}

/// The entries of a table that does not open, from the data blocks found by their
/// checksums, sorted by the internal-key order.
#[derive(Debug, Default)]
pub struct FoundTable {
    entries: Vec<FoundEntry>,
}

impl FoundTable {
    /// Finds the data blocks of `bytes` (the table file `file`) by their checksums; records
    /// why the table did not open (`why`) and every stretch given up in `damage`. The
    /// entries are sorted by `icmp`.
    pub fn salvage(
        bytes: &[u8],
        file: &str,
        why: &Error,
        profile: CompressionProfile,
        icmp: &InternalKeyComparator,
        damage: &DamageLog,
    ) -> FoundTable {
        let mut t = Self::salvage_unsorted(bytes, file, why, profile, damage);
        t.sort(icmp);
        t
    }

    /// [`salvage`](Self::salvage), the entries left in file order (for checking the order
    /// they were written in); [`sort`](Self::sort) them before reading.
    pub fn salvage_unsorted(
        bytes: &[u8],
        file: &str,
        why: &Error,
        profile: CompressionProfile,
        damage: &DamageLog,
    ) -> FoundTable {
        damage.record(Damage::said(
            file,
            why.offset().unwrap_or(0),
            None,
            format!(
                "the table does not open ({why}); its data blocks are found by their checksums"
            ),
        ));
        let mut entries = Vec::new();
        for item in salvage_bytes(bytes, profile) {
            match item {
                Salvaged::Entries {
                    handle,
                    entries: es,
                    offsets,
                } => {
                    let mut not_internal = 0usize;
                    for ((key, value), off) in es.into_iter().zip(offsets) {
                        if internal_key::parse_internal_key(&key).is_none() {
                            not_internal += 1;
                            continue;
                        }
                        entries.push(FoundEntry {
                            key,
                            value,
                            pos: EntryPos {
                                block: handle,
                                offset_in_block: off,
                            },
                        });
                    }
                    if not_internal > 0 {
                        let what = format!(
                            "{not_internal} key(s) of the block found at offset {} (size {}) \
                             are not internal keys; left out",
                            handle.offset, handle.size
                        );
                        damage.record(Damage::said(file, handle.offset, None, what));
                    }
                }
                Salvaged::Damaged { offset, len, error } => {
                    damage.record(Damage::new(file, offset, len, &error));
                }
            }
        }
        FoundTable { entries }
    }

    /// Sorts the entries by `icmp` (the same internal key twice: the first kept).
    pub fn sort(&mut self, icmp: &InternalKeyComparator) {
        self.entries.sort_by(|a, b| icmp.compare(&a.key, &b.key));
        self.entries.dedup_by(|a, b| a.key == b.key);
    }

    /// The entries, sorted.
    pub fn entries(&self) -> &[FoundEntry] {
        &self.entries
    }

    /// The first entry at or after internal key `target`.
    pub fn lower_bound(&self, icmp: &InternalKeyComparator, target: &[u8]) -> usize {
        self.entries
            .partition_point(|e| icmp.compare(&e.key, target) == Ordering::Less)
    }

    /// A cursor over the entries (in `icmp`'s order, the one they were sorted by), not
    /// positioned.
    pub fn cursor(&self, icmp: InternalKeyComparator) -> FoundCursor<'_> {
        FoundCursor {
            table: self,
            icmp,
            i: self.entries.len(),
        }
    }
}

/// A cursor over the entries of a [`FoundTable`] (both ways: they are in memory).
pub struct FoundCursor<'a> {
    table: &'a FoundTable,
    icmp: InternalKeyComparator,
    /// The current entry; `entries.len()` when not valid.
    i: usize,
}

impl FoundCursor<'_> {
    fn len(&self) -> usize {
        self.table.entries.len()
    }
}

impl Cursor for FoundCursor<'_> {
    fn valid(&self) -> bool {
        self.i < self.len()
    }
    fn seek_to_first(&mut self) {
        self.i = 0;
    }
    fn seek_to_last(&mut self) {
        // No entries leaves `i` at 0 = len: not valid.
        self.i = self.len().saturating_sub(1);
    }
    fn seek(&mut self, target: &[u8]) {
        self.i = self.table.lower_bound(&self.icmp, target);
    }
    fn seek_before(&mut self, target: &[u8]) {
        self.i = match self.table.lower_bound(&self.icmp, target) {
            0 => self.len(),
            n => n - 1,
        };
    }
    fn next(&mut self) {
        self.i = (self.i + 1).min(self.len());
    }
    fn prev(&mut self) {
        self.i = match self.i {
            0 => self.len(),
            n => n - 1,
        };
    }
    fn key(&self) -> &[u8] {
        self.table.entries.get(self.i).map_or(&[], |e| &e.key)
    }
    fn value(&self) -> &[u8] {
        self.table.entries.get(self.i).map_or(&[], |e| &e.value)
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

impl EntryPosition for FoundCursor<'_> {
    fn position(&self) -> Option<EntryPos> {
        self.table.entries.get(self.i).map(|e| e.pos)
    }
}
