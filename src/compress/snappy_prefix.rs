//! Decoding a snappy block only as far as it is needed: a resumable decoder of snappy's raw
//! format that produces the uncompressed bytes from the start up to a requested length.
//!
//! A point lookup in a block the cache will not keep needs the entries up to its key, not the
//! whole block; with the block's entry offsets known from an earlier read (`BlockOutline`),
//! it decodes that far and stops (about half the block for a key drawn at random). Whole
//! blocks are decoded by the `snap` crate (`compress.rs`); this decoder is only for prefixes,
//! and produces the same bytes (checked against `snap` in tests and the `snappy_prefix`
//! fuzz target).
//!
//! The raw format (google/snappy `format_description.txt`):
//!
//! ```text
//! preamble: uncompressed length, varint (little-endian base 128)
//! elements, each starting with a tag byte t:
//!   t & 3 = 0  literal   len - 1 = t >> 2 (< 60), or in the next (t >> 2) - 59 bytes (LE);
//!                         then len bytes copied to the output
//!   t & 3 = 1  copy      len = 4 + ((t >> 2) & 7), offset = (t >> 5) << 8 | next byte
//!   t & 3 = 2  copy      len = 1 + (t >> 2), offset = next 2 bytes (LE)
//!   t & 3 = 3  copy      len = 1 + (t >> 2), offset = next 4 bytes (LE)
//! a copy repeats the len bytes starting offset bytes back (0 < offset <= bytes so far;
//! offset < len repeats a pattern)
//! ```

use crate::compress::DecompressError;

/// Spare bytes after the uncompressed length in the output buffer: short literals and copies
/// move 16 bytes at a time and may write up to 15 bytes past their end (bytes a later
/// element overwrites, or past the block, never read).
const SLOP: usize = 16;

/// Longest literal copied as one 16-byte move.
const SHORT: usize = 16;

const WHAT: &str = "snappy";

/// A snappy block being decoded front to back into a caller's buffer.
pub struct SnappyPrefix<'a> {
    input: &'a [u8],
    /// Next input byte (a tag).
    ip: usize,
    /// Output bytes decoded so far.
    pos: usize,
    /// The uncompressed length the preamble states.
    len: usize,
}

impl<'a> SnappyPrefix<'a> {
    /// Reads the preamble of `input` and readies `out` to receive the block: at least the
    /// stated length plus slop long (its old contents are left; every byte the decoder
    /// reports as decoded is written first). `max_len` bounds the stated length. Every
    /// later [`fill`](Self::fill) must be given this same buffer: copies read the bytes
    /// decoded before them from it (another buffer gives wrong bytes or an error, never
    /// a panic).
    ///
    /// # Errors
    /// A missing or implausible length.
    pub fn new(
        input: &'a [u8],
        out: &mut Vec<u8>,
        max_len: usize,
    ) -> Result<SnappyPrefix<'a>, DecompressError> {
        let bad = DecompressError::BadLength(WHAT);
        let (len, n) = preamble(input).ok_or(bad.clone())?;
        // An element yields at most 64 output bytes per 2 input bytes (a 1-byte-offset
        // copy is 2 bytes for up to 11; a 2-byte-offset copy 3 bytes for up to 64).
        if len > max_len || len > input.len().saturating_mul(32) {
            return Err(bad);
        }
        if out.len() < len + SLOP {
            out.resize(len + SLOP, 0);
        }
        Ok(SnappyPrefix {
            input,
            ip: n,
            pos: 0,
            len,
        })
    }

    /// The uncompressed length the block states.
    pub fn stated_len(&self) -> usize {
        self.len
    }

    /// Bytes decoded so far (`out[..decoded()]` is the block's start).
    pub fn decoded(&self) -> usize {
        self.pos
    }

    /// Decodes elements into `out` (the buffer given to [`new`](Self::new)) until at least
    /// `want` bytes (at most the stated length) are decoded.
    ///
    /// # Errors
    /// The stream ends early or an element does not fit the output (a copy from before
    /// the start, an element past the stated length).
    #[inline]
    pub fn fill(&mut self, out: &mut [u8], want: usize) -> Result<(), DecompressError> {
        let want = want.min(self.len);
        if self.pos >= want {
            return Ok(());
        }
        let bad = || DecompressError::BadContents(WHAT);
        // The whole block and its slop fit: checked once, so that the moves below are in
        // bounds whenever the element's end is within `len`.
        if out.len() < self.len + SLOP {
            return Err(bad());
        }
        let (inp, len) = (self.input, self.len);
        let (mut ip, mut pos) = (self.ip, self.pos);
        while pos < want {
            let t = *inp.get(ip).ok_or_else(bad)?;
            ip += 1;
            if t & 3 == 0 {
                let mut n = usize::from(t >> 2);
                if n >= 60 {
                    let k = n - 59;
                    let b = inp.get(ip..ip + k).ok_or_else(bad)?;
                    n = b.iter().rev().fold(0, |a, &x| a << 8 | usize::from(x));
                    ip += k;
                }
                let n = n + 1;
                if n > len - pos {
                    return Err(bad());
                }
                match inp.get(ip..ip + SHORT) {
                    Some(src) if n <= SHORT => out[pos..pos + SHORT].copy_from_slice(src),
                    _ => out[pos..pos + n].copy_from_slice(inp.get(ip..ip + n).ok_or_else(bad)?),
                }
                ip += n;
                pos += n;
                continue;
            }
            let (n, offset) = match t & 3 {
                1 => {
                    let b = *inp.get(ip).ok_or_else(bad)?;
                    ip += 1;
                    (
                        4 + usize::from((t >> 2) & 7),
                        usize::from(t >> 5) << 8 | usize::from(b),
                    )
                }
                2 => {
                    let b = inp.get(ip..ip + 2).ok_or_else(bad)?;
                    ip += 2;
                    (
                        1 + usize::from(t >> 2),
                        usize::from(b[0]) | usize::from(b[1]) << 8,
                    )
                }
                _ => {
                    let b = inp.get(ip..ip + 4).ok_or_else(bad)?;
                    ip += 4;
                    let o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    (1 + usize::from(t >> 2), o as usize)
                }
            };
            if offset == 0 || offset > pos || n > len - pos {
                return Err(bad());
            }
            let src = pos - offset;
            if offset >= SHORT {
                // Each 16-byte move reads bytes already written: the source runs at least
                // 16 bytes behind the destination.
                let mut i = 0;
                while i < n {
                    let mut chunk = [0u8; SHORT];
                    chunk.copy_from_slice(&out[src + i..src + i + SHORT]);
                    out[pos + i..pos + i + SHORT].copy_from_slice(&chunk);
                    i += SHORT;
                }
            } else {
                // A pattern shorter than a move: spelled out once over 16 bytes, then written
                // every `step` bytes, a whole number of periods, so that each move continues
                // the pattern where the last one's period ended.
                let mut pattern = [0u8; SHORT];
                for (i, b) in pattern.iter_mut().enumerate() {
                    *b = out[src + i % offset];
                }
                let step = SHORT - SHORT % offset;
                let mut i = 0;
                while i < n {
                    out[pos + i..pos + i + SHORT].copy_from_slice(&pattern);
                    i += step;
                }
            }
            pos += n;
        }
        self.ip = ip;
        self.pos = pos;
        Ok(())
    }

    /// Whether the whole block is decoded and the input used up exactly (what a complete
    /// decoder such as `snap` requires).
    pub fn is_complete(&self) -> bool {
        self.pos == self.len && self.ip == self.input.len()
    }
}

/// The preamble: the stated length and the bytes it takes (a varint of at most 5 bytes that
/// fits in 32 bits, as snappy writes it).
fn preamble(input: &[u8]) -> Option<(usize, usize)> {
    let mut v: u64 = 0;
    for (i, &b) in input.iter().take(5).enumerate() {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return usize::try_from(v)
                .ok()
                .filter(|_| v <= u64::from(u32::MAX))
                .map(|v| (v, i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Decodes all of `input` in steps of `step` bytes; the output, or why not.
    fn decode_in_steps(input: &[u8], step: usize) -> Result<Vec<u8>, DecompressError> {
        let mut out = Vec::new();
        let mut d = SnappyPrefix::new(input, &mut out, 1 << 20)?;
        let mut want = 0;
        while d.decoded() < d.stated_len() {
            want += step.max(1);
            d.fill(&mut out, want)?;
            assert!(d.decoded() >= want.min(d.stated_len()));
        }
        let complete = d.is_complete();
        out.truncate(d.stated_len());
        if complete {
            Ok(out)
        } else {
            Err(DecompressError::BadContents(WHAT))
        }
    }

    /// Inputs snappy compresses into every kind of element: literals short and long,
    /// copies near and far, overlapping runs.
    fn compressible() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop_oneof![
                prop::collection::vec(any::<u8>(), 0..80),
                (any::<u8>(), 1usize..300).prop_map(|(b, n)| vec![b; n]),
                (prop::collection::vec(any::<u8>(), 1..9), 1usize..40)
                    .prop_map(|(p, n)| p.repeat(n)),
            ],
            0..40,
        )
        .prop_map(|parts| {
            let mut v = parts.concat();
            // Repeat an earlier stretch far back (2- and 4-byte offsets).
            if v.len() > 64 {
                let again = v[..v.len() / 2].to_vec();
                v.extend_from_slice(&vec![7u8; 70_000 * (v.len() % 2)]);
                v.extend_from_slice(&again);
            }
            v
        })
    }

    proptest! {
        #[test]
        fn decodes_what_snap_encodes_in_any_steps(data in compressible(), step in 1usize..5000) {
            let c = snap::raw::Encoder::new().compress_vec(&data).unwrap();
            prop_assert_eq!(decode_in_steps(&c, step).unwrap(), data);
        }

        #[test]
        fn agrees_with_snap_on_any_bytes(input in prop::collection::vec(any::<u8>(), 0..200)) {
            let ours = decode_in_steps(&input, 7);
            let theirs = snap::raw::Decoder::new().decompress_vec(&input);
            match (ours, theirs) {
                (Ok(a), Ok(b)) => prop_assert_eq!(a, b),
                (Err(_), Err(_)) => {}
                (a, b) => prop_assert!(false, "ours {:?}, snap {:?}", a, b),
            }
        }

        #[test]
        fn a_prefix_is_the_start_of_the_block(data in compressible(), cut in 0usize..100_000) {
            let c = snap::raw::Encoder::new().compress_vec(&data).unwrap();
            let mut out = Vec::new();
            let mut d = SnappyPrefix::new(&c, &mut out, 1 << 20).unwrap();
            let want = cut.min(data.len());
            d.fill(&mut out, want).unwrap();
            prop_assert!(d.decoded() >= want && d.decoded() <= data.len());
            prop_assert_eq!(&out[..d.decoded()], &data[..d.decoded()]);
        }
    }

    #[test]
    fn refuses_lengths_over_the_bound_and_copies_from_before_the_start() {
        let c = snap::raw::Encoder::new()
            .compress_vec(&[1u8; 5000])
            .unwrap();
        let mut out = Vec::new();
        assert!(matches!(
            SnappyPrefix::new(&c, &mut out, 4999),
            Err(DecompressError::BadLength(_))
        ));
        // Length 8, then a 1-byte-offset copy of 4 bytes from offset 1 with nothing before.
        let bad = [8u8, 0b0000_0001, 1];
        let mut d = SnappyPrefix::new(&bad, &mut out, 100).unwrap();
        assert!(matches!(
            d.fill(&mut out, 8),
            Err(DecompressError::BadContents(_))
        ));
        // A length with no end, and one over 32 bits.
        assert!(SnappyPrefix::new(&[0x80; 5], &mut out, usize::MAX).is_err());
        assert!(SnappyPrefix::new(&[0xff, 0xff, 0xff, 0xff, 0x1f], &mut out, usize::MAX).is_err());
    }
}
