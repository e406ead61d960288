//! What a Blink host object decodes to ([`HostObject`], its fields), and the small helpers
//! the readers of each kind share (`host.rs` for files and geometry, `host_media.rs` for
//! keys and images).

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

/// A platform object of interface `name` with these fields.
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
