//! The envelopes: Blink's (version, trailer offset) around V8's (version), then the value.

use super::cursor::Cursor;
use super::decode::Reader;
use super::error::{ValueError, ValueErrorKind};
use super::format::*;
use super::value::Decoded;

/// Decodes a value Blink serialized (`SerializedScriptValue`: what IndexedDB stores once
/// unwrapped, see `idb::unwrap_value`): Blink's envelope when
/// present, V8's header, then one value. Bytes after the value (Blink's trailer) do not
/// belong to it, as for V8.
///
/// # Errors
/// What is wrong and at which offset of `bytes`; never panics, whatever the bytes.
pub fn decode(bytes: &[u8]) -> Result<Decoded<'_>, ValueError> {
    let (blink, start, required) = blink_envelope(bytes)?;
    decode_from(bytes, start, blink, required)
}

/// Decodes V8's format alone (no Blink envelope): V8's header, then one value. Host objects
/// are read as Blink writes them, at V8's version.
///
/// # Errors
/// As [`decode`].
pub fn decode_v8(bytes: &[u8]) -> Result<Decoded<'_>, ValueError> {
    decode_from(bytes, 0, None, Vec::new())
}

fn decode_from(
    bytes: &[u8],
    start: usize,
    blink: Option<u32>,
    required_interfaces: Vec<u8>,
) -> Result<Decoded<'_>, ValueError> {
    let mut c = Cursor::at(bytes, start);
    if c.peek_byte() != Some(TAG_VERSION) {
        // No header: V8's format 0 (before 2013), read by a different algorithm.
        return Err(c.err(ValueErrorKind::UnsupportedV8Version(0)));
    }
    c.read_byte("a version tag")?;
    let at = c.pos();
    let v8 = c.varint32("the V8 version")?;
    if v8 == 0 || v8 > V8_LATEST_VERSION {
        return Err(ValueError::new(
            at,
            ValueErrorKind::UnsupportedV8Version(v8),
        ));
    }
    let host_version = blink.unwrap_or(v8);
    let mut reader = Reader::new(c.clone(), v8, host_version, false);
    let result = match reader.read_root() {
        // V8 reads version 13 data that fails again as written by a V8 that put flags on
        // views too early (crbug.com/1284506).
        Err(e) if v8 == 13 => {
            reader = Reader::new(c, v8, host_version, true);
            reader.read_root().map_err(|_| e)
        }
        r => r,
    };
    let root = result?;
    Ok(Decoded {
        blink_version: blink,
        v8_version: v8,
        root,
        objects: reader.objects,
        required_interfaces,
    })
}

/// Blink's envelope (`ReadVersionEnvelope`): `(Blink version, where V8's header starts,
/// the trailer's required interfaces)`. A version below 16 is V8's own header (one
/// envelope for both).
fn blink_envelope(bytes: &[u8]) -> Result<(Option<u32>, usize, Vec<u8>), ValueError> {
    if bytes.first() != Some(&TAG_VERSION) {
        return Ok((None, 0, Vec::new()));
    }
    // Blink reads its version with no byte limit, keeping the low 32 bits.
    let mut version: u32 = 0;
    let mut shift = 0u32;
    let mut i = 1;
    loop {
        let Some(&b) = bytes.get(i) else {
            return Ok((None, 0, Vec::new()));
        };
        if shift < 32 {
            version |= u32::from(b & 0x7f).checked_shl(shift).unwrap_or(0);
            shift += 7;
        }
        i += 1;
        if b & 0x80 == 0 {
            break;
        }
    }
    if version < BLINK_SEPARATE_ENVELOPE {
        return Ok((None, 0, Vec::new()));
    }
    if version > BLINK_LATEST_VERSION {
        return Err(ValueError::new(
            1,
            ValueErrorKind::UnsupportedBlinkVersion(version),
        ));
    }
    if version < BLINK_TRAILER_VERSION {
        return Ok((Some(version), i, Vec::new()));
    }
    let field = bytes.get(i..i + TRAILER_OFFSET_FIELD_LEN);
    let Some(field) = field.filter(|f| f[0] == TAG_TRAILER_OFFSET) else {
        return Err(ValueError::new(
            i,
            ValueErrorKind::Invalid("Blink version 21 or later without its trailer offset tag"),
        ));
    };
    let mut offset = [0u8; 8];
    offset.copy_from_slice(&field[1..9]);
    let mut size = [0u8; 4];
    size.copy_from_slice(&field[9..13]);
    let required = trailer(bytes, u64::from_be_bytes(offset), u32::from_be_bytes(size));
    Ok((Some(version), i + TRAILER_OFFSET_FIELD_LEN, required))
}

/// The interfaces a trailer lists (`A0 varint n, n tags`); empty when there is none or it
/// does not parse (Blink reads the trailer only to check interfaces before reading).
fn trailer(bytes: &[u8], offset: u64, size: u32) -> Vec<u8> {
    let Ok(start) = usize::try_from(offset) else {
        return Vec::new();
    };
    let end = start.saturating_add(size as usize);
    let Some(t) = bytes.get(start..end) else {
        return Vec::new();
    };
    let mut c = Cursor::new(t);
    if size == 0 || c.read_byte("a trailer tag").ok() != Some(TAG_TRAILER_REQUIRES_INTERFACES) {
        return Vec::new();
    }
    match c.varint32("an interface count") {
        Ok(n) => c
            .read_bytes(n.into(), "interfaces")
            .map(<[u8]>::to_vec)
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}
