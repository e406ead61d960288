//! The library's [`Error`] as a Python exception of `leveldb_table.errors`, carrying what the
//! error says about where: the file, the file offset, the block.
//!
//! ```text
//! LevelDBError                      every error; .kind .file .offset .block
//!  +- CorruptionError               the bytes are damaged or not LevelDB's (is_corruption)
//!  +- OrderError                    an order that cannot be verified (comparator, keys)
//!  +- InvalidArgumentError          also a ValueError (a bad argument, an unsupported request)
//!  +- LevelDBIOError                also an OSError (.errno, .strerror, .filename)
//!      +- NotFoundError             also a FileNotFoundError
//! ```

use leveldb_table::Error;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// The exception classes, imported once from `leveldb_table.errors`.
struct Classes {
    base: Py<PyType>,
    corruption: Py<PyType>,
    order: Py<PyType>,
    invalid: Py<PyType>,
    io: Py<PyType>,
    not_found: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let m = py.import("leveldb_table.errors")?;
        let get = |name: &str| -> PyResult<Py<PyType>> {
            Ok(m.getattr(name)?.cast_into::<PyType>()?.unbind())
        };
        Ok(Classes {
            base: get("LevelDBError")?,
            corruption: get("CorruptionError")?,
            order: get("OrderError")?,
            invalid: get("InvalidArgumentError")?,
            io: get("LevelDBIOError")?,
            not_found: get("NotFoundError")?,
        })
    })
}

/// The variant's name (`ChecksumMismatch`, `BadLogRecord`...), of the innermost error of
/// an error in a file.
fn kind_name(e: &Error) -> String {
    let inner = innermost(e);
    let debug = format!("{inner:?}");
    debug
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

fn innermost(e: &Error) -> &Error {
    match e {
        Error::InFile { source, .. } => innermost(source),
        e => e,
    }
}

/// The file an error names (relative to a database directory), if any.
fn file_of(e: &Error) -> Option<&str> {
    match e {
        Error::InFile { file, .. } => Some(file),
        _ => None,
    }
}

/// `e` as a Python exception. `file` names the file when the error itself does not (a
/// table opened by path).
pub fn to_py(py: Python<'_>, e: Error, file: Option<&str>) -> PyErr {
    match build(py, &e, file) {
        Ok(err) => err,
        // The package's own module did not import: say so, with the error.
        Err(import) => PyRuntimeError::new_err(format!("{e} (and {import})")),
    }
}

fn build(py: Python<'_>, e: &Error, file: Option<&str>) -> PyResult<PyErr> {
    let c = classes(py)?;
    let message = e.to_string();
    let file = file_of(e).or(file);
    let inner = innermost(e);
    let exc = match inner {
        Error::Io { source, .. } => {
            let cls = match source.kind() {
                std::io::ErrorKind::NotFound => &c.not_found,
                _ => &c.io,
            };
            // OSError(errno, strerror, filename): str() shows all three.
            let args = (source.raw_os_error(), message, file);
            cls.bind(py).call1(args)?
        }
        // A request this input cannot serve (reading backward under salvage) is the
        // caller's to change, as a bad argument is.
        Error::InvalidArgument(_) | Error::Unsupported { .. } => {
            c.invalid.bind(py).call1((message,))?
        }
        Error::UnknownComparator { .. } | Error::UnsettledOrder { .. } => {
            c.order.bind(py).call1((message,))?
        }
        _ if e.is_corruption() => c.corruption.bind(py).call1((message,))?,
        _ => c.base.bind(py).call1((message,))?,
    };
    exc.setattr("kind", kind_name(e))?;
    exc.setattr("file", file)?;
    exc.setattr("offset", e.offset())?;
    // (kind, offset, size) of the block: ("data", 1234, 4021).
    let block = e
        .block()
        .map(|(kind, h)| (kind.to_string(), h.offset, h.size));
    exc.setattr("block", block)?;
    Ok(PyErr::from_value(exc))
}

/// A `Result` of the library as one of Python.
pub trait IntoPy<T> {
    /// The error as a Python exception (see [`to_py`]).
    fn py_err(self, py: Python<'_>, file: Option<&str>) -> PyResult<T>;
}

impl<T> IntoPy<T> for leveldb_table::Result<T> {
    fn py_err(self, py: Python<'_>, file: Option<&str>) -> PyResult<T> {
        self.map_err(|e| to_py(py, e, file))
    }
}

impl<T> IntoPy<T> for sst_chrome::Result<T> {
    fn py_err(self, py: Python<'_>, file: Option<&str>) -> PyResult<T> {
        self.map_err(|e| chrome_to_py(py, e, file))
    }
}

/// `LevelDBError(message)` of kind `NotADatabase`: a path opened as a database that is
/// something else (`message` says what).
pub fn not_a_database(py: Python<'_>, message: String) -> PyErr {
    let made = classes(py).and_then(|c| {
        let exc = c.base.bind(py).call1((message.clone(),))?;
        exc.setattr("kind", "NotADatabase")?;
        exc.setattr("file", py.None())?;
        exc.setattr("offset", py.None())?;
        exc.setattr("block", py.None())?;
        Ok(PyErr::from_value(exc))
    });
    made.unwrap_or_else(|import| PyRuntimeError::new_err(format!("{message} (and {import})")))
}

/// An error of Chrome's storage as a Python exception: the database's own as [`to_py`]
/// makes it; the others (a value, a blob file) as `LevelDBError` with their message.
pub fn chrome_to_py(py: Python<'_>, e: sst_chrome::Error, file: Option<&str>) -> PyErr {
    match e {
        sst_chrome::Error::Db(e) => to_py(py, e, file),
        e => {
            let made = classes(py).and_then(|c| {
                let exc = c.base.bind(py).call1((e.to_string(),))?;
                exc.setattr("kind", chrome_kind(&e))?;
                exc.setattr("file", file)?;
                exc.setattr("offset", py.None())?;
                exc.setattr("block", py.None())?;
                Ok(PyErr::from_value(exc))
            });
            made.unwrap_or_else(|import| PyRuntimeError::new_err(format!("{e} (and {import})")))
        }
    }
}

/// `InvalidArgumentError(message)` (also a `ValueError`) of kind `kind` about `file`: a path
/// of another kind than asked for, a name that matches nothing.
pub fn invalid(py: Python<'_>, kind: &str, message: String, file: Option<&str>) -> PyErr {
    let made = classes(py).and_then(|c| {
        let exc = c.invalid.bind(py).call1((message.clone(),))?;
        exc.setattr("kind", kind)?;
        exc.setattr("file", file)?;
        exc.setattr("offset", py.None())?;
        exc.setattr("block", py.None())?;
        Ok(PyErr::from_value(exc))
    });
    made.unwrap_or_else(|import| PyRuntimeError::new_err(format!("{message} (and {import})")))
}

/// The variant's name of an error of Chrome's storage (`BlobFile`, `Value`...).
fn chrome_kind(e: &sst_chrome::Error) -> String {
    format!("{e:?}")
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_string()
}

/// `{"kind", "message", "offset", "block"}` of an error that is reported, not raised
/// (a problem `Table.verify()` found).
pub fn describe<'py>(py: Python<'py>, e: &Error) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let d = pyo3::types::PyDict::new(py);
    d.set_item("kind", kind_name(e))?;
    d.set_item("message", e.to_string())?;
    d.set_item("file", file_of(e))?;
    d.set_item("offset", e.offset())?;
    d.set_item(
        "block",
        e.block()
            .map(|(kind, h)| (kind.to_string(), h.offset, h.size)),
    )?;
    Ok(d)
}
