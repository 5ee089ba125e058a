//! `draw_ids`: element ids drawn on a screenshot's pixels (never into the page).

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use pagelens_core::annotate::{draw_ids as draw, IdBox};

use crate::errors::py_err;

/// `png` with each `(id, x, y, width, height)` box (CSS pixels) outlined and its id written
/// on it; `scale` is the image's pixels per CSS pixel. An `ArgumentError` for bytes that
/// are not an RGB(A) PNG.
#[pyfunction]
#[pyo3(signature = (png, boxes, scale=1.0))]
pub(crate) fn draw_ids<'py>(
    py: Python<'py>,
    png: &[u8],
    boxes: Vec<(i64, f64, f64, f64, f64)>,
    scale: f64,
) -> PyResult<Bound<'py, PyBytes>> {
    let boxes: Vec<IdBox> = boxes
        .into_iter()
        .map(|(id, x, y, width, height)| IdBox {
            id,
            x,
            y,
            width,
            height,
        })
        .collect();
    let out = py.detach(|| draw(png, &boxes, scale)).map_err(py_err)?;
    Ok(PyBytes::new(py, &out))
}
