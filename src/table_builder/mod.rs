//! Writes a table (LevelDB's `table/table_builder.cc`).
//!
//! ```text
//! add(k, v):  the data block takes (k, v); the filter builder takes k.
//!             Once the block's estimate reaches block_size, it is flushed:
//!             compressed (kept only if it saves > 12.5%), written with its trailer,
//!             and filter.start_block(offset after the trailer) is called.
//!             The block's index entry waits for the next key, so its separator can be
//!             shortened between the two blocks.
//! finish():   last data block, filter block (raw), metaindex ("filter.<name>" -> handle),
//!             index (restart interval 1), footer.
//! ```
//!
//! Bytes written are identical to LevelDB's for the same options, keys and compressor.

use std::cmp::Ordering;
use std::io::Write;
use std::sync::{mpsc, Arc};

use crate::block::builder::BlockBuilder;
use crate::compress::{self, Compression};
use crate::error::{Error, Result};
use crate::filter::block::FilterBlockBuilder;
use crate::format::{self, BlockHandle, Footer, FILTER_META_PREFIX, INDEX_RESTART_INTERVAL};
use crate::options::Options;
use crate::util::comparator::Comparator;

/// What a finished table holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Entries added.
    pub entries: u64,
    /// Data blocks written.
    pub data_blocks: u64,
    /// Total bytes of keys added.
    pub raw_key_bytes: u64,
    /// Total bytes of values added.
    pub raw_value_bytes: u64,
    /// Bytes of the file.
    pub file_size: u64,
    /// Handle of the filter block, if one was written.
    pub filter: Option<BlockHandle>,
    /// Handle of the metaindex block.
    pub metaindex: BlockHandle,
    /// Handle of the index block.
    pub index: BlockHandle,
}

/// Builds a table into any [`Write`]. Call protocol: `add*` in strictly increasing key
/// order, then `finish`, which returns the writer.
pub struct TableBuilder<W: Write> {
    writer: W,
    offset: u64,
    comparator: Arc<dyn Comparator>,
    block_size: usize,
    compression: Compression,
    restart_interval: usize,
    filter_name: Option<String>,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    filter_block: Option<FilterBlockBuilder>,
    last_key: Vec<u8>,
    pending_index_entry: bool,
    pending_handle: BlockHandle,
    compressor: compress::Compressor,
    handle_buf: Vec<u8>,
    stats: TableStats,
    failed: Option<String>,
    /// With `Options::parallel_compression`: the helper thread and the blocks on their way.
    pipeline: Option<Pipeline>,
}

pub(crate) mod file;
mod pipeline;
use pipeline::{InFlight, Job, Pipeline, MAX_IN_FLIGHT};

impl<W: Write> TableBuilder<W> {
    /// A builder writing to `writer` with `opts`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a block size or restart interval of 0.
    pub fn new(writer: W, opts: &Options) -> Result<Self> {
        if opts.block_size == 0 || opts.block_restart_interval == 0 {
            return Err(Error::InvalidArgument(
                "block size and restart interval must be at least 1".into(),
            ));
        }
        let filter_policy = opts.key_filter_policy();
        let mut filter_block = filter_policy.clone().map(FilterBlockBuilder::new);
        if let Some(f) = filter_block.as_mut() {
            f.start_block(0);
        }
        Ok(TableBuilder {
            writer,
            offset: 0,
            comparator: opts.key_comparator(),
            block_size: opts.block_size,
            compression: opts.compression,
            restart_interval: opts.block_restart_interval,
            filter_name: filter_policy.as_ref().map(|p| p.name().to_string()),
            data_block: BlockBuilder::new(opts.block_restart_interval),
            index_block: BlockBuilder::new(INDEX_RESTART_INTERVAL),
            filter_block,
            last_key: Vec::new(),
            pending_index_entry: false,
            pending_handle: BlockHandle::default(),
            compressor: compress::Compressor::default(),
            handle_buf: Vec::with_capacity(format::MAX_BLOCK_HANDLE_LEN),
            stats: TableStats::default(),
            failed: None,
            pipeline: (opts.parallel_compression && opts.compression != Compression::None)
                .then(|| Pipeline::start(opts.compression))
                .flatten(),
        })
    }

    fn check_ok(&self) -> Result<()> {
        match &self.failed {
            Some(first) => Err(Error::BuilderFailed {
                first: first.clone(),
            }),
            None => Ok(()),
        }
    }

    fn fail(&mut self, e: Error) -> Error {
        if self.failed.is_none() {
            self.failed = Some(e.to_string());
        }
        e
    }

    /// Adds an entry. Keys must be strictly increasing in the comparator's order.
    ///
    /// # Errors
    /// [`Error::OutOfOrder`] (naming both keys; the builder stays usable), or an I/O error
    /// (after which every call fails with [`Error::BuilderFailed`]).
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.check_ok()?;
        if self.stats.entries > 0
            && self.comparator.compare(key, &self.last_key) != Ordering::Greater
        {
            return Err(Error::OutOfOrder {
                previous: self.last_key.clone(),
                got: key.to_vec(),
            });
        }
        if self.pending_index_entry {
            self.comparator
                .find_shortest_separator(&mut self.last_key, key);
            if self.pipeline.is_some() {
                self.set_separator()?;
            } else {
                self.add_index_entry();
            }
        }
        match (&mut self.pipeline, self.filter_block.as_mut()) {
            (Some(p), Some(_)) => {
                p.keys.extend_from_slice(key);
                p.key_ends.push(p.keys.len());
            }
            (None, Some(f)) => f.add_key(key),
            (_, None) => {}
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.stats.entries += 1;
        self.stats.raw_key_bytes += key.len() as u64;
        self.stats.raw_value_bytes += value.len() as u64;
        self.data_block.add(key, value);
        if self.data_block.current_size_estimate() >= self.block_size {
            self.flush()?;
        }
        Ok(())
    }

    fn add_index_entry(&mut self) {
        add_index_entry(
            &mut self.index_block,
            &mut self.handle_buf,
            &self.last_key,
            self.pending_handle,
        );
        self.pending_index_entry = false;
    }

    /// Writes the current data block now, even if it is smaller than the block size.
    ///
    /// # Errors
    /// An I/O error (sticky).
    pub fn flush(&mut self) -> Result<()> {
        self.check_ok()?;
        if self.data_block.is_empty() {
            return Ok(());
        }
        if self.pipeline.is_some() {
            return self.send_block();
        }
        let mut block = std::mem::replace(&mut self.data_block, BlockBuilder::new(1));
        let res = self.write_block(&mut block);
        block.reset();
        self.data_block = block;
        self.pending_handle = res?;
        self.pending_index_entry = true;
        self.stats.data_blocks += 1;
        if let Some(f) = self.filter_block.as_mut() {
            f.start_block(self.offset);
        }
        Ok(())
    }

    /// Hands the current data block to the helper thread (parallel compression).
    fn send_block(&mut self) -> Result<()> {
        let Some(p) = self.pipeline.as_mut() else {
            return Ok(());
        };
        let (spare, out) = p.spare.pop().unwrap_or_default();
        let raw = self.data_block.take_finished(spare);
        let sent = p
            .jobs
            .as_ref()
            .is_some_and(|j| j.send(Job { raw, out }).is_ok());
        if !sent {
            return Err(self.fail(helper_gone()));
        }
        let (mut keys, mut key_ends) = p.spare_keys.pop().unwrap_or_default();
        keys.clear();
        key_ends.clear();
        p.in_flight.push_back(InFlight {
            keys: std::mem::replace(&mut p.keys, keys),
            key_ends: std::mem::replace(&mut p.key_ends, key_ends),
            separator: None,
        });
        self.pending_index_entry = true;
        self.stats.data_blocks += 1;
        self.write_compressed(MAX_IN_FLIGHT)
    }

    /// Gives the newest block in flight its index key (`last_key`, shortened).
    fn set_separator(&mut self) -> Result<()> {
        if let Some(f) = self.pipeline.as_mut().and_then(|p| p.in_flight.back_mut()) {
            f.separator = Some(self.last_key.clone());
        }
        self.pending_index_entry = false;
        self.write_compressed(MAX_IN_FLIGHT)
    }

    /// Writes the blocks back from the helper whose index keys are known, oldest first;
    /// waits for the helper while more than `keep` blocks are in flight.
    fn write_compressed(&mut self, keep: usize) -> Result<()> {
        loop {
            let Some(p) = self.pipeline.as_mut() else {
                return Ok(());
            };
            if p.in_flight.front().is_none_or(|f| f.separator.is_none()) {
                return Ok(());
            }
            let Ok(rx) = p.done.get_mut() else {
                return Err(self.fail(helper_gone()));
            };
            let done = if p.in_flight.len() > keep {
                rx.recv().map_err(|_| ())
            } else {
                match rx.try_recv() {
                    Ok(d) => Ok(d),
                    Err(mpsc::TryRecvError::Empty) => return Ok(()),
                    Err(mpsc::TryRecvError::Disconnected) => Err(()),
                }
            };
            let mut done = match done {
                Ok(d) => d,
                Err(()) => return Err(self.fail(helper_gone())),
            };
            if let Some(e) = done.error.take() {
                return Err(self.fail(e.into()));
            }
            let Some(p) = self.pipeline.as_mut() else {
                return Ok(());
            };
            let Some(block) = p.in_flight.pop_front() else {
                return Ok(());
            };
            if let Some(fb) = self.filter_block.as_mut() {
                let mut start = 0;
                for &end in &block.key_ends {
                    fb.add_key(&block.keys[start..end]);
                    start = end;
                }
            }
            let contents = if done.compressed {
                &done.out
            } else {
                &done.raw
            };
            let handle = write_stored(&mut self.writer, &mut self.offset, contents, &done.trailer)
                .map_err(|e| self.fail(e.into()))?;
            let separator = block.separator.unwrap_or_default();
            add_index_entry(
                &mut self.index_block,
                &mut self.handle_buf,
                &separator,
                handle,
            );
            if let Some(fb) = self.filter_block.as_mut() {
                fb.start_block(self.offset);
            }
            if let Some(p) = self.pipeline.as_mut() {
                p.spare.push((done.raw, done.out));
                p.spare_keys.push((block.keys, block.key_ends));
            }
        }
    }

    /// Compresses (if it pays) and writes a finished block.
    fn write_block(&mut self, block: &mut BlockBuilder) -> Result<BlockHandle> {
        let raw = block.finish();
        let res = self
            .compressor
            .stored_form(self.compression, raw)
            .and_then(|(c, id)| {
                let trailer = crate::block::stored::block_trailer(c, id);
                write_stored(&mut self.writer, &mut self.offset, c, &trailer)
            });
        res.map_err(|e| self.fail(e.into()))
    }

    fn write_raw(&mut self, contents: &[u8], compression: u8) -> Result<BlockHandle> {
        let trailer = crate::block::stored::block_trailer(contents, compression);
        write_stored(&mut self.writer, &mut self.offset, contents, &trailer)
            .map_err(|e| self.fail(e.into()))
    }

    /// Entries added so far.
    pub fn num_entries(&self) -> u64 {
        self.stats.entries
    }

    /// Bytes written so far (the file size if `finish` were called now, minus the tail).
    pub fn file_size(&self) -> u64 {
        self.offset
    }

    /// Writes the remaining blocks and the footer, flushes the writer, and returns it.
    ///
    /// # Errors
    /// An I/O error, or the builder's earlier error.
    pub fn finish(mut self) -> Result<(W, TableStats)> {
        self.flush()?;
        if self.pipeline.is_some() {
            if self.pending_index_entry {
                self.comparator.find_short_successor(&mut self.last_key);
                self.set_separator()?;
            }
            self.write_compressed(0)?;
            self.pipeline = None;
        }
        // Filter block, stored raw.
        if let Some(fb) = self.filter_block.take() {
            let bytes = fb.finish();
            self.stats.filter = Some(self.write_raw(&bytes, format::COMPRESSION_NONE)?);
        }
        // Metaindex: "filter.<name>" -> filter handle.
        let mut meta = BlockBuilder::new(self.restart_interval);
        if let (Some(name), Some(h)) = (&self.filter_name, self.stats.filter) {
            let mut key = FILTER_META_PREFIX.to_vec();
            key.extend_from_slice(name.as_bytes());
            let mut v = Vec::new();
            h.encode_to(&mut v);
            meta.add(&key, &v);
        }
        self.stats.metaindex = self.write_block(&mut meta)?;
        // Index, with the last block's entry.
        if self.pending_index_entry {
            self.comparator.find_short_successor(&mut self.last_key);
            self.add_index_entry();
        }
        let mut index = std::mem::replace(&mut self.index_block, BlockBuilder::new(1));
        self.stats.index = self.write_block(&mut index)?;
        let footer = Footer {
            metaindex: self.stats.metaindex,
            index: self.stats.index,
        }
        .encode();
        if let Err(e) = self
            .writer
            .write_all(&footer)
            .and_then(|_| self.writer.flush())
        {
            return Err(self.fail(e.into()));
        }
        self.offset += footer.len() as u64;
        self.stats.file_size = self.offset;
        Ok((self.writer, self.stats))
    }
}

/// Writes a stored block and its trailer at `*offset`, advances it, and returns the handle.
fn write_stored(
    writer: &mut impl Write,
    offset: &mut u64,
    contents: &[u8],
    trailer: &[u8; format::BLOCK_TRAILER_LEN],
) -> std::io::Result<BlockHandle> {
    let handle = BlockHandle::new(*offset, contents.len() as u64);
    writer.write_all(contents)?;
    writer.write_all(trailer)?;
    *offset += (contents.len() + trailer.len()) as u64;
    Ok(handle)
}

/// Adds the index entry `key -> handle` (`buf` is scratch for the encoded handle).
fn add_index_entry(index: &mut BlockBuilder, buf: &mut Vec<u8>, key: &[u8], handle: BlockHandle) {
    buf.clear();
    handle.encode_to(buf);
    index.add(key, buf);
}

fn helper_gone() -> Error {
    Error::from(std::io::Error::other("the compression thread stopped"))
}
