//! `Chunk` and `chunk`: token-budget chunks of a text.

use pyo3::prelude::*;

use pagelens_core::chunk::{chunk as chunk_text, ChunkKind};

use crate::args;
use crate::errors::py_err;
use crate::tokenizer::tokenizer_or_default;

/// A piece of a chunked text.
#[pyclass(frozen, name = "Chunk", module = "pagelens")]
pub(crate) struct PyChunk {
    #[pyo3(get)]
    text: String,
    #[pyo3(get)]
    token_count: usize,
    #[pyo3(get)]
    node_ids: Vec<i64>,
    /// Byte offsets of the chunk in the UTF-8 input.
    #[pyo3(get)]
    start: usize,
    #[pyo3(get)]
    end: usize,
    /// A piece of a single unit larger than the budget, cut at token boundaries.
    #[pyo3(get)]
    oversized: bool,
}

#[pymethods]
impl PyChunk {
    fn __repr__(&self) -> String {
        format!(
            "<Chunk tokens={} ids={} oversized={}>",
            self.token_count,
            self.node_ids.len(),
            self.oversized
        )
    }
}

/// Splits `text` into chunks of at most `max_tokens` tokens: a DOM before start tags
/// (`kind="dom"`), an observation at line starts (`kind="text"`); lossless.
#[pyfunction]
#[pyo3(signature = (text, max_tokens, tokenizer=None, kind="dom", from_end=false))]
pub(crate) fn chunk(
    py: Python<'_>,
    text: &str,
    #[pyo3(from_py_with = args::budget)] max_tokens: usize,
    tokenizer: Option<&Bound<'_, PyAny>>,
    kind: &str,
    from_end: bool,
) -> PyResult<Vec<PyChunk>> {
    let kind: ChunkKind = kind.parse().map_err(py_err)?;
    let tok = tokenizer_or_default(tokenizer)?;
    let chunks = py
        .detach(|| chunk_text(text, max_tokens, &tok, kind, from_end))
        .map_err(py_err)?;
    Ok(py_chunks(text, chunks))
}

/// The binding's chunks of `text`.
pub(crate) fn py_chunks(text: &str, chunks: Vec<pagelens_core::chunk::Chunk>) -> Vec<PyChunk> {
    chunks
        .into_iter()
        .map(|c| PyChunk {
            text: text[c.start..c.end].to_owned(),
            token_count: c.token_count,
            node_ids: c.node_ids,
            start: c.start,
            end: c.end,
            oversized: c.oversized,
        })
        .collect()
}
