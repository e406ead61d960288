//! One attempt at opening a database (`live.rs` checks it): the directory listed and its
//! files held (`listing.rs`), CURRENT and its MANIFEST (or, under salvage without a usable
//! one, every table and log: LevelDB's repair view), the order, the version's tables held,
//! the live logs into the memtable (`logs.rs`).
//!
//! ```text
//! listing (tables and logs held) -> CURRENT -> MANIFEST: levels, comparator, log number,
//!            last sequence
//!            (unusable + salvage: every table at level 0, every log; the order and the last
//!             sequence from the keys themselves, order.rs)
//! logs (live ones, oldest first) -> WriteBatches -> memtable (sorted in the order)
//! ```

use std::io::ErrorKind;

use super::folder;
use super::listing::Listing;
use super::live::{self, Observed, Step};
use super::logs::{read_logs, torn_note};
use super::order::{self, OrderSource};
use super::*;

impl Db {
    /// One attempt at opening (`live.rs` checks what `seen` records and tries again when
    /// the owner changed the directory meanwhile).
    pub(super) fn open_with(
        dir: &Path,
        opts: DbOptions,
        mmap: bool,
        seen: &mut Observed,
    ) -> Result<Db> {
        let dir = dir.to_path_buf();
        if dir.is_file() {
            return Err(Error::NotADatabase {
                reason: "it is a file, not a directory".into(),
            });
        }
        // Listed, its tables and logs held open, before the MANIFEST is read: what a flush
        // or a compaction deletes meanwhile is still read (listing.rs).
        let mut listing = Listing::take(&dir)?;
        live::step(Step::Listed);
        // No CURRENT, table, log or MANIFEST: not a database at all (folder.rs says what).
        if !listing.files.iter().any(|(_, k)| {
            matches!(
                k,
                FileKind::Current | FileKind::Table(_) | FileKind::Log(_) | FileKind::Manifest(_)
            )
        }) {
            return Err(Error::NotADatabase {
                reason: folder::describe(&dir, &listing.other),
            });
        }
        let mut notes = Vec::new();
        let damage = DamageLog::default();
        let salvage = opts.salvage;

        // CURRENT and the MANIFEST it names.
        let manifest = files::read_current(&dir)
            .map_err(|e| match e {
                Error::Io { source, .. } if source.kind() == ErrorKind::NotFound => in_file(
                    "CURRENT",
                    Error::BadCurrent {
                        reason: "missing, though the folder holds LevelDB's tables, logs or \
                                 MANIFESTs (LevelDB would not open it; salvage reads them)"
                            .into(),
                    },
                ),
                e => in_file("CURRENT", e),
            })
            .and_then(|(name, _)| {
                seen.current(&name);
                let bytes = std::fs::read(dir.join(&name)).map_err(|e| {
                    let now = std::fs::metadata(dir.join(&name)).ok();
                    seen.manifest_len(now.map(|m| m.len()));
                    if e.kind() == ErrorKind::NotFound {
                        seen.vanished(&name);
                    }
                    in_file(&name, e.into())
                })?;
                seen.manifest_len(Some(bytes.len() as u64));
                // Any damage fails the replay: a MANIFEST missing an edit would give a wrong set
                // of live tables; salvage then reads every table instead.
                let st = ManifestState::replay(&bytes, false).map_err(|e| in_file(&name, e))?;
                seen.manifest(&st);
                Ok((name, st))
            });
        let (manifest, mut state, repair_view) = match manifest {
            Ok((name, st)) => {
                for d in &st.damage {
                    notes.push(format!("{name}: {d} (skipped)"));
                }
                if let Some((offset, len)) = st.torn_tail {
                    notes.push(torn_note(&name, offset, len));
                }
                (Some(name), st, false)
            }
            Err(e) if salvage => {
                notes.push(format!(
                    "{e}; reading every table and log of the directory instead (as LevelDB's repair would)"
                ));
                if e.is_corruption() {
                    damage.record(Damage::new(
                        &manifest_file_of(&e),
                        e.offset().unwrap_or(0),
                        None,
                        &e,
                    ));
                }
                (None, ManifestState::default(), true)
            }
            Err(e) => return Err(e),
        };
        live::step(Step::ManifestRead);
        let manifest_torn_tail = state.torn_tail.filter(|_| !repair_view);

        // The comparator a MANIFEST names: the live one's, or (repair view) the newest
        // MANIFEST file's that still says it.
        let named = if repair_view {
            newest_manifest_comparator(&dir, &listing.files)
        } else {
            state
                .comparator
                .clone()
                .map(|c| (manifest.clone().unwrap_or_default(), c))
        };
        if let (Some(g), Some((file, name))) = (&opts.order, &named) {
            if g.name() != name {
                return Err(Error::UnsettledOrder {
                    reason: format!(
                        "the order given, {:?}, contradicts the MANIFEST ({file}), which names \
                         {name:?} (a database is read in its MANIFEST's order)",
                        g.name()
                    ),
                });
            }
        }

        // The live tables (every one listed, in the repair view), each file held open from
        // now on (tables.rs); one not there is missing, or deleted since (`live.rs`).
        let numbers: Vec<u64> = if repair_view {
            listing
                .files
                .iter()
                .filter_map(|(_, k)| match k {
                    FileKind::Table(n) => Some(*n),
                    _ => None,
                })
                .collect()
        } else {
            state.levels.iter().flatten().map(|f| f.number).collect()
        };
        let (tables, gone) = Tables::hold(&dir, &numbers, &mut listing);
        for (_, name) in &gone {
            seen.vanished(name);
        }
        live::step(Step::TablesHeld);
        // Listed again: the logs new since (one the MANIFEST names among them), held too.
        listing.refresh(&dir, false)?;
        live::step(Step::Relisted);
        // Tables on disk by number (with their actual name, .ldb or .sst).
        let on_disk: BTreeMap<u64, String> = tables
            .0
            .iter()
            .map(|e| (e.number, e.name.clone()))
            .collect();

        // The live logs, oldest first (every log in the repair view).
        let (logs, batches) = read_logs(
            &dir,
            &mut listing,
            &state,
            repair_view,
            &mut notes,
            &damage,
            salvage,
            seen,
        )?;

        // The order.
        let mut found = BTreeMap::new();
        let mut table_max = 0;
        let (user, order_source) = if repair_view {
            let given = match &named {
                Some((_, name)) => Some((
                    order::named(name, opts.order.as_ref(), &opts.comparators)?,
                    OrderSource::Manifest,
                )),
                None => opts.order.clone().map(|c| (c, OrderSource::Given)),
            };
            let log_keys: Vec<&[u8]> = batches
                .iter()
                .flat_map(|(_, data)| batch_keys(data))
                .collect();
            let before = damage.len();
            let w = order::walk(
                &dir,
                &on_disk,
                log_keys.into_iter(),
                given.as_ref().map(|(c, _)| c.clone()),
                &opts.comparators,
                &opts.table,
                &damage,
            )?;
            for d in damage.all().iter().skip(before) {
                notes.push(format!("{d}"));
            }
            let chosen = w.choose(given.map(|(_, s)| s))?;
            table_max = w.max_sequence;
            found = w.found;
            chosen
        } else {
            match &named {
                Some((_, name)) => (
                    order::named(name, opts.order.as_ref(), &opts.comparators)?,
                    OrderSource::Manifest,
                ),
                None => match &opts.order {
                    Some(c) => (c.clone(), OrderSource::Given),
                    None => (
                        order::named(BYTEWISE_COMPARATOR_NAME, None, &opts.comparators)?,
                        OrderSource::Default,
                    ),
                },
            }
        };
        let icmp = InternalKeyComparator::new(user.clone());

        if repair_view {
            // Every table, as level 0 (sequence numbers order the versions).
            state.levels = vec![Vec::new(); NUM_LEVELS];
            for (&number, name) in &on_disk {
                let size = std::fs::metadata(dir.join(name))
                    .map(|m| m.len())
                    .unwrap_or(0);
                state.levels[0].push(FileMeta {
                    number,
                    size,
                    smallest: Vec::new(),
                    largest: Vec::new(),
                });
            }
        } else {
            for (level, files) in state.levels.iter_mut().enumerate() {
                let mut kept = Vec::with_capacity(files.len());
                for f in files.drain(..) {
                    if tables.contains(f.number) {
                        kept.push(f);
                        continue;
                    }
                    let e = Error::MissingFile {
                        file: files::table_file_name(f.number),
                    };
                    if !salvage {
                        return Err(e);
                    }
                    notes.push(format!("{e} (level {level}; skipped)"));
                    damage.record(Damage::new(&files::table_file_name(f.number), 0, None, &e));
                }
                *files = kept;
            }
        }
        // Level 0 newest first; other levels by key.
        state.levels[0].sort_by_key(|f| std::cmp::Reverse(f.number));
        for l in state.levels.iter_mut().skip(1) {
            l.sort_by(|a, b| icmp.compare(&a.smallest, &b.smallest));
        }

        let records = batches.iter().flat_map(|(origin, data)| {
            // Every batch kept here decoded whole when its log was read.
            WriteBatchReader::new(data)
                .map(|b| {
                    b.records()
                        .filter_map(Result::ok)
                        .collect::<Vec<BatchRecord<'_>>>()
                })
                .unwrap_or_default()
                .into_iter()
                .map(move |r| {
                    let o = Origin {
                        offset_in_batch: r.offset,
                        ..*origin
                    };
                    (r, o)
                })
        });
        let mem = MemTable::new(icmp.clone(), records);
        let log_max = mem
            .entries()
            .iter()
            .filter_map(|(k, _, _)| internal_key::parse_internal_key(k).map(|p| p.sequence))
            .max()
            .unwrap_or(0);
        let last_sequence = state.last_sequence.max(log_max).max(table_max);

        let cache = opts
            .table
            .block_cache
            .clone()
            .unwrap_or_else(|| Arc::new(BlockCache::new(8 << 20)));
        let reader_opts = opts
            .table
            .clone()
            .keys(KeyFormat::Internal)
            .block_cache(Some(cache))
            .comparator(user);
        for (number, mut f) in found {
            f.sort(&icmp);
            tables.set_found(number, f);
        }
        // The built-in bytewise order (not a user-supplied comparator of that name).
        let bytewise = reader_opts.comparator.name() == BYTEWISE_COMPARATOR_NAME
            && !opts
                .comparators
                .iter()
                .map(|o| &o.comparator)
                .chain(opts.order.iter())
                .any(|c| c.name() == BYTEWISE_COMPARATOR_NAME);
        let search = state
            .levels
            .iter()
            .enumerate()
            .map(|(level, files)| {
                (level > 0 && bytewise && !repair_view)
                    .then(|| LevelSearch::build(files, |n| tables.slot(n)))
            })
            .collect();
        Ok(Db {
            dir,
            manifest,
            manifest_torn_tail,
            state,
            icmp,
            order_source,
            mem,
            logs,
            tables,
            search,
            other_files: std::mem::take(&mut listing.other),
            last_sequence,
            notes,
            damage_at_open: damage.len(),
            damage,
            salvage,
            reader_opts,
            read: ReadOptions::default(),
            repair_view,
            mmap,
            attempts: 1,
        })
    }
}

/// The file an error opening the MANIFEST is about (`CURRENT`, or the MANIFEST's name).
fn manifest_file_of(e: &Error) -> String {
    match e {
        Error::InFile { file, .. } => file.clone(),
        _ => "CURRENT".into(),
    }
}

/// The comparator the newest MANIFEST file of the directory names, read as far as it goes
/// (its first record names it): (file, comparator).
fn newest_manifest_comparator(
    dir: &Path,
    files: &[(String, FileKind)],
) -> Option<(String, String)> {
    let mut manifests: Vec<(u64, &String)> = files
        .iter()
        .filter_map(|(n, k)| match k {
            FileKind::Manifest(num) => Some((*num, n)),
            _ => None,
        })
        .collect();
    manifests.sort();
    manifests.into_iter().rev().find_map(|(_, name)| {
        let bytes = std::fs::read(dir.join(name)).ok()?;
        let st = ManifestState::replay(&bytes, true).ok()?;
        st.comparator.map(|c| (name.clone(), c))
    })
}

/// The user keys of a batch that decodes.
fn batch_keys(data: &[u8]) -> Vec<&[u8]> {
    WriteBatchReader::new(data)
        .map(|b| b.records().filter_map(Result::ok).map(|r| r.key).collect())
        .unwrap_or_default()
}
