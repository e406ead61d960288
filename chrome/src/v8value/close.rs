//! Ending containers: end tags and the counts written after them, an array's properties
//! (an index is an element), an Error's sub-tags up to its end.

use super::decode::Reader;
use super::error::{ValueError, ValueErrorKind};
use super::format::*;
use super::frame::Frame;
use super::keys::KeySet;
use super::strings::JsStr;
use super::value::{ErrorName, Object, ObjectId, PropertyKey, Value};

impl<'a> Reader<'a> {
    /// A property of an array: an index is an element (and may lengthen the array), any
    /// other key a property; an existing element or `length` is a duplicate.
    pub(crate) fn array_property(
        &mut self,
        id: u32,
        keys: &mut KeySet,
        k: PropertyKey<'a>,
        v: Value<'a>,
    ) -> Result<(), ValueError> {
        let dup = self.c.err(ValueErrorKind::DuplicateKey);
        let Some(Object::Array {
            length,
            elements,
            properties,
        }) = self.objects.get_mut(id as usize)
        else {
            return Ok(());
        };
        match k {
            PropertyKey::Index(i) => {
                let at = elements.partition_point(|(j, _)| *j < i);
                if elements.get(at).is_some_and(|(j, _)| *j == i) {
                    return Err(dup);
                }
                elements.insert(at, (i, v));
                *length = (*length).max(i + 1);
            }
            k => {
                let is_length = matches!(&k, PropertyKey::String(s)
                    if s.same_units(&JsStr::Latin1(b"length")));
                if is_length || !keys.insert_is_new(properties, &k) {
                    return Err(dup);
                }
                properties.push((k, v));
            }
        }
        Ok(())
    }

    /// Ends a container at its end tag, checking the counts written after it.
    pub(crate) fn finish(&mut self, frame: Frame<'a>) -> Result<Value<'a>, ValueError> {
        let check = |what, stated: u32, found: u32, at| {
            if stated == found {
                Ok(())
            } else {
                Err(ValueError::new(
                    at,
                    ValueErrorKind::CountMismatch {
                        what,
                        stated: stated.into(),
                        found: found.into(),
                    },
                ))
            }
        };
        let at = self.c.pos();
        let id = match frame {
            Frame::Object { id, count, .. } => {
                check(
                    "object property count",
                    self.c.varint32("a property count")?,
                    count,
                    at,
                )?;
                id
            }
            Frame::ArrayProps {
                id, length, count, ..
            } => {
                check(
                    "array property count",
                    self.c.varint32("a property count")?,
                    count,
                    at,
                )?;
                let at = self.c.pos();
                check(
                    "array length",
                    self.c.varint32("an array length")?,
                    length,
                    at,
                )?;
                id
            }
            Frame::Map { id, count, .. } => {
                check("Map size", self.c.varint32("a Map size")?, count, at)?;
                id
            }
            Frame::Set { id, count } => {
                check("Set size", self.c.varint32("a Set size")?, count, at)?;
                id
            }
            // Dense and Error frames do not end at an end tag.
            Frame::Dense { id, .. } => id,
            Frame::Error(e) => e.id,
        };
        Ok(Value::Object(ObjectId(id)))
    }

    /// Reads an Error's sub-tags up to its end or its cause.
    pub(crate) fn error_step(
        &mut self,
        stack: &mut Vec<Frame<'a>>,
    ) -> Result<Option<Value<'a>>, ValueError> {
        let Some(Frame::Error(e)) = stack.last_mut() else {
            return Ok(None);
        };
        loop {
            let at = self.c.pos();
            let sub = self.c.varint8("an Error tag")?;
            if let Some((_, name)) = ERROR_PROTOTYPES.iter().find(|(t, _)| *t == sub) {
                e.name = name;
                continue;
            }
            match sub {
                ERROR_MESSAGE => e.message = Some(self.read_string()?),
                ERROR_STACK => e.stack = Some(self.read_string()?),
                ERROR_CAUSE => {
                    e.awaiting = true;
                    return Ok(None);
                }
                ERROR_END => break,
                _ => {
                    return Err(ValueError::new(
                        at,
                        ValueErrorKind::Invalid("an unknown Error tag"),
                    ))
                }
            }
        }
        let Some(Frame::Error(e)) = stack.pop() else {
            return Ok(None);
        };
        let id = e.id;
        self.set(
            id,
            Object::Error {
                name: ErrorName(e.name),
                message: e.message,
                stack: e.stack,
                cause: e.cause,
            },
        );
        Ok(Some(Value::Object(ObjectId(id))))
    }
}
