//! The classes of `leveldb_table.chrome`, imported once, and JavaScript's primitives as
//! Python: strings (lone surrogates kept), numbers, dates, IndexedDB keys; what the value
//! converters (`v8py`, `v8py_host`) and the record iterators share.

use std::path::Path;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString};
use sst_chrome::idb::{ExternalObject, IdbKey};
use sst_chrome::v8value::JsStr;

/// The classes and helpers of `leveldb_table.chrome`, imported once.
pub struct Classes {
    pub module: Py<PyModule>,
    /// `leveldb_table.chrome.undefined`.
    pub undefined: Py<PyAny>,
    /// `leveldb_table.chrome.Date`.
    pub date: Py<PyAny>,
    /// `datetime.datetime`.
    pub datetime: Py<PyAny>,
    /// `datetime.timezone.utc`.
    pub utc: Py<PyAny>,
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

    pub fn make<'py, A>(&self, py: Python<'py>, name: &str, args: A) -> PyResult<Bound<'py, PyAny>>
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
pub fn date<'py>(py: Python<'py>, c: &Classes, ms: f64) -> PyResult<Bound<'py, PyAny>> {
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
