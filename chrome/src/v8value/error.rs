//! Why a serialized value could not be read, and where.

use std::fmt;

/// A value that could not be read: what went wrong and at which byte.
///
/// `offset` counts from the start of the bytes handed to the decoder (for an IndexedDB
/// record, the serialized value after the record's version varint, or after snappy
/// decompression, as [`ValueError::context`] says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What the problem is.
    pub kind: ValueErrorKind,
    /// Where the bytes came from when they are not the record value itself (for example
    /// "snappy-decompressed value"); empty otherwise.
    pub context: &'static str,
}

/// What kind of problem a [`ValueError`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ValueErrorKind {
    /// The bytes end inside something (named).
    Truncated(&'static str),
    /// A tag byte V8 does not define where a value starts.
    UnknownTag(u8),
    /// A Blink host object tag this decoder does not know.
    UnknownHostTag(u8),
    /// A Blink host object whose layout is not decoded here (named).
    UndecodedHostObject(&'static str),
    /// An object transferred with a message (named), which only a live page holds.
    Transferred(&'static str),
    /// A V8 version outside the ones read here.
    UnsupportedV8Version(u32),
    /// A Blink wire format version newer than the ones read here.
    UnsupportedBlinkVersion(u32),
    /// A count or length at the end of a container disagrees with what was read.
    CountMismatch {
        /// Which count.
        what: &'static str,
        /// What the bytes say.
        stated: u64,
        /// What was read.
        found: u64,
    },
    /// A reference to an object id that does not exist (yet).
    BadReference(u32),
    /// A property key that is not a string or a number.
    BadKey,
    /// The same property twice in one object (V8 refuses it).
    DuplicateKey,
    /// Something V8 or Blink would refuse (said what).
    Invalid(&'static str),
    /// A wrapped value whose snappy stream does not decompress.
    BadSnappy,
}

impl ValueError {
    /// An error of `kind` at `offset`.
    pub fn new(offset: usize, kind: ValueErrorKind) -> ValueError {
        ValueError {
            offset,
            kind,
            context: "",
        }
    }

    /// The same error, saying where its bytes came from.
    pub fn in_context(mut self, context: &'static str) -> ValueError {
        self.context = context;
        self
    }
}

impl fmt::Display for ValueErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueErrorKind::Truncated(what) => write!(f, "the bytes end inside {what}"),
            ValueErrorKind::UnknownTag(t) => write!(f, "unknown V8 tag {}", show_tag(*t)),
            ValueErrorKind::UnknownHostTag(t) => {
                write!(f, "unknown Blink host object tag {}", show_tag(*t))
            }
            ValueErrorKind::UndecodedHostObject(name) => {
                write!(
                    f,
                    "Blink host object {name}, whose layout is not decoded here"
                )
            }
            ValueErrorKind::Transferred(name) => {
                write!(f, "a transferred {name}, which only a live page holds")
            }
            ValueErrorKind::UnsupportedV8Version(v) => write!(
                f,
                "V8 serialization version {v} (versions {}..={} are read)",
                super::format::V8_OLDEST_VERSION,
                super::format::V8_LATEST_VERSION
            ),
            ValueErrorKind::UnsupportedBlinkVersion(v) => write!(
                f,
                "Blink wire format version {v} (newest read: {})",
                super::format::BLINK_LATEST_VERSION
            ),
            ValueErrorKind::CountMismatch {
                what,
                stated,
                found,
            } => write!(f, "{what}: the bytes say {stated}, {found} were read"),
            ValueErrorKind::BadReference(id) => write!(f, "reference to unknown object {id}"),
            ValueErrorKind::BadKey => f.write_str("a property key that is not a string or number"),
            ValueErrorKind::DuplicateKey => f.write_str("the same property twice in one object"),
            ValueErrorKind::Invalid(what) => f.write_str(what),
            ValueErrorKind::BadSnappy => f.write_str("corrupt snappy-compressed value"),
        }
    }
}

/// A tag byte as a character when printable (`'o' (0x6f)`), else as hex.
fn show_tag(t: u8) -> String {
    if t.is_ascii_graphic() {
        format!("'{}' (0x{t:02x})", t as char)
    } else {
        format!("0x{t:02x}")
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}", self.kind, self.offset)?;
        if !self.context.is_empty() {
            write!(f, " of the {}", self.context)?;
        }
        Ok(())
    }
}

impl std::error::Error for ValueError {}
