//! Reading a database's live logs while opening it (every log in the repair view), oldest
//! first, from the files the listing holds: their whole batches for the memtable, what each
//! held, the sequences they span (for `live.rs`), damage and torn tails.

use std::io::{ErrorKind, Read};

use super::listing::Listing;
use super::live::Observed;
use super::*;

/// The batches of the replayed logs, each with where it came from.
pub(super) type Batches = Vec<(Origin, Vec<u8>)>;

/// The note for a record cut off by the end of `file`.
pub(super) fn torn_note(file: &str, offset: u64, len: u64) -> String {
    format!(
        "{file}: the last record at offset {offset} ({len} bytes) is incomplete (a write in \
         progress, or a cut file); ignored, as LevelDB does"
    )
}

/// Reads the live logs (every log in the repair view), oldest first: what each held, and
/// its whole batches. Damage is an error, or (salvage) a note and a skip.
#[allow(clippy::too_many_arguments)]
pub(super) fn read_logs(
    dir: &Path,
    listing: &mut Listing,
    state: &ManifestState,
    repair_view: bool,
    notes: &mut Vec<String>,
    damage: &DamageLog,
    salvage: bool,
    seen: &mut Observed,
) -> Result<(Vec<LogInfo>, Batches)> {
    let mut logs = Vec::new();
    let mut batches: Batches = Vec::new();
    let names: Vec<(String, u64)> = listing
        .files
        .iter()
        .filter_map(|(name, kind)| match *kind {
            FileKind::Log(number) => Some((name.clone(), number)),
            _ => None,
        })
        .collect();
    for (name, number) in &names {
        let (name, number) = (name.as_str(), *number);
        if !repair_view && !state.log_is_live(number) {
            continue;
        }
        let mut bytes = Vec::new();
        match listing.file(dir, name) {
            Ok(Some(f)) => (&*f).read_to_end(&mut bytes).map(|_| ()),
            Ok(None) => {
                seen.vanished(name);
                Err(std::io::Error::from(ErrorKind::NotFound))
            }
            Err(e) => Err(e),
        }
        .map_err(|e| in_file(name, e.into()))?;
        let mut sequences: Option<(u64, u64)> = None;
        let mut info = LogInfo {
            number,
            batches: 0,
            records: 0,
            torn_tail: None,
        };
        for item in LogReader::new(&bytes) {
            match item {
                LogItem::Record { offset, data } => {
                    let checked = WriteBatchReader::new(&data).and_then(|b| {
                        let end = b.sequence().saturating_add(u64::from(b.count()));
                        let first = sequences.map_or(b.sequence(), |(first, _)| first);
                        b.collect().map(|r| (r.len() as u64, (first, end)))
                    });
                    match checked {
                        Ok((n, seqs)) => {
                            sequences = Some(seqs);
                            info.batches += 1;
                            info.records += n;
                            batches.push((
                                Origin {
                                    log: number,
                                    offset,
                                    offset_in_batch: 0,
                                },
                                data.into_owned(),
                            ));
                        }
                        Err(e) => {
                            let e = in_file(name, batch_at(e, offset));
                            if !salvage {
                                return Err(e);
                            }
                            notes.push(format!("{e} (batch skipped)"));
                            damage.record(Damage::new(name, offset, None, &e));
                        }
                    }
                }
                LogItem::Damage(e) => {
                    let e = in_file(name, e);
                    if !salvage {
                        return Err(e);
                    }
                    notes.push(format!("{e} (skipped)"));
                    let len = match &e {
                        Error::InFile { source, .. } => match **source {
                            Error::BadLogRecord { dropped, .. } => Some(dropped),
                            _ => None,
                        },
                        _ => None,
                    };
                    damage.record(Damage::new(name, e.offset().unwrap_or(0), len, &e));
                }
                LogItem::TornTail { offset, len } => {
                    info.torn_tail = Some((offset, len));
                    notes.push(torn_note(name, offset, len));
                }
            }
        }
        seen.log(number, sequences);
        logs.push(info);
    }
    Ok((logs, batches))
}
