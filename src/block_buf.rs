//! The buffer a block is decompressed into: heap memory, or a piece of the block cache's
//! slab memory (`cache.rs`'s `BufferPool` hands pieces out). It sits below both the codecs
//! (`compress.rs` fills it) and the cache, so neither imports the other.

use bytes::{Bytes, BytesMut};

/// A buffer a block is decompressed into: ordinary heap memory, or a piece of a pool slab.
#[derive(Debug)]
pub(crate) enum BlockBuf {
    /// From the global allocator (no pool, or a block the pool does not serve).
    Heap(Vec<u8>),
    /// A piece of one of a `BufferPool`'s slabs (`cache.rs`).
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
