//! The larger Blink host objects: Web Crypto keys and images.
//!
//! ```text
//! CryptoKey  K sub-tag byte, then by sub-tag:
//!   1 AES      varint algorithm, varint key length in bytes
//!   2 HMAC     varint key length in bytes, varint hash algorithm
//!   4 RSA      varint algorithm, varint key type, varint modulus bits,
//!              varint n, n exponent bytes, varint hash algorithm
//!   5 EC       varint algorithm, varint key type, varint named curve
//!   6 no params varint algorithm        7 Ed25519  varint algorithm, varint key type
//!   then varint usages (bit 0 extractable), varint n, n key bytes
//! ImageData   # [tags (varint tag, varint value) up to tag 0] varint width,
//!               varint height, varint64 n, n pixel bytes
//! ImageBitmap g [tags up to 0 | varint origin clean, varint premultiplied (before 18)]
//!               varint width, varint height, varint n, n pixel bytes
//!   image tags: 1 color space, 2 pixel format (RGBA8, BGRA8...: the pixels' layout),
//!   3 storage format (ImageData), 4 origin clean, 5 premultiplied, 6 opacity mode,
//!   7 parametric color space (16 f64, ImageBitmap), 8 orientation (ImageBitmap)
//! ```
//! (Blink's `V8ScriptValueDeserializerForModules::ReadCryptoKey` and
//! `V8ScriptValueDeserializer::ReadDOMObject`, `serialized_params.h`.)

use super::cursor::Cursor;
use super::error::{ValueError, ValueErrorKind};
use super::format::{crypto, host_tag as tag};
use super::host::{lookup, other, usages, HostField, HostObject};

/// A CryptoKey after its tag.
pub(crate) fn read_crypto_key<'a>(c: &mut Cursor<'a>) -> Result<HostObject<'a>, ValueError> {
    let at = c.pos();
    let sub = c.read_byte("a CryptoKey sub-tag")?;
    let bad = |what| ValueError::new(at, ValueErrorKind::Invalid(what));
    let mut fields: Vec<(&'static str, HostField<'a>)> = Vec::new();
    let algorithm = |c: &mut Cursor<'a>| -> Result<HostField<'a>, ValueError> {
        let id = c.varint32("a CryptoKey algorithm")?;
        let name =
            lookup(&crypto::ALGORITHMS, id).ok_or_else(|| bad("an unknown CryptoKey algorithm"))?;
        Ok(HostField::Name(name))
    };
    let key_type = |c: &mut Cursor<'a>| -> Result<&'static str, ValueError> {
        let t = c.varint32("a CryptoKey type")?;
        lookup(&crypto::KEY_TYPES, t).ok_or_else(|| bad("an unknown CryptoKey type"))
    };
    let kind: &'static str = match sub {
        crypto::AES_KEY => {
            fields.push(("algorithm", algorithm(c)?));
            let bytes = c.varint32("a key length")?;
            if bytes > u32::from(u16::MAX) / 8 {
                return Err(bad("an AES key length over 65535 bits"));
            }
            fields.push(("length", HostField::Int(u64::from(bytes) * 8)));
            "secret"
        }
        crypto::HMAC_KEY => {
            let bytes = c.varint32("a key length")?;
            fields.push(("algorithm", HostField::Name("HMAC")));
            fields.push(("length", HostField::Int(u64::from(bytes) * 8)));
            fields.push(("hash", algorithm(c)?));
            "secret"
        }
        crypto::RSA_HASHED_KEY => {
            fields.push(("algorithm", algorithm(c)?));
            let kind = key_type(c)?;
            let bits = c.varint32("a modulus length")?;
            fields.push(("modulus_length", HostField::Int(bits.into())));
            let exponent = c.length_prefixed("a public exponent")?;
            fields.push(("public_exponent", HostField::Bytes(exponent)));
            fields.push(("hash", algorithm(c)?));
            kind
        }
        crypto::EC_KEY => {
            fields.push(("algorithm", algorithm(c)?));
            let kind = key_type(c)?;
            let curve = c.varint32("a named curve")?;
            let curve =
                lookup(&crypto::CURVES, curve).ok_or_else(|| bad("an unknown named curve"))?;
            fields.push(("named_curve", HostField::Name(curve)));
            kind
        }
        crypto::NO_PARAMS_KEY => {
            fields.push(("algorithm", algorithm(c)?));
            "secret"
        }
        crypto::ED25519_KEY => {
            fields.push(("algorithm", algorithm(c)?));
            key_type(c)?
        }
        _ => return Err(bad("an unknown CryptoKey sub-tag")),
    };
    let bits = c.varint32("CryptoKey usages")?;
    let known = crypto::USAGES
        .iter()
        .fold(crypto::EXTRACTABLE, |m, (b, _)| m | b);
    if bits & !known != 0 {
        return Err(bad("unknown CryptoKey usage bits"));
    }
    let data = c.length_prefixed("CryptoKey data")?;
    let mut all = vec![("type", HostField::Name(kind))];
    all.append(&mut fields);
    all.push((
        "extractable",
        HostField::Bool(bits & crypto::EXTRACTABLE != 0),
    ));
    all.push(("usages", HostField::Names(usages(bits))));
    all.push(("key_data", HostField::Bytes(data)));
    Ok(other("CryptoKey", all))
}

/// An ImageData or ImageBitmap after its tag.
pub(crate) fn read_image<'a>(
    c: &mut Cursor<'a>,
    t: u8,
    version: u32,
) -> Result<HostObject<'a>, ValueError> {
    let is_data = t == tag::IMAGE_DATA;
    let mut fields: Vec<(&'static str, HostField<'a>)> = Vec::new();
    if version >= tag::IMAGE_TAGS_VERSION {
        loop {
            let at = c.pos();
            let image_tag = c.varint32("an image tag")?;
            let bad = |what| ValueError::new(at, ValueErrorKind::Invalid(what));
            let named = |list: &[(u32, &'static str)], c: &mut Cursor<'a>| {
                let v = c.varint32("an image setting")?;
                match lookup(list, v) {
                    Some(n) => Ok(HostField::Name(n)),
                    None => Err(bad("an image setting Blink does not define")),
                }
            };
            let field = match image_tag {
                tag::IMAGE_TAG_END => break,
                tag::IMAGE_TAG_COLOR_SPACE => named(&tag::IMAGE_COLOR_SPACES, c)?,
                tag::IMAGE_TAG_PIXEL_FORMAT if !is_data => named(&tag::IMAGE_PIXEL_FORMATS, c)?,
                tag::IMAGE_TAG_ORIGIN_CLEAN | tag::IMAGE_TAG_PREMULTIPLIED => image_flag(c)?,
                tag::IMAGE_TAG_OPACITY_MODE => named(&tag::IMAGE_OPACITY_MODES, c)?,
                tag::IMAGE_TAG_ORIENTATION if !is_data => named(&tag::IMAGE_ORIENTATIONS, c)?,
                tag::IMAGE_TAG_PARAMETRIC_COLOR_SPACE if !is_data => {
                    let mut v = Vec::with_capacity(tag::IMAGE_PARAMETRIC_COLOR_SPACE_LEN);
                    for _ in 0..tag::IMAGE_PARAMETRIC_COLOR_SPACE_LEN {
                        v.push(c.f64("a color space parameter")?);
                    }
                    HostField::Numbers(v)
                }
                3 if is_data => HostField::Int(c.varint32("an image setting")?.into()),
                _ => return Err(bad("an image tag Blink does not read for this object")),
            };
            fields.push((image_tag_name(image_tag), field));
        }
    } else if !is_data {
        fields.push(("origin_clean", image_flag(c)?));
        fields.push(("premultiplied", image_flag(c)?));
    }
    let width = c.varint32("an image width")?;
    let height = c.varint32("an image height")?;
    let len = if is_data {
        c.varint64("a pixel length")?
    } else {
        c.varint32("a pixel length")?.into()
    };
    let pixels = c.read_bytes(len, "image pixels")?;
    fields.push(("width", HostField::Int(width.into())));
    fields.push(("height", HostField::Int(height.into())));
    fields.push(("pixels", HostField::Bytes(pixels)));
    Ok(other(
        if is_data { "ImageData" } else { "ImageBitmap" },
        fields,
    ))
}

/// A flag of an image: 0 or 1 (Blink refuses other values).
fn image_flag<'a>(c: &mut Cursor<'a>) -> Result<HostField<'a>, ValueError> {
    let at = c.pos();
    match c.varint32("an image flag")? {
        0 => Ok(HostField::Bool(false)),
        1 => Ok(HostField::Bool(true)),
        _ => Err(ValueError::new(
            at,
            ValueErrorKind::Invalid("an image flag other than 0 or 1"),
        )),
    }
}

fn image_tag_name(t: u32) -> &'static str {
    match t {
        1 => "color_space",
        2 => "pixel_format",
        3 => "storage_format",
        4 => "origin_clean",
        5 => "premultiplied",
        6 => "opacity_mode",
        7 => "color_space_params",
        _ => "orientation",
    }
}
