//! The arena tree of one or more CDP payloads (one per frame): the data model and its
//! queries. Building it from payloads is in `build`.
//!
//! Two views live side by side:
//! - the raw tree, exactly as `childIds` describe it (frames hung under their owners);
//! - the structural tree that both renderers walk: `InlineTextBox`/`LineBreak` subtrees
//!   removed, ignored nodes and nodes without `backendDOMNodeId` dissolved (their children
//!   hoisted to the nearest structural ancestor).
//!
//! Every pass is iterative and linear, so a 100,000-deep chain cannot overflow the stack.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::records::{ClickableEntry, IdRef, Scalar};
use super::roles::RoleClass;

/// "No node" in parent and index fields.
pub const NONE: u32 = u32::MAX;

/// Default limit on the depth of the raw tree; Blink's HTML parser nests at most 512.
pub const DEFAULT_MAX_DEPTH: usize = 10_000;

/// A property or node value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Box<str>),
}

impl Value {
    pub(super) fn from_scalar(s: &Scalar) -> Option<Value> {
        Some(match s {
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Int(i) => Value::Int(*i),
            Scalar::Float(f) => Value::Float(*f),
            Scalar::Str(s) => Value::Str(crate::text::without_own_brackets(s).into()),
            Scalar::Other => return None,
        })
    }

    /// Python's `str()` of the value, as `WebArena`'s renderer prints properties.
    pub fn py_str(&self) -> String {
        match self {
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => crate::text::py_float(*f),
            Value::Str(s) => s.to_string(),
        }
    }

    pub fn is_true(&self) -> bool {
        match self {
            Value::Bool(b) => *b,
            Value::Str(s) => s.as_ref() == "true",
            _ => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Prop {
    pub name: Arc<str>,
    pub value: Value,
}

/// What separates a structural node's text from its previous structural sibling's, beyond
/// the whitespace their names carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Sep {
    /// Nothing: the two come from one parent, so the names already hold the page's spacing.
    #[default]
    None,
    /// The boundary of a dissolved (ignored) container lies between them: Chromium keeps
    /// ignored block elements (`<div>`) as nodes but not inline ones (`<span>`), so the two
    /// texts sit in different blocks of the rendered page.
    Space,
    /// A `<br>` (Chromium's `LineBreak`) lies between them.
    Break,
}

/// Elements that respond to clicks (CDP `DOMSnapshot.captureSnapshot`'s `isClickable`, which
/// includes listeners added by script), by `backendDOMNodeId`, each with an optional hint
/// from its DOM (title, alt, image file name, class words) for telling unnamed ones apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Clickables(FxHashMap<i64, Option<Box<str>>>);

impl Clickables {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an element; a hint already known is kept over none.
    pub fn insert(&mut self, backend_id: i64, hint: Option<&str>) {
        let hint = hint.map(str::trim).filter(|h| !h.is_empty()).map(Box::from);
        let slot = self.0.entry(backend_id).or_insert(None);
        if slot.is_none() {
            *slot = hint;
        }
    }

    pub fn contains(&self, backend_id: i64) -> bool {
        self.0.contains_key(&backend_id)
    }

    pub fn hint(&self, backend_id: i64) -> Option<&str> {
        self.0.get(&backend_id).and_then(|h| h.as_deref())
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (i64, Option<&str>)> {
        self.0.iter().map(|(&k, v)| (k, v.as_deref()))
    }

    pub(super) fn extend_entries(&mut self, entries: &[ClickableEntry]) {
        for e in entries {
            self.insert(e.backend_id, e.hint.as_deref());
        }
    }
}

/// One accessibility node.
#[derive(Debug, Clone)]
pub struct Node {
    /// The id shown to the model and used for lookups.
    pub element_id: i64,
    /// `nodeId` as CDP sent it (for error messages and the Python API).
    pub cdp_id: CdpId,
    /// Interned: a page has a few dozen distinct roles.
    pub role: Arc<str>,
    pub class: RoleClass,
    /// The name exactly as sent.
    pub name: Box<str>,
    /// The whitespace-normalised name, when it differs from `name`.
    pub(super) norm_name: Option<Box<str>>,
    /// The name was computed from the node's own contents (CDP `name.sources`): it repeats
    /// the text of the descendants.
    pub name_from_contents: bool,
    /// What separates this node from its previous structural sibling (structural nodes only).
    pub sep_before: Sep,
    /// A text below it is not shown (no DOM node, as CSS generated content; or ignored),
    /// though Chromium may have counted it in a name computed from contents.
    pub unshown_text: bool,
    pub value: Option<Value>,
    pub(super) props: (u32, u32),
    pub ignored: bool,
    pub backend_id: Option<i64>,
    /// Index into [`AxTree::frames`].
    pub frame: u32,
    pub parent: u32,
    pub(super) children: (u32, u32),
    /// Part of the structural tree.
    pub structural: bool,
    /// Nearest structural ancestor (NONE for a structural root).
    pub s_parent: u32,
    pub(super) s_children: (u32, u32),
}

impl Node {
    /// The name after whitespace normalisation (spec 3.11).
    pub fn norm_name(&self) -> &str {
        self.norm_name.as_deref().unwrap_or(&self.name)
    }
}

/// `nodeId` as sent: almost always an integer in a string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CdpId {
    Int(i64),
    Str(Box<str>),
}

impl CdpId {
    pub(super) fn of(id: &IdRef) -> CdpId {
        match id {
            IdRef::Int(i) => CdpId::Int(*i),
            IdRef::Str(s) => CdpId::Str(s.as_ref().into()),
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            CdpId::Int(i) => Some(*i),
            CdpId::Str(_) => None,
        }
    }
}

impl std::fmt::Display for CdpId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CdpId::Int(i) => write!(f, "{i}"),
            CdpId::Str(s) => f.write_str(s),
        }
    }
}

/// A frame's payload and the node that owns it.
pub struct FrameInput<'a> {
    /// `backendDOMNodeId` of the `<iframe>` element in an earlier tree.
    pub owner_backend_id: i64,
    pub payload: &'a [u8],
    pub frame_id: Option<String>,
    /// The frame's clickable elements (backend ids of its own document).
    pub clickable: Option<&'a Clickables>,
}

/// How to build a tree.
#[derive(Debug, Clone, Copy)]
pub struct ParseOptions {
    /// Deeper raw trees are an error.
    pub max_depth: usize,
    /// A frame whose owner is not in the tree (a hidden `<iframe>` has no AX node) is left
    /// out and listed in [`AxTree::orphan_frames`] instead of being an error.
    pub skip_orphan_frames: bool,
}

impl Default for ParseOptions {
    fn default() -> Self {
        ParseOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            skip_orphan_frames: false,
        }
    }
}

/// The whole page: every frame's nodes in one arena.
#[derive(Debug, Clone)]
pub struct AxTree {
    pub(super) nodes: Vec<Node>,
    pub(super) props: Vec<Prop>,
    pub(super) children: Vec<u32>,
    pub(super) s_children: Vec<u32>,
    /// Roots of the raw tree (the main frame's root first).
    pub roots: Vec<u32>,
    /// Roots of the structural tree.
    pub s_roots: Vec<u32>,
    /// Structural nodes in pre-order (document order).
    pub s_order: Vec<u32>,
    /// Frame ids, index 0 is the main frame (None when the payload named none).
    pub frames: Vec<Option<String>>,
    /// Frames left out because their owner is not in the tree: (owner backend id, frame id).
    pub orphan_frames: Vec<(i64, Option<String>)>,
    pub(super) by_element_id: FxHashMap<i64, u32>,
    /// DOM hints of clickable nodes, by arena index.
    pub(super) hints: FxHashMap<u32, Box<str>>,
    /// What pagelens' own capture could not read, over all its payloads.
    pub capture_notes: super::records::CaptureNotes,
}

impl AxTree {
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn node(&self, idx: u32) -> &Node {
        &self.nodes[idx as usize]
    }

    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    pub fn props(&self, idx: u32) -> &[Prop] {
        let (a, b) = self.nodes[idx as usize].props;
        &self.props[a as usize..b as usize]
    }

    pub fn prop(&self, idx: u32, name: &str) -> Option<&Value> {
        self.props(idx)
            .iter()
            .find(|p| p.name.as_ref() == name)
            .map(|p| &p.value)
    }

    pub fn children(&self, idx: u32) -> &[u32] {
        let (a, b) = self.nodes[idx as usize].children;
        &self.children[a as usize..b as usize]
    }

    /// Children in the structural tree.
    pub fn s_children(&self, idx: u32) -> &[u32] {
        let (a, b) = self.nodes[idx as usize].s_children;
        &self.s_children[a as usize..b as usize]
    }

    /// Arena index of the node shown with this element id.
    pub fn index_of(&self, element_id: i64) -> Option<u32> {
        self.by_element_id.get(&element_id).copied()
    }

    pub fn frame_id(&self, idx: u32) -> Option<&str> {
        self.frames[self.nodes[idx as usize].frame as usize].as_deref()
    }

    /// The DOM hint of a clickable node (title, alt, image file name, class words).
    pub fn hint(&self, idx: u32) -> Option<&str> {
        self.hints.get(&idx).map(AsRef::as_ref)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AxError;

    fn node(id: &str, role: &str, name: &str, children: &[&str]) -> String {
        let kids: Vec<String> = children.iter().map(|c| format!("\"{c}\"")).collect();
        format!(
            r#"{{"nodeId":"{id}","ignored":false,"role":{{"value":"{role}"}},"name":{{"value":"{name}"}},"childIds":[{}],"backendDOMNodeId":{id}}}"#,
            kids.join(",")
        )
    }

    fn payload(nodes: &[String]) -> Vec<u8> {
        format!("{{\"nodes\":[{}]}}", nodes.join(",")).into_bytes()
    }

    #[test]
    fn builds_parent_links_and_ids() {
        let p = payload(&[
            node("1", "RootWebArea", "T", &["2", "3"]),
            node("2", "link", "a", &[]),
            node("3", "button", "b", &[]),
        ]);
        let t = AxTree::parse(&p).unwrap();
        assert_eq!(t.len(), 3);
        assert_eq!(t.children(0), &[1, 2]);
        assert_eq!(t.node(2).parent, 0);
        assert_eq!(t.index_of(3), Some(2));
        assert_eq!(t.s_children(0), &[1, 2]);
    }

    #[test]
    fn rejects_unknown_child_and_cycles() {
        let p = payload(&[node("1", "RootWebArea", "", &["9"])]);
        assert!(matches!(
            AxTree::parse(&p),
            Err(AxError::UnknownChild { .. })
        ));
        let p = payload(&[
            node("1", "RootWebArea", "", &["2"]),
            node("2", "generic", "", &["3"]),
            node("3", "generic", "", &["2"]),
        ]);
        let e = AxTree::parse(&p).unwrap_err();
        assert!(
            matches!(e, AxError::TwoParents { .. } | AxError::Cycle(_)),
            "{e}"
        );
        let p = payload(&[
            node("1", "generic", "", &["2"]),
            node("2", "generic", "", &["1"]),
        ]);
        assert!(matches!(AxTree::parse(&p), Err(AxError::Cycle(_))));
    }

    #[test]
    fn identical_duplicates_are_tolerated_different_ones_rejected() {
        let a = node("2", "link", "a", &[]);
        let p = payload(&[node("1", "RootWebArea", "", &["2"]), a.clone(), a]);
        assert_eq!(AxTree::parse(&p).unwrap().len(), 2);
        let p = payload(&[
            node("1", "RootWebArea", "", &["2"]),
            node("2", "link", "a", &[]),
            node("2", "link", "b", &[]),
        ]);
        assert_eq!(
            AxTree::parse(&p).unwrap_err(),
            AxError::DuplicateId("2".into())
        );
    }

    #[test]
    fn deep_chain_is_limited_without_recursion() {
        let n = 100_000;
        let mut nodes = Vec::with_capacity(n);
        for i in 1..=n {
            let kids: Vec<String> = if i < n {
                vec![(i + 1).to_string()]
            } else {
                vec![]
            };
            let kids: Vec<&str> = kids.iter().map(std::string::String::as_str).collect();
            nodes.push(node(&i.to_string(), "group", "g", &kids));
        }
        let p = payload(&nodes);
        assert!(matches!(AxTree::parse(&p), Err(AxError::TooDeep { .. })));
        assert_eq!(AxTree::parse_frames(&p, &[], n + 1).unwrap().len(), n);
    }

    #[test]
    fn frames_hang_under_their_owner_with_fresh_ids() {
        let main = payload(&[
            node("1", "RootWebArea", "", &["2"]),
            node("2", "Iframe", "", &[]),
        ]);
        let frame = payload(&[
            node("1", "RootWebArea", "inner", &["5"]),
            node("5", "link", "x", &[]),
        ]);
        let frames = [FrameInput {
            owner_backend_id: 2,
            payload: &frame,
            frame_id: Some("F".into()),
            clickable: None,
        }];
        let t = AxTree::parse_frames(&main, &frames, DEFAULT_MAX_DEPTH).unwrap();
        assert_eq!(t.children(1), &[2]);
        let ids: Vec<i64> = t.nodes().iter().map(|n| n.element_id).collect();
        assert_eq!(ids, vec![1, 2, 6, 5]);
        assert_eq!(t.frame_id(3), Some("F"));
        let bad = [FrameInput {
            owner_backend_id: 99,
            payload: &frame,
            frame_id: None,
            clickable: None,
        }];
        assert_eq!(
            AxTree::parse_frames(&main, &bad, DEFAULT_MAX_DEPTH).unwrap_err(),
            AxError::FrameOwner(99)
        );
        // Skipping: the orphan is listed, the frame after it still hangs under its owner.
        let both = [
            FrameInput {
                owner_backend_id: 99,
                payload: &frame,
                frame_id: Some("H".into()),
                clickable: None,
            },
            FrameInput {
                owner_backend_id: 2,
                payload: &frame,
                frame_id: Some("F".into()),
                clickable: None,
            },
        ];
        let opts = ParseOptions {
            max_depth: DEFAULT_MAX_DEPTH,
            skip_orphan_frames: true,
        };
        let t = AxTree::parse_page(&main, None, &both, opts).unwrap();
        assert_eq!(t.orphan_frames, vec![(99, Some("H".to_string()))]);
        assert_eq!(t.len(), 4);
        assert_eq!(t.frame_id(3), Some("F"));
    }

    #[test]
    fn cdp_response_envelopes_are_read() {
        let inner = payload(&[
            node("1", "RootWebArea", "page", &["2"]),
            node("2", "link", "x", &[]),
        ]);
        let inner = std::str::from_utf8(&inner).unwrap();
        let message = format!("{{\"id\":7,\"result\":{inner},\"sessionId\":\"S\"}}");
        assert_eq!(AxTree::parse(message.as_bytes()).unwrap().len(), 2);
        let error = br#"{"id":7,"error":{"code":-32000,"message":"Frame with the given id was not found."}}"#;
        match AxTree::parse(error) {
            Err(AxError::Json(m)) => {
                assert!(m.contains("Frame with the given id was not found"), "{m}");
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(matches!(
            AxTree::parse(b"{\"nodes\": [}"),
            Err(AxError::Json(_))
        ));
        assert!(matches!(AxTree::parse(b"\xff\xfe"), Err(AxError::Utf8(_))));
        assert!(matches!(AxTree::parse(b"{}"), Err(AxError::Json(_))));
        assert!(matches!(
            AxTree::parse(b"[{\"role\":{\"value\":\"link\"}}]"),
            Err(AxError::MissingField {
                index: 0,
                field: "nodeId"
            })
        ));
    }
}
