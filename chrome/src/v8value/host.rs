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
use super::error::ValueError;
use super::format::crypto;
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
    /// Whether the object refers to its IndexedDB record's blob list: a Blob, File or
    /// FileList stored with the record, or a File System Access handle (whose token is
    /// there).
    pub fn uses_blob_list(&self) -> bool {
        matches!(
            self,
            HostObject::BlobIndex(_) | HostObject::FileIndex(_) | HostObject::FileListIndex(_)
        ) || self.handle_token().is_some()
    }

    /// A `FileSystemFileHandle` or `FileSystemDirectoryHandle`: whether it is a directory,
    /// and the index of its token in the record's blob list.
    pub fn handle_token(&self) -> Option<(bool, u64)> {
        let HostObject::Other { name, fields } = self else {
            return None;
        };
        let directory = match *name {
            "FileSystemFileHandle" => false,
            "FileSystemDirectoryHandle" => true,
            _ => return None,
        };
        fields.iter().find_map(|(k, v)| match (k, v) {
            (&"token_index", HostField::Int(i)) => Some((directory, *i)),
            _ => None,
        })
    }

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
