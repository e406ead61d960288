//! Values without V8 values inside them: primitives, strings, dates, boxed primitives,
//! RegExps, ArrayBuffers and their views, and Blink's host objects.

use super::decode::Reader;
use super::error::{ValueError, ValueErrorKind};
use super::format::*;
use super::host_read::read_host;
use super::strings::JsStr;
use super::value::{BigInt, Object, ObjectId, Value};

/// V8's largest BigInt, in bytes of digits (`BigInt::kMaxLength` 64-bit digits).
const BIGINT_MAX_BYTES: u64 = (1 << 24) * 8;

impl<'a> Reader<'a> {
    /// The value of leaf tag `t`, read at offset `at`.
    pub(crate) fn read_leaf(&mut self, t: u8, at: usize) -> Result<Value<'a>, ValueError> {
        Ok(match t {
            TAG_UNDEFINED => Value::Undefined,
            TAG_NULL => Value::Null,
            TAG_TRUE => Value::Bool(true),
            TAG_FALSE => Value::Bool(false),
            TAG_INT32 => Value::Number(self.c.zigzag32("an int32")?.into()),
            TAG_UINT32 => Value::Number(self.c.varint32("a uint32")?.into()),
            TAG_DOUBLE => Value::Number(self.c.f64("a double")?),
            TAG_BIGINT => Value::BigInt(self.bigint()?),
            TAG_UTF8_STRING | TAG_ONE_BYTE_STRING | TAG_TWO_BYTE_STRING => {
                Value::String(self.string_body(t)?)
            }
            TAG_OBJECT_REFERENCE => {
                let id = self.c.varint32("an object id")?;
                self.reference(id, at)?
            }
            TAG_DATE => {
                let ms = self.c.f64("a date")?;
                Value::Object(ObjectId(self.add(Object::Date(ms), true)?))
            }
            TAG_TRUE_OBJECT | TAG_FALSE_OBJECT | TAG_NUMBER_OBJECT | TAG_BIGINT_OBJECT
            | TAG_STRING_OBJECT => {
                let id = self.add(Object::Plain(Vec::new()), false)?;
                let inner = match t {
                    TAG_TRUE_OBJECT => Value::Bool(true),
                    TAG_FALSE_OBJECT => Value::Bool(false),
                    TAG_NUMBER_OBJECT => Value::Number(self.c.f64("a Number object")?),
                    TAG_BIGINT_OBJECT => Value::BigInt(self.bigint()?),
                    _ => Value::String(self.read_string()?),
                };
                self.set(id, Object::Boxed(inner));
                Value::Object(ObjectId(id))
            }
            TAG_REGEXP => {
                let id = self.add(Object::Plain(Vec::new()), false)?;
                let source = self.read_string()?;
                let flags_at = self.c.pos();
                let flags = self.c.varint32("RegExp flags")?;
                let bad = (u32::MAX << REGEXP_FLAG_COUNT) | REGEXP_FLAG_LINEAR;
                if flags & bad != 0 {
                    return Err(ValueError::new(
                        flags_at,
                        ValueErrorKind::Invalid("RegExp flags V8 refuses"),
                    ));
                }
                self.set(id, Object::RegExp { source, flags });
                Value::Object(ObjectId(id))
            }
            TAG_ARRAY_BUFFER | TAG_RESIZABLE_ARRAY_BUFFER => {
                let id = self.add(Object::Plain(Vec::new()), false)?;
                let len = self.size("an ArrayBuffer length")?;
                let max = if t == TAG_RESIZABLE_ARRAY_BUFFER {
                    let max = self.size("an ArrayBuffer maximum length")?;
                    if len > max {
                        return Err(self.c.err(ValueErrorKind::Invalid(
                            "a resizable ArrayBuffer longer than its maximum",
                        )));
                    }
                    Some(max)
                } else {
                    None
                };
                let bytes = self.c.read_bytes(len, "ArrayBuffer contents")?;
                self.set(
                    id,
                    Object::ArrayBuffer {
                        bytes,
                        max_byte_length: max,
                    },
                );
                Value::Object(ObjectId(id))
            }
            TAG_HOST_OBJECT => self.host(at, false)?,
            TAG_ARRAY_BUFFER_TRANSFER => return Err(transferred(at, "ArrayBuffer")),
            TAG_SHARED_ARRAY_BUFFER => return Err(transferred(at, "SharedArrayBuffer")),
            TAG_WASM_MODULE_TRANSFER => return Err(transferred(at, "WebAssembly.Module")),
            TAG_WASM_MEMORY_TRANSFER => return Err(transferred(at, "WebAssembly.Memory")),
            TAG_SHARED_OBJECT if self.version >= V8_VERSION_SHARED_OBJECT => {
                return Err(transferred(at, "shared object"))
            }
            // Before version 13 every tag V8 did not know was Blink's.
            _ if self.version < V8_VERSION_HOST_OBJECT_TAG => self.host(at, true)?,
            _ => return Err(ValueError::new(at, ValueErrorKind::UnknownTag(t))),
        })
    }

    /// A host object; `rewind` when its Blink tag is the byte at `at` (before version 13).
    fn host(&mut self, at: usize, rewind: bool) -> Result<Value<'a>, ValueError> {
        if rewind {
            self.c.rewind(at);
        }
        let id = self.add(Object::Plain(Vec::new()), false)?;
        let host = read_host(&mut self.c, self.host_version)?;
        self.set(id, Object::Host(host));
        Ok(Value::Object(ObjectId(id)))
    }

    /// A length or offset of a buffer or view: 64 bits from version 16, 32 before.
    fn size(&mut self, what: &'static str) -> Result<u64, ValueError> {
        if self.version >= 16 {
            self.c.varint64(what)
        } else {
            self.c.varint32(what).map(u64::from)
        }
    }

    /// A BigInt's bitfield and digits.
    fn bigint(&mut self) -> Result<BigInt<'a>, ValueError> {
        let bitfield = self.c.varint32("a BigInt bitfield")?;
        let len = u64::from((bitfield >> 1) & ((1 << 30) - 1));
        if len > BIGINT_MAX_BYTES {
            return Err(self
                .c
                .err(ValueErrorKind::Invalid("a BigInt over V8's maximum length")));
        }
        let magnitude = self.c.read_bytes(len, "BigInt digits")?;
        let negative = bitfield & 1 != 0 && magnitude.iter().any(|&b| b != 0);
        Ok(BigInt {
            negative,
            magnitude,
        })
    }

    /// The bytes of a string after its tag.
    fn string_body(&mut self, t: u8) -> Result<JsStr<'a>, ValueError> {
        let at = self.c.pos();
        let bytes = self.c.length_prefixed("a string")?;
        Ok(match t {
            TAG_ONE_BYTE_STRING => JsStr::Latin1(bytes),
            TAG_UTF8_STRING => JsStr::Utf8(bytes),
            _ if bytes.len() % 2 != 0 => {
                return Err(ValueError::new(
                    at,
                    ValueErrorKind::Invalid("a two-byte string of odd length"),
                ))
            }
            _ => JsStr::Utf16Le(bytes),
        })
    }

    /// A string where V8 reads one with `ReadString` (RegExp source, String object, Error
    /// message and stack): raw UTF-8 before version 12, a string value after.
    pub(crate) fn read_string(&mut self) -> Result<JsStr<'a>, ValueError> {
        if self.version < V8_VERSION_TAGGED_STRINGS {
            return self.c.length_prefixed("a string").map(JsStr::Utf8);
        }
        loop {
            let t = self.c.read_tag()?;
            match t {
                TAG_VERIFY_OBJECT_COUNT => {
                    self.c.varint32("an object count")?;
                }
                TAG_UTF8_STRING | TAG_ONE_BYTE_STRING | TAG_TWO_BYTE_STRING => {
                    return self.string_body(t)
                }
                _ => {
                    return Err(ValueError::new(
                        self.c.pos() - 1,
                        ValueErrorKind::Invalid("a value that is not a string where V8 wants one"),
                    ))
                }
            }
        }
    }

    /// A view of the ArrayBuffer `buffer` (V8's `ReadJSArrayBufferView`).
    pub(crate) fn read_view(&mut self, buffer: u32) -> Result<Value<'a>, ValueError> {
        let (buf_len, resizable) = match self.objects.get(buffer as usize) {
            Some(Object::ArrayBuffer {
                bytes,
                max_byte_length,
            }) => (bytes.len() as u64, max_byte_length.is_some()),
            _ => (0, false),
        };
        let at = self.c.pos();
        let sub = self.c.varint8("a view type")?;
        let offset = self.size("a view offset")?;
        let length = self.size("a view length")?;
        let invalid = |what| Err(ValueError::new(at, ValueErrorKind::Invalid(what)));
        if offset > buf_len || length > buf_len - offset {
            return invalid("a view outside its ArrayBuffer");
        }
        let flags = if self.version >= V8_VERSION_VIEW_FLAGS || self.broken13 {
            self.c.varint32("view flags")?
        } else {
            0
        };
        let Some(&(_, kind, size)) = VIEW_KINDS.iter().find(|(t, _, _)| *t == sub) else {
            return invalid("an unknown view type");
        };
        let size = u64::from(size);
        if offset % size != 0 || length % size != 0 {
            return invalid("a typed array not aligned to its element size");
        }
        let tracking = flags & VIEW_FLAG_LENGTH_TRACKING != 0;
        let rab = flags & VIEW_FLAG_BACKED_BY_RAB != 0;
        if ((tracking || rab) && !resizable) || (resizable && !rab) {
            return invalid("view flags that do not fit its ArrayBuffer");
        }
        let byte_length = if tracking {
            (buf_len - offset) / size * size
        } else {
            length
        };
        let id = self.add(
            Object::View {
                kind,
                buffer: ObjectId(buffer),
                byte_offset: offset,
                byte_length,
                flags,
            },
            true,
        )?;
        Ok(Value::Object(ObjectId(id)))
    }
}

fn transferred(at: usize, what: &'static str) -> ValueError {
    ValueError::new(at, ValueErrorKind::Transferred(what))
}
