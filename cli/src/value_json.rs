//! A decoded Chrome value as JSON, in the mapping `docs/indexeddb.md` fixes for
//! `"idb": {"data": V}` (strings, numbers, objects and arrays as themselves; everything else
//! as `{"$type": ...}`; a cycle as `{"$ref": id}`).
//!
//! Written without recursion (a task stack), so no nesting depth overflows the thread's
//! stack; strings and numbers are spelled as JavaScript's `JSON.stringify` spells them.

use std::path::Path;

use leveldb_table::idb::{blob_file_path, ExternalKind, ExternalObject};
use leveldb_table::v8value::{
    bigint_to_decimal, regexp_flags, write_js_number, Decoded, FileInfo, HostField, HostObject,
    JsStr, Object, ObjectId, PropertyKey, Value,
};

/// Where a record's Blobs and Files are: its blob list and the folder of blob files.
pub struct Blobs<'a> {
    /// The record's blob entry, decoded.
    pub list: Option<&'a [ExternalObject]>,
    /// `<origin>.indexeddb.blob`, when known.
    pub dir: Option<&'a Path>,
    /// The record's database id (the first folder under the blob folder).
    pub database: i64,
}

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
            Task::Index(i) => out.extend_from_slice(format!("\"{i}\":").as_bytes()),
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
            cause: _,
            stack: _,
        } => {
            out.extend_from_slice(b"{\"$type\":\"error\",\"name\":");
            push_plain(out, name.0);
            out.extend_from_slice(b",\"message\":");
            match message {
                Some(m) => push_str(out, m),
                None => out.extend_from_slice(b"\"\""),
            }
            out.push(b'}');
            false
        }
        Object::Host(h) => {
            host(out, h, blobs);
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
        PropertyKey::Index(i) => out.extend_from_slice(format!("\"{i}\"").as_bytes()),
        PropertyKey::String(s) => push_str(out, s),
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
    crate::common::push_hex(out, bytes);
    out.extend_from_slice(b"\"}");
}

/// A primitive: strings and finite numbers as themselves, the rest as `$type` objects.
pub fn push_primitive(out: &mut Vec<u8>, v: &Value<'_>) {
    match v {
        Value::Undefined => out.extend_from_slice(b"{\"$type\":\"undefined\"}"),
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(x) => push_number(out, *x),
        Value::BigInt(b) => {
            out.extend_from_slice(b"{\"$type\":\"bigint\",\"value\":\"");
            out.extend_from_slice(bigint_to_decimal(b.negative, b.magnitude).as_bytes());
            out.extend_from_slice(b"\"}");
        }
        Value::String(s) => push_str(out, s),
        Value::Object(_) => out.extend_from_slice(b"null"),
    }
}

/// A number: finite and not -0 as JavaScript prints it, else `{"$type":"number",...}`.
pub fn push_number(out: &mut Vec<u8>, x: f64) {
    let special = if x.is_nan() {
        "NaN"
    } else if x == f64::INFINITY {
        "Infinity"
    } else if x == f64::NEG_INFINITY {
        "-Infinity"
    } else if x == 0.0 && x.is_sign_negative() {
        "-0"
    } else {
        let mut s = String::new();
        write_js_number(&mut s, x);
        out.extend_from_slice(s.as_bytes());
        return;
    };
    out.extend_from_slice(format!("{{\"$type\":\"number\",\"value\":\"{special}\"}}").as_bytes());
}

/// A JavaScript string as `JSON.stringify` writes it: `\"`, `\\`, `\b \f \n \r \t`, other
/// control characters and lone surrogates as lowercase `\uXXXX`, the rest as UTF-8.
pub fn push_str(out: &mut Vec<u8>, s: &JsStr<'_>) {
    out.push(b'"');
    if let JsStr::Latin1(b) = s {
        if b.iter()
            .all(|&c| (0x20..0x7f).contains(&c) && c != b'"' && c != b'\\')
        {
            out.extend_from_slice(b);
            out.push(b'"');
            return;
        }
    }
    let mut units = s.units().peekable();
    while let Some(u) = units.next() {
        let c = match u {
            0xd800..=0xdbff => match units.peek() {
                Some(&lo) if (0xdc00..=0xdfff).contains(&lo) => {
                    units.next();
                    char::from_u32(
                        0x10000 + ((u32::from(u) - 0xd800) << 10) + (u32::from(lo) - 0xdc00),
                    )
                }
                _ => None,
            },
            0xdc00..=0xdfff => None,
            _ => char::from_u32(u.into()),
        };
        match c {
            Some(c) => push_char(out, c),
            None => out.extend_from_slice(format!("\\u{u:04x}").as_bytes()),
        }
    }
    out.push(b'"');
}

fn push_char(out: &mut Vec<u8>, c: char) {
    match c {
        '"' => out.extend_from_slice(b"\\\""),
        '\\' => out.extend_from_slice(b"\\\\"),
        '\u{8}' => out.extend_from_slice(b"\\b"),
        '\u{c}' => out.extend_from_slice(b"\\f"),
        '\n' => out.extend_from_slice(b"\\n"),
        '\r' => out.extend_from_slice(b"\\r"),
        '\t' => out.extend_from_slice(b"\\t"),
        c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
        c => {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
}

/// A Rust string as a JSON string (same escapes).
pub fn push_plain(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    s.chars().for_each(|c| push_char(out, c));
    out.push(b'"');
}

/// Blob, File, FileList (resolved through the record's blob list) and other platform
/// objects.
fn host(out: &mut Vec<u8>, h: &HostObject<'_>, blobs: &Blobs<'_>) {
    match h {
        HostObject::BlobIndex(i) => external(out, "blob", *i, blobs),
        HostObject::FileIndex(i) => external(out, "file", *i, blobs),
        HostObject::FileListIndex(files) => {
            out.extend_from_slice(b"{\"$type\":\"filelist\",\"files\":[");
            for (n, i) in files.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                external(out, "file", *i, blobs);
            }
            out.extend_from_slice(b"]}");
        }
        HostObject::Blob { uuid, mime, size } => {
            out.extend_from_slice(
                format!("{{\"$type\":\"blob\",\"size\":{size},\"mime\":").as_bytes(),
            );
            push_str(out, mime);
            out.extend_from_slice(b",\"uuid\":");
            push_str(out, uuid);
            out.push(b'}');
        }
        HostObject::File(f) => inline_file(out, f),
        HostObject::FileList(files) => {
            out.extend_from_slice(b"{\"$type\":\"filelist\",\"files\":[");
            for (n, f) in files.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                inline_file(out, f);
            }
            out.extend_from_slice(b"]}");
        }
        HostObject::Other { name, fields } => {
            out.extend_from_slice(b"{\"$type\":");
            push_plain(out, name);
            for (k, v) in fields {
                out.push(b',');
                push_plain(out, k);
                out.push(b':');
                field(out, v);
            }
            out.push(b'}');
        }
    }
}

fn field(out: &mut Vec<u8>, v: &HostField<'_>) {
    match v {
        HostField::Number(x) => push_number(out, *x),
        HostField::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
        HostField::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        HostField::Name(s) => push_plain(out, s),
        HostField::Names(list) => {
            out.push(b'[');
            for (n, s) in list.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                push_plain(out, s);
            }
            out.push(b']');
        }
        HostField::Text(s) => push_str(out, s),
        HostField::Bytes(b) => {
            out.push(b'"');
            crate::common::push_hex(out, b);
            out.push(b'"');
        }
        HostField::Numbers(xs) => {
            out.push(b'[');
            for (n, x) in xs.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                push_number(out, *x);
            }
            out.push(b']');
        }
    }
}

/// Entry `i` of the record's blob list as a blob or file.
fn external(out: &mut Vec<u8>, as_type: &str, i: u32, blobs: &Blobs<'_>) {
    let Some(e) = blobs.list.and_then(|l| l.get(i as usize)) else {
        out.extend_from_slice(
            format!("{{\"$type\":\"{as_type}\",\"index\":{i},\"error\":\"the record's blob entry lists no blob {i}\"}}")
                .as_bytes(),
        );
        return;
    };
    out.extend_from_slice(
        format!("{{\"$type\":\"{as_type}\",\"size\":{},\"mime\":", e.size).as_bytes(),
    );
    push_plain(out, &e.mime);
    if as_type == "file" || e.kind == ExternalKind::File {
        out.extend_from_slice(b",\"name\":");
        push_plain(out, e.file_name.as_deref().unwrap_or(""));
        if let Some(ms) = e.last_modified_ms() {
            out.extend_from_slice(format!(",\"last_modified\":{ms}").as_bytes());
        }
    }
    if let Some(dir) = blobs
        .dir
        .filter(|_| e.kind != ExternalKind::FileSystemAccessHandle)
    {
        let path = dir.join(blob_file_path(blobs.database, e.blob_number));
        out.extend_from_slice(b",\"path\":");
        push_plain(out, &path.to_string_lossy());
    }
    out.push(b'}');
}

fn inline_file(out: &mut Vec<u8>, f: &FileInfo<'_>) {
    out.extend_from_slice(b"{\"$type\":\"file\"");
    if let Some(size) = f.size {
        out.extend_from_slice(format!(",\"size\":{size}").as_bytes());
    }
    out.extend_from_slice(b",\"mime\":");
    push_str(out, &f.mime);
    if let Some(name) = &f.name {
        out.extend_from_slice(b",\"name\":");
        push_str(out, name);
    }
    if let Some(ms) = f.last_modified_ms {
        out.extend_from_slice(b",\"last_modified\":");
        push_number(out, ms);
    }
    if !f.path.is_empty() {
        out.extend_from_slice(b",\"path\":");
        push_str(out, &f.path);
    }
    out.extend_from_slice(b",\"uuid\":");
    push_str(out, &f.uuid);
    out.push(b'}');
}
