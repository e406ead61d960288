//! Refiltering: a table's filter rebuilt (another policy, other bits, or none) while its data
//! blocks are copied byte for byte, without decompressing or recompressing them.
//!
//! ```text
//! in:  | data blocks (+ trailers) | filter | metaindex | index | footer |
//! out: | the same data blocks     | new filter (raw) | new metaindex (raw) | the same index
//!      block, copied with its trailer | footer with the two new handles |
//! ```
//!
//! The data blocks keep their offsets, so the index (whose values are their handles) is
//! copied unchanged; only the filter, the metaindex and the footer are written anew. Keys are
//! read from each data block (checksums verified: a damaged table is refused, never
//! refiltered) and fed to the filter block builder exactly as LevelDB's `TableBuilder` does
//! (`StartBlock` at each block's offset, then after the last block). Refiltering a LevelDB
//! table with LevelDB's policy and its own bits gives back the same bytes.

use std::io::Write;
use std::sync::mpsc;
use std::sync::Arc;

use bytes::Bytes;

use crate::block::builder::BlockBuilder;
use crate::block::stored::{ReadBlockOptions, StoredBlock};
use crate::block::Block;
use crate::compress::CompressionProfile;
use crate::cursor::Cursor;
use crate::error::{BlockKind, Error, Result};
use crate::filter::block::FilterBlockBuilder;
use crate::filter::FilterPolicy;
use crate::format::{BlockHandle, Footer, BLOCK_TRAILER_LEN, COMPRESSION_NONE, FILTER_META_PREFIX};
use crate::internal_key::InternalFilterPolicy;
use crate::io::RandomAccess;
use crate::table::TableReader;

/// What a refilter wrote.
#[derive(Debug, Clone, Default)]
pub struct RefilterStats {
    /// Data blocks copied.
    pub data_blocks: u64,
    /// Keys fed to the new filter.
    pub keys: u64,
    /// Bytes of the new filter block (0 without a filter).
    pub filter_bytes: u64,
    /// Bytes written in all.
    pub bytes: u64,
}

/// Writes `table` to `out` with its filter rebuilt by `policy` (`None`: no filter). For a
/// table of internal keys the filter is built over user keys, as LevelDB does. The blocks are
/// checked and decompressed on helper threads (one fewer than the machine has cores, at most
/// four; this thread reads, filters and writes); [`refilter_with`] chooses.
///
/// # Errors
/// A damaged data block or index (the table is refused), data blocks that are not back to
/// back from offset 0, or the writer's error.
pub fn refilter<R: RandomAccess, W: Write>(
    table: &TableReader<R>,
    policy: Option<Arc<dyn FilterPolicy>>,
    out: &mut W,
) -> Result<RefilterStats> {
    refilter_with(table, policy, out, RefilterOptions::default())
}

/// How [`refilter_with`] divides the work; set with setters named as the fields.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct RefilterOptions {
    /// Helper threads that check and decompress blocks (0: all on the calling thread; at
    /// most four are used). Default: one fewer than the machine has cores.
    pub threads: usize,
    /// Data blocks per read and per hand-over to a helper (at least 1; default 64). The
    /// memory in flight is about `2 * threads * run_blocks` blocks.
    pub run_blocks: usize,
}

impl Default for RefilterOptions {
    fn default() -> Self {
        RefilterOptions {
            threads: std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .saturating_sub(1)
                .min(MAX_WORKERS),
            run_blocks: CHUNK,
        }
    }
}

impl RefilterOptions {
    /// Sets [`threads`](Self::threads).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Sets [`run_blocks`](Self::run_blocks).
    pub fn run_blocks(mut self, run_blocks: usize) -> Self {
        self.run_blocks = run_blocks;
        self
    }
}

/// [`refilter`] with the work divided as `opts` says; the output is the same for any
/// division.
///
/// # Errors
/// As [`refilter`].
pub fn refilter_with<R: RandomAccess, W: Write>(
    table: &TableReader<R>,
    policy: Option<Arc<dyn FilterPolicy>>,
    out: &mut W,
    opts: RefilterOptions,
) -> Result<RefilterStats> {
    let (threads, chunk) = (opts.threads, opts.run_blocks.max(1));
    let mut stats = RefilterStats::default();
    let policy = policy.map(|p| {
        if table.is_internal() {
            Arc::new(InternalFilterPolicy::new(p)) as Arc<dyn FilterPolicy>
        } else {
            p
        }
    });
    let mut filter = policy.clone().map(FilterBlockBuilder::new);
    // The data blocks, which must lie back to back from offset 0 (LevelDB's layout).
    let mut handles = Vec::new();
    let mut at = 0u64;
    let mut idx = table.index_block().iter(table.comparator());
    idx.seek_to_first();
    while idx.valid() {
        let mut v = idx.value();
        let handle = BlockHandle::decode_from(&mut v).ok_or(Error::BadIndexValue {
            kind: BlockKind::Index,
            handle: table.footer().index,
        })?;
        if handle.offset != at {
            return Err(Error::Unsupported {
                reason: format!(
                    "data block at offset {} does not follow the previous one (ends at {at}); \
                     such a table is not refiltered",
                    handle.offset
                ),
            });
        }
        // Every block must lie inside the file before the footer (a read is never asked
        // for more than the file holds).
        crate::block::stored::check_handle(handle, BlockKind::Data, table.data_end())?;
        at = handle.offset + handle.size + BLOCK_TRAILER_LEN as u64;
        handles.push(handle);
        idx.next();
    }
    idx.status()?;
    let profile = table.compression_profile();
    let mut at = 0u64;
    // Each block is read once, in runs of `chunk` blocks: the stored bytes are written out as
    // they are, and checked and decompressed (on helper threads) for their keys.
    let mut on_chunk = |hs: &[BlockHandle], raw: &[u8], keys: &ChunkKeys| -> Result<()> {
        if let Some(f) = filter.as_mut() {
            for (i, h) in hs.iter().enumerate() {
                f.start_block(h.offset);
                for k in keys.block(i) {
                    f.add_key(k);
                }
            }
            stats.keys += keys.len() as u64;
        }
        out.write_all(raw)?;
        at += raw.len() as u64;
        stats.data_blocks += hs.len() as u64;
        Ok(())
    };
    let read_span = |hs: &[BlockHandle]| -> Result<Bytes> {
        let (Some(first), Some(last)) = (hs.first(), hs.last()) else {
            return Ok(Bytes::new());
        };
        let end = last.offset + last.size + BLOCK_TRAILER_LEN as u64;
        let n = usize::try_from(end - first.offset).unwrap_or(usize::MAX);
        let raw = table
            .source()
            .read_at(first.offset, n)
            .map_err(|e| Error::io_at(e, BlockKind::Data, *first))?;
        // A short read (a table cut inside its data) is reported by `ChunkKeys::fill` at the
        // first block it cuts, after the blocks before it: the same first error whatever the
        // runs are.
        Ok(raw)
    };
    let workers = threads.min(MAX_WORKERS);
    if workers == 0 || handles.len() <= chunk {
        let mut keys = ChunkKeys::default();
        for hs in handles.chunks(chunk) {
            let raw = read_span(hs)?;
            keys.fill(&raw, hs, profile)?;
            on_chunk(hs, &raw, &keys)?;
        }
    } else {
        pipeline(&handles, workers, chunk, profile, read_span, &mut on_chunk)?;
    }
    let write_raw = |out: &mut W, block: &[u8], at: &mut u64| -> Result<BlockHandle> {
        let h = BlockHandle {
            offset: *at,
            size: block.len() as u64,
        };
        out.write_all(block)?;
        out.write_all(&crate::block::stored::block_trailer(
            block,
            COMPRESSION_NONE,
        ))?;
        *at += (block.len() + BLOCK_TRAILER_LEN) as u64;
        Ok(h)
    };
    let mut meta = BlockBuilder::new(crate::format::DEFAULT_RESTART_INTERVAL);
    let mut meta_value = Vec::new();
    if let (Some(mut f), Some(p)) = (filter, policy) {
        f.start_block(at);
        let bytes = f.finish();
        stats.filter_bytes = bytes.len() as u64;
        let h = write_raw(out, &bytes, &mut at)?;
        h.encode_to(&mut meta_value);
        let mut key = FILTER_META_PREFIX.to_vec();
        key.extend_from_slice(p.name().as_bytes());
        meta.add(&key, &meta_value);
    }
    let metaindex = write_raw(out, meta.finish(), &mut at)?;
    // The index, copied with its trailer (its checksum covers only its bytes).
    let ih = table.footer().index;
    let n = ih.size as usize + BLOCK_TRAILER_LEN;
    let raw = table
        .source()
        .read_at(ih.offset, n)
        .map_err(|e| Error::io_at(e, BlockKind::Index, ih))?;
    if raw.len() != n {
        return Err(Error::TruncatedBlock {
            kind: BlockKind::Index,
            handle: ih,
            got: raw.len(),
        });
    }
    out.write_all(&raw)?;
    let index = BlockHandle {
        offset: at,
        size: ih.size,
    };
    at += n as u64;
    let footer = Footer { metaindex, index }.encode();
    out.write_all(&footer)?;
    at += footer.len() as u64;
    stats.bytes = at;
    Ok(stats)
}

/// Helper threads at most (decompression is the work).
const MAX_WORKERS: usize = 4;

/// Data blocks per unit of work by default: one read, one write, one hand-over between
/// threads (a hand-over per block cost more than the block's decompression: 12 ms against
/// 4.8 on one thread in `cargo bench --bench refilter`).
const CHUNK: usize = 64;

/// Chunks on their way per helper: the memory in flight is about `workers * IN_FLIGHT`
/// chunks (stored bytes and keys; 64 blocks of 4 KiB are ~256 KiB stored).
const IN_FLIGHT: usize = 2;

/// The keys of a run of data blocks, packed.
#[derive(Default)]
struct ChunkKeys {
    bytes: Vec<u8>,
    /// End of each key in `bytes`.
    ends: Vec<usize>,
    /// Number of keys up to and including each block.
    blocks: Vec<usize>,
}

impl ChunkKeys {
    /// Checks and decompresses each block of `hs` (stored back to back in `raw`, which
    /// starts at the first one) and collects its keys.
    fn fill(&mut self, raw: &Bytes, hs: &[BlockHandle], profile: CompressionProfile) -> Result<()> {
        self.bytes.clear();
        self.ends.clear();
        self.blocks.clear();
        let base = hs.first().map_or(0, |h| h.offset);
        for &h in hs {
            let at = usize::try_from(h.offset - base).unwrap_or(usize::MAX);
            let n = h.size as usize + BLOCK_TRAILER_LEN;
            let one = raw
                .get(at..at.saturating_add(n))
                .ok_or(Error::TruncatedBlock {
                    kind: BlockKind::Data,
                    handle: h,
                    got: raw.len().saturating_sub(at),
                })?;
            self.add_block(raw.slice_ref(one), h, profile)?;
        }
        Ok(())
    }

    fn add_block(
        &mut self,
        raw: Bytes,
        handle: BlockHandle,
        profile: CompressionProfile,
    ) -> Result<()> {
        let rb = ReadBlockOptions {
            verify_checksum: true,
            profile,
        };
        let c = StoredBlock::from_raw(raw, handle, BlockKind::Data, rb)?.decompress()?;
        let block = Block::new(c.data, BlockKind::Data, handle)?;
        let data = block.data();
        // The previous key of this block (empty before the first).
        let mut prev = self.bytes.len()..self.bytes.len();
        for e in block.raw_entries() {
            let e = e.ok_or_else(|| block.bad_entry(0))?;
            // The key shares its first `shared` bytes with the previous one.
            if e.shared > prev.len() {
                return Err(block.bad_entry(e.key.start));
            }
            let start = self.bytes.len();
            self.bytes
                .extend_from_within(prev.start..prev.start + e.shared);
            self.bytes.extend_from_slice(&data[e.key]);
            self.ends.push(self.bytes.len());
            prev = start..self.bytes.len();
        }
        self.blocks.push(self.ends.len());
        Ok(())
    }

    /// Keys in all.
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// The keys of block `i` of the run.
    fn block(&self, i: usize) -> impl Iterator<Item = &[u8]> + '_ {
        let first = if i == 0 { 0 } else { self.blocks[i - 1] };
        let last = self.blocks.get(i).copied().unwrap_or(first);
        (first..last).map(move |j| {
            let start = if j == 0 { 0 } else { self.ends[j - 1] };
            &self.bytes[start..self.ends[j]]
        })
    }
}

/// Reads runs of `chunk` blocks on this thread, has `workers` helper threads check,
/// decompress and collect keys (run i goes to helper i mod workers), and hands the results
/// to `on_chunk` in file order. At most `workers * IN_FLIGHT` runs are between the two.
fn pipeline<F>(
    handles: &[BlockHandle],
    workers: usize,
    chunk: usize,
    profile: CompressionProfile,
    read_span: impl Fn(&[BlockHandle]) -> Result<Bytes>,
    on_chunk: &mut F,
) -> Result<()>
where
    F: FnMut(&[BlockHandle], &[u8], &ChunkKeys) -> Result<()>,
{
    type Job<'h> = (&'h [BlockHandle], Bytes, ChunkKeys);
    type Done = (Bytes, Result<ChunkKeys>);
    let chunks: Vec<&[BlockHandle]> = handles.chunks(chunk).collect();
    std::thread::scope(|s| {
        let mut to = Vec::with_capacity(workers);
        let mut from = Vec::with_capacity(workers);
        for _ in 0..workers {
            // Capacities cover the window, so this thread never blocks on a send.
            let (job_tx, job_rx) = mpsc::sync_channel::<Job<'_>>(IN_FLIGHT + 1);
            let (done_tx, done_rx) = mpsc::sync_channel::<Done>(IN_FLIGHT + 1);
            s.spawn(move || {
                for (hs, raw, mut keys) in job_rx {
                    let r = keys.fill(&raw, hs, profile).map(|()| keys);
                    if done_tx.send((raw, r)).is_err() {
                        return;
                    }
                }
            });
            to.push(job_tx);
            from.push(done_rx);
        }
        let stopped = || Error::ThreadFailed {
            task: "checking and decompressing data blocks for refilter",
        };
        let window = workers * IN_FLIGHT;
        let mut spare: Vec<ChunkKeys> = Vec::new();
        let mut sent = 0;
        for (done, hs) in chunks.iter().enumerate() {
            while sent < chunks.len() && sent < done + window {
                let job = (
                    chunks[sent],
                    read_span(chunks[sent])?,
                    spare.pop().unwrap_or_default(),
                );
                to[sent % workers].send(job).map_err(|_| stopped())?;
                sent += 1;
            }
            let (raw, keys) = from[done % workers].recv().map_err(|_| stopped())?;
            let keys = keys?;
            on_chunk(hs, &raw, &keys)?;
            spare.push(keys);
        }
        Ok(())
    })
}
