//! Integer and slice encodings (LevelDB's `util/coding.h`).
//!
//! ```text
//! fixed32   4 bytes little-endian            0x04030201 -> 01 02 03 04
//! fixed64   8 bytes little-endian
//! varint32  LEB128: 7 bits a byte, low group first, high bit = more; at most 5 bytes
//! varint64  the same, at most 10 bytes
//! slice     varint32 length | bytes
//! ```
//!
//! Verbs as in LevelDB: `put_*` appends to a `Vec<u8>`; `get_*` consumes from the front of a
//! `&mut &[u8]` and returns `None` on truncated or overlong input (leaving the input as it
//! was); `decode_*` reads from a buffer the caller has already sized. Decoders are lenient the
//! way LevelDB's are: non-minimal encodings decode, and bits past 32 (64) in the last byte are
//! dropped. None of them panics.

use byteorder::{ByteOrder, LittleEndian};

/// Appends `v` as 4 little-endian bytes.
pub fn put_fixed32(dst: &mut Vec<u8>, v: u32) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as 8 little-endian bytes.
pub fn put_fixed64(dst: &mut Vec<u8>, v: u64) {
    dst.extend_from_slice(&v.to_le_bytes());
}

/// Reads a little-endian u32 from the first 4 bytes of `buf`.
///
/// # Panics
/// If `buf` is shorter than 4 bytes; callers size the buffer first.
pub fn decode_fixed32(buf: &[u8]) -> u32 {
    LittleEndian::read_u32(buf)
}

/// Reads a little-endian u64 from the first 8 bytes of `buf`.
///
/// # Panics
/// If `buf` is shorter than 8 bytes; callers size the buffer first.
pub fn decode_fixed64(buf: &[u8]) -> u64 {
    LittleEndian::read_u64(buf)
}

/// Consumes a fixed32 from the front of `input`.
pub fn get_fixed32(input: &mut &[u8]) -> Option<u32> {
    let (head, rest) = input.split_first_chunk::<4>()?;
    *input = rest;
    Some(u32::from_le_bytes(*head))
}

/// Consumes a fixed64 from the front of `input`.
pub fn get_fixed64(input: &mut &[u8]) -> Option<u64> {
    let (head, rest) = input.split_first_chunk::<8>()?;
    *input = rest;
    Some(u64::from_le_bytes(*head))
}

/// Length of the longest common prefix of `a` and `b`, compared 8 bytes at a time (keys
/// share long prefixes: the builder and the block search ask this for every entry).
#[inline]
pub(crate) fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut i = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        let mut wx = [0u8; 8];
        let mut wy = [0u8; 8];
        wx.copy_from_slice(x);
        wy.copy_from_slice(y);
        let d = u64::from_le_bytes(wx) ^ u64::from_le_bytes(wy);
        if d != 0 {
            // Little-endian: the lowest set bit is in the first differing byte.
            return i + (d.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + a[i..]
        .iter()
        .zip(&b[i..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// Appends `v` as a varint32 (1 to 5 bytes).
pub fn put_varint32(dst: &mut Vec<u8>, v: u32) {
    put_varint64(dst, u64::from(v));
}

/// Appends `v` as a varint64 (1 to 10 bytes).
pub fn put_varint64(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Number of bytes `put_varint64(v)` appends.
pub fn varint_length(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Decodes a varint32 at the start of `buf`: the value and the bytes it took.
/// `None` if the continuation runs past 5 bytes or past the end of `buf`.
#[inline]
pub fn decode_varint32(buf: &[u8]) -> Option<(u32, usize)> {
    if let Some(&b) = buf.first() {
        if b < 0x80 {
            return Some((u32::from(b), 1));
        }
    }
    let mut result: u32 = 0;
    for (i, &b) in buf.iter().take(5).enumerate() {
        result |= u32::from(b & 0x7f).wrapping_shl(7 * i as u32);
        if b < 0x80 {
            return Some((result, i + 1));
        }
    }
    None
}

/// Decodes a varint64 at the start of `buf`: the value and the bytes it took.
/// `None` if the continuation runs past 10 bytes or past the end of `buf`.
#[inline]
pub fn decode_varint64(buf: &[u8]) -> Option<(u64, usize)> {
    let mut result: u64 = 0;
    for (i, &b) in buf.iter().take(10).enumerate() {
        result |= u64::from(b & 0x7f).wrapping_shl(7 * i as u32);
        if b < 0x80 {
            return Some((result, i + 1));
        }
    }
    None
}

/// Consumes a varint32 from the front of `input`.
pub fn get_varint32(input: &mut &[u8]) -> Option<u32> {
    let (v, n) = decode_varint32(input)?;
    *input = &input[n..];
    Some(v)
}

/// Consumes a varint64 from the front of `input`.
pub fn get_varint64(input: &mut &[u8]) -> Option<u64> {
    let (v, n) = decode_varint64(input)?;
    *input = &input[n..];
    Some(v)
}

/// Appends a varint32 length followed by `value`.
///
/// # Panics
/// If `value` is 4 GiB or longer (its length would not fit a varint32).
pub fn put_length_prefixed_slice(dst: &mut Vec<u8>, value: &[u8]) {
    let len = u32::try_from(value.len()).expect("slice longer than u32::MAX"); // ok: documented
    put_varint32(dst, len);
    dst.extend_from_slice(value);
}

/// Consumes a varint32 length and that many bytes from the front of `input`.
pub fn get_length_prefixed_slice<'a>(input: &mut &'a [u8]) -> Option<&'a [u8]> {
    let (len, n) = decode_varint32(input)?;
    let rest = &input[n..];
    let len = len as usize;
    if rest.len() < len {
        return None;
    }
    let (value, rest) = rest.split_at(len);
    *input = rest;
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 8-byte-at-a-time prefix length equals a byte-by-byte count for every length up
    /// to 40 and a difference at every position.
    #[test]
    fn common_prefix_len_equals_the_byte_loop() {
        for la in 0..40usize {
            let a: Vec<u8> = (0..la as u8).map(|i| i.wrapping_mul(37)).collect();
            for lb in 0..40usize {
                let mut b: Vec<u8> = (0..lb as u8).map(|i| i.wrapping_mul(37)).collect();
                for flip in 0..=lb {
                    if flip < lb {
                        b[flip] ^= 0x80;
                    }
                    let want = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
                    assert_eq!(common_prefix_len(&a, &b), want, "{la} {lb} {flip}");
                    if flip < lb {
                        b[flip] ^= 0x80;
                    }
                }
            }
        }
    }

    #[test]
    fn fixed_encodings_are_little_endian() {
        let mut v = Vec::new();
        put_fixed32(&mut v, 0x0403_0201);
        assert_eq!(v, [1, 2, 3, 4]);
        v.clear();
        put_fixed64(&mut v, 0x0807_0605_0403_0201);
        assert_eq!(v, [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(decode_fixed64(&v), 0x0807_0605_0403_0201);
    }

    #[test]
    fn varint32_round_trip_every_power() {
        for shift in 0..32 {
            for v in [
                (1u32 << shift) - 1,
                1u32 << shift,
                (1u32 << shift).wrapping_add(1),
            ] {
                let mut buf = Vec::new();
                put_varint32(&mut buf, v);
                assert_eq!(buf.len(), varint_length(u64::from(v)));
                assert_eq!(decode_varint32(&buf), Some((v, buf.len())));
            }
        }
    }

    #[test]
    fn varint64_round_trip_extremes() {
        for v in [0, 1, 127, 128, u64::from(u32::MAX), u64::MAX - 1, u64::MAX] {
            let mut buf = Vec::new();
            put_varint64(&mut buf, v);
            let mut input = &buf[..];
            assert_eq!(get_varint64(&mut input), Some(v));
            assert!(input.is_empty());
        }
    }

    #[test]
    fn length_prefixed_slices() {
        let mut buf = Vec::new();
        put_length_prefixed_slice(&mut buf, b"");
        put_length_prefixed_slice(&mut buf, b"foo");
        put_length_prefixed_slice(&mut buf, &[b'x'; 200]);
        let mut input = &buf[..];
        assert_eq!(get_length_prefixed_slice(&mut input), Some(&b""[..]));
        assert_eq!(get_length_prefixed_slice(&mut input), Some(&b"foo"[..]));
        assert_eq!(
            get_length_prefixed_slice(&mut input),
            Some(&[b'x'; 200][..])
        );
        assert_eq!(get_length_prefixed_slice(&mut input), None);
        let mut short: &[u8] = &[5, b'a'];
        assert_eq!(get_length_prefixed_slice(&mut short), None);
        assert_eq!(short, &[5, b'a']);
    }
}
