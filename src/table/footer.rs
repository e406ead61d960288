//! Decoding the footer, with errors that say what is wrong and where (the byte layout and
//! constants are in the format module, which knows nothing of errors).

use crate::error::{Error, Result, RocksDbFormat};
use crate::format::coding;
use crate::format::{self, BlockHandle, Footer, FOOTER_LEN, TABLE_MAGIC};

impl Footer {
    /// Decodes the last 48 bytes of a table of `file_size` bytes whose footer is `buf`.
    ///
    /// # Errors
    /// [`Error::BadMagic`] (or [`Error::RocksDb`] when the magic is RocksDB's),
    /// [`Error::BadFooterHandle`] when a handle does not decode.
    pub fn decode(buf: &[u8; FOOTER_LEN], file_size: u64) -> Result<Footer> {
        let magic = coding::decode_fixed64(&buf[FOOTER_LEN - 8..]);
        if magic != TABLE_MAGIC {
            return Err(classify_bad_magic(magic, buf, file_size));
        }
        let mut input: &[u8] = &buf[..FOOTER_LEN - 8];
        let metaindex = BlockHandle::decode_from(&mut input);
        let index = BlockHandle::decode_from(&mut input);
        match (metaindex, index) {
            (Some(metaindex), Some(index)) => Ok(Footer { metaindex, index }),
            _ => Err(Error::BadFooterHandle {
                footer_offset: file_size - FOOTER_LEN as u64,
            }),
        }
    }
}

/// How many bytes were cut off a table whose last bytes are the start of the magic (1 to 7),
/// or `None`. At least 3 bytes of the magic must be there (a cut of 1 to 5 bytes), so
/// that random bytes are not taken for a truncation.
fn truncated_by(footer: &[u8; FOOTER_LEN]) -> Option<u64> {
    let magic = format::TABLE_MAGIC.to_le_bytes();
    (1..=5usize)
        .find(|&missing| footer[FOOTER_LEN - (8 - missing)..] == magic[..8 - missing])
        .map(|m| m as u64)
}

/// Turns a wrong magic into [`Error::RocksDb`] when it is one of RocksDB's, else [`Error::BadMagic`].
fn classify_bad_magic(magic: u64, footer: &[u8; FOOTER_LEN], file_size: u64) -> Error {
    let version = || {
        let at = FOOTER_LEN - format::ROCKSDB_FOOTER_VERSION_FROM_END;
        Some(crate::format::coding::decode_fixed32(&footer[at..at + 4]))
    };
    match magic {
        format::ROCKSDB_BLOCK_BASED_MAGIC => Error::RocksDb {
            format: RocksDbFormat::BlockBased,
            format_version: version(),
        },
        format::ROCKSDB_PLAIN_MAGIC | format::ROCKSDB_LEGACY_PLAIN_MAGIC => Error::RocksDb {
            format: RocksDbFormat::Plain,
            format_version: None,
        },
        format::ROCKSDB_CUCKOO_MAGIC => Error::RocksDb {
            format: RocksDbFormat::Cuckoo,
            format_version: None,
        },
        found => match truncated_by(footer) {
            Some(missing) => Error::Truncated { file_size, missing },
            None => Error::BadMagic {
                found,
                offset: file_size - 8,
            },
        },
    }
}
