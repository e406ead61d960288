//! Whole-table verification: every block's checksum, every entry, key order, and that every
//! key passes its filter.

use std::cmp::Ordering;

use crate::block::Block;
use crate::error::{BlockKind, Error};
use crate::internal_key;
use crate::io::RandomAccess;
use crate::table::{FilterStatus, TableReader};

/// Most problems a report keeps (later ones are only counted).
const MAX_PROBLEMS: usize = 1000;

/// What [`TableReader::verify`] found.
#[derive(Debug, Default)]
pub struct VerifyReport {
    /// Problems, in file order (at most 1000 kept).
    pub problems: Vec<Error>,
    /// Problems found in all (may exceed `problems.len()`).
    pub problem_count: u64,
    /// Data blocks checked.
    pub data_blocks: u64,
    /// Entries checked.
    pub entries: u64,
    /// Whether keys were checked against a filter.
    pub filter_checked: bool,
}

impl VerifyReport {
    /// True when nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problem_count == 0
    }

    fn push(&mut self, e: Error) {
        self.problem_count += 1;
        if self.problems.len() < MAX_PROBLEMS {
            self.problems.push(e);
        }
    }
}

impl<R: RandomAccess> TableReader<R> {
    /// Checks the whole table, reading every block from the file with its checksum verified
    /// (the cache is bypassed). Never fails: problems are collected in the report.
    pub fn verify(&self) -> VerifyReport {
        let mut report = VerifyReport::default();
        let footer = self.footer();
        for (handle, kind) in [
            (footer.metaindex, BlockKind::Metaindex),
            (footer.index, BlockKind::Index),
        ] {
            if let Err(e) = self.read_block_contents(handle, kind, true) {
                report.push(e);
            }
        }
        if let FilterStatus::Unreadable(e) = self.filter_status() {
            report.push(Error::BadBlockContents {
                kind: e.block().map_or(BlockKind::Filter, |(k, _)| k),
                handle: e.block().map_or_else(Default::default, |(_, h)| h),
                reason: "metaindex or filter block unreadable",
            });
        }
        if let Some(h) = self.filter_handle() {
            if let Err(e) = self.read_block_contents(h, BlockKind::Filter, true) {
                report.push(e);
            }
        }
        let handles = match self.data_block_handles() {
            Ok(h) => h,
            Err(e) => {
                report.push(e);
                return report;
            }
        };
        report.filter_checked = self.filter().is_some();
        let cmp = self.comparator();
        let mut prev_key: Option<Vec<u8>> = None;
        let mut prev_sep: Option<&[u8]> = None;
        for (sep, handle) in &handles {
            report.data_blocks += 1;
            if let Some(ps) = prev_sep {
                if cmp.compare(ps, sep) != Ordering::Less {
                    report.push(Error::KeyOrder {
                        kind: BlockKind::Index,
                        handle: footer.index,
                        previous: ps.to_vec(),
                        key: sep.clone(),
                    });
                }
            }
            prev_sep = Some(sep);
            let block = match self
                .read_block_contents(*handle, BlockKind::Data, true)
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
            if let Some(e) = it.take_error() {
                report.push(e);
            }
        }
        report
    }
}
