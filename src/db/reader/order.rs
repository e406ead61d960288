//! Which order a database is read in, and (salvage without a usable MANIFEST) what the
//! tables hold: every table walked once for its highest sequence and for the orders its keys
//! are in, checked as `sst verify` checks a table's order.
//!
//! ```text
//! MANIFEST names C          -> C (the order given must be C), if bytewise or supplied
//!                              (`DbOptions::comparators`); any other name is refused
//! no MANIFEST names one     -> the order given, else (repair view) the order of the keys:
//!                              bytewise and each supplied order (keys well-formed for it,
//!                              when it says which keys are); several fit: the first
//!                              supplied one whose marker key is there, else bytewise;
//!                              none: refused, with where each breaks
//! order check, per table:   separators ascend; in each data block that reads, keys ascend
//!                           and lie in (previous separator, own separator]; a table found
//!                           by block checksums: its keys ascend in file order
//! ```

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use crate::cursor::Cursor;
use crate::db::files::BYTEWISE_COMPARATOR_NAME;
use crate::db::salvage::DamageLog;
use crate::db::salvage::{EntryPosition, FoundTable, SkipIter};
use crate::error::{Error, Result};
use crate::internal_key::{self, InternalKeyComparator};
use crate::options::{KeyFormat, OpenOptions, ReadOptions};
use crate::table::TableReader;
use crate::util::comparator::{BytewiseComparator, Comparator};

use super::in_file;

/// A test of one user key (for [`KnownOrder`]).
pub type KeyTest = Arc<dyn Fn(&[u8]) -> bool + Send + Sync>;

/// An order a database may be read in besides the built-in bytewise one (an application's
/// comparator): used when a MANIFEST records its [`name`](Comparator::name), and, where no
/// MANIFEST names an order (salvage of a directory that lost it), one of the candidates
/// every key is checked against.
#[derive(Clone)]
pub struct KnownOrder {
    /// The comparator.
    pub comparator: Arc<dyn Comparator>,
    /// The keys the order is defined on (`None`: every key). When the keys choose the
    /// order, one this test refuses rules the order out.
    pub well_formed: Option<KeyTest>,
    /// Keys only this order's writers write. When the keys fit several orders, the first
    /// supplied one with such a key among them is chosen (else bytewise).
    pub marker: Option<KeyTest>,
}

impl KnownOrder {
    /// `comparator`, defined on every key, with no marker.
    pub fn new(comparator: Arc<dyn Comparator>) -> KnownOrder {
        KnownOrder {
            comparator,
            well_formed: None,
            marker: None,
        }
    }

    /// The same order, defined only on the keys `test` accepts.
    pub fn well_formed(mut self, test: impl Fn(&[u8]) -> bool + Send + Sync + 'static) -> Self {
        self.well_formed = Some(Arc::new(test));
        self
    }

    /// The same order, with `test` telling the keys only its writers write.
    pub fn marker(mut self, test: impl Fn(&[u8]) -> bool + Send + Sync + 'static) -> Self {
        self.marker = Some(Arc::new(test));
        self
    }
}

impl std::fmt::Debug for KnownOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownOrder")
            .field("comparator", &self.comparator.name())
            .field("well_formed", &self.well_formed.is_some())
            .field("marker", &self.marker.is_some())
            .finish()
    }
}

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
    /// The keys the order is defined on.
    well_formed: Option<KeyTest>,
    /// Keys that mark the data as this order's.
    marker: Option<KeyTest>,
    /// A marker key was seen.
    marked: bool,
    broken: Option<String>,
}

impl Check {
    fn new(o: &KnownOrder) -> Check {
        Check {
            icmp: InternalKeyComparator::new(o.comparator.clone()),
            cmp: o.comparator.clone(),
            well_formed: o.well_formed.clone(),
            marker: o.marker.clone(),
            marked: false,
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
}

/// Walks every table of `tables` (number -> file name) and the keys of the logs, checking
/// `given` (or, without one, bytewise and each of `supplied`). Damage met is recorded and
/// skipped.
///
/// # Errors
/// I/O errors (naming the file).
pub(super) fn walk<'k>(
    dir: &Path,
    tables: &BTreeMap<u64, String>,
    log_keys: impl Iterator<Item = &'k [u8]>,
    given: Option<Arc<dyn Comparator>>,
    supplied: &[KnownOrder],
    table: &OpenOptions,
    damage: &DamageLog,
) -> Result<Walk> {
    let checks = match given {
        // An order is its own only on the keys it is defined on.
        Some(c) => {
            let tests = supplied.iter().find(|o| o.comparator.name() == c.name());
            vec![Check::new(&KnownOrder {
                comparator: c.clone(),
                well_formed: tests.and_then(|o| o.well_formed.clone()),
                marker: tests.and_then(|o| o.marker.clone()),
            })]
        }
        None => std::iter::once(KnownOrder::new(Arc::new(BytewiseComparator)))
            .chain(supplied.iter().cloned())
            .map(|o| Check::new(&o))
            .collect(),
    };
    let mut w = Walk {
        max_sequence: 0,
        found: BTreeMap::new(),
        checks,
        keys: 0,
    };
    for k in log_keys {
        w.user_key(k);
    }
    let read = ReadOptions::default().fill_cache(false);
    for (&number, name) in tables {
        let file = File::open(dir.join(name)).map_err(|e| in_file(name, e.into()))?;
        let opts = table.clone().keys(KeyFormat::Internal).block_cache(None);
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
        for c in &mut self.checks {
            if !c.marked {
                c.marked = c.marker.as_ref().is_some_and(|m| m(k));
            }
            if c.well_formed.as_ref().is_some_and(|w| !w(k)) {
                let name = c.cmp.name().to_string();
                c.fail(|| format!("key {} is not a key of the {name} order", esc(k)));
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
        let bytewise = || -> Arc<dyn Comparator> { Arc::new(BytewiseComparator) };
        let is_bytewise = |c: &&Check| c.cmp.name() == BYTEWISE_COMPARATOR_NAME;
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
            _ if self.keys == 0 => Ok((bytewise(), OrderSource::Default)),
            [one] => Ok((one.cmp.clone(), OrderSource::Keys)),
            // Several fit (a few keys): a supplied order whose marker key is there, else
            // bytewise (the first check); without bytewise among them, no way to tell.
            several => match several.iter().find(|c| c.marked && !is_bytewise(c)) {
                Some(c) => Ok((c.cmp.clone(), OrderSource::Keys)),
                None if several.iter().any(is_bytewise) => Ok((bytewise(), OrderSource::Keys)),
                None => Err(Error::UnsettledOrder {
                    reason: format!(
                        "no MANIFEST names the order, and the keys fit several orders, none \
                         marked as theirs: {}",
                        several
                            .iter()
                            .map(|c| c.cmp.name().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }),
            },
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

/// The comparator named `name` (by a MANIFEST): the given order's, a supplied one, or the
/// built-in bytewise one; any other name is refused ([`Error::UnknownComparator`]).
pub(super) fn named(
    name: &str,
    given: Option<&Arc<dyn Comparator>>,
    supplied: &[KnownOrder],
) -> Result<Arc<dyn Comparator>> {
    given
        .filter(|c| c.name() == name)
        .or_else(|| {
            supplied
                .iter()
                .map(|o| &o.comparator)
                .find(|c| c.name() == name)
        })
        .cloned()
        .or_else(|| {
            (name == BYTEWISE_COMPARATOR_NAME).then(|| Arc::new(BytewiseComparator) as Arc<_>)
        })
        .ok_or(Error::UnknownComparator { name: name.into() })
}
