//! `sst bloom check` on Redis in three overlapping steps: a thread reads and splits stdin,
//! this one runs the batches' Redis round trips, a thread formats and writes the rows of the
//! batches already answered. A batch's keys are copied into one of a few recycled buffers
//! (no allocation per key) that goes from step to step over channels, with the answers; the
//! rows come out in input order, byte for byte as `io::push_row` writes them on one thread.

use std::sync::mpsc;
use std::thread;

use super::io::{self, for_each_batch, push_rows, write_rows};
use crate::common::{Failure, LinesFormat};
use crate::output::RowsOut;

/// Buffers in flight: one being filled with keys, one being checked, one being written and
/// one queued before each of the last two.
const BUFFERS: usize = 5;

/// One batch: the keys back to back, where each one ends, and (once checked) the answers.
#[derive(Default)]
struct Checked {
    keys: Vec<u8>,
    ends: Vec<usize>,
    answers: Vec<bool>,
}

/// Reads the keys on stdin (hex-decoded with `hex`) in batches, answers each batch with the
/// checker `open` returns (one answer per key, into the vector given) and writes one row per
/// key in `format` (`field` names the answer, as in [`io::push_row`]). Returns whether every
/// answer was yes.
///
/// Three threads overlap the work: one reads and splits stdin, from before `open` runs (so
/// the first batch is ready when the filter is), this one opens the filter and runs the
/// checks (the Redis round trips), one formats and writes the rows of the batches already
/// answered. Errors as on one thread: a failing `open` is returned before anything is
/// written; the rows of the batches answered before a failing read or check are written and
/// the output is finished before the failure is returned; a write error (a broken pipe too)
/// stops the run and is returned, ahead of any other.
pub fn check_rows<C>(
    hex: bool,
    format: LinesFormat,
    field: &'static str,
    open: impl FnOnce() -> Result<C, Failure>,
) -> Result<bool, Failure>
where
    C: FnMut(&[&[u8]], &mut Vec<bool>) -> Result<(), Failure>,
{
    let json = matches!(format, LinesFormat::Jsonl | LinesFormat::Json);
    let (to_checker, read) = mpsc::sync_channel::<Checked>(1);
    let (to_writer, answered) = mpsc::sync_channel::<Checked>(1);
    let (give_back, returned) = mpsc::channel::<Checked>();
    // Not scoped: after a failure the reader is left behind (blocked on stdin, maybe) and the
    // process ends, as it does on one thread.
    let reader = thread::spawn(move || {
        let mut made = 0;
        for_each_batch(hex, |batch| {
            let mut c = match returned.try_recv() {
                Ok(c) => c,
                Err(_) if made < BUFFERS => {
                    made += 1;
                    Checked::default()
                }
                Err(_) => returned.recv().map_err(|_| stopped())?,
            };
            c.keys.clear();
            c.ends.clear();
            for key in batch {
                c.keys.extend_from_slice(key);
                c.ends.push(c.keys.len());
            }
            to_checker.send(c).map_err(|_| stopped())
        })
    });
    let mut check = open()?;
    let writer = thread::spawn(move || {
        let mut out = RowsOut::new(io::out(), format);
        let mut rows = Vec::with_capacity(1 << 20);
        let r = answered.iter().try_for_each(|c| {
            push_rows(&mut rows, &c.keys, &c.ends, &c.answers, (hex, json), field);
            write_rows(&mut out, &mut rows)?;
            // The reader is gone after the last batch or a failure: the buffer is dropped.
            let _ = give_back.send(c);
            Ok::<(), Failure>(())
        });
        out.finish()?;
        r
    });
    let mut all = true;
    let checked = read.iter().try_for_each(|mut c| {
        // One vector per batch (of up to `io::BATCH` keys), none per key.
        let mut keys: Vec<&[u8]> = Vec::with_capacity(c.ends.len());
        let mut at = 0;
        for &end in &c.ends {
            keys.push(&c.keys[at..end]);
            at = end;
        }
        check(&keys, &mut c.answers)?;
        drop(keys);
        all &= c.answers.iter().all(|&yes| yes);
        to_writer.send(c).map_err(|_| stopped())
    });
    drop(read);
    // The writer writes what is queued, finishes the output and ends.
    drop(to_writer);
    join(writer)?;
    checked?;
    // The reader closed its channel: it has ended.
    join(reader)?;
    Ok(all)
}

/// The result of a thread, its panic resumed here.
fn join<T>(h: thread::JoinHandle<T>) -> T {
    h.join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Stands for the error of the thread that stopped first, which is returned instead.
fn stopped() -> Failure {
    Failure::error("sst bloom check: a worker thread stopped")
}
