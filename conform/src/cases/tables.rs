//! Generated tables (group `tables`): every compression, restart intervals 1..1024, block
//! sizes from 1 byte to 64 KiB, long shared prefixes, empty keys and values, 1 MiB values,
//! keys of 0x00 and 0xff bytes, a database's internal keys, every kind of filter (none,
//! LevelDB's, goleveldb's name, pre-1.18's signed hash, one no LevelDB knows), no entries.
//!
//! Each is written by this project's builder and read back by its reader before it is used:
//! the expected entries are the ones written.

use leveldb_table::table::KeyFormat;
use std::path::Path;
use std::sync::Arc;

use leveldb_table::filter::LegacyBloomFilterPolicy;
use leveldb_table::{Compression, Options, TableBuilder};

use super::data;
use super::filters::SignedTailBloom;
use super::{Case, Group, Input};
use crate::error::{Error, Result};
use crate::oracle;
use crate::protocol::Entry;

/// Writes `entries` as the table `dir/name.ldb` and returns its bytes.
pub(super) fn build(dir: &Path, name: &str, entries: &[Entry], opts: &Options) -> Result<Vec<u8>> {
    let fail = |e: leveldb_table::Error| Error::SelfCheck {
        case: name.to_string(),
        reason: format!("building the table: {e}"),
    };
    let mut b = TableBuilder::new(Vec::new(), opts).map_err(fail)?;
    for (k, v) in entries {
        b.add(k, v).map_err(fail)?;
    }
    let (bytes, _) = b.finish().map_err(fail)?;
    let path = dir.join(format!("{name}.ldb"));
    std::fs::write(&path, &bytes).map_err(|e| Error::io(&path, e))?;
    Ok(bytes)
}

/// A `read-table` case of the file `path`, whose right answer is `expected`; the
/// compressions it needs are those its blocks use.
pub(super) fn read_case(
    name: &str,
    group: Group,
    about: &str,
    path: &Path,
    bytes: &[u8],
    expected: Arc<Vec<Entry>>,
) -> Result<Case> {
    let compressions = oracle::compressions(bytes).map_err(|reason| Error::SelfCheck {
        case: name.to_string(),
        reason,
    })?;
    let mut c = Case::new(
        name,
        group,
        about,
        Input::Table {
            file: path.to_path_buf(),
            expected,
        },
    );
    c.compressions = compressions;
    Ok(c)
}

/// Builds a table, checks that this project's reader reads back exactly `entries`, and
/// makes its case.
fn generated(
    dir: &Path,
    name: &str,
    about: &str,
    entries: Vec<Entry>,
    opts: Options,
) -> Result<Case> {
    let bytes = build(dir, name, &entries, &opts)?;
    match oracle::table_entries(&bytes) {
        Ok(read) if read == entries => {}
        Ok(read) => {
            return Err(Error::SelfCheck {
                case: name.into(),
                reason: format!(
                    "{} entries written, {} read back differ",
                    entries.len(),
                    read.len()
                ),
            })
        }
        Err(reason) => {
            return Err(Error::SelfCheck {
                case: name.into(),
                reason,
            })
        }
    }
    let path = dir.join(format!("{name}.ldb"));
    read_case(name, Group::Tables, about, &path, &bytes, Arc::new(entries))
}

fn opts(c: Compression) -> Options {
    Options::default().compression(c)
}

/// The generated table cases.
pub(super) fn cases(dir: &Path) -> Result<Vec<Case>> {
    let mut out = Vec::new();
    let mut add = |name: &str, about: &str, entries: Vec<Entry>, o: Options| -> Result<()> {
        out.push(generated(dir, name, about, entries, o)?);
        Ok(())
    };
    let codecs: [(&str, Compression); 5] = [
        ("none", Compression::None),
        ("snappy", Compression::Snappy),
        ("zstd", Compression::Zstd(1)),
        ("zlib", Compression::Zlib(6)),
        ("deflate", Compression::RawDeflate(6)),
    ];
    for (name, c) in codecs {
        let about = format!("2000 entries, {name} blocks (id {}), bloom filter", c.id());
        add(
            &format!("table-{name}"),
            &about,
            data::words(2000, 1),
            opts(c).bloom(10),
        )?;
    }
    for ri in [1, 2, 3, 16, 100, 1024] {
        let about = format!("restart interval {ri}, 1500 entries, 4 KiB blocks");
        let o = opts(Compression::None).block_restart_interval(ri).bloom(10);
        add(
            &format!("table-restart-{ri}"),
            &about,
            data::words(1500, 2),
            o,
        )?;
    }
    for bs in [1, 64, 256, 1024, 4096, 16384, 65536] {
        let about = format!("block size {bs}, 3000 entries");
        let o = opts(Compression::None).block_size(bs).bloom(10);
        add(
            &format!("table-block-{bs}"),
            &about,
            data::words(3000, 3),
            o,
        )?;
    }
    add(
        "table-long-shared-prefix",
        "800 keys sharing a 3000-byte prefix, restart interval 16",
        data::shared_prefix(800, 3000, 4),
        opts(Compression::None).bloom(10),
    )?;
    add(
        "table-long-shared-prefix-ri1024",
        "800 keys sharing a 3000-byte prefix, restart interval 1024, snappy",
        data::shared_prefix(800, 3000, 5),
        opts(Compression::Snappy).block_restart_interval(1024),
    )?;
    add(
        "table-empty-keys-values",
        "the empty key, empty values",
        data::empty_keys_values(),
        opts(Compression::Snappy).bloom(10),
    )?;
    add(
        "table-1mib-values-none",
        "values of 1 MiB (words, random, zeros + 1 byte), no compression",
        data::big_values(6),
        opts(Compression::None),
    )?;
    add(
        "table-1mib-values-snappy",
        "values of 1 MiB (words, random, zeros + 1 byte), snappy where it pays",
        data::big_values(6),
        opts(Compression::Snappy).bloom(10),
    )?;
    add(
        "table-binary-keys",
        "keys and values of 0x00, 0xff and neighbours, edge keys 00, 0000, 00ff, ff, ff*16",
        data::binary(1500, 7),
        opts(Compression::Snappy).bloom(10).block_size(512),
    )?;
    add(
        "table-internal-keys",
        "a database's table: internal keys (user key + sequence/type), several versions, \
         deletions, filter over user keys",
        data::internal(1200, 8),
        opts(Compression::Snappy)
            .bloom(10)
            .keys(KeyFormat::Internal),
    )?;
    add(
        "table-no-filter",
        "no filter block (an empty metaindex)",
        data::words(2000, 9),
        opts(Compression::Snappy),
    )?;
    add(
        "table-filter-goleveldb-name",
        "bloom filter named leveldb.BuiltinBloomFilter (as goleveldb writes it)",
        data::words(2000, 10),
        opts(Compression::Snappy).filter_policy(Some(Arc::new(LegacyBloomFilterPolicy::new(10)))),
    )?;
    add(
        "table-filter-pre-1.18",
        "bloom filter of LevelDB < 1.18 on x86 (tail bytes hashed signed), binary keys",
        data::binary(1500, 11),
        opts(Compression::Snappy).filter_policy(Some(Arc::new(SignedTailBloom::new(10)))),
    )?;
    add(
        "table-filter-unknown",
        "a filter no LevelDB knows (this project's cache-local bloom): to be ignored",
        data::words(2000, 12),
        opts(Compression::Snappy).local_bloom(10.0),
    )?;
    add(
        "table-zero-entries",
        "no entries (snappy, bloom filter): an index block with no entries",
        Vec::new(),
        opts(Compression::Snappy).bloom(10),
    )?;
    add(
        "table-zero-entries-no-filter",
        "no entries, no filter, no compression",
        Vec::new(),
        opts(Compression::None),
    )?;
    add(
        "table-one-entry",
        "one entry",
        vec![(b"only".to_vec(), b"one".to_vec())],
        opts(Compression::Snappy).bloom(10),
    )?;
    add(
        "table-many-entries",
        "60000 entries, snappy, bloom filter",
        data::words(60_000, 13),
        opts(Compression::Snappy).bloom(10),
    )?;
    Ok(out)
}
