//! Objects Blink serializes itself (after V8's host object tag `\`): Blob, File, FileList
//! and the other platform objects a page can store.
//!
//! ```text
//! \ i varint index                  Blob in the record's blob list (IndexedDB)
//! \ e varint index                  File in the record's blob list (IndexedDB)
//! \ L varint n, n x varint index    FileList (IndexedDB)
//! \ b utf8 uuid, utf8 type, varint64 size                Blob (outside IndexedDB)
//! \ f utf8 path, [utf8 name, utf8 relative path,] utf8 uuid, utf8 type,
//!     [varint has snapshot, [varint64 size, f64 last modified]], [varint user visible]
//! \ l varint n, n Files as for `f`
//! \ Q W E R: 4 f64 (DOMPoint[ReadOnly], DOMRect[ReadOnly])   \ T: 16 f64 (DOMQuad)
//! \ Y U: 16 f64 (DOMMatrix[ReadOnly])   \ I O: 6 f64 (DOMMatrix2D[ReadOnly])
//! \ K sub-tag byte, parameters, varint usages, varint n, n key bytes   CryptoKey
//! \ # / g image tags up to 0, width, height, length, pixels  ImageData / ImageBitmap
//! \ x utf8 name, utf8 message, utf8 stack   DOMException
//! \ n / N utf8 name, varint token index     FileSystemFileHandle / DirectoryHandle
//! \ d varint type, utf8 name, utf8 root url DOMFileSystem
//! \ k utf8 private key PEM, utf8 certificate PEM   RTCCertificate
//! utf8 = varint length, that many UTF-8 bytes; the bracketed parts depend on the Blink
//! version (File's name and snapshot from 4, user visibility from 7, last modified in ms
//! from 8, indexes from 6; images' tag lists from 18)
//! ```

use super::cursor::Cursor;
use super::error::{ValueError, ValueErrorKind};
use super::format::{crypto, host_tag as tag};
use super::strings::JsStr;

/// An object Blink serialized.
#[derive(Debug, Clone, PartialEq)]
pub enum HostObject<'a> {
    /// A Blob stored with the record: its index in the record's blob list.
    BlobIndex(u32),
    /// A File stored with the record: its index in the record's blob list.
    FileIndex(u32),
    /// A FileList stored with the record: the indexes of its files in the blob list.
    FileListIndex(Vec<u32>),
    /// A Blob described in place (not written by IndexedDB).
    Blob {
        /// Blink's id of the blob's data.
        uuid: JsStr<'a>,
        /// MIME type.
        mime: JsStr<'a>,
        /// Size in bytes.
        size: u64,
    },
    /// A File described in place (not written by IndexedDB).
    File(FileInfo<'a>),
    /// A FileList described in place.
    FileList(Vec<FileInfo<'a>>),
    /// Any other platform object: its interface name and its fields.
    Other {
        /// The interface (`DOMPoint`, `CryptoKey`...).
        name: &'static str,
        /// Its fields, in the order Blink writes them.
        fields: Vec<(&'static str, HostField<'a>)>,
    },
}

/// A File as Blink writes it outside IndexedDB.
#[derive(Debug, Clone, PartialEq)]
pub struct FileInfo<'a> {
    /// Path of a file backed by the file system (often empty).
    pub path: JsStr<'a>,
    /// `file.name` (version 4 and later).
    pub name: Option<JsStr<'a>>,
    /// `webkitRelativePath` (version 4 and later).
    pub relative_path: Option<JsStr<'a>>,
    /// Blink's id of the file's data.
    pub uuid: JsStr<'a>,
    /// MIME type.
    pub mime: JsStr<'a>,
    /// Size in bytes, when the snapshot was written.
    pub size: Option<u64>,
    /// `lastModified` in milliseconds, when the snapshot was written.
    pub last_modified_ms: Option<f64>,
}

/// A field of a platform object.
#[derive(Debug, Clone, PartialEq)]
pub enum HostField<'a> {
    /// A number.
    Number(f64),
    /// An integer.
    Int(u64),
    /// A flag.
    Bool(bool),
    /// A name from a fixed list (an algorithm, a curve).
    Name(&'static str),
    /// Names from a fixed list (key usages).
    Names(Vec<&'static str>),
    /// Text.
    Text(JsStr<'a>),
    /// Raw bytes (key data, pixels).
    Bytes(&'a [u8]),
    /// Several numbers (a matrix).
    Numbers(Vec<f64>),
}

impl HostObject<'_> {
    /// The interface name (`Blob`, `File`, `FileList`, `DOMPoint`...).
    pub fn type_name(&self) -> &'static str {
        match self {
            HostObject::BlobIndex(_) | HostObject::Blob { .. } => "Blob",
            HostObject::FileIndex(_) | HostObject::File(_) => "File",
            HostObject::FileListIndex(_) | HostObject::FileList(_) => "FileList",
            HostObject::Other { name, .. } => name,
        }
    }
}

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
        tag::CRYPTO_KEY => super::host_media::read_crypto_key(c)?,
        tag::IMAGE_DATA | tag::IMAGE_BITMAP => super::host_media::read_image(c, t, version)?,
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

/// Blink's `ReadUTF8String`: a varint length and UTF-8 bytes.
pub(crate) fn utf8<'a>(c: &mut Cursor<'a>, what: &'static str) -> Result<JsStr<'a>, ValueError> {
    c.length_prefixed(what).map(JsStr::Utf8)
}

pub(crate) fn other<'a>(
    name: &'static str,
    fields: Vec<(&'static str, HostField<'a>)>,
) -> HostObject<'a> {
    HostObject::Other { name, fields }
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

/// The name a code stands for in a fixed list, if any.
pub(crate) fn lookup(list: &[(u32, &'static str)], code: u32) -> Option<&'static str> {
    list.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The usage names of a CryptoKey's usage bits.
pub(crate) fn usages(bits: u32) -> Vec<&'static str> {
    crypto::USAGES
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect()
}
