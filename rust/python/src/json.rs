//! JSON lines read with their long strings left undecoded (see `pagelens_core::json`).

use pyo3::prelude::*;

/// Byte ranges (quotes included) of `line`'s object members' string values of at least
/// `min_len` bytes that decode to non-blank text without error.
#[pyfunction]
pub(crate) fn long_member_strings(
    py: Python<'_>,
    line: &[u8],
    min_len: usize,
) -> Vec<(usize, usize)> {
    py.detach(|| pagelens_core::json::long_member_strings(line, min_len))
}
