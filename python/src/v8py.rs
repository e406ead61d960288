//! Chrome's decoded values (`v8value::Decoded`) and IndexedDB keys as Python objects, in
//! the mapping of `leveldb_table.chrome` (the CLI's JSON mapping, with Python's own types
//! where they say the same exactly).
//!
//! ```text
//! pass 1: every object of the value's table -> its Python object (containers empty)
//! pass 2: containers filled; a reference to object N is object N itself, so shared
//!         objects stay shared and cycles are cycles
//! ```
//! No recursion: values refer to objects by id, so nesting depth costs no stack.

use std::path::Path;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use sst_chrome::idb::{blob_file_path, ExternalKind, ExternalObject, IdbKey};
use sst_chrome::v8value::{
    bigint_to_decimal, regexp_flags, write_js_number, Decoded, FileInfo, HostField, HostObject,
    JsStr, Object, PropertyKey, Value,
};

/// The classes and helpers of `leveldb_table.chrome`, imported once.
pub struct Classes {
    pub module: Py<PyModule>,
    undefined: Py<PyAny>,
    date: Py<PyAny>,
    datetime: Py<PyAny>,
    utc: Py<PyAny>,
    /// Classes by name, in the order of `NAMES`.
    by_name: Vec<Py<PyAny>>,
}

/// The classes `make` builds.
const NAMES: [&str; 13] = [
    "Array",
    "Map",
    "Set",
    "Boxed",
    "RegExp",
    "TypedArray",
    "JSError",
    "FileList",
    "HostObject",
    "BigInt",
    "Blob",
    "File",
    "StorageItem",
];

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

pub fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let m = py.import("leveldb_table.chrome")?;
        let dt = py.import("datetime")?;
        let mut by_name = Vec::with_capacity(NAMES.len());
        for n in NAMES {
            by_name.push(m.getattr(n)?.unbind());
        }
        Ok(Classes {
            undefined: m.getattr("undefined")?.unbind(),
            date: m.getattr("Date")?.unbind(),
            datetime: dt.getattr("datetime")?.unbind(),
            utc: dt.getattr("timezone")?.getattr("utc")?.unbind(),
            by_name,
            module: m.unbind(),
        })
    })
}

impl Classes {
    /// Class `name` of `leveldb_table.chrome` (one of `NAMES`).
    pub fn class<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        match NAMES.iter().position(|n| *n == name) {
            Some(i) => Ok(self.by_name[i].bind(py).clone()),
            None => self.module.bind(py).getattr(name),
        }
    }

    fn make<'py, A>(&self, py: Python<'py>, name: &str, args: A) -> PyResult<Bound<'py, PyAny>>
    where
        A: pyo3::call::PyCallArgs<'py>,
    {
        self.class(py, name)?.call1(args)
    }
}

/// Where a record's Blobs and Files are.
#[derive(Clone, Copy, Default)]
pub struct BlobCtx<'a> {
    /// The record's blob list.
    pub list: Option<&'a [ExternalObject]>,
    /// The `.blob` folder.
    pub dir: Option<&'a Path>,
    /// The record's database id.
    pub database: i64,
    /// A SQLite database's record: each blob's legacy file, or `None` where its bytes are
    /// in the database (given as `blob_row_id`).
    pub sqlite_files: Option<&'a [Option<std::path::PathBuf>]>,
}

/// A JavaScript string: lone surrogates kept (decoded with `surrogatepass`).
pub fn js_str<'py>(py: Python<'py>, s: &JsStr<'_>) -> PyResult<Bound<'py, PyAny>> {
    match s {
        JsStr::Latin1(b) => match std::str::from_utf8(b) {
            Ok(t) if b.is_ascii() => Ok(PyString::new(py, t).into_any()),
            _ => {
                let t: String = b.iter().map(|&c| char::from(c)).collect();
                Ok(PyString::new(py, &t).into_any())
            }
        },
        _ => units_str(py, &s.units().collect::<Vec<u16>>()),
    }
}

/// UTF-16 code units as a Python string (lone surrogates kept).
pub fn units_str<'py>(py: Python<'py>, units: &[u16]) -> PyResult<Bound<'py, PyAny>> {
    match String::from_utf16(units) {
        Ok(t) => Ok(PyString::new(py, &t).into_any()),
        Err(_) => {
            let bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
            PyBytes::new(py, &bytes).call_method1("decode", ("utf-16-le", "surrogatepass"))
        }
    }
}

/// A JavaScript number: `int` when integral within 2^53 (and not -0), else `float`.
pub fn number(py: Python<'_>, x: f64) -> Bound<'_, PyAny> {
    let integral = x.fract() == 0.0 && x.abs() <= 9_007_199_254_740_992.0;
    if integral && !(x == 0.0 && x.is_sign_negative()) {
        // ok: integral and within 2^53, so exact as an i64.
        (x as i64)
            .into_pyobject(py)
            .map_or_else(|e| match e {}, |i| i.into_any())
    } else {
        x.into_pyobject(py)
            .map_or_else(|e| match e {}, |f| f.into_any())
    }
}

/// A JavaScript time value (milliseconds since the epoch) as a UTC `datetime`, or
/// `chrome.Date(ms)` when it is invalid or outside years 1-9999.
fn date<'py>(py: Python<'py>, c: &Classes, ms: f64) -> PyResult<Bound<'py, PyAny>> {
    // Years 1 and 9999 bound what `datetime` holds: -62135596800000 .. 253402300800000 ms.
    if !(-62_135_596_800_000.0..253_402_300_800_000.0).contains(&ms) {
        return c.date.bind(py).call1((ms,));
    }
    // ok: within the range above, microseconds fit an i64 exactly enough (|us| < 2^58).
    let us = (ms * 1000.0).round() as i64;
    let (days, rest) = (us.div_euclid(86_400_000_000), us.rem_euclid(86_400_000_000));
    let (y, m, d) = civil_from_days(days);
    let secs = rest / 1_000_000;
    let args = (
        y,
        m,
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        rest % 1_000_000,
        c.utc.bind(py),
    );
    c.datetime.bind(py).call1(args)
}

/// Year, month, day of a day count from 1970-01-01 (the proleptic Gregorian calendar;
/// Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    // ok: both are in range by construction (1..=31 and 1..=12).
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// An IndexedDB key as Python: number, `datetime`, `str`, `bytes`, `list`; `None` for
/// Chromium's minimum and "invalid" keys. Nesting is bounded by the key decoder.
pub fn idb_key<'py>(py: Python<'py>, k: &IdbKey) -> PyResult<Bound<'py, PyAny>> {
    let c = classes(py)?;
    Ok(match k {
        IdbKey::Min | IdbKey::Null => py.None().into_bound(py),
        IdbKey::Number(x) => number(py, *x),
        IdbKey::Date(ms) => date(py, c, *ms)?,
        IdbKey::String(units) => units_str(py, units)?,
        IdbKey::Binary(b) => PyBytes::new(py, b).into_any(),
        IdbKey::Array(items) => {
            let l = PyList::empty(py);
            for i in items {
                l.append(idb_key(py, i)?)?;
            }
            l.into_any()
        }
    })
}

fn property_key<'py>(py: Python<'py>, k: &PropertyKey<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match k {
        PropertyKey::Index(i) => PyString::new(py, &i.to_string()).into_any(),
        PropertyKey::String(s) => js_str(py, s)?,
        PropertyKey::Number(x) => {
            let mut s = String::new();
            write_js_number(&mut s, *x);
            PyString::new(py, &s).into_any()
        }
    })
}

/// A value: primitives converted, objects taken from `objects` by id.
fn value<'py>(
    py: Python<'py>,
    c: &Classes,
    v: &Value<'_>,
    objects: &[Bound<'py, PyAny>],
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Undefined => c.undefined.bind(py).clone(),
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(x) => number(py, *x),
        Value::BigInt(b) => c.make(py, "BigInt", (bigint_to_decimal(b.negative, b.magnitude),))?,
        Value::String(s) => js_str(py, s)?,
        Value::Object(id) => match objects.get(id.0 as usize) {
            Some(o) => o.clone(),
            None => py.None().into_bound(py),
        },
    })
}

/// `d`'s root value as a Python object.
pub fn decoded<'py>(
    py: Python<'py>,
    d: &Decoded<'_>,
    blobs: BlobCtx<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    let c = classes(py)?;
    let mut objects: Vec<Bound<'py, PyAny>> = Vec::with_capacity(d.objects.len());
    for o in &d.objects {
        objects.push(shell(py, c, d, o, blobs)?);
    }
    for (o, made) in d.objects.iter().zip(&objects) {
        fill(py, c, o, made, &objects)?;
    }
    value(py, c, &d.root, &objects)
}

fn dense(
    length: u32,
    elements: &[(u32, Value<'_>)],
    properties: &[(PropertyKey<'_>, Value<'_>)],
) -> bool {
    properties.is_empty()
        && elements.len() == length as usize
        && elements
            .iter()
            .enumerate()
            .all(|(i, (j, _))| *j as usize == i)
}

/// Pass 1: the object's Python object; containers are made empty.
fn shell<'py>(
    py: Python<'py>,
    c: &Classes,
    d: &Decoded<'_>,
    o: &Object<'_>,
    blobs: BlobCtx<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match o {
        Object::Plain(_) => PyDict::new(py).into_any(),
        Object::Array {
            length,
            elements,
            properties,
        } => {
            if dense(*length, elements, properties) {
                PyList::empty(py).into_any()
            } else {
                c.make(py, "Array", (*length,))?
            }
        }
        Object::Map(_) => c.make(py, "Map", ())?,
        Object::Set(_) => c.make(py, "Set", ())?,
        Object::Date(ms) => date(py, c, *ms)?,
        Object::Boxed(v) => c.make(py, "Boxed", (value(py, c, v, &[])?,))?,
        Object::RegExp { source, flags } => {
            c.make(py, "RegExp", (js_str(py, source)?, regexp_flags(*flags)))?
        }
        Object::ArrayBuffer { bytes, .. } => PyBytes::new(py, bytes).into_any(),
        Object::View {
            kind,
            buffer,
            byte_offset,
            byte_length,
            ..
        } => {
            let bytes = match d.object(*buffer) {
                Some(Object::ArrayBuffer { bytes, .. }) => {
                    let start = usize::try_from(*byte_offset)
                        .unwrap_or(usize::MAX)
                        .min(bytes.len());
                    let len = usize::try_from(*byte_length).unwrap_or(usize::MAX);
                    &bytes[start..start.saturating_add(len).min(bytes.len())]
                }
                _ => &[][..],
            };
            c.make(py, "TypedArray", (*kind, PyBytes::new(py, bytes)))?
        }
        Object::Error { name, message, .. } => {
            let m = match message {
                Some(m) => js_str(py, m)?,
                None => PyString::new(py, "").into_any(),
            };
            c.make(py, "JSError", (name.0, m))?
        }
        Object::Host(h) => host(py, c, h, blobs)?,
    })
}

/// Pass 2: a container's contents.
fn fill<'py>(
    py: Python<'py>,
    c: &Classes,
    o: &Object<'_>,
    made: &Bound<'py, PyAny>,
    objects: &[Bound<'py, PyAny>],
) -> PyResult<()> {
    match o {
        Object::Plain(props) => {
            for (k, v) in props {
                made.set_item(property_key(py, k)?, value(py, c, v, objects)?)?;
            }
        }
        Object::Array {
            length,
            elements,
            properties,
        } => {
            if dense(*length, elements, properties) {
                let list = made.cast::<PyList>()?;
                for (_, v) in elements {
                    list.append(value(py, c, v, objects)?)?;
                }
            } else {
                let el = made.getattr("elements")?;
                for (i, v) in elements {
                    el.set_item(*i, value(py, c, v, objects)?)?;
                }
                let props = made.getattr("properties")?;
                for (k, v) in properties {
                    props.set_item(property_key(py, k)?, value(py, c, v, objects)?)?;
                }
            }
        }
        Object::Map(entries) => {
            let list = made.getattr("entries")?;
            for (k, v) in entries {
                let pair =
                    PyTuple::new(py, [value(py, c, k, objects)?, value(py, c, v, objects)?])?;
                list.call_method1("append", (pair,))?;
            }
        }
        Object::Set(values) => {
            let list = made.getattr("values")?;
            for v in values {
                list.call_method1("append", (value(py, c, v, objects)?,))?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn host<'py>(
    py: Python<'py>,
    c: &Classes,
    h: &HostObject<'_>,
    blobs: BlobCtx<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match h {
        HostObject::BlobIndex(i) => external(py, c, false, *i, blobs)?,
        HostObject::FileIndex(i) => external(py, c, true, *i, blobs)?,
        HostObject::FileListIndex(files) => {
            let mut list = Vec::with_capacity(files.len());
            for i in files {
                list.push(external(py, c, true, *i, blobs)?);
            }
            c.make(py, "FileList", (PyTuple::new(py, list)?,))?
        }
        HostObject::Blob { uuid, mime, size } => {
            let kw = PyDict::new(py);
            kw.set_item("uuid", js_str(py, uuid)?)?;
            c.class(py, "Blob")?
                .call((*size, js_str(py, mime)?), Some(&kw))?
        }
        HostObject::File(f) => inline_file(py, c, f)?,
        HostObject::FileList(files) => {
            let mut list = Vec::with_capacity(files.len());
            for f in files {
                list.push(inline_file(py, c, f)?);
            }
            c.make(py, "FileList", (PyTuple::new(py, list)?,))?
        }
        HostObject::Other { name, fields } => {
            let d = PyDict::new(py);
            for (k, v) in fields {
                d.set_item(*k, host_field(py, v)?)?;
            }
            c.make(py, "HostObject", (*name, d))?
        }
    })
}

fn host_field<'py>(py: Python<'py>, v: &HostField<'_>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        HostField::Number(x) => number(py, *x),
        HostField::Int(n) => n
            .into_pyobject(py)
            .map_or_else(|e| match e {}, |i| i.into_any()),
        HostField::Bool(b) => pyo3::types::PyBool::new(py, *b).to_owned().into_any(),
        HostField::Name(s) => PyString::new(py, s).into_any(),
        HostField::Names(list) => PyList::new(py, list.iter())?.into_any(),
        HostField::Text(s) => js_str(py, s)?,
        HostField::Bytes(b) => PyBytes::new(py, b).into_any(),
        HostField::Numbers(xs) => {
            let l = PyList::empty(py);
            for x in xs {
                l.append(number(py, *x))?;
            }
            l.into_any()
        }
    })
}

/// Entry `i` of the record's blob list as a Blob or File (with its file's path).
fn external<'py>(
    py: Python<'py>,
    c: &Classes,
    file: bool,
    i: u32,
    blobs: BlobCtx<'_>,
) -> PyResult<Bound<'py, PyAny>> {
    let kw = PyDict::new(py);
    let Some(e) = blobs.list.and_then(|l| l.get(i as usize)) else {
        kw.set_item(
            "error",
            format!("the record's blob entry lists no blob {i}"),
        )?;
        let cls = if file { "File" } else { "Blob" };
        return c
            .module
            .bind(py)
            .getattr(cls)?
            .call((py.None(), ""), Some(&kw));
    };
    if let Some(files) = blobs.sqlite_files {
        match files.get(i as usize).and_then(|f| f.as_deref()) {
            Some(path) => kw.set_item("path", path.to_string_lossy())?,
            None => kw.set_item("blob_row_id", e.blob_number)?,
        }
    } else if let Some(dir) = blobs
        .dir
        .filter(|_| e.kind != ExternalKind::FileSystemAccessHandle)
    {
        let path = dir.join(blob_file_path(blobs.database, e.blob_number));
        kw.set_item("path", path.to_string_lossy())?;
    }
    let as_file = file || e.kind == ExternalKind::File;
    if as_file {
        kw.set_item("name", e.file_name.as_deref())?;
        if let Some(ms) = e.last_modified_ms() {
            // ok: milliseconds of a file time fit a double exactly below 2^53.
            kw.set_item("last_modified", date(py, c, ms as f64)?)?;
        }
    }
    let cls = if as_file { "File" } else { "Blob" };
    c.module
        .bind(py)
        .getattr(cls)?
        .call((e.size, e.mime.as_str()), Some(&kw))
}

fn inline_file<'py>(py: Python<'py>, c: &Classes, f: &FileInfo<'_>) -> PyResult<Bound<'py, PyAny>> {
    let kw = PyDict::new(py);
    if let Some(name) = &f.name {
        kw.set_item("name", js_str(py, name)?)?;
    }
    if let Some(ms) = f.last_modified_ms {
        kw.set_item("last_modified", date(py, c, ms)?)?;
    }
    if !f.path.is_empty() {
        kw.set_item("path", js_str(py, &f.path)?)?;
    }
    kw.set_item("uuid", js_str(py, &f.uuid)?)?;
    c.class(py, "File")?
        .call((f.size, js_str(py, &f.mime)?), Some(&kw))
}
