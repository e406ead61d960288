//! Damaged and hostile tables (group `damaged`), made from two base tables (600 entries,
//! 1 KiB blocks, bloom filter; no compression and snappy): a byte flipped in each kind of
//! block, trailer and footer (checksum left stale), truncations, a lost footer, garbage
//! after it; and hostile blocks whose checksums are valid (recomputed): a bad type byte,
//! impossible restart arrays, an entry sharing more than the previous key, index handles
//! past the end or of 1 TiB, random or 4 GiB-claiming snappy data.
//!
//! The right answer to each is an error, or the base table's entries exactly.

use std::path::Path;
use std::sync::Arc;

use leveldb_table::raw::coding::put_varint32;
use leveldb_table::raw::crc32c;
use leveldb_table::raw::format::{BlockHandle, Footer, BLOCK_TRAILER_LEN, FOOTER_LEN};
use leveldb_table::raw::BlockBuilder;
use leveldb_table::{Compression, Options};

use super::data::{self, Rng};
use super::tables::{build, read_case};
use super::{Case, Group};
use crate::error::{Error, Result};
use crate::oracle::{self, Layout};
use crate::protocol::Entry;

/// A base table and what is known of it.
struct Base {
    bytes: Vec<u8>,
    entries: Arc<Vec<Entry>>,
    layout: Layout,
    /// The index block's entries: separator key and data-block handle.
    index: Vec<(Vec<u8>, BlockHandle)>,
}

impl Base {
    fn new(dir: &Path, name: &str, c: Compression) -> Result<Base> {
        let entries = data::words(600, 30);
        let opts = Options::default().compression(c).block_size(1024).bloom(10);
        let bytes = build(dir, name, &entries, &opts)?;
        let fail = |reason| Error::SelfCheck {
            case: name.into(),
            reason,
        };
        let layout = oracle::layout(&bytes).map_err(fail)?;
        let index = leveldb_table::TableReader::open(&bytes[..], Default::default())
            .and_then(|t| t.data_block_handles())
            .map_err(|e| fail(e.to_string()))?;
        Ok(Base {
            bytes,
            entries: Arc::new(entries),
            layout,
            index,
        })
    }

    /// The handle of the `n`th block of kind `kind` (data blocks counted in file order).
    fn block(&self, kind: &str, n: usize) -> BlockHandle {
        let mut of_kind = self.layout.blocks.iter().filter(|(k, _)| *k == kind);
        let count = of_kind.clone().count();
        of_kind
            .nth(n.min(count.saturating_sub(1)))
            .map_or_else(BlockHandle::default, |b| b.1)
    }

    fn footer(&self) -> Footer {
        let index = self.block("index", 0);
        let metaindex = self.block("metaindex", 0);
        Footer { metaindex, index }
    }
}

/// The masked CRC LevelDB stores after a block of type `t`.
fn block_crc(block: &[u8], t: u8) -> u32 {
    crc32c::mask(crc32c::extend(crc32c::value(block), &[t]))
}

/// Recomputes the checksum of the block at `h` (after its bytes or type were changed).
fn seal(bytes: &mut [u8], h: BlockHandle) {
    let (start, end) = (h.offset as usize, (h.offset + h.size) as usize);
    let crc = block_crc(&bytes[start..end], bytes[end]);
    bytes[end + 1..end + BLOCK_TRAILER_LEN].copy_from_slice(&crc.to_le_bytes());
}

/// The base with its index block replaced by one of `index` (no compression), written where
/// the old one was, and the footer updated.
fn with_index(base: &Base, index: &[(Vec<u8>, BlockHandle)]) -> Vec<u8> {
    let mut b = BlockBuilder::new(1);
    let mut v = Vec::new();
    for (k, h) in index {
        v.clear();
        h.encode_to(&mut v);
        b.add(k, &v);
    }
    let block = b.finish().to_vec();
    let old = base.block("index", 0);
    let mut out = base.bytes[..old.offset as usize].to_vec();
    out.extend_from_slice(&block);
    out.push(0);
    out.extend_from_slice(&block_crc(&block, 0).to_le_bytes());
    let footer = Footer {
        metaindex: base.block("metaindex", 0),
        index: BlockHandle::new(old.offset, block.len() as u64),
    };
    out.extend_from_slice(&footer.encode());
    out
}

/// The base with its footer holding `metaindex` and `index`.
fn with_footer(base: &Base, metaindex: BlockHandle, index: BlockHandle) -> Vec<u8> {
    let mut out = base.bytes.clone();
    let at = out.len() - FOOTER_LEN;
    out[at..].copy_from_slice(&Footer { metaindex, index }.encode());
    out
}

fn flipped(base: &Base, at: u64, mask: u8) -> Vec<u8> {
    let mut out = base.bytes.clone();
    out[at as usize] ^= mask;
    out
}

fn middle(h: BlockHandle) -> u64 {
    h.offset + h.size / 2
}

fn cut(base: &Base, len: u64) -> Vec<u8> {
    base.bytes[..len as usize].to_vec()
}

/// The damaged table cases.
pub(super) fn cases(dir: &Path) -> Result<Vec<Case>> {
    let n = Base::new(dir, "base-none", Compression::None)?;
    let s = Base::new(dir, "base-snappy", Compression::Snappy)?;
    let len = n.bytes.len() as u64;
    let d1 = n.block("data", 1);
    let last = n.block("data", usize::MAX);
    let foot = len - FOOTER_LEN as u64;
    // The footer's index handle starts after the metaindex handle's two varints.
    let mut mh = Vec::new();
    n.footer().metaindex.encode_to(&mut mh);
    let mut recipes: Vec<(&str, &str, &Base, Vec<u8>)> = vec![
        (
            "damaged-data-flip-none",
            "a byte flipped in the middle of data block 1 (raw)",
            &n,
            flipped(&n, middle(d1), 0x10),
        ),
        (
            "damaged-data-flip-snappy",
            "a byte flipped in the middle of data block 1 (snappy)",
            &s,
            flipped(&s, middle(s.block("data", 1)), 0x10),
        ),
        (
            "damaged-data-first-byte",
            "the first byte of the first data block flipped",
            &n,
            flipped(&n, n.block("data", 0).offset, 0x01),
        ),
        (
            "damaged-data-last-block",
            "the last byte of the last data block (its restart count) flipped",
            &n,
            flipped(&n, last.offset + last.size - 1, 0x01),
        ),
        (
            "damaged-trailer-type",
            "data block 1's type byte 0 -> 1 (checksum stale)",
            &n,
            flipped(&n, d1.offset + d1.size, 0x01),
        ),
        (
            "damaged-trailer-crc",
            "a byte of data block 1's checksum flipped",
            &n,
            flipped(&n, d1.offset + d1.size + 2, 0x80),
        ),
        (
            "damaged-filter-flip",
            "a byte flipped in the filter block (the entries are intact)",
            &n,
            flipped(&n, middle(n.block("filter", 0)), 0x10),
        ),
        (
            "damaged-metaindex-flip",
            "a byte flipped in the metaindex block (the entries are intact)",
            &n,
            flipped(&n, middle(n.block("metaindex", 0)), 0x10),
        ),
        (
            "damaged-index-flip-none",
            "a byte flipped in the index block (raw)",
            &n,
            flipped(&n, middle(n.block("index", 0)), 0x10),
        ),
        (
            "damaged-index-flip-snappy",
            "a byte flipped in the index block (snappy)",
            &s,
            flipped(&s, middle(s.block("index", 0)), 0x10),
        ),
        (
            "damaged-footer-magic",
            "the last byte of the magic number flipped",
            &n,
            flipped(&n, len - 1, 0x01),
        ),
        (
            "damaged-footer-index-handle",
            "the footer's index handle offset off by one",
            &n,
            flipped(&n, foot + mh.len() as u64, 0x01),
        ),
        (
            "damaged-footer-padding",
            "a byte of the footer's zero padding set (the entries are intact)",
            &n,
            flipped(&n, foot + 39, 0xff),
        ),
        ("damaged-truncated-empty", "an empty file", &n, Vec::new()),
        (
            "damaged-truncated-47",
            "the first 47 bytes (shorter than a footer)",
            &n,
            cut(&n, 47),
        ),
        (
            "damaged-truncated-half",
            "cut to half its length",
            &n,
            cut(&n, len / 2),
        ),
        (
            "damaged-truncated-at-index",
            "cut where the index block starts (index and footer lost)",
            &n,
            cut(&n, n.block("index", 0).offset),
        ),
        (
            "damaged-footer-lost",
            "the 48-byte footer cut off",
            &n,
            cut(&n, foot),
        ),
        (
            "damaged-truncated-last-byte",
            "the last byte cut off",
            &n,
            cut(&n, len - 1),
        ),
        (
            "damaged-garbage-appended",
            "64 bytes of garbage after the footer",
            &n,
            {
                let mut v = n.bytes.clone();
                v.extend((0..64u8).map(|i| i.wrapping_mul(37)));
                v
            },
        ),
    ];
    let hostile = hostile(&n, &s);
    recipes.extend(
        hostile
            .iter()
            .map(|(a, b, base, v)| (*a, *b, *base, v.clone())),
    );
    let mut out = Vec::new();
    for (name, about, base, bytes) in recipes {
        let path = dir.join(format!("{name}.ldb"));
        std::fs::write(&path, &bytes).map_err(|e| Error::io(&path, e))?;
        // What the case needs is what the base table needs.
        let mut c = read_case(
            name,
            Group::Damaged,
            about,
            &path,
            &base.bytes,
            base.entries.clone(),
        )?;
        c.about = about.to_string();
        out.push(c);
    }
    Ok(out)
}

type Recipe<'a> = (&'static str, &'static str, &'a Base, Vec<u8>);

/// Hostile tables: every checksum valid.
fn hostile<'a>(n: &'a Base, s: &'a Base) -> Vec<Recipe<'a>> {
    let d1 = n.block("data", 1);
    let end = (d1.offset + d1.size) as usize;
    let sealed = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut v = n.bytes.clone();
        f(&mut v);
        seal(&mut v, d1);
        v
    };
    let mut index_past_eof = n.index.clone();
    index_past_eof[1].1.offset = n.bytes.len() as u64 + 1000;
    let mut index_huge = n.index.clone();
    index_huge[1].1.size = 1 << 40;
    let sd1 = s.block("data", 1);
    let snappy_block = |f: &dyn Fn(&[u8]) -> Vec<u8>| {
        let mut v = s.bytes.clone();
        let (a, b) = (sd1.offset as usize, (sd1.offset + sd1.size) as usize);
        let new = f(&v[a..b]);
        v[a..b].copy_from_slice(&new[..b - a]);
        seal(&mut v, sd1);
        v
    };
    let foot = n.footer();
    vec![
        (
            "hostile-block-type-7",
            "data block 1 with type byte 7 (no such compression), checksum valid",
            n,
            sealed(&|v| v[end] = 7),
        ),
        (
            "hostile-restarts-huge",
            "data block 1 claiming 0xfffffff0 restart points, checksum valid",
            n,
            sealed(&|v| v[end - 4..end].copy_from_slice(&0xffff_fff0u32.to_le_bytes())),
        ),
        (
            "hostile-restarts-zero",
            "data block 1 claiming no restart points, checksum valid",
            n,
            sealed(&|v| v[end - 4..end].copy_from_slice(&0u32.to_le_bytes())),
        ),
        (
            "hostile-restart-past-block",
            "data block 1's first restart point past its entries, checksum valid",
            n,
            sealed(&|v| {
                let count =
                    u32::from_le_bytes([v[end - 4], v[end - 3], v[end - 2], v[end - 1]]) as usize;
                let first = end - 4 - 4 * count;
                v[first..first + 4].copy_from_slice(&(d1.size as u32 - 4).to_le_bytes());
            }),
        ),
        (
            "hostile-shared-past-key",
            "data block 1's first entry sharing 5 bytes with no previous key, checksum valid",
            n,
            sealed(&|v| v[d1.offset as usize] = 5),
        ),
        (
            "hostile-index-offset-past-eof",
            "an index entry pointing past the end of the file",
            n,
            with_index(n, &index_past_eof),
        ),
        (
            "hostile-index-size-1tib",
            "an index entry claiming a block of 1 TiB",
            n,
            with_index(n, &index_huge),
        ),
        (
            "hostile-footer-index-1tib",
            "the footer's index handle claiming 1 TiB",
            n,
            with_footer(
                n,
                foot.metaindex,
                BlockHandle::new(foot.index.offset, 1 << 40),
            ),
        ),
        (
            "hostile-footer-metaindex-past-eof",
            "the footer's metaindex handle past the end (the entries are intact)",
            n,
            with_footer(
                n,
                BlockHandle::new(n.bytes.len() as u64 + 10, 50),
                foot.index,
            ),
        ),
        (
            "hostile-snappy-garbage",
            "snappy data block 1 replaced by random bytes, checksum valid",
            s,
            snappy_block(&|b| {
                let mut rng = Rng::new(31);
                (0..b.len()).map(|_| rng.next_u64() as u8).collect()
            }),
        ),
        (
            "hostile-snappy-length-4gib",
            "snappy data block 1 claiming 4 GiB uncompressed, checksum valid",
            s,
            snappy_block(&|b| {
                let mut v = Vec::new();
                put_varint32(&mut v, 0xffff_fff0);
                // Drops the old length and as many payload bytes as the new one is longer.
                v.extend_from_slice(&b[v.len().min(b.len())..]);
                v.resize(b.len(), 0);
                v
            }),
        ),
    ]
}
