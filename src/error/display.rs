//! How errors read: what is wrong, and where (file offset, block, entry).

use super::*;

fn esc(key: &[u8]) -> String {
    key.iter()
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect()
}

struct At(BlockKind, BlockHandle);
impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} block at offset {} (size {})",
            self.0, self.1.offset, self.1.size
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io {
                source,
                block: Some((k, h)),
            } => {
                write!(f, "i/o error reading {}: {source}", At(*k, *h))
            }
            Error::Io {
                source,
                block: None,
            } => write!(f, "i/o error: {source}"),
            Error::TooShort { file_size } => {
                write!(
                    f,
                    "file is too short to be an sstable ({file_size} bytes, need {FOOTER_LEN})"
                )
            }
            Error::Truncated { file_size, missing } => {
                write!(
                    f,
                    "file looks truncated: it ends with the first {} bytes of the table magic, \
                     so {missing} byte(s) are missing after offset {file_size} and the footer is lost",
                    8 - missing
                )
            }
            Error::BadMagic { found, offset } => {
                write!(
                    f,
                    "not an sstable (bad magic number {found:#018x} at offset {offset})"
                )
            }
            Error::RocksDb {
                format,
                format_version,
            } => {
                let what = match format {
                    RocksDbFormat::BlockBased => "block-based table",
                    RocksDbFormat::LegacyBlockBased => "block-based table, legacy magic",
                    RocksDbFormat::Plain => "PlainTable",
                    RocksDbFormat::Cuckoo => "CuckooTable",
                };
                match format_version {
                    Some(v) => write!(f, "RocksDB SST ({what}, format_version={v}), not LevelDB"),
                    None => write!(f, "RocksDB SST ({what}), not LevelDB"),
                }
            }
            Error::BadFooterHandle { footer_offset } => {
                write!(f, "bad block handle in footer at offset {footer_offset}")
            }
            Error::BadBlockHandle {
                kind,
                handle,
                limit,
            } => write!(
                f,
                "bad block handle: {} block at offset {} size {} ends past {limit}",
                kind, handle.offset, handle.size
            ),
            Error::BadIndexValue { kind, handle } => {
                write!(
                    f,
                    "bad block handle in an entry of the {}",
                    At(*kind, *handle)
                )
            }
            Error::TruncatedBlock { kind, handle, got } => {
                write!(
                    f,
                    "truncated block read: {} (got {got} bytes)",
                    At(*kind, *handle)
                )
            }
            Error::ChecksumMismatch {
                kind,
                handle,
                expected,
                actual,
            } => write!(
                f,
                "block checksum mismatch: {} (stored {expected:#010x}, computed {actual:#010x})",
                At(*kind, *handle)
            ),
            Error::Decompress {
                kind,
                handle,
                compression,
                reason,
            } => {
                write!(
                    f,
                    "{reason} (compression id {compression}): {}",
                    At(*kind, *handle)
                )
            }
            Error::BadBlockContents {
                kind,
                handle,
                reason,
            } => {
                write!(f, "bad block contents: {} ({reason})", At(*kind, *handle))
            }
            Error::BadEntry {
                kind,
                handle,
                entry_offset,
            } => {
                write!(
                    f,
                    "bad entry in block: {}, entry at +{entry_offset}",
                    At(*kind, *handle)
                )
            }
            Error::KeyOrder {
                kind,
                handle,
                previous,
                key,
            } => write!(
                f,
                "keys out of order in {}: '{}' then '{}'",
                At(*kind, *handle),
                esc(previous),
                esc(key)
            ),
            Error::FilterMiss { handle, key } => write!(
                f,
                "filter does not match key '{}' of data block at offset {}",
                esc(key),
                handle.offset
            ),
            Error::BadInternalKey { handle, key } => write!(
                f,
                "bad internal key '{}' in data block at offset {}",
                esc(key),
                handle.offset
            ),
            Error::OutOfOrder { previous, got } => write!(
                f,
                "keys out of order: '{}' added after '{}'",
                esc(got),
                esc(previous)
            ),
            Error::BuilderFailed { first } => write!(f, "builder failed earlier: {first}"),
            Error::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            Error::Unsupported { reason } => write!(f, "not supported: {reason}"),
            Error::Corruption { file, offset, what } => {
                f.write_str("corruption")?;
                if let Some(file) = file {
                    write!(f, " in {file}")?;
                }
                if let Some(offset) = offset {
                    write!(f, " at offset {offset}")?;
                }
                write!(f, ": {what}")
            }
            Error::ThreadFailed { task } => write!(f, "a helper thread stopped: {task}"),
            Error::NoBlockFound {
                offset,
                len,
                reason,
            } => {
                write!(
                    f,
                    "no block checks out in {len} bytes at offset {offset}: {reason}"
                )
            }
            Error::InFile { file, source } => write!(f, "{file}: {source}"),
            Error::BadLogRecord {
                offset,
                dropped,
                reason,
            } => write!(
                f,
                "log record at offset {offset}: {reason} ({dropped} bytes dropped)"
            ),
            Error::BadWriteBatch { offset, reason } => {
                write!(f, "bad WriteBatch: {reason} at offset {offset}")
            }
            Error::BadVersionEdit { offset, reason } => {
                write!(f, "bad VersionEdit: {reason} at offset {offset}")
            }
            Error::BadCurrent { reason } => write!(f, "bad CURRENT file: {reason}"),
            Error::UnknownComparator { name } => write!(
                f,
                "the database is ordered by comparator {name:?}, which this reader does not have \
                 (supply a Comparator with that name); refusing to read it in another order"
            ),
            Error::MissingFile { file } => {
                write!(f, "{file} is listed as live by the MANIFEST but is missing")
            }
            Error::UnsettledOrder { reason } => {
                write!(f, "refusing to read in an unsettled order: {reason}")
            }
            Error::NotADatabase { reason } => {
                write!(f, "not a LevelDB database: {reason}")
            }
            Error::OwnerRewriting { reason } => write!(
                f,
                "{reason}: the directory's owner is rewriting it faster than it can be read; \
                 read it while the owner is idle, or copy it (cp -a) and read the copy"
            ),
        }
    }
}
