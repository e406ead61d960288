//! Parallel compression: data blocks compressed on a helper thread while the builder fills
//! the next one (`Options::parallel_compression`), at most `MAX_IN_FLIGHT` blocks ahead; the
//! file is byte for byte what the single-threaded builder writes.

use std::collections::VecDeque;
use std::sync::{mpsc, Mutex};
use std::thread;

use crate::block::stored::block_trailer;
use crate::compress::{self, Compression};
use crate::format;

/// Blocks in flight beyond which `flush` waits for the helper thread (64 KiB of 4 KiB
/// blocks): enough that the builder rarely waits for a helper that is slow to wake.
pub(super) const MAX_IN_FLIGHT: usize = 16;

/// Data blocks compressed on a helper thread, written in order by the builder.
///
/// ```text
/// builder:  fill block b ──send──▶ helper: compress b, checksum ──▶ builder: when b's index
///           fill block b+1           (one block at a time, in order)       key is known (the
///           ...                                                            first key of b+1),
///                                                                          write b: filter keys,
///                                                                          bytes, index entry,
///                                                                          filter.start_block
/// ```
/// The builder's calls on the filter and index builders happen in the same order and with
/// the same offsets as without the helper, so the file is the same byte for byte.
pub(super) struct Pipeline {
    pub(super) jobs: Option<mpsc::SyncSender<Job>>,
    /// In a `Mutex` only so that the builder stays `Sync` (a `Receiver` is not); reached
    /// through `get_mut`, never locked.
    pub(super) done: Mutex<mpsc::Receiver<Done>>,
    pub(super) worker: Option<thread::JoinHandle<()>>,
    /// Blocks sent and not yet written, oldest first.
    pub(super) in_flight: VecDeque<InFlight>,
    /// Keys of the block being filled, for the filter (added when the block is written).
    pub(super) keys: Vec<u8>,
    pub(super) key_ends: Vec<usize>,
    /// Buffers back from the helper, for the next blocks.
    pub(super) spare: Vec<(Vec<u8>, Vec<u8>)>,
    /// Key buffers of written blocks, for the next blocks.
    pub(super) spare_keys: Vec<(Vec<u8>, Vec<usize>)>,
}

/// A block's uncompressed bytes, and a buffer for its compressed form.
pub(super) struct Job {
    pub(super) raw: Vec<u8>,
    pub(super) out: Vec<u8>,
}

/// What the helper made of a block: `out` holds the compressed bytes if `compressed`
/// (else the block is stored as `raw`), `trailer` is the trailer for the stored bytes.
pub(super) struct Done {
    pub(super) raw: Vec<u8>,
    pub(super) out: Vec<u8>,
    pub(super) compressed: bool,
    pub(super) trailer: [u8; format::BLOCK_TRAILER_LEN],
    pub(super) error: Option<std::io::Error>,
}

/// A block sent to the helper: its keys (for the filter) and, once known, its index key.
pub(super) struct InFlight {
    pub(super) keys: Vec<u8>,
    pub(super) key_ends: Vec<usize>,
    pub(super) separator: Option<Vec<u8>>,
}

impl Pipeline {
    /// Starts the helper thread; `None` if the system refuses one (the builder then
    /// compresses on its own thread).
    pub(super) fn start(kind: Compression) -> Option<Pipeline> {
        let (jobs, job_rx) = mpsc::sync_channel::<Job>(MAX_IN_FLIGHT + 1);
        let (done_tx, done) = mpsc::channel();
        let worker = thread::Builder::new()
            .name("sst-compress".into())
            .spawn(move || compress_blocks(kind, job_rx, done_tx))
            .ok()?;
        Some(Pipeline {
            jobs: Some(jobs),
            done: Mutex::new(done),
            worker: Some(worker),
            in_flight: VecDeque::new(),
            keys: Vec::new(),
            key_ends: Vec::new(),
            spare: Vec::new(),
            spare_keys: Vec::new(),
        })
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        // Closing the queue ends the helper after its current block.
        self.jobs = None;
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// The helper thread: compresses blocks as the builder would (kept only if that saves
/// more than 12.5%) and computes their trailers, in the order received.
pub(super) fn compress_blocks(
    kind: Compression,
    jobs: mpsc::Receiver<Job>,
    done: mpsc::Sender<Done>,
) {
    let mut compressor = compress::Compressor::default();
    while let Ok(Job { raw, mut out }) = jobs.recv() {
        let (compressed, trailer, error) = match compressor.stored_form(kind, &raw) {
            Ok((c, id)) if id != format::COMPRESSION_NONE => {
                out.clear();
                out.extend_from_slice(c);
                (true, block_trailer(&out, id), None)
            }
            Ok((c, id)) => (false, block_trailer(c, id), None),
            Err(e) => (false, [0; format::BLOCK_TRAILER_LEN], Some(e)),
        };
        let d = Done {
            raw,
            out,
            compressed,
            trailer,
            error,
        };
        if done.send(d).is_err() {
            return;
        }
    }
}
