//! Reading V8's primitives from a byte slice, as V8's `ValueDeserializer` reads them, with
//! the offset of every failure.
//!
//! ```text
//! varint  7 bits a byte, least significant group first, high bit = another byte follows;
//!         V8 reads at most ceil(bits / 7) bytes (5 for 32 bits, 10 for 64, 2 for 8) and
//!         drops bits beyond the type's width
//! zigzag  varint v -> (v >> 1) ^ -(v & 1)
//! f64     8 bytes, little-endian (V8 writes host order; every Chrome platform is LE)
//! tag     one byte; padding bytes 00 before it are skipped
//! ```

use super::error::{ValueError, ValueErrorKind};
use super::format::TAG_PADDING;

/// A position in the bytes being decoded.
#[derive(Debug, Clone)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`.
    pub(crate) fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data, pos: 0 }
    }

    /// A cursor at `pos` in `data` (offsets in errors count from the start of `data`).
    pub(crate) fn at(data: &'a [u8], pos: usize) -> Cursor<'a> {
        Cursor {
            data,
            pos: pos.min(data.len()),
        }
    }

    /// Moves back to `pos` (an offset this cursor has passed).
    pub(crate) fn rewind(&mut self, pos: usize) {
        self.pos = pos.min(self.pos);
    }

    /// The offset of the next byte.
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// An error at the current offset.
    pub(crate) fn err(&self, kind: ValueErrorKind) -> ValueError {
        ValueError::new(self.pos, kind)
    }

    fn truncated(&self, what: &'static str) -> ValueError {
        self.err(ValueErrorKind::Truncated(what))
    }

    /// The next byte without consuming it.
    pub(crate) fn peek_byte(&self) -> Option<u8> {
        self.data.get(self.pos).copied()
    }

    /// The next tag without consuming it (padding skipped); `None` at the end.
    pub(crate) fn peek_tag(&self) -> Option<u8> {
        self.data[self.pos..]
            .iter()
            .copied()
            .find(|&b| b != TAG_PADDING)
    }

    /// Consumes padding and the tag after it.
    pub(crate) fn read_tag(&mut self) -> Result<u8, ValueError> {
        while let Some(&b) = self.data.get(self.pos) {
            self.pos += 1;
            if b != TAG_PADDING {
                return Ok(b);
            }
        }
        Err(self.truncated("a tag"))
    }

    /// One raw byte.
    pub(crate) fn read_byte(&mut self, what: &'static str) -> Result<u8, ValueError> {
        let b = *self
            .data
            .get(self.pos)
            .ok_or_else(|| self.truncated(what))?;
        self.pos += 1;
        Ok(b)
    }

    /// `n` raw bytes.
    pub(crate) fn read_bytes(
        &mut self,
        n: u64,
        what: &'static str,
    ) -> Result<&'a [u8], ValueError> {
        let n = usize::try_from(n).ok().filter(|&n| n <= self.remaining());
        let n = n.ok_or_else(|| self.truncated(what))?;
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    /// A varint of at most `bits` bits, read as V8's `ReadVarint<T>` does.
    fn varint(&mut self, bits: u32, what: &'static str) -> Result<u64, ValueError> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let b = self.read_byte(what)?;
            value |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 || shift >= bits {
                break;
            }
        }
        Ok(if bits >= 64 {
            value
        } else {
            value & ((1u64 << bits) - 1)
        })
    }

    /// A 32-bit varint (`ReadVarint<uint32_t>`).
    pub(crate) fn varint32(&mut self, what: &'static str) -> Result<u32, ValueError> {
        self.varint(32, what).map(|v| v as u32)
    }

    /// A 64-bit varint (`ReadVarint<uint64_t>` / `size_t`).
    pub(crate) fn varint64(&mut self, what: &'static str) -> Result<u64, ValueError> {
        self.varint(64, what)
    }

    /// An 8-bit varint (`ReadVarint<uint8_t>`: view and error sub-tags).
    pub(crate) fn varint8(&mut self, what: &'static str) -> Result<u8, ValueError> {
        self.varint(8, what).map(|v| v as u8)
    }

    /// A zigzag-coded 32-bit integer (`ReadZigZag<int32_t>`).
    pub(crate) fn zigzag32(&mut self, what: &'static str) -> Result<i32, ValueError> {
        let v = self.varint32(what)?;
        Ok(((v >> 1) as i32) ^ -((v & 1) as i32))
    }

    /// A little-endian f64 (`ReadDouble`); any NaN becomes the quiet NaN, as in V8.
    pub(crate) fn f64(&mut self, what: &'static str) -> Result<f64, ValueError> {
        let b = self.read_bytes(8, what)?;
        let mut raw = [0u8; 8];
        raw.copy_from_slice(b);
        let x = f64::from_le_bytes(raw);
        Ok(if x.is_nan() { f64::NAN } else { x })
    }

    /// A varint length and that many bytes (Blink's `ReadUTF8String`, V8's raw strings).
    pub(crate) fn length_prefixed(&mut self, what: &'static str) -> Result<&'a [u8], ValueError> {
        let n = self.varint32(what)?;
        self.read_bytes(u64::from(n), what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_stop_where_v8_stops() {
        // 0x80 0x01 = 128.
        assert_eq!(Cursor::new(&[0x80, 0x01]).varint32("x").unwrap(), 128);
        // Five bytes at most for 32 bits: the fifth byte's high bit is ignored and the
        // sixth byte is left for the next read; bits past 32 are dropped.
        let mut c = Cursor::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x07]);
        assert_eq!(c.varint32("x").unwrap(), u32::MAX);
        assert_eq!(c.pos(), 5);
        // Two bytes at most for 8 bits.
        let mut c = Cursor::new(&[0x81, 0x83, 0x00]);
        assert_eq!(c.varint8("x").unwrap(), 0x81);
        assert_eq!(c.pos(), 2);
        // A varint cut short names what it was.
        let e = Cursor::new(&[0x80]).varint64("a length").unwrap_err();
        assert_eq!(e.to_string(), "the bytes end inside a length at offset 1");
    }

    #[test]
    fn zigzag_and_doubles() {
        assert_eq!(Cursor::new(&[0x01]).zigzag32("x").unwrap(), -1);
        assert_eq!(Cursor::new(&[0x04]).zigzag32("x").unwrap(), 2);
        assert_eq!(
            Cursor::new(&[0xff, 0xff, 0xff, 0xff, 0x0f])
                .zigzag32("x")
                .unwrap(),
            i32::MIN
        );
        let one = 1.0f64.to_le_bytes();
        assert_eq!(Cursor::new(&one).f64("x").unwrap(), 1.0);
        assert!(Cursor::new(&one[..7]).f64("x").is_err());
    }

    #[test]
    fn padding_is_skipped_before_tags() {
        let mut c = Cursor::new(&[0, 0, b'T', 0]);
        assert_eq!(c.peek_tag(), Some(b'T'));
        assert_eq!(c.read_tag().unwrap(), b'T');
        assert_eq!(c.peek_tag(), None);
        assert!(c.read_tag().is_err());
    }
}
