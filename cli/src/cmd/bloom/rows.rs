//! `sst bloom check` on Redis in three overlapping steps: a thread reads and splits stdin,
//! this one runs the batches' Redis round trips, a thread formats and writes the rows of the
//! batches already answered. A batch's lines are copied at once into one of a few recycled
//! buffers (no allocation or copy per key) that goes from step to step over channels, with
//! the answers; the rows come out in input order, byte for byte as `io::push_row` writes
//! them on one thread.

use std::sync::mpsc;
use std::thread;

use super::io::{self, for_each_lines, push_rows, write_rows, Lines};
use crate::exit::Failure;
use crate::render::output::{OutFormat, RowsOut};

/// Checkers, each with its own connections, taking the batches in turn.
pub const CHECKERS: usize = 2;
/// Buffers in flight: one being filled with keys, one being checked and one queued for each
/// checker, one being written.
const BUFFERS: usize = 2 + 2 * CHECKERS;

/// One batch: the bytes of its lines, where each key is in them, and (once checked) the
/// answers.
#[derive(Default)]
struct Checked {
    bytes: Vec<u8>,
    spans: Vec<(usize, usize)>,
    answers: Vec<bool>,
}

impl Checked {
    fn lines(&self) -> Lines<'_> {
        Lines {
            bytes: &self.bytes,
            spans: &self.spans,
        }
    }
}

/// Reads the keys on stdin (hex-decoded with `hex`) in batches, answers each batch with a
/// checker `open` returns (one answer per key, into the vector given) and writes one row per
/// key in `format` (`field` names the answer, as in [`io::push_row`]). Returns whether every
/// answer was yes.
///
/// The work overlaps on threads: one reads and splits stdin, from before `open` runs (so the
/// first batch is ready when the filter is); [`CHECKERS`] checkers, each opened by `open`
/// (its own connections), take the batches in turn, so that one batch's bitmaps are tested
/// here while the server sends the next one's; one thread formats and writes the rows of the
/// batches answered, in input order. Errors as on one thread: a failing first `open` is
/// returned before anything is written; the rows of the batches answered before a failing
/// read, open or check are written and the output is finished before the failure is
/// returned; a write error (a broken pipe too) stops the run and is returned, ahead of any
/// other.
pub fn check_rows<C>(
    hex: bool,
    format: OutFormat,
    field: &'static str,
    open: impl Fn() -> Result<C, Failure> + Sync,
) -> Result<bool, Failure>
where
    C: FnMut(&[&[u8]], &mut Vec<bool>) -> Result<(), Failure> + Send,
{
    let json = matches!(format, OutFormat::Jsonl | OutFormat::Json);
    let (to_checkers, reads): (Vec<_>, Vec<_>) = (0..CHECKERS)
        .map(|_| mpsc::sync_channel::<Checked>(1))
        .unzip();
    let (to_writer, answered): (Vec<_>, Vec<_>) = (0..CHECKERS)
        .map(|_| mpsc::sync_channel::<Checked>(1))
        .unzip();
    let (give_back, returned) = mpsc::channel::<Checked>();
    // Not scoped: after a failure the reader is left behind (blocked on stdin, maybe) and the
    // process ends, as it does on one thread.
    let reader = thread::spawn(move || {
        let mut made = 0;
        let mut turn = 0;
        for_each_lines(hex, |batch| {
            let mut c = match returned.try_recv() {
                Ok(c) => c,
                Err(_) if made < BUFFERS => {
                    made += 1;
                    Checked::default()
                }
                Err(_) => returned.recv().map_err(|_| stopped())?,
            };
            // The bytes from the first key to the last in one copy, the spans moved with them.
            let from = batch.spans.first().map_or(0, |s| s.0);
            let to = batch.spans.last().map_or(0, |s| s.1);
            c.bytes.clear();
            c.bytes
                .extend_from_slice(batch.bytes.get(from..to).unwrap_or_default());
            c.spans.clear();
            c.spans
                .extend(batch.spans.iter().map(|&(a, b)| (a - from, b - from)));
            let sent = to_checkers[turn % CHECKERS].send(c);
            turn += 1;
            sent.map_err(|_| stopped())
        })
    });
    let first = open()?;
    let writer = thread::spawn(move || {
        let mut out = RowsOut::new(io::out(), format);
        let mut rows = Vec::with_capacity(1 << 20);
        // The checkers' answers in turn: input order. A closed channel ends the rows (the
        // input ended, or that checker failed and the later batches are not written).
        let mut r = Ok(());
        for turn in 0.. {
            let Ok(c) = answered[turn % CHECKERS].recv() else {
                break;
            };
            push_rows(&mut rows, c.lines(), &c.answers, (hex, json), field);
            r = write_rows(&mut out, &mut rows);
            if r.is_err() {
                break;
            }
            // The reader is gone after the last batch or a failure: the buffer is dropped.
            let _ = give_back.send(c);
        }
        out.finish()?;
        r
    });
    let mut checked: Vec<Result<bool, Failure>> = Vec::with_capacity(CHECKERS);
    thread::scope(|s| {
        let mut checks = reads.into_iter().zip(to_writer);
        let Some((read, to_writer)) = checks.next() else {
            return;
        };
        let open = &open;
        let others: Vec<_> = checks
            .map(|(read, to_writer)| s.spawn(move || checker(open()?, read, to_writer)))
            .collect();
        checked.push(checker(first, read, to_writer));
        checked.extend(others.into_iter().map(join_scoped));
    });
    // The writer writes what is queued, finishes the output and ends.
    join(writer)?;
    let all = all_yes(checked)?;
    // The reader closed its channels: it has ended.
    join(reader)?;
    Ok(all)
}

/// Checks the batches that come on `read` and hands each one on to the writer; returns
/// whether every answer was yes. Both channels are closed when it returns.
fn checker<C>(
    mut check: C,
    read: mpsc::Receiver<Checked>,
    to_writer: mpsc::SyncSender<Checked>,
) -> Result<bool, Failure>
where
    C: FnMut(&[&[u8]], &mut Vec<bool>) -> Result<(), Failure>,
{
    let mut all = true;
    for mut c in read.iter() {
        // One vector per batch (of up to `io::BATCH` keys), none per key.
        let keys = Lines {
            bytes: &c.bytes,
            spans: &c.spans,
        }
        .keys();
        check(&keys, &mut c.answers)?;
        drop(keys);
        all &= c.answers.iter().all(|&yes| yes);
        to_writer.send(c).map_err(|_| stopped())?;
    }
    Ok(all)
}

/// The result of a scoped thread, its panic resumed here.
fn join_scoped<T>(h: thread::ScopedJoinHandle<'_, T>) -> T {
    h.join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The result of a thread, its panic resumed here.
fn join<T>(h: thread::JoinHandle<T>) -> T {
    h.join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Whether every checker's answers were all yes; a checker's failure otherwise, the one that
/// says what went wrong before one that only says that a thread stopped.
fn all_yes(checked: Vec<Result<bool, Failure>>) -> Result<bool, Failure> {
    let mut all = true;
    let mut failed: Option<Failure> = None;
    for c in checked {
        match c {
            Ok(yes) => all &= yes,
            Err(e) if failed.as_ref().is_none_or(is_stopped) => failed = Some(e),
            Err(_) => {}
        }
    }
    failed.map_or(Ok(all), Err)
}

/// The text of [`stopped`].
const STOPPED: &str = "sst bloom check: a worker thread stopped";

/// Stands for the error of the thread that stopped first, which is returned instead.
fn stopped() -> Failure {
    Failure::error(STOPPED)
}

fn is_stopped(f: &Failure) -> bool {
    matches!(f, Failure::Exit(_, m) if m == STOPPED)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: Result<bool, Failure>) -> String {
        match r {
            Ok(yes) => yes.to_string(),
            Err(Failure::Exit(_, m)) => m,
            Err(Failure::BrokenPipe) => "broken pipe".into(),
        }
    }

    #[test]
    fn the_failure_that_says_what_is_returned() {
        let real = || Err(Failure::error("redis connect on 127.0.0.1:1 failed"));
        assert_eq!(text(all_yes(vec![Ok(true), Ok(true)])), "true");
        assert_eq!(text(all_yes(vec![Ok(true), Ok(false)])), "false");
        assert_eq!(text(all_yes(vec![Err(stopped()), real()])), text(real()));
        assert_eq!(text(all_yes(vec![real(), Err(stopped())])), text(real()));
        assert_eq!(text(all_yes(vec![Ok(true), Err(stopped())])), STOPPED);
    }
}
