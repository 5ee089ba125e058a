//! `AXTree`, `Observation` and `AXNode`: accessibility trees parsed, rendered and resolved;
//! `snapshot_clickables`.

use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use pagelens_core::axtree::{
    AxTree, Clickables, FrameInput, ParseOptions, Value, DEFAULT_MAX_DEPTH,
};
use pagelens_core::render::subtree::pivotal;
use pagelens_core::render::{occam, IdLabels, IdStyle, Mode, SeenIds};
use pagelens_core::Encoding;
use pagelens_core::DEFAULT_TOKENIZER;

use crate::args::{self, shown_id};
use crate::errors::{err, py_err, ErrorKind};
use crate::payload::payload_bytes;

pub(crate) struct FrameArg {
    owner: i64,
    payload: Vec<u8>,
    frame_id: Option<String>,
    clickable: Option<Clickables>,
}

/// Clickable elements: backend DOM node ids, or a mapping of them to hints (or None).
pub(crate) fn clickable_arg(obj: &Bound<'_, PyAny>) -> PyResult<Clickables> {
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

pub(crate) fn frame_arg(item: &Bound<'_, PyAny>) -> PyResult<FrameArg> {
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

pub(crate) fn value_to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Int(i) => i.into_pyobject(py)?.into_any(),
        Value::Float(f) => f.into_pyobject(py)?.into_any(),
        Value::Str(s) => PyString::new(py, s).into_any(),
    })
}

/// A page's accessibility tree (all frames), parsed once, rendered many ways.
#[pyclass(frozen, name = "AXTree", module = "pagelens")]
pub(crate) struct PyAxTree {
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

    /// Renders the whole page as `occam` (default) or `webarena` text. `labels` print in
    /// place of the ids they map; with `seen_ids` (the previous observation's), the occam
    /// form marks every other id `*[id]`.
    #[pyo3(signature = (mode="occam", max_tokens=None, tokenizer=DEFAULT_TOKENIZER, show_urls=false, labels=None, seen_ids=None))]
    #[allow(clippy::too_many_arguments)]
    fn render(
        &self,
        py: Python<'_>,
        mode: &str,
        #[pyo3(from_py_with = args::max_tokens)] max_tokens: Option<usize>,
        tokenizer: &str,
        show_urls: bool,
        #[pyo3(from_py_with = args::id_labels)] labels: Option<IdLabels>,
        #[pyo3(from_py_with = args::seen_ids)] seen_ids: Option<SeenIds>,
    ) -> PyResult<PyObservation> {
        let mode: Mode = mode.parse().map_err(py_err)?;
        let enc = Encoding::from_name(tokenizer).map_err(py_err)?;
        if max_tokens == Some(0) {
            return Err(err(ErrorKind::Argument, "max_tokens must be at least 1"));
        }
        let tree = &self.tree;
        let opts = occam::OccamOptions {
            show_urls,
            ids: IdStyle {
                labels: labels.as_ref(),
                seen: seen_ids.as_ref(),
            },
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
            mode: mode.name(),
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

    /// Element ids of the nodes the renderers can show (not ignored, with a DOM node, not an
    /// `InlineTextBox`): what an agent was shown of the page, budget aside.
    fn rendered_ids(&self) -> Vec<i64> {
        self.tree
            .nodes()
            .iter()
            .filter(|n| n.structural)
            .map(|n| n.element_id)
            .collect()
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

    /// pagelens' own capture: ids of the `<iframe>`s whose document it could not read.
    #[getter]
    fn unread_frames(&self) -> Vec<i64> {
        self.tree.capture_notes.unread_frames.clone()
    }

    /// pagelens' own capture: ids of the elements that hold a closed shadow root.
    #[getter]
    fn closed_shadow_hosts(&self) -> Vec<i64> {
        self.tree.capture_notes.closed.clone()
    }

    /// pagelens' own capture stopped at its node limit.
    #[getter]
    fn capture_truncated(&self) -> bool {
        self.tree.capture_notes.truncated
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
pub(crate) struct PyObservation {
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
pub(crate) struct PyAxNode {
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

/// The clickable elements of a CDP `DOMSnapshot.captureSnapshot` result (bytes, str or dict;
/// the result object or the whole response message): per document, its frame id and a
/// dict of backend DOM node id to hint (or None), for elements with a layout box.
#[pyfunction]
pub(crate) fn snapshot_clickables<'py>(
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
