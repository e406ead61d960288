//! In-memory search aids, built from a table's blocks and never written to disk: the index
//! decoded for point lookups ([`index`]) and a cached data block's search directory
//! ([`block_dir`]).

pub(crate) mod block_dir;
pub(crate) mod index;
