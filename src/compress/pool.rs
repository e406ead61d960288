//! The buffers blocks are decompressed into ([`BlockBuf`]): heap memory, or pieces of the
//! memory for the decompressed blocks a cache holds ([`BufferPool`]): slabs of a few MiB,
//! advised as transparent huge pages, cut into pieces that come back when a block leaves.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};

/// A buffer a block is decompressed into: ordinary heap memory, or a piece of a pool slab.
#[derive(Debug)]
pub(crate) enum BlockBuf {
    /// From the global allocator (no pool, or a block the pool does not serve).
    Heap(Vec<u8>),
    /// A piece of one of a [`BufferPool`]'s slabs.
    Piece(BytesMut),
}

impl Default for BlockBuf {
    fn default() -> Self {
        BlockBuf::Heap(Vec::new())
    }
}

impl BlockBuf {
    /// Sets the length to `len`: bytes kept from earlier use are not cleared, growth is
    /// zero-filled (a piece never grows beyond its capacity here: the pool hands out
    /// pieces of at least the asked length).
    pub(crate) fn set_len_filled(&mut self, len: usize) {
        match self {
            // A fresh buffer: `vec!` zero-allocates, which for large blocks (an index block
            // of hundreds of KiB read at open) takes pages the kernel zeroed instead of
            // writing zeros over them.
            BlockBuf::Heap(v) if v.capacity() == 0 => *v = vec![0; len],
            BlockBuf::Heap(v) => v.resize(len, 0),
            BlockBuf::Piece(b) => b.resize(len, 0),
        }
    }

    /// The buffer's bytes.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        match self {
            BlockBuf::Heap(v) => v,
            BlockBuf::Piece(b) => b,
        }
    }

    /// The bytes as an owned vector (a copy for a piece).
    pub(crate) fn into_vec(self) -> Vec<u8> {
        match self {
            BlockBuf::Heap(v) => v,
            BlockBuf::Piece(b) => b.to_vec(),
        }
    }

    /// The bytes as shared [`Bytes`] that return to no pool.
    pub(crate) fn into_bytes(self) -> Bytes {
        match self {
            BlockBuf::Heap(v) => Bytes::from(v),
            BlockBuf::Piece(b) => b.freeze(),
        }
    }
}

/// Memory for the decompressed blocks a cache holds: slabs of a few MiB cut into pieces,
/// and the pieces of blocks that have left the cache, for the next decompression.
///
/// A full cache evicts one block for each block it admits, so the evicted block's piece
/// serves the next decompression: no `free`, `malloc` or zero-fill per block read. The slabs
/// are advised as transparent huge pages on Linux: a cache of tens of MiB in 4 KiB pages
/// costs a TLB miss (a page walk, nested in a VM) on most block accesses, in 2 MiB pages
/// the whole cache fits the TLB. Measured in docs/performance.md.
///
/// Pieces come in steps of [`PIECE_STEP`] bytes, so a block holds at most that much more
/// than it is charged. A slab's memory goes back to the allocator when its last piece is
/// dropped (when the cache and every block handed out from it are gone).
#[derive(Debug)]
pub(crate) struct BufferPool {
    slabs: Mutex<Slabs>,
    slab_bytes: usize,
    limit: usize,
}

#[derive(Debug, Default)]
struct Slabs {
    /// Free pieces by size step (`capacity / PIECE_STEP`).
    free: Vec<Vec<BytesMut>>,
    /// The uncut rest of the newest slab.
    tail: BytesMut,
    /// Bytes of all slabs allocated so far. Slabs live as long as the pool: each of their
    /// pieces is either a block's buffer or on a free list.
    carved: usize,
}

/// Size step of pieces.
const PIECE_STEP: usize = 512;
/// Largest piece: bigger blocks (rare: LevelDB's default block is 4 KiB) use the heap.
const POOL_MAX_BUFFER: usize = 256 << 10;
/// Largest slab (caches of 64 MiB and more).
const MAX_SLAB: usize = 8 << 20;
/// Smallest slab advised as huge pages: it holds at least one whole 2 MiB page.
const MIN_HUGE_SLAB: usize = 4 << 20;

impl BufferPool {
    /// A pool for a cache of `capacity` bytes: slabs of an eighth of it (64 KiB to
    /// [`MAX_SLAB`]), up to the capacity plus a quarter and two slabs in all.
    pub(crate) fn new(capacity: u64) -> BufferPool {
        let capacity = usize::try_from(capacity).unwrap_or(usize::MAX);
        let slab_bytes = (capacity / 8).clamp(64 << 10, MAX_SLAB);
        BufferPool {
            slabs: Mutex::default(),
            slab_bytes,
            limit: capacity
                .saturating_add(capacity / 4)
                .saturating_add(2 * slab_bytes),
        }
    }

    /// A buffer for a block of `len` bytes (contents unspecified but initialized up to its
    /// length): a free piece of `len` rounded up to the step (or, failing that, up to an
    /// eighth larger), or a new piece, or an empty heap vector for blocks the pool does not
    /// serve and once the pool has reached its limit.
    pub(crate) fn take(&self, len: usize) -> BlockBuf {
        if len == 0 || len > POOL_MAX_BUFFER {
            return BlockBuf::default();
        }
        let step = len.div_ceil(PIECE_STEP);
        let last_step = (len + len / 8 + PIECE_STEP) / PIECE_STEP;
        let Ok(mut s) = self.slabs.lock() else {
            return BlockBuf::default();
        };
        for i in step..=last_step.min(s.free.len().saturating_sub(1)) {
            if let Some(piece) = s.free[i].pop() {
                return BlockBuf::Piece(piece);
            }
        }
        let want = step * PIECE_STEP;
        if s.tail.capacity() < want {
            if s.carved.saturating_add(self.slab_bytes) > self.limit {
                return BlockBuf::default();
            }
            s.tail = new_slab(self.slab_bytes);
            s.carved += self.slab_bytes;
        }
        s.tail.resize(want, 0);
        BlockBuf::Piece(s.tail.split_to(want))
    }

    fn put(&self, piece: BytesMut) {
        let step = piece.capacity() / PIECE_STEP;
        if let Ok(mut s) = self.slabs.lock() {
            if s.free.len() <= step {
                s.free.resize_with(step + 1, Vec::new);
            }
            s.free[step].push(piece);
        }
    }

    /// `buf` as shared bytes; a piece goes back to this pool when the last reference
    /// (cache entry, iterator, block clone) is dropped.
    pub(crate) fn bytes(self: &Arc<Self>, buf: BlockBuf) -> Bytes {
        match buf {
            BlockBuf::Heap(v) => Bytes::from(v),
            BlockBuf::Piece(buf) => Bytes::from_owner(Pooled {
                buf,
                pool: Arc::downgrade(self),
            }),
        }
    }
}

/// An empty buffer with room for `bytes`, advised as transparent huge pages where it holds
/// whole 2 MiB pages.
fn new_slab(bytes: usize) -> BytesMut {
    let mut slab = BytesMut::with_capacity(bytes);
    #[cfg(target_os = "linux")]
    if bytes >= MIN_HUGE_SLAB {
        crate::util::os::advise_huge_pages(slab.spare_capacity_mut());
    }
    slab
}

/// A block buffer that returns to its pool when dropped.
struct Pooled {
    buf: BytesMut,
    pool: std::sync::Weak<BufferPool>,
}

impl AsRef<[u8]> for Pooled {
    fn as_ref(&self) -> &[u8] {
        &self.buf
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.upgrade() {
            pool.put(std::mem::take(&mut self.buf));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capacity(b: &BlockBuf) -> usize {
        match b {
            BlockBuf::Heap(v) => v.capacity(),
            BlockBuf::Piece(p) => p.capacity(),
        }
    }

    /// A piece comes back only for a block it fits closely, returns to the pool when the last
    /// reference to its bytes goes, and blocks the pool does not serve get heap buffers.
    #[test]
    fn pool_reuses_pieces_that_fit_and_gets_them_back_on_drop() {
        let pool = Arc::new(BufferPool::new(1 << 20));
        let mut piece = pool.take(4000);
        assert!(matches!(piece, BlockBuf::Piece(_)));
        assert_eq!(capacity(&piece), 4096, "rounded up to the step");
        piece.set_len_filled(4000);
        piece.as_mut_slice()[0] = 7;
        let b = pool.bytes(piece);
        assert_eq!((b.len(), b[0]), (4000, 7));
        let clone = b.clone();
        drop(b);
        // Still referenced: a new piece is cut instead.
        let other = pool.take(4000);
        assert_eq!(capacity(&other), 4096);
        drop(clone);
        drop(other);
        // Too small a block for these pieces (4 KiB held, 1 KiB charged): a new one.
        assert_eq!(capacity(&pool.take(1000)), 1024);
        // A block a little smaller reuses one; too large a block does not.
        let reused = pool.take(3900);
        assert_eq!(capacity(&reused), 4096);
        assert_eq!(capacity(&pool.take(5000)), 5120);
        // Nothing and huge blocks are not the pool's.
        assert!(matches!(pool.take(0), BlockBuf::Heap(_)));
        assert!(matches!(pool.take(1 << 20), BlockBuf::Heap(_)));
    }

    /// The pool stops cutting slabs at its limit; blocks then get heap buffers.
    #[test]
    fn pool_is_bounded() {
        let pool = BufferPool::new(256 << 10);
        let held: Vec<BlockBuf> = (0..200).map(|_| pool.take(4096)).collect();
        let pieces = held
            .iter()
            .filter(|b| matches!(b, BlockBuf::Piece(_)))
            .count();
        assert!(
            pieces * 4096 <= pool.limit,
            "{pieces} pieces over the limit"
        );
        assert!(pieces >= 64, "at least the capacity is served: {pieces}");
        assert!(matches!(held.last(), Some(BlockBuf::Heap(_))));
    }
}
