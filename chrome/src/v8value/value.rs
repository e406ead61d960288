//! The values a decoded serialization holds: primitives inline, objects in a table by id.
//!
//! V8 numbers every object it serializes (plain objects, arrays, dates, maps, buffers, host
//! objects...) in the order they start, and refers back to an object by that number when it
//! meets it again. [`Decoded::objects`] keeps the same numbering, so an object that contains
//! itself (a cycle) or appears twice is held once, and [`Value::Object`] points at it.
//! Strings and buffers borrow from the bytes that were decoded.

use super::host::HostObject;
use super::strings::JsStr;

/// The id V8 gave an object: its place in [`Decoded::objects`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(pub u32);

/// A JavaScript value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `undefined`.
    Undefined,
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (V8's int32, uint32 and double forms alike).
    Number(f64),
    /// A BigInt.
    BigInt(BigInt<'a>),
    /// A string.
    String(JsStr<'a>),
    /// An object, by id.
    Object(ObjectId),
}

/// A BigInt as V8 writes it: a sign and the magnitude's bytes, least significant first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BigInt<'a> {
    /// The sign (a zero is never negative once read back).
    pub negative: bool,
    /// The magnitude, little-endian (a multiple of 8 bytes as V8 writes it).
    pub magnitude: &'a [u8],
}

/// A property key, as JavaScript sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyKey<'a> {
    /// An array index (an integer 0..=2^32-2, written as a number or a canonical string).
    Index(u32),
    /// Any other string.
    String(JsStr<'a>),
    /// Any other number (JavaScript names the property by the number's string form).
    Number(f64),
}

/// Which prototype an Error was read with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorName(pub &'static str);

/// An object of the table.
#[derive(Debug, Clone, PartialEq)]
pub enum Object<'a> {
    /// A plain object: its own properties in serialization order.
    Plain(Vec<(PropertyKey<'a>, Value<'a>)>),
    /// An array: its length, the elements present (ascending index) and other properties.
    Array {
        /// `array.length`.
        length: u32,
        /// The elements present, by ascending index (holes are absent).
        elements: Vec<(u32, Value<'a>)>,
        /// Properties that are not elements, in serialization order.
        properties: Vec<(PropertyKey<'a>, Value<'a>)>,
    },
    /// A Date: milliseconds since the epoch (NaN for an invalid date).
    Date(f64),
    /// A Boolean, Number, BigInt or String object wrapping a primitive.
    Boxed(Value<'a>),
    /// A RegExp.
    RegExp {
        /// The pattern.
        source: JsStr<'a>,
        /// V8's flag bits (see [`regexp_flags`](super::regexp_flags)).
        flags: u32,
    },
    /// A Map: its entries in insertion order.
    Map(Vec<(Value<'a>, Value<'a>)>),
    /// A Set: its values in insertion order.
    Set(Vec<Value<'a>>),
    /// An ArrayBuffer and its bytes.
    ArrayBuffer {
        /// The contents.
        bytes: &'a [u8],
        /// For a resizable buffer, its maximum byte length.
        max_byte_length: Option<u64>,
    },
    /// A typed array or DataView over an ArrayBuffer of the table.
    View {
        /// The constructor's name (`Uint8Array`, `DataView`...).
        kind: &'static str,
        /// The buffer viewed.
        buffer: ObjectId,
        /// Byte offset in the buffer.
        byte_offset: u64,
        /// Byte length (for a length-tracking view, the buffer's length less the offset).
        byte_length: u64,
        /// V8's view flags (bit 0 length-tracking, bit 1 backed by a resizable buffer).
        flags: u32,
    },
    /// An Error.
    Error {
        /// The constructor's name (`Error`, `TypeError`...).
        name: ErrorName,
        /// `message`, when the error has its own.
        message: Option<JsStr<'a>>,
        /// `stack`, when serialized.
        stack: Option<JsStr<'a>>,
        /// `cause`, when the error has one.
        cause: Option<Value<'a>>,
    },
    /// An object Blink serialized (Blob, File, CryptoKey...).
    Host(HostObject<'a>),
}

/// A decoded serialization: the root value and the objects it reaches, by id.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded<'a> {
    /// Blink's wire format version (`None` without Blink's envelope).
    pub blink_version: Option<u32>,
    /// V8's serialization version.
    pub v8_version: u32,
    /// The value.
    pub root: Value<'a>,
    /// Every object, by [`ObjectId`].
    pub objects: Vec<Object<'a>>,
    /// Interfaces the trailer says reading the value needs (Blink tags), if any.
    pub required_interfaces: Vec<u8>,
}

impl<'a> Decoded<'a> {
    /// The object with this id: always `Some` for an id taken from this value (every
    /// [`Value::Object`] the decoder produced names an object of the table).
    pub fn object(&self, id: ObjectId) -> Option<&Object<'a>> {
        self.objects.get(id.0 as usize)
    }
}

impl Object<'_> {
    /// The name JavaScript code would see as the constructor (`Object`, `Array`, `Map`...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Object::Plain(_) => "Object",
            Object::Array { .. } => "Array",
            Object::Date(_) => "Date",
            Object::Boxed(Value::Bool(_)) => "Boolean",
            Object::Boxed(Value::BigInt(_)) => "BigInt",
            Object::Boxed(Value::String(_)) => "String",
            Object::Boxed(_) => "Number",
            Object::RegExp { .. } => "RegExp",
            Object::Map(_) => "Map",
            Object::Set(_) => "Set",
            Object::ArrayBuffer { .. } => "ArrayBuffer",
            Object::View { kind, .. } => kind,
            Object::Error { name, .. } => name.0,
            Object::Host(h) => h.type_name(),
        }
    }
}
