//! A table taken apart into its blocks and put back together, and block-level helpers.

use super::*;

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
