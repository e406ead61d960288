//! Reading Blink's host objects: the tag after V8's `\` and what follows it (layouts in
//! `host.rs`; Web Crypto keys and images in `host_media.rs`).

use super::cursor::Cursor;
use super::error::{ValueError, ValueErrorKind};
use super::format::host_tag as tag;
use super::host::{other, utf8, FileInfo, HostField, HostObject};
use super::host_media::{read_crypto_key, read_image};

/// Reads the object after a host object tag. `version` is Blink's wire format version (V8's
/// when the value has no Blink envelope).
pub(crate) fn read_host<'a>(
    c: &mut Cursor<'a>,
    version: u32,
) -> Result<HostObject<'a>, ValueError> {
    let at = c.pos();
    let t = c.read_byte("a Blink host object tag")?;
    let too_old = |what| Err(ValueError::new(at, ValueErrorKind::Invalid(what)));
    Ok(match t {
        tag::BLOB_INDEX | tag::FILE_INDEX if version < 6 => {
            return too_old("a blob index in data older than Blink version 6")
        }
        tag::BLOB_INDEX => HostObject::BlobIndex(c.varint32("a blob index")?),
        tag::FILE_INDEX => HostObject::FileIndex(c.varint32("a file index")?),
        tag::FILE_LIST_INDEX => {
            let n = c.varint32("a file list length")?;
            let mut files = Vec::with_capacity(n.min(1024) as usize);
            for _ in 0..n {
                if version < 6 {
                    return too_old("a file index in data older than Blink version 6");
                }
                files.push(c.varint32("a file index")?);
            }
            HostObject::FileListIndex(files)
        }
        tag::BLOB if version < 3 => return too_old("a Blob in data older than Blink version 3"),
        tag::BLOB => HostObject::Blob {
            uuid: utf8(c, "a blob uuid")?,
            mime: utf8(c, "a blob type")?,
            size: c.varint64("a blob size")?,
        },
        tag::FILE => HostObject::File(read_file(c, version)?),
        tag::FILE_LIST => {
            let n = c.varint32("a file list length")?;
            let mut files = Vec::with_capacity(n.min(1024) as usize);
            for _ in 0..n {
                files.push(read_file(c, version)?);
            }
            HostObject::FileList(files)
        }
        tag::DOM_POINT => doubles(c, "DOMPoint", &["x", "y", "z", "w"])?,
        tag::DOM_POINT_READ_ONLY => doubles(c, "DOMPointReadOnly", &["x", "y", "z", "w"])?,
        tag::DOM_RECT => doubles(c, "DOMRect", &["x", "y", "width", "height"])?,
        tag::DOM_RECT_READ_ONLY => doubles(c, "DOMRectReadOnly", &["x", "y", "width", "height"])?,
        tag::DOM_QUAD => matrix(c, "DOMQuad", "points", 16)?,
        tag::DOM_MATRIX => matrix(c, "DOMMatrix", "values", 16)?,
        tag::DOM_MATRIX_READ_ONLY => matrix(c, "DOMMatrixReadOnly", "values", 16)?,
        tag::DOM_MATRIX_2D => matrix(c, "DOMMatrix", "values", 6)?,
        tag::DOM_MATRIX_2D_READ_ONLY => matrix(c, "DOMMatrixReadOnly", "values", 6)?,
        tag::DOM_EXCEPTION => other(
            "DOMException",
            vec![
                ("name", HostField::Text(utf8(c, "an exception name")?)),
                ("message", HostField::Text(utf8(c, "an exception message")?)),
                ("stack", HostField::Text(utf8(c, "an exception stack")?)),
            ],
        ),
        tag::FILE_SYSTEM_FILE_HANDLE | tag::FILE_SYSTEM_DIRECTORY_HANDLE => other(
            if t == tag::FILE_SYSTEM_FILE_HANDLE {
                "FileSystemFileHandle"
            } else {
                "FileSystemDirectoryHandle"
            },
            vec![
                ("name", HostField::Text(utf8(c, "a handle name")?)),
                (
                    "token_index",
                    HostField::Int(c.varint32("a token index")?.into()),
                ),
            ],
        ),
        tag::DOM_FILE_SYSTEM => other(
            "DOMFileSystem",
            vec![
                (
                    "type",
                    HostField::Int(c.varint32("a file system type")?.into()),
                ),
                ("name", HostField::Text(utf8(c, "a file system name")?)),
                ("root_url", HostField::Text(utf8(c, "a root url")?)),
            ],
        ),
        tag::RTC_CERTIFICATE => other(
            "RTCCertificate",
            vec![
                ("private_key", HostField::Text(utf8(c, "a private key")?)),
                ("certificate", HostField::Text(utf8(c, "a certificate")?)),
            ],
        ),
        tag::CROP_TARGET => other(
            "CropTarget",
            vec![("id", HostField::Text(utf8(c, "an id")?))],
        ),
        tag::RESTRICTION_TARGET => other(
            "RestrictionTarget",
            vec![("id", HostField::Text(utf8(c, "an id")?))],
        ),
        tag::CRYPTO_KEY => read_crypto_key(c)?,
        tag::IMAGE_DATA | tag::IMAGE_BITMAP => read_image(c, t, version)?,
        _ => {
            if let Some((_, name)) = tag::TRANSFERRED.iter().find(|(x, _)| *x == t) {
                // Sent with a message, never stored: Blink refuses it without the live
                // object, as here.
                return Err(ValueError::new(at, ValueErrorKind::Transferred(name)));
            }
            if let Some((_, name)) = tag::NOT_DECODED.iter().find(|(x, _)| *x == t) {
                return Err(ValueError::new(
                    at,
                    ValueErrorKind::UndecodedHostObject(name),
                ));
            }
            return Err(ValueError::new(at, ValueErrorKind::UnknownHostTag(t)));
        }
    })
}

/// A File written in full (Blink's `ReadFile`).
fn read_file<'a>(c: &mut Cursor<'a>, version: u32) -> Result<FileInfo<'a>, ValueError> {
    if version < 3 {
        return Err(c.err(ValueErrorKind::Invalid(
            "a File in data older than Blink version 3",
        )));
    }
    let path = utf8(c, "a file path")?;
    let (name, relative_path) = if version >= 4 {
        (
            Some(utf8(c, "a file name")?),
            Some(utf8(c, "a relative path")?),
        )
    } else {
        (None, None)
    };
    let uuid = utf8(c, "a file uuid")?;
    let mime = utf8(c, "a file type")?;
    let has_snapshot = version >= 4 && c.varint32("a snapshot flag")? != 0;
    let (mut size, mut last_modified_ms) = (None, None);
    if has_snapshot {
        size = Some(c.varint64("a file size")?);
        let t = c.f64("a modification time")?;
        last_modified_ms = Some(if version < 8 { t * 1000.0 } else { t });
    }
    if version >= 7 {
        c.varint32("a user visibility flag")?;
    }
    Ok(FileInfo {
        path,
        name,
        relative_path,
        uuid,
        mime,
        size,
        last_modified_ms,
    })
}

fn doubles<'a>(
    c: &mut Cursor<'a>,
    name: &'static str,
    names: &[&'static str],
) -> Result<HostObject<'a>, ValueError> {
    let mut fields = Vec::with_capacity(names.len());
    for n in names {
        fields.push((*n, HostField::Number(c.f64("a coordinate")?)));
    }
    Ok(other(name, fields))
}

fn matrix<'a>(
    c: &mut Cursor<'a>,
    name: &'static str,
    field: &'static str,
    n: usize,
) -> Result<HostObject<'a>, ValueError> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        v.push(c.f64("a matrix value")?);
    }
    Ok(other(name, vec![(field, HostField::Numbers(v))]))
}
