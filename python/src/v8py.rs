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

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use sst_chrome::v8value::{
    bigint_to_decimal, regexp_flags, write_js_number, Decoded, Object, PropertyKey, Value,
};

use crate::py_types::{classes, date, js_str, number, BlobCtx, Classes};
use crate::v8py_host::host;

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
        Object::Error {
            name,
            message,
            stack,
            ..
        } => {
            let m = match message {
                Some(m) => js_str(py, m)?,
                None => PyString::new(py, "").into_any(),
            };
            let st = match stack {
                Some(s) => js_str(py, s)?,
                None => py.None().into_bound(py),
            };
            c.make(py, "JSError", (name.0, m, st))?
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
        Object::Error {
            cause: Some(cause), ..
        } => {
            made.call_method1("_set_cause", (value(py, c, cause, objects)?,))?;
        }
        _ => {}
    }
    Ok(())
}
