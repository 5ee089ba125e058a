//! Payloads as bytes: what every parser of the core reads.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};

use crate::errors::{err, ErrorKind};

/// The content of a bytes or bytearray object.
pub(crate) fn binary(obj: &Bound<'_, PyAny>) -> Option<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Some(b.as_bytes().to_vec());
    }
    obj.cast::<PyByteArray>()
        .ok()
        .map(pyo3::types::PyByteArrayMethods::to_vec)
}

/// Bytes of a payload: bytes and bytearray as they are, str as UTF-8, dict/list through
/// `json.dumps` (walking Python objects costs as much as serialising them).
pub(crate) fn payload_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Some(b) = binary(obj) {
        return Ok(b);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        // A lone surrogate (a page's `'😀'.slice(1)`) is read as U+FFFD, never a lost page.
        return Ok(crate::text::lenient_str(s)?.as_bytes().to_vec());
    }
    if obj.cast::<PyDict>().is_ok() || obj.cast::<PyList>().is_ok() || obj.cast::<PyTuple>().is_ok()
    {
        let json = obj.py().import("json")?;
        let dumped = json.call_method1("dumps", (obj,)).map_err(|e| {
            err(
                ErrorKind::AxTree,
                format!("payload cannot be serialised as JSON: {e}"),
            )
        })?;
        let s: String = dumped.extract()?;
        return Ok(s.into_bytes());
    }
    Err(err(
        ErrorKind::ArgumentType,
        format!(
            "payload must be bytes, str, dict or list, not {}",
            obj.get_type().name()?
        ),
    ))
}
