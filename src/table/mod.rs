//! Table files: reading them ([`TableReader`], LevelDB's `table/table.cc`) and writing them
//! ([`TableBuilder`], [`TableFileBuilder`]), with the types that come with them: a
//! lookup's answer ([`Lookup`]), the cursor ([`TableIter`]), the reader's option values
//! ([`KeyFormat`], [`CompressionProfile`], [`CachePolicy`]), a verification's report and a
//! table's entries found when its footer or index is lost ([`salvage`]).
//!
//! ```text
//! open:  footer (last 48 bytes) -> metaindex -> index block (kept in memory)
//! first lookup: "filter.<name>" -> filter block (kept in memory), index decoded for search
//! get:   index.seek(key) -> data-block handle
//!        -> filter.key_may_match(handle.offset, key)?   no: not found, no block read
//!        -> the block (lookup record, in place, past the cache, cache or file)
//!        -> block.seek(key): one pipeline for plain and database tables
//! ```
//!
//! Tables written by a LevelDB database hold internal keys; [`TableReader`] detects them (or
//! is told, [`KeyFormat`]) and then orders keys with the internal-key comparator and probes
//! filters with user keys.

// reader.rs     TableReader: open, the filter, accessors
// metaindex.rs  the metaindex read at open       readahead.rs  one read for many blocks
// blocks.rs     block reads: as stored, or data blocks through the cache
// records.rs    per-block lookup records and what lookups pass between their steps
// route.rs      index search, record, filter     in_place.rs   blocks of zero-copy sources
// transient.rs  blocks past the cache            lookup.rs     the pipeline, the answers
// iter.rs       TableIter                        verify.rs     TableReader::verify
// salvage.rs    a table's entries found by block checksums

mod blocks;
mod footer;
mod in_place;
pub(crate) mod iter;
mod lookup;
mod metaindex;
mod readahead;
mod reader;
mod records;
mod route;
pub mod salvage;
mod transient;
pub(crate) mod verify;

pub use iter::TableIter;
pub use lookup::Lookup;
pub(crate) use lookup::LookupKind;
pub use reader::{FilterStatus, TableReader};
pub use verify::VerifyReport;

pub use crate::cache::CachePolicy;
pub use crate::options::{CompressionProfile, KeyFormat};
pub use crate::table_builder::file::TableFileBuilder;
pub use crate::table_builder::{TableBuilder, TableStats};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_transient;
