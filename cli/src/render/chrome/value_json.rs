//! A decoded Chrome value as JSON, in the mapping `docs/indexeddb.md` fixes for
//! `"idb": {"data": V}` (strings, numbers, objects and arrays as themselves; everything else
//! as `{"$type": ...}`; a cycle as `{"$ref": id}`; a page's property name starting with `$`
//! with one more `$`, so no page data reads as a marker).
//!
//! Written without recursion (a task stack), so no nesting depth overflows the thread's
//! stack; strings and numbers are spelled as JavaScript's `JSON.stringify` spells them.

use sst_chrome::v8value::{
    regexp_flags, write_js_number, Decoded, Object, ObjectId, PropertyKey, Value,
};

pub use super::host_json::Blobs;
use super::json_text::{
    push_int, push_number, push_plain, push_primitive, push_property_name, push_str,
};
use crate::render::text;

enum Task<'d, 'a> {
    Value(&'d Value<'a>),
    Key(&'d PropertyKey<'a>),
    Index(u32),
    Lit(&'static str),
    Leave(ObjectId),
}

/// Appends `d`'s root value as JSON.
pub fn push_decoded(out: &mut Vec<u8>, d: &Decoded<'_>, blobs: &Blobs<'_>) {
    let mut open = vec![false; d.objects.len()];
    let mut stack: Vec<Task<'_, '_>> = vec![Task::Value(&d.root)];
    while let Some(t) = stack.pop() {
        match t {
            Task::Lit(s) => out.extend_from_slice(s.as_bytes()),
            Task::Key(k) => {
                push_key(out, k);
                out.push(b':');
            }
            Task::Index(i) => {
                out.push(b'"');
                push_int(out, i.into());
                out.extend_from_slice(b"\":");
            }
            Task::Leave(id) => open[id.0 as usize] = false,
            Task::Value(v) => match v {
                Value::Object(id) => {
                    let i = id.0 as usize;
                    match (open.get(i), d.objects.get(i)) {
                        (Some(true), _) => {
                            out.extend_from_slice(format!("{{\"$ref\":{}}}", id.0).as_bytes())
                        }
                        (Some(false), Some(o)) => {
                            let before = stack.len();
                            if object(out, d, o, blobs, &mut stack) {
                                open[i] = true;
                                stack.insert(before, Task::Leave(*id));
                            }
                        }
                        _ => out.extend_from_slice(b"null"),
                    }
                }
                v => push_primitive(out, v),
            },
        }
    }
}

/// Writes an object's opening and pushes tasks for its contents (in reverse); returns
/// whether it holds values (and so may be met again while being written).
fn object<'d, 'a>(
    out: &mut Vec<u8>,
    d: &'d Decoded<'a>,
    o: &'d Object<'a>,
    blobs: &Blobs<'_>,
    stack: &mut Vec<Task<'d, 'a>>,
) -> bool {
    let mut tasks: Vec<Task<'d, 'a>> = Vec::new();
    let holds = match o {
        Object::Plain(props) => {
            out.push(b'{');
            members(&mut tasks, props);
            tasks.push(Task::Lit("}"));
            true
        }
        Object::Array {
            length,
            elements,
            properties,
        } => {
            let dense = properties.is_empty()
                && elements.len() == *length as usize
                && elements
                    .iter()
                    .enumerate()
                    .all(|(i, (j, _))| *j as usize == i);
            if dense {
                out.push(b'[');
                for (n, (_, v)) in elements.iter().enumerate() {
                    if n > 0 {
                        tasks.push(Task::Lit(","));
                    }
                    tasks.push(Task::Value(v));
                }
                tasks.push(Task::Lit("]"));
            } else {
                out.extend_from_slice(
                    format!("{{\"$type\":\"array\",\"length\":{length},\"elements\":{{").as_bytes(),
                );
                for (n, (i, v)) in elements.iter().enumerate() {
                    if n > 0 {
                        tasks.push(Task::Lit(","));
                    }
                    tasks.push(Task::Index(*i));
                    tasks.push(Task::Value(v));
                }
                tasks.push(Task::Lit("},\"properties\":{"));
                members(&mut tasks, properties);
                tasks.push(Task::Lit("}}"));
            }
            true
        }
        Object::Map(entries) => {
            out.extend_from_slice(b"{\"$type\":\"map\",\"entries\":[");
            for (n, (k, v)) in entries.iter().enumerate() {
                tasks.push(Task::Lit(if n > 0 { ",[" } else { "[" }));
                tasks.push(Task::Value(k));
                tasks.push(Task::Lit(","));
                tasks.push(Task::Value(v));
                tasks.push(Task::Lit("]"));
            }
            tasks.push(Task::Lit("]}"));
            true
        }
        Object::Set(values) => {
            out.extend_from_slice(b"{\"$type\":\"set\",\"values\":[");
            for (n, v) in values.iter().enumerate() {
                if n > 0 {
                    tasks.push(Task::Lit(","));
                }
                tasks.push(Task::Value(v));
            }
            tasks.push(Task::Lit("]}"));
            true
        }
        Object::Date(ms) => {
            out.extend_from_slice(b"{\"$type\":\"date\",\"value\":");
            push_number(out, *ms);
            out.push(b'}');
            false
        }
        Object::Boxed(v) => {
            out.extend_from_slice(b"{\"$type\":\"boxed\",\"value\":");
            push_primitive(out, v);
            out.push(b'}');
            false
        }
        Object::RegExp { source, flags } => {
            out.extend_from_slice(b"{\"$type\":\"regexp\",\"source\":");
            push_str(out, source);
            out.extend_from_slice(b",\"flags\":");
            push_plain(out, &regexp_flags(*flags));
            out.push(b'}');
            false
        }
        Object::ArrayBuffer { bytes, .. } => {
            typed_hex(out, "ArrayBuffer", bytes);
            false
        }
        Object::View {
            kind,
            buffer,
            byte_offset,
            byte_length,
            ..
        } => {
            let bytes = match d.object(*buffer) {
                Some(Object::ArrayBuffer { bytes, .. }) => {
                    let start = (*byte_offset as usize).min(bytes.len());
                    let end = start.saturating_add(*byte_length as usize).min(bytes.len());
                    &bytes[start..end]
                }
                _ => &[][..],
            };
            typed_hex(out, kind, bytes);
            false
        }
        Object::Error {
            name,
            message,
            stack,
            cause,
        } => {
            out.extend_from_slice(b"{\"$type\":\"error\",\"name\":");
            push_plain(out, name.0);
            out.extend_from_slice(b",\"message\":");
            match message {
                Some(m) => push_str(out, m),
                None => out.extend_from_slice(b"\"\""),
            }
            if let Some(st) = stack {
                out.extend_from_slice(b",\"stack\":");
                push_str(out, st);
            }
            match cause {
                Some(c) => {
                    tasks.push(Task::Lit(",\"cause\":"));
                    tasks.push(Task::Value(c));
                    tasks.push(Task::Lit("}"));
                    true
                }
                None => {
                    out.push(b'}');
                    false
                }
            }
        }
        Object::Host(h) => {
            super::host_json::host(out, h, blobs);
            false
        }
    };
    stack.extend(tasks.into_iter().rev());
    holds
}

/// `"key":value` pairs, comma-separated.
fn members<'d, 'a>(tasks: &mut Vec<Task<'d, 'a>>, props: &'d [(PropertyKey<'a>, Value<'a>)]) {
    for (n, (k, v)) in props.iter().enumerate() {
        if n > 0 {
            tasks.push(Task::Lit(","));
        }
        tasks.push(Task::Key(k));
        tasks.push(Task::Value(v));
    }
}

fn push_key(out: &mut Vec<u8>, k: &PropertyKey<'_>) {
    match k {
        PropertyKey::Index(i) => {
            out.push(b'"');
            push_int(out, (*i).into());
            out.push(b'"');
        }
        PropertyKey::String(s) => push_property_name(out, s),
        PropertyKey::Number(x) => {
            let mut s = String::new();
            write_js_number(&mut s, *x);
            push_plain(out, &s);
        }
    }
}

fn typed_hex(out: &mut Vec<u8>, kind: &str, bytes: &[u8]) {
    out.extend_from_slice(b"{\"$type\":");
    push_plain(out, kind);
    out.extend_from_slice(b",\"hex\":\"");
    text::push_hex(out, bytes);
    out.extend_from_slice(b"\"}");
}
