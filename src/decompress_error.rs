//! Why a block did not decompress: the codecs' error (`compress.rs`), held in its own module
//! so that `error.rs` can carry it without importing the codecs.

use std::fmt;

/// Why a block did not decompress.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecompressError {
    /// The type byte names no codec we know ("bad block type").
    UnknownType,
    /// The codec is known but was compiled out (cargo feature off).
    Unsupported(&'static str),
    /// The stated uncompressed length is missing, absurd or over the bound.
    BadLength(&'static str),
    /// The compressed bytes are not valid for the codec.
    BadContents(&'static str),
}

impl fmt::Display for DecompressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecompressError::UnknownType => f.write_str("bad block type"),
            DecompressError::Unsupported(c) => write!(f, "{c} support not compiled in"),
            DecompressError::BadLength(c) => write!(f, "corrupted {c} compressed block length"),
            DecompressError::BadContents(c) => write!(f, "corrupted {c} compressed block contents"),
        }
    }
}
