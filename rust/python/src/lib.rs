//! `pagelens._core`: a thin `PyO3` layer over pagelens-core.
//!
//! Conversions and error mapping only; every rule lives in the core crate. Heavy work
//! (parsing, rendering, token counting) runs with the interpreter detached.

use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};

use pagelens_core::axtree::{
    AxTree, Clickables, FrameInput, ParseOptions, Value, DEFAULT_MAX_DEPTH,
};
use pagelens_core::chunk::{chunk as chunk_text, ChunkKind};
use pagelens_core::dom::{clean::clean_keeping, CleanOptions, Dom, Kind, Selector};
use pagelens_core::render::subtree::pivotal;
use pagelens_core::render::{occam, Mode};
use pagelens_core::Encoding;
use pagelens_core::{Tokenizer, DEFAULT_TOKENIZER};

mod args;
mod errors;
use errors::{err, py_err, ErrorKind};

/// The content of a bytes or bytearray object.
fn binary(obj: &Bound<'_, PyAny>) -> Option<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Some(b.as_bytes().to_vec());
    }
    obj.cast::<PyByteArray>()
        .ok()
        .map(pyo3::types::PyByteArrayMethods::to_vec)
}

/// Bytes of a payload: bytes and bytearray as they are, str as UTF-8, dict/list through
/// `json.dumps` (walking Python objects costs as much as serialising them).
fn payload_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Some(b) = binary(obj) {
        return Ok(b);
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return s.to_str().map(|s| s.as_bytes().to_vec()).map_err(|e| {
            err(
                ErrorKind::AxTree,
                format!("payload string is not valid UTF-8: {e}"),
            )
        });
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

struct FrameArg {
    owner: i64,
    payload: Vec<u8>,
    frame_id: Option<String>,
    clickable: Option<Clickables>,
}

/// Clickable elements: backend DOM node ids, or a mapping of them to hints (or None).
fn clickable_arg(obj: &Bound<'_, PyAny>) -> PyResult<Clickables> {
    let mut out = Clickables::new();
    if let Ok(d) = obj.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let id: i64 = k.extract().map_err(|_| {
                err(
                    ErrorKind::ArgumentType,
                    "clickable keys must be backend DOM node ids (int)",
                )
            })?;
            let hint: Option<String> = v.extract().map_err(|_| {
                err(
                    ErrorKind::ArgumentType,
                    "clickable hints must be str or None",
                )
            })?;
            out.insert(id, hint.as_deref());
        }
        return Ok(out);
    }
    for item in obj.try_iter().map_err(|_| {
        err(
            ErrorKind::ArgumentType,
            "clickable must be ids or a dict of ids to hints",
        )
    })? {
        let id: i64 = item?
            .extract()
            .map_err(|_| err(ErrorKind::ArgumentType, "clickable ids must be int"))?;
        out.insert(id, None);
    }
    Ok(out)
}

fn frame_arg(item: &Bound<'_, PyAny>) -> PyResult<FrameArg> {
    if let Ok(d) = item.cast::<PyDict>() {
        let owner = d.get_item("owner")?.ok_or_else(|| {
            err(
                ErrorKind::Argument,
                "frame dict needs an \"owner\" backendDOMNodeId",
            )
        })?;
        let owner = args::owner(&owner)?;
        let payload = d
            .get_item("payload")?
            .ok_or_else(|| err(ErrorKind::Argument, "frame dict needs a \"payload\""))?;
        let frame_id = d.get_item("frame_id")?.map(|f| f.extract()).transpose()?;
        let clickable = d
            .get_item("clickable")?
            .filter(|c| !c.is_none())
            .map(|c| clickable_arg(&c))
            .transpose()?;
        return Ok(FrameArg {
            owner,
            payload: payload_bytes(&payload)?,
            frame_id,
            clickable,
        });
    }
    let t = item.cast::<PyTuple>().map_err(|_| {
        err(
            ErrorKind::ArgumentType,
            "each frame is (owner_backend_id, payload[, frame_id]) or a dict",
        )
    })?;
    if !(2..=3).contains(&t.len()) {
        return Err(err(
            ErrorKind::ArgumentType,
            "each frame is (owner_backend_id, payload[, frame_id])",
        ));
    }
    let frame_id = if t.len() == 3 {
        t.get_item(2)?.extract()?
    } else {
        None
    };
    Ok(FrameArg {
        owner: args::owner(&t.get_item(0)?)?,
        payload: payload_bytes(&t.get_item(1)?)?,
        frame_id,
        clickable: None,
    })
}

fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
    })
}

/// A page's accessibility tree (all frames), parsed once, rendered many ways.
#[pyclass(frozen, name = "AXTree", module = "pagelens")]
struct PyAxTree {
    tree: Arc<AxTree>,
}

#[pymethods]
impl PyAxTree {
    /// Parses a CDP `Accessibility.getFullAXTree` result. `clickable` names the main
    /// frame's elements that respond to clicks (backend DOM node ids, or a dict of them to
    /// DOM hints); each frame dict may carry its own under "clickable".
    #[staticmethod]
    #[pyo3(signature = (payload, frames=None, max_depth=DEFAULT_MAX_DEPTH, skip_orphan_frames=false, clickable=None))]
    fn from_cdp(
        py: Python<'_>,
        payload: &Bound<'_, PyAny>,
        frames: Option<&Bound<'_, PyAny>>,
        #[pyo3(from_py_with = args::max_depth)] max_depth: usize,
        skip_orphan_frames: bool,
        clickable: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let main = payload_bytes(payload)?;
        let main_clickable = clickable.map(clickable_arg).transpose()?;
        let mut frame_args = Vec::new();
        if let Some(frames) = frames {
            for item in frames.try_iter()? {
                frame_args.push(frame_arg(&item?)?);
            }
        }
        let tree = py
            .detach(|| {
                let inputs: Vec<FrameInput> = frame_args
                    .iter()
                    .map(|f| FrameInput {
                        owner_backend_id: f.owner,
                        payload: &f.payload,
                        frame_id: f.frame_id.clone(),
                        clickable: f.clickable.as_ref(),
                    })
                    .collect();
                let opts = ParseOptions {
                    max_depth,
                    skip_orphan_frames,
                };
                AxTree::parse_page(&main, main_clickable.as_ref(), &inputs, opts)
            })
            .map_err(py_err)?;
        Ok(PyAxTree {
            tree: Arc::new(tree),
        })
    }

    /// Renders the whole page as `occam` (default) or `webarena` text.
    #[pyo3(signature = (mode="occam", max_tokens=None, tokenizer=DEFAULT_TOKENIZER, show_urls=false))]
    fn render(
        &self,
        py: Python<'_>,
        mode: &str,
        #[pyo3(from_py_with = args::max_tokens)] max_tokens: Option<usize>,
        tokenizer: &str,
        show_urls: bool,
    ) -> PyResult<PyObservation> {
        let mode: Mode = mode.parse().map_err(py_err)?;
        let enc = Encoding::from_name(tokenizer).map_err(py_err)?;
        if max_tokens == Some(0) {
            return Err(err(ErrorKind::Argument, "max_tokens must be at least 1"));
        }
        let tree = &self.tree;
        let opts = occam::OccamOptions {
            show_urls,
            ..Default::default()
        };
        let obs =
            py.detach(|| pagelens_core::render(tree, mode, opts, max_tokens.map(|m| (enc, m))));
        let count = OnceLock::new();
        if let Some(c) = obs.token_count {
            let _ = count.set(c);
        }
        Ok(PyObservation {
            text: obs.text,
            ids: obs.ids,
            mode: if mode == Mode::Occam {
                "occam"
            } else {
                "webarena"
            },
            encoding: enc,
            line_count: obs.line_count,
            omitted_lines: obs.omitted_lines,
            truncated: obs.truncated,
            unknown_ids: Vec::new(),
            included_ids: Vec::new(),
            count,
        })
    }

    /// The pivotal subtree of `ids` (history replay): each node with its subtree, its
    /// ancestors and its named siblings, in occam form without ids.
    #[pyo3(signature = (ids, max_nodes=None, tokenizer=DEFAULT_TOKENIZER))]
    fn subtree(
        &self,
        py: Python<'_>,
        #[pyo3(from_py_with = args::node_ids)] ids: Vec<i64>,
        #[pyo3(from_py_with = args::max_nodes)] max_nodes: Option<usize>,
        tokenizer: &str,
    ) -> PyResult<PyObservation> {
        let enc = Encoding::from_name(tokenizer).map_err(py_err)?;
        let tree = &self.tree;
        let p = py.detach(|| pivotal(tree, &ids, max_nodes));
        let (text, line_count, truncated) = match p.rendered {
            Some(r) => {
                let lines = r.lines.len();
                (
                    pagelens_core::render::Rendered::text_of(&r.lines),
                    lines,
                    false,
                )
            }
            None => (
                format!(
                    "[pivotal subtree of {} nodes is over the cap of {} nodes; not shown]",
                    p.included.len(),
                    max_nodes.unwrap_or(0)
                ),
                1,
                true,
            ),
        };
        Ok(PyObservation {
            text,
            ids: Vec::new(),
            mode: "subtree",
            encoding: enc,
            line_count,
            omitted_lines: 0,
            truncated,
            unknown_ids: p.unknown,
            included_ids: p.included,
            count: OnceLock::new(),
        })
    }

    /// The node shown with element id `id`.
    fn node(&self, #[pyo3(from_py_with = args::lookup_id)] id: Option<i64>) -> PyResult<PyAxNode> {
        let idx = id.and_then(|id| self.tree.index_of(id)).ok_or_else(|| {
            err(
                ErrorKind::NodeNotFound,
                format!("no node with id {}", shown_id(id)),
            )
        })?;
        Ok(PyAxNode {
            tree: self.tree.clone(),
            idx,
        })
    }

    /// Element ids of every node, in document order of the raw tree's arena.
    fn ids(&self) -> Vec<i64> {
        self.tree.nodes().iter().map(|n| n.element_id).collect()
    }

    /// Element ids of the roots (the main frame's root first).
    #[getter]
    fn roots(&self) -> Vec<i64> {
        self.tree
            .roots
            .iter()
            .map(|&r| self.tree.node(r).element_id)
            .collect()
    }

    /// Frame ids, the main frame first.
    #[getter]
    fn frames(&self) -> Vec<Option<String>> {
        self.tree.frames.clone()
    }

    /// Element ids of the nodes marked clickable (see `from_cdp(clickable=...)`).
    #[getter]
    fn clickable_ids(&self) -> Vec<i64> {
        let clickable = pagelens_core::axtree::RoleClass::CLICKABLE;
        self.tree
            .nodes()
            .iter()
            .filter(|n| n.class.has(clickable))
            .map(|n| n.element_id)
            .collect()
    }

    /// Frames left out because no node owns them: (owner backend id, frame id).
    #[getter]
    fn orphan_frames(&self) -> Vec<(i64, Option<String>)> {
        self.tree.orphan_frames.clone()
    }

    fn __len__(&self) -> usize {
        self.tree.len()
    }

    fn __contains__(&self, #[pyo3(from_py_with = args::lookup_id)] id: Option<i64>) -> bool {
        id.and_then(|id| self.tree.index_of(id)).is_some()
    }

    fn __repr__(&self) -> String {
        format!(
            "<AXTree nodes={} frames={}>",
            self.tree.len(),
            self.tree.frames.len()
        )
    }
}

/// Rendered text and what it shows.
#[pyclass(frozen, name = "Observation", module = "pagelens")]
struct PyObservation {
    #[pyo3(get)]
    text: String,
    /// Element ids shown, in reading order.
    #[pyo3(get)]
    ids: Vec<i64>,
    #[pyo3(get)]
    mode: &'static str,
    encoding: Encoding,
    #[pyo3(get)]
    line_count: usize,
    #[pyo3(get)]
    omitted_lines: usize,
    #[pyo3(get)]
    truncated: bool,
    #[pyo3(get)]
    unknown_ids: Vec<i64>,
    #[pyo3(get)]
    included_ids: Vec<i64>,
    count: OnceLock<usize>,
}

#[pymethods]
impl PyObservation {
    /// Tokens of `text` under the observation's tokenizer (counted once, on first use).
    #[getter]
    fn token_count(&self, py: Python<'_>) -> usize {
        if let Some(&c) = self.count.get() {
            return c;
        }
        let enc = self.encoding;
        let text = &self.text;
        let c = py.detach(|| enc.count(text));
        *self.count.get_or_init(|| c)
    }

    #[getter]
    fn tokenizer(&self) -> &'static str {
        self.encoding.name()
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!(
            "<Observation mode={} lines={} ids={} truncated={}>",
            self.mode,
            self.line_count,
            self.ids.len(),
            self.truncated
        )
    }
}

/// One node of an [`AXTree`], for resolving an element id back to the page.
#[pyclass(frozen, name = "AXNode", module = "pagelens")]
struct PyAxNode {
    tree: Arc<AxTree>,
    idx: u32,
}

#[pymethods]
impl PyAxNode {
    #[getter]
    fn id(&self) -> i64 {
        self.tree.node(self.idx).element_id
    }

    /// `nodeId` as CDP sent it.
    #[getter]
    fn cdp_id(&self) -> String {
        self.tree.node(self.idx).cdp_id.to_string()
    }

    #[getter]
    fn role(&self) -> &str {
        &self.tree.node(self.idx).role
    }

    #[getter]
    fn name(&self) -> &str {
        &self.tree.node(self.idx).name
    }

    #[getter]
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.tree
            .node(self.idx)
            .value
            .as_ref()
            .map(|v| value_to_py(py, v))
            .transpose()
    }

    #[getter]
    fn properties<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for p in self.tree.props(self.idx) {
            d.set_item(p.name.as_ref(), value_to_py(py, &p.value)?)?;
        }
        Ok(d)
    }

    #[getter]
    fn backend_dom_node_id(&self) -> Option<i64> {
        self.tree.node(self.idx).backend_id
    }

    #[getter]
    fn frame_id(&self) -> Option<&str> {
        self.tree.frame_id(self.idx)
    }

    #[getter]
    fn ignored(&self) -> bool {
        self.tree.node(self.idx).ignored
    }

    /// Its DOM element responds to clicks (a script's listener), whatever its role.
    #[getter]
    fn clickable(&self) -> bool {
        self.tree
            .node(self.idx)
            .class
            .has(pagelens_core::axtree::RoleClass::CLICKABLE)
    }

    /// What the DOM says of a clickable element (title, alt, image file name, class words).
    #[getter]
    fn hint(&self) -> Option<&str> {
        self.tree.hint(self.idx)
    }

    /// The name was computed from the node's own contents (CDP `name.sources`).
    #[getter]
    fn name_from_contents(&self) -> bool {
        self.tree.node(self.idx).name_from_contents
    }

    /// Whether the node is part of what the renderers show (not ignored, has a DOM node,
    /// not an `InlineTextBox`).
    #[getter]
    fn rendered(&self) -> bool {
        self.tree.node(self.idx).structural
    }

    /// Parent's element id in the raw tree (frames hang under their owner).
    #[getter]
    fn parent(&self) -> Option<i64> {
        let p = self.tree.node(self.idx).parent;
        (p != pagelens_core::axtree::NONE).then(|| self.tree.node(p).element_id)
    }

    #[getter]
    fn children(&self) -> Vec<i64> {
        self.tree
            .children(self.idx)
            .iter()
            .map(|&c| self.tree.node(c).element_id)
            .collect()
    }

    /// Nearest rendered ancestor (ignored nodes between are dissolved).
    #[getter]
    fn rendered_parent(&self) -> Option<i64> {
        let p = self.tree.node(self.idx).s_parent;
        (p != pagelens_core::axtree::NONE).then(|| self.tree.node(p).element_id)
    }

    /// Children in the rendered tree.
    #[getter]
    fn rendered_children(&self) -> Vec<i64> {
        self.tree
            .s_children(self.idx)
            .iter()
            .map(|&c| self.tree.node(c).element_id)
            .collect()
    }

    fn __repr__(&self) -> String {
        let n = self.tree.node(self.idx);
        format!(
            "<AXNode {} [{}] {:?}>",
            n.role,
            n.element_id,
            n.name.as_ref()
        )
    }
}

/// Token count of `text` under an offline tokenizer (gpt2, `cl100k_base`, `o200k_base`).
#[pyfunction]
#[pyo3(signature = (text, tokenizer=DEFAULT_TOKENIZER))]
fn count_tokens(py: Python<'_>, text: &str, tokenizer: &str) -> PyResult<usize> {
    let enc = Encoding::from_name(tokenizer).map_err(py_err)?;
    Ok(py.detach(|| enc.count(text)))
}

/// An offline tokenizer: `Tokenizer("gpt2")` (also `r50k_base`, `cl100k_base`, `o200k_base`,
/// embedded in the wheel), or `Tokenizer.from_file("tokenizer.json")` (Hugging Face).
#[pyclass(frozen, name = "Tokenizer", module = "pagelens")]
#[derive(Clone)]
struct PyTokenizer {
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

    fn count(&self, py: Python<'_>, text: &str) -> usize {
        py.detach(|| self.inner.count(text))
    }

    fn __repr__(&self) -> String {
        format!("Tokenizer({:?})", self.inner.name())
    }
}

fn tokenizer_arg(obj: &Bound<'_, PyAny>) -> PyResult<Tokenizer> {
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

/// An HTML document parsed with html5ever; every element carries an id (`node="N"`).
#[pyclass(frozen, name = "Dom", module = "pagelens")]
struct PyDom {
    dom: Arc<Dom>,
    /// Ids that `clean(keep=...)` kept although a rule would have removed them.
    rescued: Vec<u32>,
}

fn html_bytes(obj: &Bound<'_, PyAny>) -> PyResult<(Vec<u8>, bool)> {
    if let Some(b) = binary(obj) {
        return Ok((b, false));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        // Already decoded: lone surrogates become U+FFFD like any invalid input.
        return Ok((s.to_string_lossy().into_owned().into_bytes(), true));
    }
    Err(err(
        ErrorKind::ArgumentType,
        format!("html must be str or bytes, not {}", obj.get_type().name()?),
    ))
}

/// An id for a message: the number, or "out of range".
fn shown_id(id: Option<i64>) -> String {
    id.map_or_else(|| "out of range".to_owned(), |i| i.to_string())
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
        let tok = match tokenizer {
            Some(t) => tokenizer_arg(t)?,
            None => Tokenizer::named(DEFAULT_TOKENIZER).map_err(py_err)?,
        };
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
    fn select(&self, py: Python<'_>, selector: &str) -> PyResult<Vec<u32>> {
        let sel = Selector::parse(selector).map_err(py_err)?;
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
    fn find_path(&self, path: &str) -> PyResult<Option<u32>> {
        let n = self.dom.find_path(path).map_err(py_err)?;
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

    /// Start tags dropped by the nesting limit (documents nested over 1,024 levels).
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
struct PyElement {
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

/// A piece of a chunked text.
#[pyclass(frozen, name = "Chunk", module = "pagelens")]
struct PyChunk {
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
fn chunk(
    py: Python<'_>,
    text: &str,
    #[pyo3(from_py_with = args::budget)] max_tokens: usize,
    tokenizer: Option<&Bound<'_, PyAny>>,
    kind: &str,
    from_end: bool,
) -> PyResult<Vec<PyChunk>> {
    let kind: ChunkKind = kind.parse().map_err(py_err)?;
    let tok = match tokenizer {
        Some(t) => tokenizer_arg(t)?,
        None => Tokenizer::named(DEFAULT_TOKENIZER).map_err(py_err)?,
    };
    let chunks = py
        .detach(|| chunk_text(text, max_tokens, &tok, kind, from_end))
        .map_err(py_err)?;
    Ok(chunks
        .into_iter()
        .map(|c| PyChunk {
            text: text[c.start..c.end].to_owned(),
            token_count: c.token_count,
            node_ids: c.node_ids,
            start: c.start,
            end: c.end,
            oversized: c.oversized,
        })
        .collect())
}

/// The clickable elements of a CDP `DOMSnapshot.captureSnapshot` result (bytes, str or dict;
/// the result object or the whole response message): per document, its frame id and a
/// dict of backend DOM node id to hint (or None), for elements with a layout box.
#[pyfunction]
fn snapshot_clickables<'py>(
    py: Python<'py>,
    snapshot: &Bound<'py, PyAny>,
) -> PyResult<Vec<(Option<String>, Bound<'py, PyDict>)>> {
    let bytes = payload_bytes(snapshot)?;
    let docs = py
        .detach(|| pagelens_core::snapshot::clickables(&bytes))
        .map_err(py_err)?;
    let mut out = Vec::with_capacity(docs.len());
    for d in docs {
        let map = PyDict::new(py);
        for (id, hint) in d.clickable.iter() {
            map.set_item(id, hint)?;
        }
        out.push((d.frame_id, map));
    }
    Ok(out)
}

/// The `.tiktoken` rank file of an embedded encoding, rebuilt from its ranks: lets `PyPI`
/// `tiktoken` run offline on exactly the vocabulary we count with (seed its cache).
#[pyfunction]
fn tiktoken_bpe_file(py: Python<'_>, name: &str) -> PyResult<Py<PyBytes>> {
    let enc = pagelens_core::Encoding::from_name(name).map_err(py_err)?;
    let data = py.detach(|| enc.bpe_file());
    Ok(PyBytes::new(py, &data).unbind())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<PyTokenizer>()?;
    m.add_class::<PyDom>()?;
    m.add_class::<PyElement>()?;
    m.add_class::<PyChunk>()?;
    m.add_function(wrap_pyfunction!(chunk, m)?)?;
    m.add_function(wrap_pyfunction!(tiktoken_bpe_file, m)?)?;
    m.add_function(wrap_pyfunction!(snapshot_clickables, m)?)?;
    m.add_class::<PyAxTree>()?;
    m.add_class::<PyObservation>()?;
    m.add_class::<PyAxNode>()?;
    m.add_function(wrap_pyfunction!(count_tokens, m)?)?;
    m.add("DEFAULT_MAX_DEPTH", DEFAULT_MAX_DEPTH)?;
    m.add("DEFAULT_TOKENIZER", DEFAULT_TOKENIZER)?;
    // The core's registries: the CLI's choices, the prompts and the docs derive from these.
    m.add("RENDER_MODES", Mode::NAMES.to_vec())?;
    m.add("CLEAN_PROFILES", CleanOptions::PROFILES.to_vec())?;
    m.add("TOKENIZERS", Encoding::NAMES.to_vec())?;
    m.add("CHUNK_KINDS", ChunkKind::NAMES.to_vec())?;
    m.add("CORE_VERSION", pagelens_core::VERSION)?;
    Ok(())
}
