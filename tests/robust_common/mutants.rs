//! The mutant generator: byte-level mutations, handing structural ones to `structural`.

use super::structural::structural;
use super::*;

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
