//! The bytes-and-numbers layer under everything: LevelDB's `util/` (encodings, CRC32C, its
//! hash, the comparator contract), and the crate's contact with the operating system
//! (atomic file replacement, memory maps and memory advice).

pub(crate) mod comparator;
pub(crate) mod crc32c;
pub(crate) mod hash;
pub(crate) mod os;
