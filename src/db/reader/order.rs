//! Which order a database is read in, and (salvage without a usable MANIFEST) what the
//! tables hold: every table walked once for its highest sequence and for the orders its keys
//! are in, checked as `sst verify` checks a table's order.
//!
//! ```text
//! MANIFEST names C          -> C (the order given must be C)
//! no MANIFEST names one     -> the order given, else (repair view) the order of the keys:
//!                              bytewise and/or idb_cmp1 (keys well-formed for Chrome);
//!                              both fit: idb_cmp1 when Chrome's global metadata is there;
//!                              neither: refused, with where each breaks
//! order check, per table:   separators ascend; in each data block that reads, keys ascend
//!                           and lie in (previous separator, own separator]; a table found
//!                           by block checksums: its keys ascend in file order
//! ```

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use crate::db::damage::DamageLog;
use crate::db::format::BYTEWISE_COMPARATOR_NAME;
use crate::db::salvage_table::{FoundTable, SkipIter};
use crate::error::{Error, Result};
use crate::idb::{is_well_formed, key_prefix, IdbComparator, PrefixKind};
use crate::internal_key::{self, InternalKeyComparator};
use crate::options::{KeyFormat, ReadOptions, ReaderOptions};
use crate::table::TableReader;
use crate::util::comparator::{BytewiseComparator, Comparator};

use super::{builtin_comparator, in_file};

/// Where the order a database is read in came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderSource {
    /// The MANIFEST names it.
    Manifest,
    /// The caller gave it ([`super::DbOptions::order`]) and no MANIFEST names one.
    Given,
    /// No MANIFEST: the tables' keys are in this order (checked, every key).
    Keys,
    /// Nothing names one and there are no keys to tell: LevelDB's default, bytewise.
    Default,
}

impl OrderSource {
    /// As `sst db info` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderSource::Manifest => "manifest",
            OrderSource::Given => "given",
            OrderSource::Keys => "keys",
            OrderSource::Default => "default",
        }
    }
}

/// One candidate order and where the keys break it.
struct Check {
    cmp: Arc<dyn Comparator>,
    icmp: InternalKeyComparator,
    /// Keys must be well-formed IndexedDB keys (idb_cmp1).
    well_formed: bool,
    broken: Option<String>,
}

impl Check {
    fn new(cmp: Arc<dyn Comparator>, well_formed: bool) -> Check {
        Check {
            icmp: InternalKeyComparator::new(cmp.clone()),
            cmp,
            well_formed,
            broken: None,
        }
    }

    fn fail(&mut self, why: impl FnOnce() -> String) {
        if self.broken.is_none() {
            self.broken = Some(why());
        }
    }
}

/// What walking every table (and the logs' keys) found.
pub(super) struct Walk {
    /// The highest sequence of any key.
    pub max_sequence: u64,
    /// Tables that do not open, with the entries found by block checksums (unsorted).
    pub found: BTreeMap<u64, FoundTable>,
    checks: Vec<Check>,
    keys: u64,
    global_meta: bool,
}

/// Walks every table of `tables` (number -> file name) and the keys of the logs, checking
/// `given` (or, without one, bytewise and idb_cmp1). Damage met is recorded and skipped.
///
/// # Errors
/// I/O errors (naming the file).
pub(super) fn walk<'k>(
    dir: &Path,
    tables: &BTreeMap<u64, String>,
    log_keys: impl Iterator<Item = &'k [u8]>,
    given: Option<Arc<dyn Comparator>>,
    verify_checksums: bool,
    damage: &DamageLog,
) -> Result<Walk> {
    let checks = match given {
        Some(c) => {
            // Chrome's order is Chrome's only on the keys its decoders accept.
            let idb = c.name() == crate::idb::format::IDB_COMPARATOR_NAME;
            vec![Check::new(c, idb)]
        }
        None => vec![
            Check::new(Arc::new(BytewiseComparator), false),
            Check::new(Arc::new(IdbComparator), true),
        ],
    };
    let mut w = Walk {
        max_sequence: 0,
        found: BTreeMap::new(),
        checks,
        keys: 0,
        global_meta: false,
    };
    for k in log_keys {
        w.user_key(k);
    }
    let read = ReadOptions::default().fill_cache(false);
    for (&number, name) in tables {
        let file = File::open(dir.join(name)).map_err(|e| in_file(name, e.into()))?;
        let opts = ReaderOptions::default()
            .keys(KeyFormat::Internal)
            .verify_checksums(verify_checksums);
        let profile = opts.compression_profile;
        match TableReader::open(file, opts) {
            Ok(t) => w.table(&t, name, read, damage)?,
            Err(e) if e.is_corruption() => {
                let bytes = std::fs::read(dir.join(name)).map_err(|e| in_file(name, e.into()))?;
                let found = FoundTable::salvage_unsorted(&bytes, name, &e, profile, damage);
                let mut prev: Option<&[u8]> = None;
                for e in found.entries() {
                    w.entry(prev, &e.key, None, || {
                        format!("{name}: the block found at offset {}", e.pos.block.offset)
                    });
                    prev = Some(&e.key);
                }
                w.found.insert(number, found);
            }
            Err(e) => return Err(in_file(name, e)),
        }
    }
    Ok(w)
}

impl Walk {
    fn user_key(&mut self, k: &[u8]) {
        self.keys += 1;
        self.global_meta |= key_prefix(k).is_some_and(|p| p.kind() == PrefixKind::GlobalMeta);
        for c in &mut self.checks {
            if c.well_formed && !is_well_formed(k) {
                c.fail(|| format!("key {} is not an IndexedDB key", esc(k)));
            }
        }
    }

    /// One key (`prev` the one before it in the same table), with the separators of its
    /// data block and the one before (`seps`), when the table has an index.
    fn entry(
        &mut self,
        prev: Option<&[u8]>,
        key: &[u8],
        seps: Option<(&[u8], Option<&[u8]>)>,
        at: impl Fn() -> String,
    ) {
        let Some(p) = internal_key::parse_internal_key(key) else {
            return;
        };
        self.max_sequence = self.max_sequence.max(p.sequence);
        self.user_key(p.user_key);
        for c in &mut self.checks {
            if c.broken.is_some() {
                continue;
            }
            let lt = |a: &[u8], b: &[u8]| c.icmp.compare(a, b) == Ordering::Less;
            let why = if prev.is_some_and(|q| !lt(q, key)) {
                Some("keys do not ascend")
            } else if seps.is_some_and(|(own, _)| lt(own, key)) {
                Some("a key is past its block's separator")
            } else if seps.is_some_and(|(_, before)| before.is_some_and(|b| !lt(b, key))) {
                Some("a key is not past the previous block's separator")
            } else {
                None
            };
            if let Some(why) = why {
                let name = c.cmp.name().to_string();
                c.fail(|| format!("{}: {why} in {name} order", at()));
            }
        }
    }

    fn table(
        &mut self,
        t: &TableReader<File>,
        name: &str,
        read: ReadOptions,
        damage: &DamageLog,
    ) -> Result<()> {
        // A damaged index: no separators to check (the walk below meets the same damage
        // and records it).
        let seps = t.data_block_handles().unwrap_or_default();
        for c in &mut self.checks {
            if let Some(i) = seps
                .windows(2)
                .position(|w| c.icmp.compare(&w[0].0, &w[1].0) != Ordering::Less)
            {
                let name_c = c.cmp.name().to_string();
                c.fail(|| {
                    format!(
                        "{name}: index entries {i} and {} do not ascend in {name_c} order",
                        i + 1
                    )
                });
            }
        }
        let by_offset: BTreeMap<u64, usize> = seps
            .iter()
            .enumerate()
            .map(|(i, (_, h))| (h.offset, i))
            .collect();
        let mut it = SkipIter::new(t, name, Some(damage), read);
        it.seek_to_first();
        let mut prev: Vec<u8> = Vec::new();
        let mut first = true;
        while it.valid() {
            let pos = it.position();
            let s = pos.and_then(|p| by_offset.get(&p.block.offset)).map(|&i| {
                (
                    seps[i].0.as_slice(),
                    i.checked_sub(1).map(|j| seps[j].0.as_slice()),
                )
            });
            let block = pos.map_or(0, |p| p.block.offset);
            self.entry((!first).then_some(&prev[..]), it.key(), s, || {
                format!("{name}: the data block at offset {block}")
            });
            prev.clear();
            prev.extend_from_slice(it.key());
            first = false;
            it.next();
        }
        Ok(())
    }

    /// The order to read in: `given` (checked), else the one the keys are in.
    ///
    /// # Errors
    /// The keys break the order given, or fit no order this crate has
    /// ([`Error::UnsettledOrder`], saying where each order breaks).
    pub(super) fn choose(
        &self,
        given: Option<OrderSource>,
    ) -> Result<(Arc<dyn Comparator>, OrderSource)> {
        if let Some(source) = given {
            let c = &self.checks[0];
            let whose = match source {
                OrderSource::Manifest => "the damaged MANIFEST names",
                _ => "given",
            };
            return match &c.broken {
                None => Ok((c.cmp.clone(), source)),
                Some(why) => Err(Error::UnsettledOrder {
                    reason: format!(
                        "the keys are not in the {} order {whose}: {why}",
                        c.cmp.name()
                    ),
                }),
            };
        }
        let fits: Vec<&Check> = self.checks.iter().filter(|c| c.broken.is_none()).collect();
        let pick = |name: &str| {
            builtin_comparator(name).ok_or(Error::UnknownComparator { name: name.into() })
        };
        match fits.as_slice() {
            [] => Err(Error::UnsettledOrder {
                reason: format!(
                    "no MANIFEST names the order, and the keys fit no order this reader has: {}",
                    self.checks
                        .iter()
                        .filter_map(|c| c.broken.as_deref())
                        .collect::<Vec<_>>()
                        .join("; ")
                ),
            }),
            _ if self.keys == 0 => Ok((pick(BYTEWISE_COMPARATOR_NAME)?, OrderSource::Default)),
            [one] => Ok((one.cmp.clone(), OrderSource::Keys)),
            // Both fit (a few keys): Chrome's global metadata says IndexedDB.
            [..] if self.global_meta => Ok((
                pick(crate::idb::format::IDB_COMPARATOR_NAME)?,
                OrderSource::Keys,
            )),
            [..] => Ok((pick(BYTEWISE_COMPARATOR_NAME)?, OrderSource::Keys)),
        }
    }
}

/// `k` with bytes outside printable ASCII escaped.
fn esc(k: &[u8]) -> String {
    k.iter()
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect()
}

/// The comparator named `name` (by a MANIFEST): the given order's, a supplied one, or a
/// built-in one.
pub(super) fn named(
    name: &str,
    given: Option<&Arc<dyn Comparator>>,
    supplied: &[Arc<dyn Comparator>],
) -> Result<Arc<dyn Comparator>> {
    given
        .filter(|c| c.name() == name)
        .or_else(|| supplied.iter().find(|c| c.name() == name))
        .cloned()
        .or_else(|| builtin_comparator(name))
        .ok_or(Error::UnknownComparator { name: name.into() })
}
