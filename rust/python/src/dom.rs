//! `Dom` and `Element`: HTML documents parsed or built from a live DOM, cleaned, queried.

use std::borrow::Cow;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};

use pagelens_core::chunk::chunk_serialized;
use pagelens_core::dom::{clean::clean_keeping, CleanOptions, Dom, Kind, Selector};

use crate::args::{self, shown_id};
use crate::chunks::{py_chunks, PyChunk};
use crate::errors::{err, py_err, ErrorKind};
use crate::payload::{binary, payload_bytes};
use crate::text::{text_arg, PyRawHtml};
use crate::tokenizer::tokenizer_or_default;

/// An HTML document parsed with html5ever; every element carries an id (`node="N"`).
#[pyclass(frozen, name = "Dom", module = "pagelens")]
pub(crate) struct PyDom {
    dom: Arc<Dom>,
    /// Ids that `clean(keep=...)` kept although a rule would have removed them.
    rescued: Vec<u32>,
}

/// An HTML argument's bytes, borrowed from a str (its UTF-8, which Python keeps with it), a
/// `RawHtml` or a bytes object where it can be: a page is parsed without a copy of it. Whether it was a str.
pub(crate) fn html_bytes<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<(Cow<'a, [u8]>, bool)> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok((Cow::Borrowed(b.as_bytes()), false));
    }
    if let Some(b) = binary(obj) {
        return Ok((Cow::Owned(b), false));
    }
    if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyRawHtml>() {
        // Already decoded: lone surrogates become U+FFFD like any invalid input.
        let text = match text_arg(obj)? {
            Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
            Cow::Owned(text) => Cow::Owned(text.into_bytes()),
        };
        return Ok((text, true));
    }
    Err(err(
        ErrorKind::ArgumentType,
        format!(
            "html must be str, bytes or RawHtml, not {}",
            obj.get_type().name()?
        ),
    ))
}

impl PyDom {
    /// The arena index and node id of the element `node="id"`, if there is one.
    fn element_index(&self, id: Option<i64>) -> Option<(u32, u32)> {
        let id = u32::try_from(id?).ok()?;
        self.dom.element(id).map(|idx| (idx, id))
    }

    /// As [`Self::element_index`], or the error a lookup of a missing element raises.
    fn found(&self, id: Option<i64>) -> PyResult<(u32, u32)> {
        self.element_index(id).ok_or_else(|| {
            err(
                ErrorKind::NodeNotFound,
                format!("no element with node id {}", shown_id(id)),
            )
        })
    }
}

#[pymethods]
impl PyDom {
    /// Parses HTML as a browser would; never fails. `encoding` (a WHATWG label) overrides
    /// the document's own declaration; `keep_ids` keeps existing `node="N"` attributes.
    #[staticmethod]
    #[pyo3(signature = (html, encoding=None, keep_ids=false))]
    fn parse(
        py: Python<'_>,
        html: &Bound<'_, PyAny>,
        encoding: Option<String>,
        keep_ids: bool,
    ) -> PyResult<Self> {
        let (bytes, is_str) = html_bytes(html)?;
        if let Some(label) = &encoding {
            pagelens_core::dom::encoding_for_label(label).map_err(py_err)?;
        }
        let label = if is_str {
            Some("utf-8".to_owned())
        } else {
            encoding
        };
        let dom = py.detach(|| Dom::parse(&bytes, label.as_deref(), keep_ids));
        Ok(PyDom {
            dom: Arc::new(dom),
            rescued: Vec::new(),
        })
    }

    /// Builds a document from a live DOM's nodes, each `(parent, node_type, name_or_text,
    /// attributes, foreign)`: `parent` the index of an earlier node (-1: the document),
    /// `node_type` CDP's (1 element, 3 text, 8 comment, 10 doctype), `attributes` a flat
    /// `[name, value, ...]` list as CDP gives it. Returns the document and, per input node,
    /// the id its element got (None for other nodes and elements left out). No markup is
    /// parsed, so the page cannot forge, clone or hide an element's id.
    #[staticmethod]
    fn from_nodes(py: Python<'_>, nodes: &Bound<'_, PyAny>) -> PyResult<(Self, Vec<Option<u32>>)> {
        let live = args::live_nodes(nodes)?;
        let (dom, ids) = py.detach(|| Dom::from_nodes(&live)).map_err(py_err)?;
        Ok((
            PyDom {
                dom: Arc::new(dom),
                rescued: Vec::new(),
            },
            ids,
        ))
    }

    /// A cleaned copy: `profile` is "scribe" (all rules) or "minimal"; each rule of the
    /// spec can be switched with a keyword (`unwrap_tags=False`, `max_value_length=128`...).
    /// Elements with ids in `keep` (an action target) survive every rule; `rescued_ids` of
    /// the result says which of them a rule would have removed.
    #[pyo3(signature = (profile="scribe", tokenizer=None, keep=None, **options))]
    fn clean(
        &self,
        py: Python<'_>,
        profile: &str,
        tokenizer: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::dom_ids)] keep: Option<Vec<u32>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let mut o = CleanOptions::profile(profile).map_err(py_err)?;
        if let Some(options) = options.filter(|d| !d.is_empty()) {
            let json = payload_bytes(options.as_any()).map_err(|_| {
                err(
                    ErrorKind::ArgumentType,
                    "cleaning options are booleans and numbers",
                )
            })?;
            o = o.with(&json).map_err(py_err)?;
        }
        let tok = tokenizer_or_default(tokenizer)?;
        let dom = &self.dom;
        let keep = keep.unwrap_or_default();
        let (cleaned, rescued) = py
            .detach(|| clean_keeping(dom, &o, &tok, &keep))
            .map_err(py_err)?;
        Ok(PyDom {
            dom: Arc::new(cleaned),
            rescued,
        })
    }

    /// Ids of the kept elements (see `clean(keep=...)`) that cleaning would have removed.
    #[getter]
    fn rescued_ids(&self) -> Vec<u32> {
        self.rescued.clone()
    }

    /// Ids of the elements matching a CSS selector, in document order.
    fn select(&self, py: Python<'_>, selector: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        // A selector from a dataset may hold a lone surrogate: read leniently, as all text.
        let selector = crate::text::text_arg(selector)?;
        let sel = Selector::parse(&selector).map_err(py_err)?;
        let dom = &self.dom;
        Ok(py.detach(|| {
            dom.select(&sel)
                .into_iter()
                .filter_map(|n| dom.nodes[n as usize].id)
                .collect()
        }))
    }

    /// Id of the element at an absolute path such as `/html/body/div[2]/a` (1-based
    /// indices among same-tag siblings), or None when nothing is there.
    fn find_path(&self, path: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        let n = self
            .dom
            .find_path(&crate::text::text_arg(path)?)
            .map_err(py_err)?;
        Ok(n.and_then(|n| self.dom.nodes[n as usize].id))
    }

    /// The element's start tag exactly as `html()` writes it, e.g. `<a href="/" node="7">`.
    fn start_tag(
        &self,
        #[pyo3(from_py_with = args::lookup_id)] node_id: Option<i64>,
    ) -> PyResult<String> {
        let (idx, _) = self.found(node_id)?;
        Ok(self.dom.start_tag(idx).unwrap_or_default())
    }

    /// The document as HTML, `node="N"` last in every start tag.
    fn html(&self, py: Python<'_>) -> String {
        py.detach(|| self.dom.serialize().0)
    }

    /// `chunk(self.html(), max_tokens, tokenizer, kind="dom", from_end=from_end)`, without
    /// the document's HTML ever becoming a Python str, and cut where the serializer wrote each
    /// element's start tag (exact even where a reader of the markup would misread it).
    #[pyo3(signature = (max_tokens, tokenizer=None, from_end=false))]
    fn chunks(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::budget)] max_tokens: usize,
        tokenizer: Option<&Bound<'_, PyAny>>,
        from_end: bool,
    ) -> PyResult<Vec<PyChunk>> {
        let tok = tokenizer_or_default(tokenizer)?;
        let (html, chunks) = py.detach(|| {
            let (html, tags) = self.dom.serialize();
            let chunks = chunk_serialized(&html, &tags, max_tokens, &tok, from_end);
            (html, chunks)
        });
        Ok(py_chunks(&html, chunks.map_err(py_err)?))
    }

    /// The element with id `node_id`: tag, attributes and text.
    fn element(
        &self,
        #[pyo3(from_py_with = args::lookup_id)] node_id: Option<i64>,
    ) -> PyResult<PyElement> {
        let (idx, node_id) = self.found(node_id)?;
        Ok(PyElement {
            dom: self.dom.clone(),
            idx,
            node_id,
        })
    }

    /// Ids of all elements, in document order (so decreasing).
    fn node_ids(&self) -> Vec<u32> {
        self.dom
            .preorder()
            .into_iter()
            .filter_map(|n| self.dom.nodes[n as usize].id)
            .collect()
    }

    /// Start tags dropped by the parse's limits (over 1,024 open elements, or over 24 formatting
    /// elements waiting to be reopened); 0 for every real page known.
    #[getter]
    fn flattened_tags(&self) -> usize {
        self.dom.flattened_tags
    }

    fn __len__(&self) -> usize {
        self.dom.element_count()
    }

    fn __contains__(&self, #[pyo3(from_py_with = args::lookup_id)] node_id: Option<i64>) -> bool {
        self.element_index(node_id).is_some()
    }

    fn __repr__(&self) -> String {
        format!("<Dom elements={}>", self.dom.element_count())
    }
}

/// One element of a [`Dom`].
#[pyclass(frozen, name = "Element", module = "pagelens")]
pub(crate) struct PyElement {
    dom: Arc<Dom>,
    idx: u32,
    #[pyo3(get)]
    node_id: u32,
}

#[pymethods]
impl PyElement {
    #[getter]
    fn tag(&self) -> String {
        self.dom.tag(self.idx).unwrap_or_default().to_owned()
    }

    #[getter]
    fn attributes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        if let Kind::Element { attrs, .. } = &self.dom.nodes[self.idx as usize].kind {
            for (k, v) in attrs {
                d.set_item(k, v)?;
            }
        }
        Ok(d)
    }

    /// Text content, whitespace collapsed.
    #[getter]
    fn text(&self) -> String {
        self.dom.text_content(self.idx)
    }

    /// Parent element's id (None for the root element).
    #[getter]
    fn parent(&self) -> Option<u32> {
        let p = self.dom.nodes[self.idx as usize].parent;
        (p != pagelens_core::dom::tree::NONE)
            .then(|| self.dom.nodes[p as usize].id)
            .flatten()
    }

    fn __repr__(&self) -> String {
        format!("<Element {} node={}>", self.tag(), self.node_id)
    }
}
