//! V8's `ValueDeserializer`, without recursion: containers being read are frames on an
//! explicit stack, so nesting depth costs heap, not the thread's stack, and no input can
//! overflow it.
//!
//! The reader assigns object ids exactly where V8 does (see [`value`](super::value)): an
//! object, array, map or set gets its id before its contents and can be referred to from
//! inside them (a cycle); a Date after its number; an Error, RegExp, boxed primitive,
//! buffer or host object at its start, but it can be referred to only once read (as in V8,
//! whose id table gets the object when it is complete).

use super::cursor::Cursor;
use super::error::{ValueError, ValueErrorKind};
use super::format::*;
use super::frame::{ErrorFrame, Frame};
use super::keys::{to_key, KeySet};
use super::value::{Object, ObjectId, PropertyKey, Value};

/// What the top frame needs next.
enum Action {
    ReadValue,
    Finish,
    Hole,
    DenseDone,
    ErrorStep,
}

/// The state of one decode.
pub(crate) struct Reader<'a> {
    pub(crate) c: Cursor<'a>,
    /// V8's version.
    pub(crate) version: u32,
    /// Blink's version (V8's when there is no Blink envelope), for host objects.
    pub(crate) host_version: u32,
    /// V8's compatibility mode for version 13 data written with view flags.
    pub(crate) broken13: bool,
    pub(crate) objects: Vec<Object<'a>>,
    ready: Vec<bool>,
}

impl<'a> Reader<'a> {
    /// A reader at `c`, after V8's header.
    pub(crate) fn new(c: Cursor<'a>, version: u32, host_version: u32, broken13: bool) -> Self {
        Reader {
            c,
            version,
            host_version,
            broken13,
            objects: Vec::new(),
            ready: Vec::new(),
        }
    }

    /// A new object id, for an object complete now (`ready`) or filled in later.
    pub(crate) fn add(&mut self, object: Object<'a>, ready: bool) -> Result<u32, ValueError> {
        let id = u32::try_from(self.objects.len()).map_err(|_| {
            self.c
                .err(ValueErrorKind::Invalid("more than 2^32 objects"))
        })?;
        self.objects.push(object);
        self.ready.push(ready);
        Ok(id)
    }

    /// Fills in an object whose id was taken earlier and makes it referable.
    pub(crate) fn set(&mut self, id: u32, object: Object<'a>) {
        if let Some(slot) = self.objects.get_mut(id as usize) {
            *slot = object;
            self.ready[id as usize] = true;
        }
    }

    /// A reference to object `id` (`^`), which must exist and be referable.
    pub(crate) fn reference(&self, id: u32, at: usize) -> Result<Value<'a>, ValueError> {
        if self.ready.get(id as usize) == Some(&true) {
            Ok(Value::Object(ObjectId(id)))
        } else {
            Err(ValueError::new(at, ValueErrorKind::BadReference(id)))
        }
    }

    /// Reads one value (V8's `ReadObject`), with everything it contains.
    pub(crate) fn read_root(&mut self) -> Result<Value<'a>, ValueError> {
        let mut stack: Vec<Frame<'a>> = Vec::new();
        loop {
            let produced = match self.action(stack.last())? {
                Action::ReadValue => self.read_value(&mut stack)?,
                Action::Finish => {
                    self.c.read_tag()?;
                    match stack.pop() {
                        Some(frame) => Some(self.finish(frame)?),
                        None => None,
                    }
                }
                Action::Hole => {
                    self.c.read_tag()?;
                    if let Some(Frame::Dense { next, .. }) = stack.last_mut() {
                        *next += 1;
                    }
                    None
                }
                Action::DenseDone => {
                    if let Some(Frame::Dense { id, length, .. }) = stack.pop() {
                        stack.push(Frame::ArrayProps {
                            id,
                            end: TAG_END_DENSE_ARRAY,
                            length,
                            count: 0,
                            key: None,
                            keys: KeySet::default(),
                        });
                    }
                    None
                }
                Action::ErrorStep => self.error_step(&mut stack)?,
            };
            let Some(v) = produced else { continue };
            let v = self.after_value(v)?;
            match stack.last_mut() {
                None => return Ok(v),
                Some(frame) => self.deliver(frame, v)?,
            }
        }
    }

    fn action(&self, top: Option<&Frame<'a>>) -> Result<Action, ValueError> {
        let end_or_value = |end: u8, pending: bool, what: &'static str| {
            if pending {
                return Ok(Action::ReadValue);
            }
            match self.c.peek_tag() {
                None => Err(self.c.err(ValueErrorKind::Truncated(what))),
                Some(t) if t == end => Ok(Action::Finish),
                Some(_) => Ok(Action::ReadValue),
            }
        };
        match top {
            None => Ok(Action::ReadValue),
            Some(Frame::Object { key, .. }) => {
                end_or_value(TAG_END_OBJECT, key.is_some(), "an object")
            }
            Some(Frame::ArrayProps { end, key, .. }) => {
                end_or_value(*end, key.is_some(), "an array")
            }
            Some(Frame::Map { key, .. }) => end_or_value(TAG_END_MAP, key.is_some(), "a Map"),
            Some(Frame::Set { .. }) => end_or_value(TAG_END_SET, false, "a Set"),
            Some(Frame::Dense { length, next, .. }) => Ok(if next >= length {
                Action::DenseDone
            } else if self.c.peek_tag() == Some(TAG_THE_HOLE) {
                Action::Hole
            } else {
                Action::ReadValue
            }),
            Some(Frame::Error(e)) => Ok(if e.awaiting {
                Action::ReadValue
            } else {
                Action::ErrorStep
            }),
        }
    }

    /// Reads the tag of a value and, for a leaf, the value; a container pushes its frame
    /// and yields `None`.
    fn read_value(&mut self, stack: &mut Vec<Frame<'a>>) -> Result<Option<Value<'a>>, ValueError> {
        loop {
            let t = self.c.read_tag()?;
            let at = self.c.pos() - 1;
            let frame = match t {
                TAG_VERIFY_OBJECT_COUNT => {
                    self.c.varint32("an object count")?;
                    continue;
                }
                TAG_BEGIN_OBJECT => {
                    let id = self.add(Object::Plain(Vec::new()), true)?;
                    Frame::Object {
                        id,
                        count: 0,
                        key: None,
                        keys: KeySet::default(),
                    }
                }
                TAG_BEGIN_SPARSE_ARRAY => {
                    let length = self.c.varint32("an array length")?;
                    let id = self.add(array(length, 0), true)?;
                    Frame::ArrayProps {
                        id,
                        end: TAG_END_SPARSE_ARRAY,
                        length,
                        count: 0,
                        key: None,
                        keys: KeySet::default(),
                    }
                }
                TAG_BEGIN_DENSE_ARRAY => {
                    let length = self.c.varint32("an array length")?;
                    if length as usize > self.c.remaining() {
                        return Err(ValueError::new(
                            at,
                            ValueErrorKind::Invalid("a dense array longer than the bytes left"),
                        ));
                    }
                    let id = self.add(array(length, length), true)?;
                    Frame::Dense {
                        id,
                        length,
                        next: 0,
                    }
                }
                TAG_BEGIN_MAP => {
                    let id = self.add(Object::Map(Vec::new()), true)?;
                    Frame::Map {
                        id,
                        count: 0,
                        key: None,
                    }
                }
                TAG_BEGIN_SET => {
                    let id = self.add(Object::Set(Vec::new()), true)?;
                    Frame::Set { id, count: 0 }
                }
                TAG_ERROR => {
                    let id = self.add(Object::Plain(Vec::new()), false)?;
                    Frame::Error(Box::new(ErrorFrame {
                        id,
                        name: "Error",
                        message: None,
                        stack: None,
                        cause: None,
                        awaiting: false,
                    }))
                }
                _ => return self.read_leaf(t, at).map(Some),
            };
            stack.push(frame);
            return Ok(None);
        }
    }

    /// After a value: an ArrayBuffer followed by `V` is the buffer of a view, and the value
    /// is the view (V8's `ReadObject`).
    fn after_value(&mut self, v: Value<'a>) -> Result<Value<'a>, ValueError> {
        if let Value::Object(ObjectId(id)) = v {
            let is_buffer = matches!(
                self.objects.get(id as usize),
                Some(Object::ArrayBuffer { .. })
            );
            if is_buffer && self.c.peek_tag() == Some(TAG_ARRAY_BUFFER_VIEW) {
                self.c.read_tag()?;
                return self.read_view(id);
            }
        }
        Ok(v)
    }

    /// Takes a value into the container being read.
    fn deliver(&mut self, frame: &mut Frame<'a>, v: Value<'a>) -> Result<(), ValueError> {
        match frame {
            Frame::Object {
                id,
                count,
                key,
                keys,
            } => match key.take() {
                None => *key = Some(self.key(&v)?),
                Some(k) => {
                    let at = self.c.pos();
                    if let Some(Object::Plain(props)) = self.objects.get_mut(*id as usize) {
                        if !keys.insert_is_new(props, &k) {
                            return Err(ValueError::new(at, ValueErrorKind::DuplicateKey));
                        }
                        props.push((k, v));
                    }
                    *count += 1;
                }
            },
            Frame::Dense { id, next, .. } => {
                // Before version 11, undefined in a dense array meant the hole.
                if !(self.version < V8_VERSION_UNDEFINED_NOT_HOLE && v == Value::Undefined) {
                    if let Some(Object::Array { elements, .. }) = self.objects.get_mut(*id as usize)
                    {
                        elements.push((*next, v));
                    }
                }
                *next += 1;
            }
            Frame::ArrayProps {
                id,
                count,
                key,
                keys,
                ..
            } => match key.take() {
                None => *key = Some(self.key(&v)?),
                Some(k) => {
                    self.array_property(*id, keys, k, v)?;
                    *count += 1;
                }
            },
            Frame::Map { id, count, key } => match key.take() {
                None => *key = Some(v),
                Some(k) => {
                    if let Some(Object::Map(entries)) = self.objects.get_mut(*id as usize) {
                        entries.push((k, v));
                    }
                    *count += 2;
                }
            },
            Frame::Set { id, count } => {
                if let Some(Object::Set(values)) = self.objects.get_mut(*id as usize) {
                    values.push(v);
                }
                *count += 1;
            }
            Frame::Error(e) => {
                e.cause = Some(v);
                e.awaiting = false;
            }
        }
        Ok(())
    }

    fn key(&self, v: &Value<'a>) -> Result<PropertyKey<'a>, ValueError> {
        to_key(v).ok_or_else(|| self.c.err(ValueErrorKind::BadKey))
    }
}

fn array<'a>(length: u32, capacity: u32) -> Object<'a> {
    Object::Array {
        length,
        elements: Vec::with_capacity(capacity.min(4096) as usize),
        properties: Vec::new(),
    }
}
