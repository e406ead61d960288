//! Structural mutations: a table's blocks changed and re-assembled with valid CRCs.

use super::*;

pub(super) fn structural(parts: &Parts, rng: &mut Rng, kind: usize) -> Mutant {
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
