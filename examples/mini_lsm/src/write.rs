//! The write path with group commit (LevelDB's `DBImpl::Write` and `BuildBatchGroup`):
//! writers queue; the first becomes the leader, makes room (`MakeRoomForWrite`), gathers
//! the batches queued behind it into one log record, and writes the record and the memtable
//! with the engine's mutex released, so readers, the flush and the next writers go on.
//!
//! ```text
//! writer ─► queue empty, no leader? ─ yes ─► lead with its own batch
//!                                  └ no ──► queue (a copy of its batch); wait until a
//!                                          leader wrote it (its result filed under its
//!                                          ticket) or it is first in line (then it leads)
//! leader: make room ─► group = its batch + queued batches (up to 1 MiB; a synced one never
//!         joins an unsynced group) ─► sequence numbers ─► unlock ─► log record (one
//!         write(), fdatasync when synced) ─► memtable ─► lock ─► last sequence published,
//!         results filed, next in line wakes
//! ```

use std::sync::{Arc, MutexGuard};
use std::time::Duration;

use leveldb_table::db::files::{WriteBatch, WriteBatchReader};

use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::state::{Inner, LogFile, Queued, State};

/// A group grows to at most this many bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// What a writer asks for.
pub enum Request<'a> {
    /// Write this batch (its sequence is set here), synced or not.
    Batch(&'a mut WriteBatch, bool),
    /// Switch to a new memtable and log now (the memtable is flushed in the background).
    SwitchMemtable,
}

/// Runs `req` through the queue: as the leader, or by a leader.
pub fn write(inner: &Inner, req: Request<'_>) -> Result<()> {
    let mut st = inner.lock();
    if st.leading || !st.queue.is_empty() {
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        let (batch, sync) = match &req {
            Request::Batch(b, sync) => (Some((**b).clone()), *sync),
            Request::SwitchMemtable => (None, false),
        };
        st.queue.push_back(Queued {
            ticket,
            batch,
            sync,
        });
        loop {
            if let Some(r) = st.done.remove(&ticket) {
                return r;
            }
            if !st.leading && st.queue.front().is_some_and(|q| q.ticket == ticket) {
                break;
            }
            st = inner.writers_cv.wait(st).unwrap_or_else(|p| p.into_inner());
        }
        // First in line with no leader: lead with the queued copy.
        let Some(mut q) = st.queue.pop_front() else {
            return Err(Error::InvalidArgument(
                "the write queue lost a writer".into(),
            ));
        };
        return match q.batch.as_mut() {
            Some(b) => lead(inner, st, Request::Batch(b, q.sync)),
            None => lead(inner, st, Request::SwitchMemtable),
        };
    }
    lead(inner, st, req)
}

/// Leads one group: `req` and the batches queued behind it.
fn lead<'a>(inner: &'a Inner, mut st: MutexGuard<'a, State>, req: Request<'_>) -> Result<()> {
    st.leading = true;
    let (mut st, result) = lead_group(inner, st, req);
    st.leading = false;
    // Writers wait only while queued or until they take their result: with none, no
    // wake-up (a system call) per write.
    let waiting = !st.queue.is_empty() || !st.done.is_empty();
    drop(st);
    if waiting {
        inner.writers_cv.notify_all();
    }
    result
}

fn lead_group<'a>(
    inner: &'a Inner,
    st: MutexGuard<'a, State>,
    req: Request<'_>,
) -> (MutexGuard<'a, State>, Result<()>) {
    let (batch, sync) = match req {
        Request::SwitchMemtable => return make_room(inner, st, true),
        Request::Batch(b, sync) => (b, sync),
    };
    let (mut st, room) = make_room(inner, st, false);
    if let Err(e) = room {
        return (st, Err(e));
    }
    // The group: queued batches that may join this one.
    let mut group: Option<WriteBatch> = None;
    let mut tickets = Vec::new();
    let limit = match batch.as_bytes().len() {
        n if n <= 128 << 10 => n + (128 << 10),
        _ => MAX_GROUP_BYTES,
    };
    let mut size = batch.as_bytes().len();
    while let Some(q) = st.queue.front() {
        let Some(b) = &q.batch else { break };
        if (q.sync && !sync) || size + b.as_bytes().len() > limit {
            break;
        }
        size += b.as_bytes().len();
        group.get_or_insert_with(|| batch.clone()).append(b);
        tickets.push(q.ticket);
        st.queue.pop_front();
    }
    let first = st.last_sequence + 1;
    let record: &mut WriteBatch = match group.as_mut() {
        Some(g) => g,
        None => batch,
    };
    record.set_sequence(first);
    let count = u64::from(record.count());
    let mem = st.mem.clone();
    // Unlocked: the log and the memtable are the leader's alone until it publishes.
    drop(st);
    let written = apply(inner, &mem, record, sync);
    let mut st = inner.lock();
    match &written {
        Err(e) if st.bg_error.is_none() => st.bg_error = Some(e.clone()),
        Err(_) => {}
        Ok(()) => st.last_sequence = first + count.saturating_sub(1),
    }
    for t in tickets {
        st.done.insert(t, written.clone());
    }
    (st, written)
}

/// Writes `record` to the log, then its records to `mem`.
fn apply(inner: &Inner, mem: &MemTable, record: &WriteBatch, sync: bool) -> Result<()> {
    let reader = WriteBatchReader::new(record.as_bytes())?;
    inner.log().add(record.as_bytes(), sync)?;
    for r in reader.records() {
        let r = r?;
        mem.add(r.sequence, r.kind, r.key, r.value);
    }
    Ok(())
}

/// LevelDB's `MakeRoomForWrite`: waits while the immutable memtable is being flushed or
/// level 0 is at its stop trigger, slows one write by 1 ms at its slowdown trigger, and
/// swaps a full memtable (or any, with `force`) for a new one with a new log.
fn make_room<'a>(
    inner: &'a Inner,
    mut st: MutexGuard<'a, State>,
    mut force: bool,
) -> (MutexGuard<'a, State>, Result<()>) {
    let mut allow_delay = !force;
    loop {
        if let Err(e) = st.check() {
            return (st, Err(e));
        }
        let l0 = st.version.levels[0].len();
        if allow_delay && l0 >= inner.opts.l0_slowdown_trigger {
            drop(st);
            std::thread::sleep(Duration::from_millis(1));
            allow_delay = false;
            st = inner.lock();
        } else if (!force && st.mem.approximate_bytes() <= inner.opts.write_buffer_size)
            || (force && st.mem.is_empty())
        {
            return (st, Ok(()));
        } else if st.imm.is_some() || l0 >= inner.opts.l0_stop_trigger {
            st = inner.wait(st);
        } else {
            let number = st.new_file_number();
            let log = match LogFile::create(&inner.dir, number) {
                Ok(l) => l,
                Err(e) => {
                    st.bg_error = Some(e.clone());
                    return (st, Err(e));
                }
            };
            *inner.log() = log;
            st.log_number = number;
            let fresh = MemTable::with_capacity(inner.opts.write_buffer_size);
            let full = std::mem::replace(&mut st.mem, Arc::new(fresh));
            st.imm = Some(full);
            force = false;
            inner.cv.notify_all();
        }
    }
}
