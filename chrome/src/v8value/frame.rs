//! The containers being read: V8's objects, arrays, maps, sets and errors as frames of the
//! reader's stack (`decode.rs` runs it, `close.rs` ends the frames).

use super::keys::KeySet;
use super::strings::JsStr;
use super::value::{PropertyKey, Value};

/// A container being read.
pub(crate) enum Frame<'a> {
    /// A plain object: properties until `{`.
    Object {
        id: u32,
        count: u32,
        key: Option<PropertyKey<'a>>,
        keys: KeySet,
    },
    /// A dense array's elements (`next` of `length` read so far).
    Dense { id: u32, length: u32, next: u32 },
    /// An array's properties until `end` (`$` dense, `@` sparse).
    ArrayProps {
        id: u32,
        end: u8,
        length: u32,
        count: u32,
        key: Option<PropertyKey<'a>>,
        keys: KeySet,
    },
    /// A Map's entries until `:` (`count` keys and values read).
    Map {
        id: u32,
        count: u32,
        key: Option<Value<'a>>,
    },
    /// A Set's values until `,`.
    Set { id: u32, count: u32 },
    /// An Error's sub-tags until `.`; `awaiting` while its cause is being read.
    Error(Box<ErrorFrame<'a>>),
}

/// An Error being read.
pub(crate) struct ErrorFrame<'a> {
    pub(crate) id: u32,
    pub(crate) name: &'static str,
    pub(crate) message: Option<JsStr<'a>>,
    pub(crate) stack: Option<JsStr<'a>>,
    pub(crate) cause: Option<Value<'a>>,
    pub(crate) awaiting: bool,
}
