//! `RawHtml`: a step's HTML held by the core as UTF-8, read from a JSON file without becoming
//! a Python `str`, and the text arguments that take it beside a `str`.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use crate::errors::{err, ErrorKind};

/// A page's HTML as the core holds it (UTF-8). `pagelens prep` reads a JSON file's pages into
/// these: decoding a page into a Python `str` and encoding it back to UTF-8 for the parser
/// took as long as the parse. `Dom.parse` and `Tokenizer.count` read one as they read a `str`;
/// `str(raw)` is the text; it equals a `str` with the same text.
#[pyclass(frozen, name = "RawHtml", module = "pagelens")]
pub(crate) struct PyRawHtml {
    text: String,
}

#[pymethods]
impl PyRawHtml {
    #[new]
    fn new(text: &Bound<'_, PyString>) -> PyResult<Self> {
        let text = text.to_str().map_err(|e| {
            err(
                ErrorKind::Argument,
                format!("RawHtml holds UTF-8 text, which this str is not ({e})"),
            )
        })?;
        Ok(PyRawHtml {
            text: text.to_owned(),
        })
    }

    /// The value of a JSON string (`literal`: its bytes, quotes included), or None when the
    /// bytes are not one JSON string or its value cannot be held (an escaped lone surrogate).
    #[staticmethod]
    fn from_json(py: Python<'_>, literal: &[u8]) -> Option<Self> {
        py.detach(|| pagelens_core::json::decode_string(literal))
            .map(|text| PyRawHtml { text })
    }

    /// The text's length in UTF-8 bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.text.len()
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!("<RawHtml {} bytes>", self.text.len())
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(other) = other.cast::<PyRawHtml>() {
            return other.get().text == self.text;
        }
        other
            .cast::<PyString>()
            .ok()
            .and_then(|s| s.to_str().ok().map(|s| s == self.text))
            .unwrap_or(false)
    }

    /// The hash of the `str` it equals.
    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, &self.text).hash()
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let text = PyString::new(py, &slf.get().text);
        PyTuple::new(
            py,
            [
                slf.get_type().into_any(),
                PyTuple::new(py, [text])?.into_any(),
            ],
        )
    }
}

/// The values of `line`'s object members' strings of at least `min_len` bytes that decode
/// to non-blank text: `(start, end, value)`, the range with its quotes; the value is None
/// when it cannot be held (an escaped lone surrogate: decode the range instead).
#[pyfunction]
pub(crate) fn long_member_texts(
    py: Python<'_>,
    line: &[u8],
    min_len: usize,
) -> Vec<(usize, usize, Option<PyRawHtml>)> {
    py.detach(|| pagelens_core::json::long_member_texts(line, min_len))
        .into_iter()
        .map(|(start, end, text)| (start, end, text.map(|text| PyRawHtml { text })))
        .collect()
}

/// A text argument, a `str` or a [`PyRawHtml`], read in place: a `str`'s UTF-8 is the one
/// Python keeps with it. A `str` holding a lone surrogate (JSON's `"\ud800"` decodes to one;
/// a page's `'😀'.slice(1)` makes one) is read leniently, as [`lenient_str`] says: refusing
/// it made one such page stop a whole prep run.
pub(crate) fn text_arg<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, str>> {
    if let Ok(raw) = obj.cast::<PyRawHtml>() {
        return Ok(Cow::Borrowed(raw.get().text.as_str()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return lenient_str(s);
    }
    Err(err(
        ErrorKind::ArgumentType,
        format!(
            "text must be str or RawHtml, not {}",
            obj.get_type().name()?
        ),
    ))
}

/// A `str`'s text, with each lone surrogate read as one U+FFFD: the count a JSON reader of
/// the same text (`"\ud800"`) gets, so that a page's text reads the same whichever way it
/// came (the core's JSON readers do likewise, `json::without_lone_surrogates`).
pub(crate) fn lenient_str<'a>(s: &'a Bound<'_, PyString>) -> PyResult<Cow<'a, str>> {
    if let Ok(text) = s.to_str() {
        return Ok(Cow::Borrowed(text));
    }
    let units = s.call_method1("encode", ("utf-16-le", "surrogatepass"))?;
    let bytes: &[u8] = units.cast::<pyo3::types::PyBytes>()?.as_bytes();
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    Ok(Cow::Owned(String::from_utf16_lossy(&units)))
}

/// [`lenient_str`] of any `str` object (None: not a `str`).
pub(crate) fn lenient_string(obj: &Bound<'_, PyAny>) -> Option<String> {
    let s = obj.cast::<PyString>().ok()?;
    lenient_str(s).ok().map(Cow::into_owned)
}

/// Page text printed beside an observation (a tab's title, a URL, a dialog's message),
/// escaped as the trees' text is: no `[` in it reads as an id or a mark (spec 3.16).
/// A lone surrogate in it is read leniently, as every text argument is.
#[pyfunction]
pub(crate) fn escape_page_text(text: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(pagelens_core::render::escape_page_text(&text_arg(text)?).into_owned())
}

/// Indices of the lines of `text` that contain `pattern` (case-insensitively), or match it
/// as a regular expression with `regex`: linear in the text whatever the pattern (a finite
/// automaton: no look-around or back-references). A bad pattern is an `ArgumentError`.
#[pyfunction]
#[pyo3(signature = (text, pattern, regex=false))]
pub(crate) fn find_lines(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    pattern: &Bound<'_, PyAny>,
    regex: bool,
) -> PyResult<Vec<usize>> {
    let text = text_arg(text)?;
    let pattern = text_arg(pattern)?;
    py.detach(|| pagelens_core::search::matching_lines(&text, &pattern, regex))
        .map_err(crate::errors::py_err)
}

/// A line run as Python reads it: `(tag, old_start, old_end, new_start, new_end)`.
type LineRunTuple = (&'static str, usize, usize, usize, usize);

/// The runs that turn `old`'s lines into `new`'s (split on `\n`), as difflib's opcodes:
/// `(tag, old_start, old_end, new_start, new_end)` with tag `equal`, `insert`, `delete` or
/// `replace`, covering both texts in order. Exact whatever the inputs; a text that changed
/// everywhere is answered within a deadline with a coarser (still exact) diff.
#[pyfunction]
pub(crate) fn line_changes(
    py: Python<'_>,
    old: &Bound<'_, PyAny>,
    new: &Bound<'_, PyAny>,
) -> PyResult<Vec<LineRunTuple>> {
    let old = text_arg(old)?;
    let new = text_arg(new)?;
    Ok(py.detach(|| {
        pagelens_core::diff::line_runs(&old, &new)
            .into_iter()
            .map(|r| {
                (
                    r.kind.name(),
                    r.old_start,
                    r.old_start + r.old_len,
                    r.new_start,
                    r.new_start + r.new_len,
                )
            })
            .collect()
    }))
}
