//! Shared helpers of the `robust_*` tests: a seeded PRNG, a table taken apart into its blocks
//! and put back together (so a mutation inside a block can keep a valid CRC and so reach the
//! parser behind the checksum), a mutant generator, and a bounded "use everything" routine.
//!
//! Included by each `tests/robust_*.rs` with `mod robust_common;`; not every test uses every
//! helper.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use leveldb_table::raw::BlockBuilder;
use leveldb_table::raw::{coding, compress as rcompress, format as rformat};
use leveldb_table::Cursor;
use leveldb_table::{
    error::BlockKind, raw::format::BlockHandle, raw::format::Footer, table::CompressionProfile,
    table::KeyFormat, BytewiseComparator, Error, OpenOptions, RandomAccess, ReadOptions,
    TableReader,
};

// ---------------------------------------------------------------------------------------
// Files

pub fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

pub fn read_testdata(rel: &str) -> Vec<u8> {
    std::fs::read(testdata(rel)).unwrap_or_else(|e| panic!("read testdata/{rel}: {e}"))
}

// ---------------------------------------------------------------------------------------
// PRNG: splitmix64, deterministic across platforms and Rust versions.

#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn byte(&mut self) -> u8 {
        self.next_u64() as u8
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }
}

// ---------------------------------------------------------------------------------------
// A table taken apart.

/// A block as stored: its bytes (compressed or not) and the trailer's type byte.
#[derive(Clone, Debug)]
pub struct Stored {
    pub bytes: Vec<u8>,
    pub ctype: u8,
}

/// Which block `assemble` is about to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Data(usize),
    Filter,
    Metaindex,
    Index,
    /// The 48-byte footer (`ctype` is ignored).
    Footer,
}

/// What has been written when a hook runs.
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    /// Offset the block being written will start at.
    pub offset: u64,
    pub data: Vec<BlockHandle>,
    pub filter: Option<BlockHandle>,
    pub metaindex: Option<BlockHandle>,
    pub index: Option<BlockHandle>,
}

/// A table as a list of blocks.
#[derive(Clone, Debug)]
pub struct Parts {
    /// (index separator key, data block).
    pub data: Vec<(Vec<u8>, Stored)>,
    /// (metaindex key, filter block).
    pub filter: Option<(Vec<u8>, Stored)>,
}

impl Parts {
    /// Takes a valid table apart, keeping every block as stored (compressed or not).
    pub fn from_table(bytes: &[u8]) -> Parts {
        let t = TableReader::open(bytes, OpenOptions::default().keys(KeyFormat::Plain))
            .expect("Parts::from_table needs a valid table");
        let stored = |h: BlockHandle| {
            let at = h.offset as usize;
            let end = at + h.size as usize;
            Stored {
                bytes: bytes[at..end].to_vec(),
                ctype: bytes[end],
            }
        };
        let data = t
            .data_block_handles()
            .expect("index")
            .into_iter()
            .map(|(sep, h)| (sep, stored(h)))
            .collect();
        let filter = t
            .metaindex()
            .iter()
            .find(|(k, _)| k.starts_with(b"filter."))
            .map(|(k, h)| (k.clone(), stored(*h)));
        Parts { data, filter }
    }

    /// The same table with every data block stored uncompressed.
    pub fn uncompressed(&self) -> Parts {
        let mut p = self.clone();
        for (_, s) in &mut p.data {
            *s = Stored {
                bytes: decompress(s),
                ctype: 0,
            };
        }
        p
    }

    /// Writes the table; `hook` may change each block (or the footer) before it is written.
    /// Trailers are computed after the hook, so their CRCs are valid.
    pub fn assemble(&self, hook: &mut dyn FnMut(Part, &mut Stored, &Ctx)) -> Vec<u8> {
        let mut out = Vec::new();
        let mut ctx = Ctx::default();
        fn put(out: &mut Vec<u8>, s: &Stored) -> BlockHandle {
            let h = BlockHandle::new(out.len() as u64, s.bytes.len() as u64);
            out.extend_from_slice(&s.bytes);
            out.extend_from_slice(&rformat::block_trailer(&s.bytes, s.ctype));
            h
        }
        for (i, (_, s)) in self.data.iter().enumerate() {
            let mut s = s.clone();
            ctx.offset = out.len() as u64;
            hook(Part::Data(i), &mut s, &ctx);
            ctx.data.push(put(&mut out, &s));
        }
        if let Some((_, s)) = &self.filter {
            let mut s = s.clone();
            ctx.offset = out.len() as u64;
            hook(Part::Filter, &mut s, &ctx);
            ctx.filter = Some(put(&mut out, &s));
        }
        let mut meta = BlockBuilder::new(16);
        if let (Some((k, _)), Some(h)) = (&self.filter, ctx.filter) {
            let mut v = Vec::new();
            h.encode_to(&mut v);
            meta.add(k, &v);
        }
        let mut s = Stored {
            bytes: meta.finish().to_vec(),
            ctype: 0,
        };
        ctx.offset = out.len() as u64;
        hook(Part::Metaindex, &mut s, &ctx);
        ctx.metaindex = Some(put(&mut out, &s));
        let values: Vec<Vec<u8>> = ctx
            .data
            .iter()
            .map(|h| {
                let mut v = Vec::new();
                h.encode_to(&mut v);
                v
            })
            .collect();
        let seps: Vec<&[u8]> = self.data.iter().map(|(k, _)| &k[..]).collect();
        let mut s = Stored {
            bytes: build_block(&seps, &values, 1),
            ctype: 0,
        };
        ctx.offset = out.len() as u64;
        hook(Part::Index, &mut s, &ctx);
        ctx.index = Some(put(&mut out, &s));
        let footer = Footer {
            metaindex: ctx.metaindex.unwrap(),
            index: ctx.index.unwrap(),
        };
        let mut s = Stored {
            bytes: footer.encode().to_vec(),
            ctype: 0,
        };
        ctx.offset = out.len() as u64;
        hook(Part::Footer, &mut s, &ctx);
        out.extend_from_slice(&s.bytes);
        out
    }

    /// The handle of every block of `table` (data blocks, filter, metaindex, index), as its
    /// footer, index and metaindex give them.
    pub fn regions(table: &[u8]) -> Vec<(BlockKind, BlockHandle)> {
        let t = TableReader::open(table, OpenOptions::default().keys(KeyFormat::Plain))
            .expect("valid table");
        let mut out: Vec<(BlockKind, BlockHandle)> = t
            .data_block_handles()
            .unwrap()
            .into_iter()
            .map(|(_, h)| (BlockKind::Data, h))
            .collect();
        if let Some(h) = t.filter_handle() {
            out.push((BlockKind::Filter, h));
        }
        out.push((BlockKind::Metaindex, t.footer().metaindex));
        out.push((BlockKind::Index, t.footer().index));
        out
    }
}

/// Decompresses a stored block (must be valid).
pub fn decompress(s: &Stored) -> Vec<u8> {
    if s.ctype == 0 {
        s.bytes.clone()
    } else {
        rcompress::decompress(s.ctype, &s.bytes, CompressionProfile::Auto).expect("valid block")
    }
}

/// Builds a block with `BlockBuilder`.
pub fn build_block(keys: &[&[u8]], values: &[Vec<u8>], restart_interval: usize) -> Vec<u8> {
    let mut b = BlockBuilder::new(restart_interval);
    for (k, v) in keys.iter().zip(values) {
        b.add(k, v);
    }
    b.finish().to_vec()
}

/// The (key, value) entries of a valid uncompressed block.
pub fn block_entries(data: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let block = leveldb_table::raw::Block::from_bytes(data.to_vec()).expect("valid block");
    let mut it = block.iter(&BytewiseComparator);
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

/// Recomputes the trailer CRC of the block at `h` in `table` (after its bytes changed).
pub fn fix_crc(table: &mut [u8], h: BlockHandle) {
    let at = h.offset as usize;
    let end = at + h.size as usize;
    if end + 5 > table.len() {
        return;
    }
    let trailer = rformat::block_trailer(&table[at..end], table[end]);
    table[end..end + 5].copy_from_slice(&trailer);
}

/// Appends a varint64 with `extra` needless continuation bytes (a non-minimal encoding that
/// LevelDB's decoder accepts).
pub fn put_overlong_varint(dst: &mut Vec<u8>, v: u64, extra: usize) {
    let mut tmp = Vec::new();
    coding::put_varint64(&mut tmp, v);
    let last = tmp.len() - 1;
    for (i, b) in tmp.iter().enumerate() {
        dst.push(if i == last && extra > 0 { b | 0x80 } else { *b });
    }
    for i in 0..extra {
        dst.push(if i + 1 == extra { 0 } else { 0x80 });
    }
}

/// Writes the header of entry `i` (shared, non_shared, value_len) into the buffer.
pub type HeaderTweak<'a> = &'a mut dyn FnMut(usize, &mut Vec<u8>, u32, u32, u32);

/// Encodes entries as a block with shared-prefix compression, with `tweak` choosing each
/// entry's header fields (shared, non_shared, value_len) as raw bytes.
pub fn encode_block_with(
    entries: &[(Vec<u8>, Vec<u8>)],
    restart_interval: usize,
    tweak: HeaderTweak<'_>,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut restarts = Vec::new();
    let mut prev: &[u8] = &[];
    for (i, (k, v)) in entries.iter().enumerate() {
        let shared = if i % restart_interval == 0 {
            restarts.push(out.len() as u32);
            0
        } else {
            prev.iter().zip(k).take_while(|(a, b)| a == b).count()
        };
        let mut header = Vec::new();
        tweak(
            i,
            &mut header,
            shared as u32,
            (k.len() - shared) as u32,
            v.len() as u32,
        );
        out.extend_from_slice(&header);
        out.extend_from_slice(&k[shared..]);
        out.extend_from_slice(v);
        prev = k;
    }
    if restarts.is_empty() {
        restarts.push(0);
    }
    for r in &restarts {
        coding::put_fixed32(&mut out, *r);
    }
    coding::put_fixed32(&mut out, restarts.len() as u32);
    out
}

pub fn plain_header(h: &mut Vec<u8>, a: u32, b: u32, c: u32) {
    coding::put_varint32(h, a);
    coding::put_varint32(h, b);
    coding::put_varint32(h, c);
}

// ---------------------------------------------------------------------------------------
// Mutants

/// A mutated table and what was done to it.
pub struct Mutant {
    pub desc: String,
    pub bytes: Vec<u8>,
}

/// One mutant of `table` (a valid table, `parts` its blocks), chosen by `rng`.
/// Byte-level mutations leave CRCs as they are unless the description says "crc fixed";
/// structural ones re-assemble the table, so every CRC is valid and the parsers behind the
/// checksums are reached.
pub fn mutate(
    table: &[u8],
    parts: &Parts,
    regions: &[(BlockKind, BlockHandle)],
    rng: &mut Rng,
) -> Mutant {
    let n = table.len();
    let mut t = table.to_vec();
    let kind = rng.below(24);
    let desc: String = match kind {
        0 | 1 => {
            let pos = rng.below(n);
            let bit = rng.below(8);
            t[pos] ^= 1 << bit;
            format!("bit flip at {pos} bit {bit}")
        }
        2 | 3 => {
            // Flip inside a block and fix its CRC: reaches the decompressor / block parser.
            let (k, h) = *rng.pick(regions);
            if h.size == 0 {
                return mutate(table, parts, regions, rng);
            }
            let pos = h.offset as usize + rng.below(h.size as usize);
            let bit = rng.below(8);
            t[pos] ^= 1 << bit;
            fix_crc(&mut t, h);
            format!("bit flip at {pos} bit {bit} in {k} block {h:?}, crc fixed")
        }
        4 => {
            let pos = rng.below(n);
            let len = 1 + rng.below(64.min(n - pos));
            let r = rng.byte();
            let v = *rng.pick(&[0u8, 0xff, 0x80, r]);
            t[pos..pos + len].fill(v);
            let fixed = rng.below(2) == 0;
            if fixed {
                for (_, h) in regions {
                    fix_crc(&mut t, *h);
                }
            }
            format!(
                "run of {len} bytes {v:#04x} at {pos}{}",
                if fixed { ", crcs fixed" } else { "" }
            )
        }
        5 => {
            let len = rng.below(n);
            t.truncate(len);
            format!("truncated to {len}")
        }
        6 => {
            let extra = 1 + rng.below(300);
            let junk = rng.bytes(extra);
            t.extend_from_slice(&junk);
            format!("garbage appended: {extra} bytes")
        }
        7 => {
            // Garbage between the index and the footer: every handle is still right.
            let extra = 1 + rng.below(300);
            let junk = rng.bytes(extra);
            let at = n - 48;
            t.splice(at..at, junk);
            format!("garbage before the footer: {extra} bytes")
        }
        8 => {
            // Random handles in the footer.
            let mut f = Vec::new();
            let vals = [
                0u64,
                1,
                4,
                5,
                (n - 48) as u64,
                n as u64,
                u64::MAX,
                1 << 40,
                rng.below(n) as u64,
            ];
            for _ in 0..4 {
                coding::put_varint64(&mut f, *rng.pick(&vals));
            }
            f.resize(40, 0);
            t[n - 48..n - 8].copy_from_slice(&f);
            format!("footer handles replaced by {:?}", &f[..20])
        }
        _ => return structural(parts, rng, kind),
    };
    Mutant { desc, bytes: t }
}

fn structural(parts: &Parts, rng: &mut Rng, kind: usize) -> Mutant {
    // Half the time work on the uncompressed form (so block contents are easy to reach).
    let raw = rng.below(2) == 0;
    let p = if raw {
        parts.uncompressed()
    } else {
        parts.clone()
    };
    let nd = p.data.len().max(1);
    let target = rng.below(nd);
    let choice = rng.next_u64();
    let desc: String;
    let bytes = match kind {
        9 => {
            // Footer handles pointing past EOF or overlapping other blocks.
            let which = choice % 10;
            desc = format!("footer handle variant {which}");
            p.assemble(&mut |part, s, ctx| {
                if part != Part::Footer {
                    return;
                }
                let (mut m, mut i) = (ctx.metaindex.unwrap(), ctx.index.unwrap());
                let end = ctx.offset;
                match which {
                    0 => i = BlockHandle::new(end, 10),
                    1 => i = BlockHandle::new(u64::MAX - 2, 10),
                    2 => i = BlockHandle::new(0, u64::MAX),
                    3 => i = ctx.data.first().copied().unwrap_or(m),
                    4 => i = m,
                    5 => m = i,
                    6 => i = BlockHandle::new(0, end - 5),
                    7 => m = BlockHandle::new(0, 0),
                    8 => i = BlockHandle::new(i.offset, 3),
                    _ => i = BlockHandle::new(i.offset + 1, i.size),
                }
                s.bytes = Footer {
                    metaindex: m,
                    index: i,
                }
                .encode()
                .to_vec();
            })
        }
        10 => {
            // Overlong varints in the footer: 11-byte (invalid) or non-minimal (valid).
            let which = choice % 3;
            desc = format!("footer overlong varint variant {which}");
            p.assemble(&mut |part, s, ctx| {
                if part != Part::Footer {
                    return;
                }
                let (m, i) = (ctx.metaindex.unwrap(), ctx.index.unwrap());
                let mut f = Vec::new();
                match which {
                    0 => {
                        f.extend_from_slice(&[0x80; 11]);
                        f.push(0);
                    }
                    1 => {
                        put_overlong_varint(&mut f, m.offset, 2);
                        put_overlong_varint(&mut f, m.size, 1);
                        put_overlong_varint(&mut f, i.offset, 3);
                        put_overlong_varint(&mut f, i.size, 2);
                    }
                    _ => {
                        // Ten bytes with bits past 64 set: the extra bits are dropped.
                        f.extend_from_slice(&[0xff; 9]);
                        f.push(0x7f);
                        i.encode_to(&mut f);
                    }
                }
                f.resize(40, 0);
                coding::put_fixed64(&mut f, rformat::TABLE_MAGIC);
                s.bytes = f;
            })
        }
        11 | 12 => {
            // Index values: past EOF, overlapping, self-referencing, tiny, overlong, junk.
            let which = choice % 11;
            desc = format!("index value variant {which} at entry {target}");
            let seps: Vec<Vec<u8>> = p.data.iter().map(|(k, _)| k.clone()).collect();
            p.assemble(&mut |part, s, ctx| {
                if part != Part::Index {
                    return;
                }
                let mut values: Vec<Vec<u8>> = ctx
                    .data
                    .iter()
                    .map(|h| {
                        let mut v = Vec::new();
                        h.encode_to(&mut v);
                        v
                    })
                    .collect();
                if values.is_empty() {
                    return;
                }
                let h = ctx.data[target];
                let mut v = Vec::new();
                match which {
                    0 => BlockHandle::new(ctx.offset + 100, 10).encode_to(&mut v),
                    1 => BlockHandle::new(h.offset, u64::MAX).encode_to(&mut v),
                    2 => ctx.data[0].encode_to(&mut v),
                    3 => ctx
                        .filter
                        .unwrap_or(ctx.metaindex.unwrap())
                        .encode_to(&mut v),
                    4 => ctx.metaindex.unwrap().encode_to(&mut v),
                    5 => BlockHandle::new(h.offset, 0).encode_to(&mut v),
                    6 => BlockHandle::new(h.offset, 2).encode_to(&mut v),
                    7 => v.extend_from_slice(&[0x80; 11]),
                    8 => {
                        h.encode_to(&mut v);
                        v.extend_from_slice(b"trailing junk");
                    }
                    9 => BlockHandle::new(h.offset + 1, h.size).encode_to(&mut v),
                    _ => BlockHandle::new(0, ctx.offset - 5).encode_to(&mut v),
                }
                values[target] = v;
                if which == 2 {
                    // Every entry points at block 0.
                    for x in values.iter_mut() {
                        x.clone_from(&values_first(ctx));
                    }
                }
                let keys: Vec<&[u8]> = seps.iter().map(|k| &k[..]).collect();
                s.bytes = build_block(&keys, &values, 1);
            })
        }
        13 => {
            // Huge or wrong restart counts in a data block, the index or the metaindex.
            let which_part = *rng.pick(&[Part::Data(target), Part::Index, Part::Metaindex]);
            let variant = choice % 6;
            desc = format!("restart count variant {variant} in {which_part:?}");
            let raw_only = which_part != Part::Data(target) || raw;
            if !raw_only {
                return structural(parts, rng, kind);
            }
            p.assemble(&mut |part, s, _| {
                if part != which_part || s.ctype != 0 {
                    return;
                }
                let len = s.bytes.len();
                if len < 4 {
                    return;
                }
                let v: u32 = match variant {
                    0 => u32::MAX,
                    1 => ((len - 4) / 4) as u32,
                    2 => ((len - 4) / 4 + 1) as u32,
                    3 => 0,
                    4 => 1 << 28,
                    _ => 0x8000_0000,
                };
                s.bytes[len - 4..].copy_from_slice(&v.to_le_bytes());
            })
        }
        14 => {
            // Restart points past the entries, into the middle of an entry, descending.
            let which_part = *rng.pick(&[Part::Data(target), Part::Index]);
            let variant = choice % 4;
            desc = format!("restart point variant {variant} in {which_part:?}");
            let pick = rng.next_u64();
            p.assemble(&mut |part, s, _| {
                if part != which_part || s.ctype != 0 || s.bytes.len() < 8 {
                    return;
                }
                let len = s.bytes.len();
                let num = coding::decode_fixed32(&s.bytes[len - 4..]) as usize;
                if num == 0 || num * 4 + 4 > len {
                    return;
                }
                let arr = len - 4 - num * 4;
                let j = (pick % num as u64) as usize;
                let at = arr + 4 * j;
                let v: u32 = match variant {
                    0 => arr as u32 + 1,
                    1 => u32::MAX,
                    2 => (pick >> 32) as u32 % (arr as u32 + 1),
                    _ => 0,
                };
                s.bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
                if variant == 3 {
                    // Descending: reverse the whole array.
                    let mut pts: Vec<[u8; 4]> = s.bytes[arr..arr + 4 * num]
                        .chunks(4)
                        .map(|c| [c[0], c[1], c[2], c[3]])
                        .collect();
                    pts.reverse();
                    for (i, c) in pts.iter().enumerate() {
                        s.bytes[arr + 4 * i..arr + 4 * i + 4].copy_from_slice(c);
                    }
                }
            })
        }
        15 | 16 => {
            // Entry headers: overlong (valid) varints, too-long varints, huge lengths,
            // shared longer than the previous key.
            let which_part = *rng.pick(&[Part::Data(target), Part::Index]);
            let variant = choice % 7;
            let victim = rng.next_u64();
            desc = format!("entry header variant {variant} in {which_part:?}");
            let interval = 1 + rng.below(16);
            p.assemble(&mut |part, s, _| {
                if part != which_part {
                    return;
                }
                let plain = decompress(s);
                let entries = block_entries(&plain);
                if entries.is_empty() {
                    return;
                }
                let j = (victim % entries.len() as u64) as usize;
                let restart = if which_part == Part::Index {
                    1
                } else {
                    interval
                };
                s.bytes = encode_block_with(&entries, restart, &mut |i, h, a, b, c| {
                    if i != j {
                        return plain_header(h, a, b, c);
                    }
                    match variant {
                        0 => {
                            put_overlong_varint(h, a.into(), 2);
                            put_overlong_varint(h, b.into(), 1);
                            put_overlong_varint(h, c.into(), 3);
                        }
                        1 => {
                            h.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
                            coding::put_varint32(h, b);
                            coding::put_varint32(h, c);
                        }
                        2 => plain_header(h, a, u32::MAX, c),
                        3 => plain_header(h, a, b, u32::MAX),
                        4 => plain_header(h, a + 1000, b, c),
                        5 => plain_header(h, a, b.wrapping_add(1), c),
                        _ => plain_header(h, a, b, c.saturating_sub(1)),
                    }
                });
                s.ctype = 0;
            })
        }
        17 | 18 => {
            // The filter block: base_lg, k bytes, array start, offsets.
            let variant = (choice % 9) as usize;
            desc = format!("filter variant {variant}");
            let pick = rng.next_u64();
            p.assemble(&mut |part, s, _| {
                if part != Part::Filter {
                    return;
                }
                let b = &mut s.bytes;
                let len = b.len();
                if len < 5 {
                    return;
                }
                let array_start = coding::decode_fixed32(&b[len - 5..]) as usize;
                match variant {
                    0 => b[len - 1] = 0,
                    1 => b[len - 1] = 63,
                    2 => b[len - 1] = 200,
                    3..=5 => {
                        // k byte of every filter: 0, 31, 255.
                        let k = [0u8, 31, 255][variant - 3];
                        if array_start <= len - 5 {
                            let num = (len - 5 - array_start) / 4;
                            for i in 0..num {
                                let lim_at = array_start + 4 * i + 4;
                                let limit = coding::decode_fixed32(&b[lim_at..]) as usize;
                                let start = coding::decode_fixed32(&b[lim_at - 4..]) as usize;
                                if start < limit && limit <= array_start {
                                    b[limit - 1] = k;
                                }
                            }
                        }
                    }
                    6 => {
                        let v =
                            [u32::MAX, 0, (len - 4) as u32, (len - 5) as u32][(pick % 4) as usize];
                        b[len - 5..len - 1].copy_from_slice(&v.to_le_bytes());
                    }
                    7 => {
                        if array_start + 4 <= len - 5 {
                            let num = (len - 5 - array_start) / 4;
                            let i = (pick % num.max(1) as u64) as usize;
                            let v = [u32::MAX, array_start as u32 + 1, 0][(pick >> 8) as usize % 3];
                            b[array_start + 4 * i..array_start + 4 * i + 4]
                                .copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    _ => {
                        // Filter bytes zeroed: every key is "not present".
                        let end = array_start.min(len);
                        b[..end].fill(0);
                    }
                }
            })
        }
        19 => {
            // The metaindex: filter handle past EOF / onto another block / empty; names.
            let variant = choice % 7;
            desc = format!("metaindex variant {variant}");
            let fname = p.filter.as_ref().map(|(k, _)| k.clone());
            p.assemble(&mut |part, s, ctx| {
                if part != Part::Metaindex {
                    return;
                }
                let name = fname
                    .clone()
                    .unwrap_or_else(|| b"filter.leveldb.BuiltinBloomFilter2".to_vec());
                let fh = ctx.filter.unwrap_or(BlockHandle::new(0, 10));
                let (key, h): (Vec<u8>, Vec<u8>) = match variant {
                    0 => (name, enc(BlockHandle::new(ctx.offset + 1000, 10))),
                    1 => (name, enc(ctx.data.first().copied().unwrap_or(fh))),
                    2 => (name, enc(BlockHandle::new(fh.offset, 0))),
                    3 => (b"filter.rocksdb.BuiltinBloomFilter".to_vec(), enc(fh)),
                    4 => (b"filter.unknown.policy".to_vec(), enc(fh)),
                    5 => (name, vec![0x80; 11]),
                    _ => (b"filter.leveldb.BuiltinBloomFilter".to_vec(), enc(fh)),
                };
                s.bytes = build_block(&[&key], &[h], 16);
            })
        }
        20 | 21 => {
            // Compression: lying snappy preamble, unknown type, other codecs on garbage.
            let variant = choice % 7;
            desc = format!("compression variant {variant} in data block {target}");
            p.assemble(&mut |part, s, _| {
                if part != Part::Data(target) {
                    return;
                }
                let plain = decompress(s);
                match variant {
                    0 | 1 => {
                        // Snappy stream whose length preamble claims 1 GiB (or 32x + 1).
                        let mut c = Vec::new();
                        rcompress::compress(leveldb_table::Compression::Snappy, &plain, &mut c)
                            .unwrap();
                        let (_, nlen) = coding::decode_varint32(&c).unwrap();
                        let claim = if variant == 0 {
                            1u64 << 30
                        } else {
                            (c.len() as u64) * 32 + 1
                        };
                        let mut b = Vec::new();
                        coding::put_varint64(&mut b, claim);
                        b.extend_from_slice(&c[nlen..]);
                        *s = Stored { bytes: b, ctype: 1 };
                    }
                    2 => {
                        *s = Stored {
                            bytes: plain,
                            ctype: 7,
                        }
                    }
                    3 => {
                        *s = Stored {
                            bytes: plain,
                            ctype: 2,
                        }
                    }
                    4 => {
                        *s = Stored {
                            bytes: plain,
                            ctype: 4,
                        }
                    }
                    5 => {
                        // A zstd frame header claiming a 1 GiB content size.
                        let mut b = rformat::ZSTD_FRAME_MAGIC.to_vec();
                        b.push(0xa0); // FCS field 4 bytes, single segment
                        b.extend_from_slice(&(1u32 << 30).to_le_bytes());
                        b.extend_from_slice(&plain[..plain.len().min(64)]);
                        *s = Stored { bytes: b, ctype: 3 };
                    }
                    _ => {
                        // Valid snappy of the block, then a byte flipped in the stream.
                        let mut c = Vec::new();
                        rcompress::compress(leveldb_table::Compression::Snappy, &plain, &mut c)
                            .unwrap();
                        let at = 1 + (choice as usize >> 8) % (c.len() - 1).max(1);
                        if at < c.len() {
                            c[at] ^= 1 << ((choice >> 40) % 8);
                        }
                        *s = Stored { bytes: c, ctype: 1 };
                    }
                }
            })
        }
        _ => {
            // Separators: out of order, all equal, empty.
            let variant = choice % 3;
            desc = format!("index separator variant {variant}");
            let mut q = p.clone();
            match variant {
                0 => q.data.reverse(),
                1 => {
                    let k = q.data.first().map(|d| d.0.clone()).unwrap_or_default();
                    for d in &mut q.data {
                        d.0.clone_from(&k);
                    }
                }
                _ => {
                    for d in &mut q.data {
                        d.0.clear();
                    }
                }
            }
            q.assemble(&mut |_, _, _| {})
        }
    };
    Mutant {
        desc: format!("{desc}{}", if raw { " (uncompressed form)" } else { "" }),
        bytes,
    }
}

fn values_first(ctx: &Ctx) -> Vec<u8> {
    enc(ctx.data[0])
}

fn enc(h: BlockHandle) -> Vec<u8> {
    let mut v = Vec::new();
    h.encode_to(&mut v);
    v
}

// ---------------------------------------------------------------------------------------
// A source that checks and counts the reader's reads.

/// Counts reads, and records any read that asks for bytes past the end of the source.
pub struct Checked {
    pub inner: Bytes,
    pub bad_reads: AtomicU64,
    pub max_len: AtomicU64,
    /// Reported to the reader as a zero-copy source (its reads are slices of `inner`, as a
    /// memory map's are).
    pub zero_copy: bool,
}

impl Checked {
    pub fn new(b: &[u8]) -> Self {
        Checked {
            inner: Bytes::copy_from_slice(b),
            bad_reads: AtomicU64::new(0),
            max_len: AtomicU64::new(0),
            zero_copy: false,
        }
    }
}

impl RandomAccess for Checked {
    fn size(&self) -> io::Result<u64> {
        Ok(self.inner.len() as u64)
    }
    fn read_at(&self, offset: u64, len: usize) -> io::Result<Bytes> {
        if offset
            .checked_add(len as u64)
            .is_none_or(|e| e > self.inner.len() as u64)
        {
            self.bad_reads.fetch_add(1, Ordering::Relaxed);
        }
        self.max_len.fetch_max(len as u64, Ordering::Relaxed);
        self.inner.read_at(offset, len)
    }
    fn is_zero_copy(&self) -> bool {
        self.zero_copy
    }
    fn as_slice(&self) -> Option<&[u8]> {
        self.zero_copy.then_some(&self.inner[..])
    }
}

// ---------------------------------------------------------------------------------------
// Using a table every way, with bounds on work.

/// Reader settings a mutant is opened with.
#[derive(Clone)]
pub struct Mode {
    pub name: &'static str,
    pub opts: OpenOptions,
    pub read: ReadOptions,
    /// Read from a zero-copy source (blocks used in place, cached ones with directories).
    pub zero_copy: bool,
}

pub fn modes() -> Vec<Mode> {
    vec![
        Mode {
            name: "default",
            opts: OpenOptions::default(),
            read: ReadOptions::default(),
            zero_copy: false,
        },
        Mode {
            name: "no-checksums/internal",
            opts: OpenOptions::default()
                .verify_checksums(false)
                .keys(KeyFormat::Internal),
            read: ReadOptions::default().fill_cache(false),
            zero_copy: false,
        },
        Mode {
            name: "no-checksums/plain",
            opts: OpenOptions::default()
                .verify_checksums(false)
                .keys(KeyFormat::Plain),
            read: ReadOptions::default().fill_cache(false),
            zero_copy: false,
        },
        Mode {
            name: "zero-copy/cached",
            opts: OpenOptions::default().block_cache(Some(std::sync::Arc::new(
                leveldb_table::BlockCache::new(1 << 20),
            ))),
            read: ReadOptions::default(),
            zero_copy: true,
        },
    ]
}

/// What using a table found.
#[derive(Default, Debug)]
pub struct Outcome {
    /// Errors returned (open, scans, gets, verify problems).
    pub errors: Vec<Error>,
    /// Work-bound violations.
    pub violations: Vec<String>,
    /// Whether open succeeded.
    pub opened: bool,
}

/// Opens `bytes` through a counting source and uses everything: forward and backward scans,
/// gets of `keys`, seeks, verify. Checks per operation: no read past the end of the file,
/// at most `5` reads to open, at most `index entries + 2` to scan, at most 2 per get (a data
/// block, and the filter on its first use) and `index entries + 4` to verify; scans take at
/// most one step per entry a cursor can reach.
pub fn exercise(bytes: &[u8], mode: &Mode, keys: &[Vec<u8>]) -> Outcome {
    let mut out = Outcome::default();
    let mut checked = Checked::new(bytes);
    checked.zero_copy = mode.zero_copy;
    let src = leveldb_table::raw::CountingReader::new(checked);
    let file_size = bytes.len() as u64;
    let t = match TableReader::open(&src, mode.opts.clone()) {
        Ok(t) => t,
        Err(e) => {
            out.errors.push(e);
            check_reads(&src, "open", 5, file_size, &mut out);
            return out;
        }
    };
    out.opened = true;
    check_reads(&src, "open", 5, file_size, &mut out);

    // Index entries a cursor can reach, and an upper bound on the entries a scan can visit:
    // a scan moves over index entries in strictly monotonic offset order, so it visits each
    // reachable index entry at most once, and within each block each reachable entry at
    // most once.
    let index_entries = reachable_entries(t.index_block().data());
    let n_idx = index_entries.len() as u64;
    let mut max_entries = 0u64;
    let mut sizes: HashMap<BlockHandle, u64> = HashMap::new();
    for (_, value) in &index_entries {
        let mut v = &value[..];
        if let Some(h) = BlockHandle::decode_from(&mut v) {
            let n = *sizes.entry(h).or_insert_with(|| {
                t.read_block(h, BlockKind::Data)
                    .map_or(0, |c| reachable_entries(&c.data).len() as u64)
            });
            max_entries += n;
        }
    }
    src.reset();

    let step_cap = max_entries + 1;
    let mut it = t.iter(&mode.read);
    it.seek_to_first();
    let mut steps = 0u64;
    let mut seen = Vec::new();
    while it.valid() && steps <= step_cap {
        if seen.len() < 4 {
            seen.push(it.key().to_vec());
        }
        it.next();
        steps += 1;
    }
    if steps > max_entries {
        out.violations
            .push(format!("forward scan took more than {max_entries} steps"));
    }
    if let Err(e) = it.status() {
        out.errors.push(e);
    }
    drop(it);
    check_reads(&src, "forward scan", n_idx + 2, file_size, &mut out);

    let mut it = t.iter(&mode.read);
    it.seek_to_last();
    steps = 0;
    while it.valid() && steps <= step_cap {
        it.prev();
        steps += 1;
    }
    if steps > max_entries {
        out.violations
            .push(format!("backward scan took more than {max_entries} steps"));
    }
    if let Err(e) = it.status() {
        out.errors.push(e);
    }
    drop(it);
    check_reads(&src, "backward scan", n_idx + 2, file_size, &mut out);

    let mut buf = Vec::new();
    for k in keys.iter().chain(seen.iter()) {
        if let Err(e) = t.get_into(k, &mode.read, &mut buf).map(|l| l.is_found()) {
            out.errors.push(e);
        }
        // One data block, plus the filter block the first time it is used.
        check_reads(&src, "get", 2, file_size, &mut out);
        let mut it = t.iter(&mode.read);
        it.seek(k);
        it.next();
        it.prev();
        if let Err(e) = it.status() {
            out.errors.push(e);
        }
        drop(it);
        // seek, next and prev each may step over empty blocks (as LevelDB does).
        check_reads(&src, "seek", 2 * n_idx + 1, file_size, &mut out);
    }

    let report = t.verify();
    if report.problems.len() as u64 > report.problem_count {
        out.violations
            .push("verify kept more problems than it counted".into());
    }
    out.errors.extend(report.problems);
    // Metaindex, index, filter (and the filter again if this is its first use), then each
    // data block.
    check_reads(&src, "verify", n_idx + 4, file_size, &mut out);
    out
}

fn check_reads(
    src: &leveldb_table::raw::CountingReader<Checked>,
    op: &str,
    max_reads: u64,
    file_size: u64,
    out: &mut Outcome,
) {
    let reads = src.reads();
    if reads > max_reads {
        out.violations
            .push(format!("{op} made {reads} reads (bound {max_reads})"));
    }
    if src.bytes() > reads.max(1) * file_size {
        out.violations.push(format!(
            "{op} asked for {} bytes in {reads} reads of a {file_size}-byte file",
            src.bytes()
        ));
    }
    let bad = src.get_ref().bad_reads.swap(0, Ordering::Relaxed);
    if bad > 0 {
        out.violations
            .push(format!("{op} made {bad} reads past the end of the file"));
    }
    src.reset();
}

/// Every entry of a block that a cursor can reach, as (offset, value): parsing forward from
/// offset 0 and from every restart point, decoding entries as the library does (but without
/// checking `shared`, so this is a superset).
pub fn reachable_entries(block: &[u8]) -> Vec<(usize, Vec<u8>)> {
    let len = block.len();
    if len < 4 {
        return Vec::new();
    }
    let num = coding::decode_fixed32(&block[len - 4..]) as usize;
    if num > (len - 4) / 4 {
        return Vec::new();
    }
    let restarts = len - 4 - 4 * num;
    let mut starts: Vec<usize> = (0..num)
        .map(|i| coding::decode_fixed32(&block[restarts + 4 * i..]) as usize)
        .collect();
    starts.push(0);
    let mut seen: std::collections::BTreeMap<usize, Vec<u8>> = Default::default();
    for s in starts {
        let mut p = s;
        while p < restarts && !seen.contains_key(&p) {
            let d = &block[p..restarts];
            let Some((_, n1)) = coding::decode_varint32(d) else {
                break;
            };
            let Some((ns, n2)) = coding::decode_varint32(&d[n1..]) else {
                break;
            };
            let Some((vl, n3)) = coding::decode_varint32(&d[n1 + n2..]) else {
                break;
            };
            let h = n1 + n2 + n3;
            let (ns, vl) = (ns as usize, vl as usize);
            if d.len() - h < ns.saturating_add(vl) {
                break;
            }
            seen.insert(p, d[h + ns..h + ns + vl].to_vec());
            p += h + ns + vl;
        }
    }
    seen.into_iter().collect()
}

/// Keys to probe a table with: its first keys (user keys for internal tables) and neighbours.
pub fn probe_keys(table: &[u8], n: usize) -> Vec<Vec<u8>> {
    let t = TableReader::open(table, OpenOptions::default()).expect("valid table");
    let mut it = t.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut keys = Vec::new();
    let mut i = 0;
    while it.valid() {
        if i % 37 == 0 && keys.len() < n {
            let k = if t.is_internal() {
                it.key()[..it.key().len() - 8].to_vec()
            } else {
                it.key().to_vec()
            };
            keys.push(k);
        }
        i += 1;
        it.next();
    }
    keys.push(b"zzzz-not-present".to_vec());
    keys.push(Vec::new());
    keys
}

pub fn shared_cache() -> Arc<leveldb_table::BlockCache> {
    Arc::new(leveldb_table::BlockCache::new(1 << 20))
}
