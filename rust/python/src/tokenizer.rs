//! `Tokenizer` and `count_tokens`: the offline tokenizers; `tiktoken_bpe_file`.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use pagelens_core::Encoding;
use pagelens_core::{Tokenizer, DEFAULT_TOKENIZER};

use crate::errors::{err, py_err, ErrorKind};
use crate::text::text_arg;

/// Token count of `text` under an offline tokenizer (gpt2, `cl100k_base`, `o200k_base`).
#[pyfunction]
#[pyo3(signature = (text, tokenizer=DEFAULT_TOKENIZER))]
pub(crate) fn count_tokens(
    py: Python<'_>,
    text: &Bound<'_, PyAny>,
    tokenizer: &str,
) -> PyResult<usize> {
    let enc = Encoding::from_name(tokenizer).map_err(py_err)?;
    let text = text_arg(text)?;
    Ok(py.detach(|| enc.count(&text)))
}

/// An offline tokenizer: `Tokenizer("gpt2")` (also `r50k_base`, `cl100k_base`, `o200k_base`,
/// embedded in the wheel), or `Tokenizer.from_file("tokenizer.json")` (Hugging Face).
#[pyclass(frozen, name = "Tokenizer", module = "pagelens")]
#[derive(Clone)]
pub(crate) struct PyTokenizer {
    inner: Tokenizer,
}

#[pymethods]
impl PyTokenizer {
    #[new]
    #[pyo3(signature = (name=DEFAULT_TOKENIZER))]
    fn new(name: &str) -> PyResult<Self> {
        Ok(PyTokenizer {
            inner: Tokenizer::named(name).map_err(py_err)?,
        })
    }

    /// Loads a Hugging Face `tokenizer.json`.
    #[staticmethod]
    fn from_file(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let data = std::fs::read(&path).map_err(|e| {
            pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display()))
        })?;
        let name = path.display().to_string();
        let inner = py
            .detach(|| Tokenizer::from_json(&name, &data))
            .map_err(py_err)?;
        Ok(PyTokenizer { inner })
    }

    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn encode(&self, py: Python<'_>, text: &str) -> Vec<u32> {
        py.detach(|| self.inner.encode(text))
    }

    fn count(&self, py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<usize> {
        let text = text_arg(text)?;
        Ok(py.detach(|| self.inner.count(&text)))
    }

    fn __repr__(&self) -> String {
        format!("Tokenizer({:?})", self.inner.name())
    }
}

pub(crate) fn tokenizer_arg(obj: &Bound<'_, PyAny>) -> PyResult<Tokenizer> {
    if let Ok(t) = obj.cast::<PyTokenizer>() {
        return Ok(t.get().inner.clone());
    }
    let name: &str = obj.extract().map_err(|_| {
        err(
            ErrorKind::ArgumentType,
            "tokenizer must be a name or a pagelens.Tokenizer",
        )
    })?;
    Tokenizer::named(name).map_err(py_err)
}

/// A `tokenizer` argument, or the default tokenizer when none is given.
pub(crate) fn tokenizer_or_default(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Tokenizer> {
    match obj {
        Some(t) => tokenizer_arg(t),
        None => Tokenizer::named(DEFAULT_TOKENIZER).map_err(py_err),
    }
}

/// The `.tiktoken` rank file of an embedded encoding, rebuilt from its ranks: lets `PyPI`
/// `tiktoken` run offline on exactly the vocabulary we count with (seed its cache).
#[pyfunction]
pub(crate) fn tiktoken_bpe_file(py: Python<'_>, name: &str) -> PyResult<Py<PyBytes>> {
    let enc = pagelens_core::Encoding::from_name(name).map_err(py_err)?;
    let data = py.detach(|| enc.bpe_file());
    Ok(PyBytes::new(py, &data).unbind())
}
