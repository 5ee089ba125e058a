//! `pagelens._core`: a thin `PyO3` layer over pagelens-core.
//!
//! Conversions and error mapping only; every rule lives in the core crate. Heavy work
//! (parsing, rendering, token counting) runs with the interpreter detached.

//!
//! One module per exposed class (`axtree`, `dom`, `tokenizer`, `chunks`, `text`; `json`'s and `image`'s one function), argument conversion in
//! `args` and `payload`, and every error mapped in `errors`.

use pyo3::prelude::*;

use pagelens_core::axtree::DEFAULT_MAX_DEPTH;
use pagelens_core::chunk::ChunkKind;
use pagelens_core::dom::CleanOptions;
use pagelens_core::render::Mode;
use pagelens_core::{Encoding, DEFAULT_TOKENIZER};

mod args;
mod axtree;
mod chunks;
mod dom;
mod errors;
mod image;
mod json;
mod payload;
mod text;
mod tokenizer;

use axtree::{snapshot_clickables, PyAxNode, PyAxTree, PyObservation};
use chunks::{chunk, PyChunk};
use dom::{PyDom, PyElement};
use image::draw_ids;
use text::{escape_page_text, find_lines, line_changes, long_member_texts, PyRawHtml};
use tokenizer::{count_tokens, tiktoken_bpe_file, PyTokenizer};

// The core allocates and frees a tree's nodes, strings and token buffers per page, from
// several threads at once; glibc's allocator took a tenth of a prep run's time (see
// benches/README.md; built without huge pages, see Cargo.toml).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<PyTokenizer>()?;
    m.add_class::<PyDom>()?;
    m.add_class::<PyElement>()?;
    m.add_class::<PyChunk>()?;
    m.add_class::<PyRawHtml>()?;
    m.add_function(wrap_pyfunction!(chunk, m)?)?;
    m.add_function(wrap_pyfunction!(tiktoken_bpe_file, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot_clickables, m)?)?;
    m.add_class::<PyAxTree>()?;
    m.add_class::<PyObservation>()?;
    m.add_class::<PyAxNode>()?;
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(escape_page_text, m)?)?;
    m.add_function(wrap_pyfunction!(find_lines, m)?)?;
    m.add_function(wrap_pyfunction!(line_changes, m)?)?;
    m.add_function(wrap_pyfunction!(draw_ids, m)?)?;
    m.add_function(wrap_pyfunction!(json::long_member_strings, m)?)?;
    m.add_function(wrap_pyfunction!(long_member_texts, m)?)?;
    m.add("DEFAULT_MAX_DEPTH", DEFAULT_MAX_DEPTH)?;
    m.add("DEFAULT_TOKENIZER", DEFAULT_TOKENIZER)?;
    // The core's registries: the CLI's choices, the prompts and the docs derive from these.
    m.add("RENDER_MODES", Mode::NAMES.to_vec())?;
    // The type of a mode's name, made from the same list (`Literal["occam"] | Literal[...]`, the
    // union of literals type checkers read the stub's `Literal["occam", ...]` as): the Python
    // side's annotations name it, so a new mode needs no Python edit but the stub's.
    let typing = m.py().import("typing")?;
    let literal = typing.getattr("Literal")?;
    let each = Mode::NAMES
        .iter()
        .map(|name| literal.get_item(*name))
        .collect::<PyResult<Vec<_>>>()?;
    m.add(
        "RenderMode",
        typing
            .getattr("Union")?
            .get_item(pyo3::types::PyTuple::new(m.py(), each)?)?,
    )?;
    m.add("CLEAN_PROFILES", CleanOptions::PROFILES.to_vec())?;
    m.add("TOKENIZERS", Encoding::NAMES.to_vec())?;
    m.add("CHUNK_KINDS", ChunkKind::NAMES.to_vec())?;
    m.add("CORE_VERSION", pagelens_core::VERSION)?;
    m.add("BUILD_COMMIT", env!("PAGELENS_BUILD_COMMIT"))?;
    Ok(())
}
