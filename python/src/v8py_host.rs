//! Blink's host objects as Python (`leveldb_table.chrome`): Blob, File and FileList resolved
//! through the record's blob list, File System Access handles with what their token says,
//! the others as `HostObject(type, fields)`.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use sst_chrome::idb::{blob_file_path, decode_handle_token, ExternalKind, HandleLocation};
use sst_chrome::v8value::{FileInfo, HostField, HostObject};

use crate::py_types::{date, js_str, number, BlobCtx, Classes};

/// A host object as Python.
pub fn host<'py>(
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
            if let Some((directory, i)) = h.handle_token() {
                handle(&d, directory, i, blobs)?;
            }
            c.make(py, "HostObject", (*name, d))?
        }
    })
}

/// A File System Access handle's token (entry `i` of the record's blob list), as the
/// fields `sst` writes: `file_system` and its paths (bytes when not UTF-8), or
/// `token_error`.
fn handle(d: &Bound<'_, PyDict>, directory: bool, i: u64, blobs: BlobCtx<'_>) -> PyResult<()> {
    let entry = blobs
        .list
        .and_then(|l| l.get(usize::try_from(i).ok()?))
        .filter(|e| e.kind == ExternalKind::FileSystemAccessHandle);
    let Some(e) = entry else {
        return d.set_item(
            "token_error",
            format!("the record's blob entry lists no handle token {i}"),
        );
    };
    let t = match decode_handle_token(&e.token) {
        Ok(t) => t,
        Err(err) => return d.set_item("token_error", err.to_string()),
    };
    if t.directory != directory {
        d.set_item("token_kind", if t.directory { "directory" } else { "file" })?;
    }
    let py = d.py();
    let path = |name: &str, p: &[u8]| -> PyResult<()> {
        match std::str::from_utf8(p) {
            Ok(s) if !s.contains('\0') => d.set_item(name, s),
            _ => d.set_item(name, PyBytes::new(py, p)),
        }
    };
    match t.location {
        HandleLocation::Sandboxed {
            virtual_path,
            bucket_id,
        } => {
            d.set_item("file_system", "sandboxed")?;
            path("virtual_path", virtual_path)?;
            if let Some(b) = bucket_id {
                d.set_item("bucket_id", b)?;
            }
        }
        HandleLocation::Local {
            root_path,
            relative_path,
        } => {
            d.set_item("file_system", "local")?;
            path("root_path", root_path)?;
            path("relative_path", relative_path)?;
        }
        HandleLocation::External {
            root_path,
            relative_path,
        } => {
            d.set_item("file_system", "external")?;
            path("root_path", root_path)?;
            path("relative_path", relative_path)?;
        }
    }
    Ok(())
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
