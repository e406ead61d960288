//! Keys given on the command line: their bytes, hex, and the key a seek for them uses.

use std::ffi::OsStr;

use leveldb_table::raw::format::MAX_SEQUENCE;
use leveldb_table::raw::internal_key;

use crate::exit::Failure;
use crate::render::text::unhex;

/// The bytes of a command-line argument.
pub fn os_bytes(s: &OsStr) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        s.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        s.to_string_lossy().into_owned().into_bytes()
    }
}

/// A key given on the command line: raw bytes, or hex with `--hex`.
pub fn key_arg(s: &OsStr, as_hex: bool, what: &str) -> Result<Vec<u8>, Failure> {
    let b = os_bytes(s);
    if as_hex {
        unhex(&b).map_err(|e| Failure::error(format!("{what}: invalid hex key {:?}: {e}", s)))
    } else {
        Ok(b)
    }
}

/// The key a seek for user key `k` uses: `k` itself for plain tables; for internal tables
/// `k | tag(MAX_SEQUENCE, value)`, which sorts before every version of `k`.
pub fn seek_key(internal: bool, k: &[u8]) -> Vec<u8> {
    if internal {
        let mut v = Vec::with_capacity(k.len() + 8);
        internal_key::lookup_key(&mut v, k, MAX_SEQUENCE);
        v
    } else {
        k.to_vec()
    }
}
