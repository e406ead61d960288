//! Whole-table verification: every block's checksum, every entry, key order, and that every
//! key passes its filter.

use std::cmp::Ordering;

use super::reader::{FilterStatus, TableReader};
use crate::block::stored::StoredBlock;
use crate::block::Block;
use crate::cursor::Cursor;
use crate::error::{BlockKind, Error};
use crate::format::BlockHandle;
use crate::internal_key;
use crate::io::RandomAccess;
use crate::util::comparator::BytewiseComparator;

/// Most problems a report keeps (later ones are only counted).
const MAX_PROBLEMS: usize = 1000;

/// What [`TableReader::verify`] found.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Problems, in file order (at most 1000 kept, and no more once the keys they hold
    /// total 1 MiB).
    pub problems: Vec<Error>,
    /// Problems found in all (may exceed `problems.len()`).
    pub problem_count: u64,
    /// Data blocks checked.
    pub data_blocks: u64,
    /// Entries checked.
    pub entries: u64,
    /// Whether keys were checked against a filter.
    pub filter_checked: bool,
    /// Bytes of keys held by `problems`.
    kept_key_bytes: usize,
}

impl VerifyReport {
    /// True when nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problem_count == 0
    }

    fn push(&mut self, e: Error) {
        self.problem_count += 1;
        if self.problems.len() >= MAX_PROBLEMS {
            return;
        }
        // Keys in problems come from the table; a hostile block can hold a thousand keys of
        // a megabyte each in a few kilobytes. Past 1 MiB of kept keys, only count.
        let n = key_bytes(&e);
        if self.problems.is_empty() || self.kept_key_bytes + n <= MAX_PROBLEM_KEY_BYTES {
            self.kept_key_bytes += n;
            self.problems.push(e);
        }
    }
}

/// Most bytes of keys the kept problems may hold (the first problem is always kept).
const MAX_PROBLEM_KEY_BYTES: usize = 1 << 20;

fn key_bytes(e: &Error) -> usize {
    match e {
        Error::KeyOrder { previous, key, .. } => previous.len() + key.len(),
        Error::FilterMiss { key, .. } | Error::BadInternalKey { key, .. } => key.len(),
        _ => 0,
    }
}

impl<R: RandomAccess> TableReader<R> {
    /// Checks the whole table, reading every block from the file with its checksum verified
    /// (the cache is bypassed). Never fails: problems are collected in the report.
    pub fn verify(&self) -> VerifyReport {
        let mut report = VerifyReport::default();
        let footer = self.footer();
        let mut meta_problems = 0;
        for (handle, kind) in [
            (footer.metaindex, BlockKind::Metaindex),
            (footer.index, BlockKind::Index),
        ] {
            if let Err(e) = self
                .stored_block(handle, kind, true)
                .and_then(StoredBlock::decompress)
            {
                meta_problems += 1;
                report.push(e);
            }
        }
        if let Some(h) = self.filter_handle() {
            if let Err(e) = self
                .stored_block(h, BlockKind::Filter, true)
                .and_then(StoredBlock::decompress)
            {
                meta_problems += 1;
                report.push(e);
            }
        }
        // A metaindex that reads but does not parse is only known from the open.
        if let (FilterStatus::Unreadable(e), 0) = (self.filter_status(), meta_problems) {
            report.push(Error::BadBlockContents {
                kind: e.block().map_or(BlockKind::Metaindex, |(k, _)| k),
                handle: e.block().map_or(footer.metaindex, |(_, h)| h),
                reason: "metaindex or filter block does not parse",
            });
        }
        report.filter_checked = self.filter().is_some();
        let cmp = self.comparator();
        let mut prev_key: Option<Vec<u8>> = None;
        // The index is walked with a cursor, not collected: a hostile index can hold many
        // entries sharing one long key, which would cost entries * key length to copy out.
        let mut index = self.index_block().iter(&BytewiseComparator);
        index.seek_to_first();
        let mut prev_sep: Option<Vec<u8>> = None;
        let mut sep_buf: Vec<u8> = Vec::new();
        while index.valid() {
            let mut v = index.value();
            let Some(h) = BlockHandle::decode_from(&mut v) else {
                report.push(Error::BadIndexValue {
                    kind: BlockKind::Index,
                    handle: footer.index,
                });
                return report;
            };
            let handle = &h;
            sep_buf.clear();
            sep_buf.extend_from_slice(index.key());
            index.next();
            let sep = &sep_buf;
            report.data_blocks += 1;
            if let Some(ps) = &prev_sep {
                if cmp.compare(ps, sep) != Ordering::Less {
                    report.push(Error::KeyOrder {
                        kind: BlockKind::Index,
                        handle: footer.index,
                        previous: ps.to_vec(),
                        key: sep.clone(),
                    });
                }
            }
            match &mut prev_sep {
                Some(p) => p.clone_from(sep),
                None => prev_sep = Some(sep.clone()),
            }
            let block = match self
                .stored_block(*handle, BlockKind::Data, true)
                .and_then(StoredBlock::decompress)
                .and_then(|c| Block::new(c.data, BlockKind::Data, *handle))
            {
                Ok(b) => b,
                Err(e) => {
                    report.push(e);
                    continue;
                }
            };
            let mut it = block.iter(cmp);
            it.seek_to_first();
            while it.valid() {
                report.entries += 1;
                let key = it.key();
                if let Some(p) = &prev_key {
                    if cmp.compare(p, key) != Ordering::Less {
                        report.push(Error::KeyOrder {
                            kind: BlockKind::Data,
                            handle: *handle,
                            previous: p.clone(),
                            key: key.to_vec(),
                        });
                    }
                }
                if cmp.compare(key, sep) == Ordering::Greater {
                    report.push(Error::KeyOrder {
                        kind: BlockKind::Data,
                        handle: *handle,
                        previous: key.to_vec(),
                        key: sep.clone(),
                    });
                }
                let filter_key = if self.is_internal() {
                    if internal_key::parse_internal_key(key).is_none() {
                        report.push(Error::BadInternalKey {
                            handle: *handle,
                            key: key.to_vec(),
                        });
                    }
                    internal_key::user_key(key)
                } else {
                    key
                };
                if let Some(f) = self.filter() {
                    if !f.key_may_match(handle.offset, filter_key) {
                        report.push(Error::FilterMiss {
                            handle: *handle,
                            key: filter_key.to_vec(),
                        });
                    }
                }
                match &mut prev_key {
                    Some(p) => {
                        p.clear();
                        p.extend_from_slice(key);
                    }
                    None => prev_key = Some(key.to_vec()),
                }
                it.next();
            }
            if let Err(e) = it.status() {
                report.push(e);
            }
        }
        if let Err(e) = index.status() {
            report.push(e);
        }
        report
    }
}
