//! The arena tree built from one or more CDP payloads (one per frame).
//!
//! Two views live side by side:
//! - the raw tree, exactly as `childIds` describe it (frames hung under their owners);
//! - the structural tree that both renderers walk: `InlineTextBox`/`LineBreak` subtrees
//!   removed, ignored nodes and nodes without `backendDOMNodeId` dissolved (their children
//!   hoisted to the nearest structural ancestor).
//!
//! Every pass is iterative and linear, so a 100,000-deep chain cannot overflow the stack.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::parse::{parse_payload, ClickableEntry, IdRef, RawNode, Scalar};
use super::roles::RoleClass;
use crate::error::AxError;
use crate::text::{is_normalized, normalize_ws};

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
    fn from_scalar(s: &Scalar) -> Option<Value> {
        Some(match s {
            Scalar::Bool(b) => Value::Bool(*b),
            Scalar::Int(i) => Value::Int(*i),
            Scalar::Float(f) => Value::Float(*f),
            Scalar::Str(s) => Value::Str(s.as_ref().into()),
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

    fn extend_entries(&mut self, entries: &[ClickableEntry]) {
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
    norm_name: Option<Box<str>>,
    /// The name was computed from the node's own contents (CDP `name.sources`): it repeats
    /// the text of the descendants.
    pub name_from_contents: bool,
    /// What separates this node from its previous structural sibling (structural nodes only).
    pub sep_before: Sep,
    /// A text below it is not shown (no DOM node, as CSS generated content; or ignored),
    /// though Chromium may have counted it in a name computed from contents.
    pub unshown_text: bool,
    pub value: Option<Value>,
    props: (u32, u32),
    pub ignored: bool,
    pub backend_id: Option<i64>,
    /// Index into [`AxTree::frames`].
    pub frame: u32,
    pub parent: u32,
    children: (u32, u32),
    /// Part of the structural tree.
    pub structural: bool,
    /// Nearest structural ancestor (NONE for a structural root).
    pub s_parent: u32,
    s_children: (u32, u32),
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
    fn of(id: &IdRef) -> CdpId {
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

/// Shares one allocation per distinct role or property name.
#[derive(Default)]
struct Interner<'a> {
    map: FxHashMap<&'a str, Arc<str>>,
}

impl<'a> Interner<'a> {
    fn get(&mut self, s: &'a str) -> Arc<str> {
        self.map.entry(s).or_insert_with(|| Arc::from(s)).clone()
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
    nodes: Vec<Node>,
    props: Vec<Prop>,
    children: Vec<u32>,
    s_children: Vec<u32>,
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
    by_element_id: FxHashMap<i64, u32>,
    /// DOM hints of clickable nodes, by arena index.
    hints: FxHashMap<u32, Box<str>>,
}

struct Pending<'a> {
    raw: Vec<RawNode<'a>>,
    owner: Option<i64>,
    frame_id: Option<String>,
    clickable: Clickables,
}

impl<'a> Pending<'a> {
    fn new(
        payload: &'a [u8],
        given: Option<&Clickables>,
        owner: Option<i64>,
        frame_id: Option<String>,
    ) -> Result<Self, AxError> {
        let parsed = parse_payload(payload)?;
        let mut clickable = given.cloned().unwrap_or_default();
        clickable.extend_entries(&parsed.clickable);
        Ok(Pending {
            raw: parsed.nodes,
            owner,
            frame_id,
            clickable,
        })
    }
}

impl AxTree {
    /// Parses the main frame's payload.
    ///
    /// # Errors
    /// A payload that does not parse, or nodes that do not form a tree (the error names the node).
    pub fn parse(payload: &[u8]) -> Result<AxTree, AxError> {
        Self::parse_page(payload, None, &[], ParseOptions::default())
    }

    /// Parses the main frame's payload and each child frame's, hanging every frame's
    /// root under the node whose `backendDOMNodeId` owns it.
    ///
    /// # Errors
    /// As [`AxTree::parse`], for any frame; a frame whose owner is not in the tree.
    pub fn parse_frames(
        main: &[u8],
        frames: &[FrameInput],
        max_depth: usize,
    ) -> Result<AxTree, AxError> {
        Self::parse_page(
            main,
            None,
            frames,
            ParseOptions {
                max_depth,
                skip_orphan_frames: false,
            },
        )
    }

    /// The whole page: the main frame's payload and its clickable elements, and every
    /// child frame's.
    ///
    /// # Errors
    /// As [`AxTree::parse_frames`].
    pub fn parse_page(
        main: &[u8],
        main_clickable: Option<&Clickables>,
        frames: &[FrameInput],
        opts: ParseOptions,
    ) -> Result<AxTree, AxError> {
        let mut pending = vec![Pending::new(main, main_clickable, None, None)?];
        for f in frames {
            pending.push(Pending::new(
                f.payload,
                f.clickable,
                Some(f.owner_backend_id),
                f.frame_id.clone(),
            )?);
        }
        build(pending, opts.max_depth, opts.skip_orphan_frames)
    }

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

fn build(pending: Vec<Pending>, max_depth: usize, skip_orphans: bool) -> Result<AxTree, AxError> {
    let total: usize = pending.iter().map(|p| p.raw.len()).sum();
    let mut nodes: Vec<Node> = Vec::with_capacity(total);
    let mut props: Vec<Prop> = Vec::new();
    // Child links per node, as arena indices, before frames are attached.
    let mut child_lists: Vec<(u32, u32)> = Vec::with_capacity(total);
    let mut child_flat: Vec<u32> = Vec::with_capacity(total);
    let mut frames: Vec<Option<String>> = Vec::with_capacity(pending.len());
    let mut tree_roots: Vec<Vec<u32>> = Vec::with_capacity(pending.len());
    let mut attach: Vec<(u32, u32)> = Vec::new(); // (owner, frame root)
    let mut interner = Interner::default();
    let mut hints: FxHashMap<u32, Box<str>> = FxHashMap::default();

    let mut orphan_frames: Vec<(i64, Option<String>)> = Vec::new();
    for p in &pending {
        let base = nodes.len() as u32;
        // The owner is looked up before the frame's nodes join the arena, so that an orphan
        // can be skipped without undoing anything.
        let owner = match p.owner {
            None => None,
            Some(backend) => match find_owner(&nodes, backend) {
                Some(owner) => Some(owner),
                None if skip_orphans => {
                    orphan_frames.push((backend, p.frame_id.clone()));
                    continue;
                }
                None => return Err(AxError::FrameOwner(backend)),
            },
        };
        let frame_index = frames.len();
        let mut by_cdp: FxHashMap<&IdRef, u32> =
            FxHashMap::with_capacity_and_hasher(p.raw.len(), rustc_hash::FxBuildHasher);
        let mut kept: Vec<&RawNode> = Vec::with_capacity(p.raw.len());
        for (i, raw) in p.raw.iter().enumerate() {
            let id = raw.node_id.as_ref().ok_or(AxError::MissingField {
                index: i,
                field: "nodeId",
            })?;
            match by_cdp.get(id) {
                // Chromium repeats some InlineTextBox entries verbatim: harmless.
                Some(&first) if kept[first as usize] == raw => {}
                Some(_) => return Err(AxError::DuplicateId(id.to_string())),
                None => {
                    by_cdp.insert(id, kept.len() as u32);
                    kept.push(raw);
                }
            }
        }
        let mut frame_id = p.frame_id.clone();
        for raw in &kept {
            if frame_id.is_none() {
                frame_id = raw.frame_id.as_ref().map(std::string::ToString::to_string);
            }
            let role: Arc<str> = match raw.role.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Scalar::Str(s)) if !s.is_empty() => interner.get(s),
                _ => interner.get("none"),
            };
            let name: Box<str> = match raw.name.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Scalar::Str(s)) => s.as_ref().into(),
                _ => "".into(),
            };
            let name_from_contents = raw.name.as_ref().is_some_and(|n| n.from_contents);
            let norm_name = (!is_normalized(&name)).then(|| normalize_ws(&name).into_boxed_str());
            let p0 = props.len() as u32;
            for rp in raw.properties.iter().flatten() {
                if let Some(v) = rp.value.as_ref().and_then(|v| v.value.as_ref()) {
                    if let Some(value) = Value::from_scalar(v) {
                        props.push(Prop {
                            name: interner.get(&rp.name),
                            value,
                        });
                    }
                }
            }
            let value = raw
                .value
                .as_ref()
                .and_then(|v| v.value.as_ref())
                .and_then(Value::from_scalar);
            let c0 = child_flat.len() as u32;
            for c in raw.child_ids.iter().flatten() {
                let ci = by_cdp.get(c).ok_or_else(|| AxError::UnknownChild {
                    parent: raw
                        .node_id
                        .as_ref()
                        .map(std::string::ToString::to_string)
                        .unwrap_or_default(),
                    child: c.to_string(),
                })?;
                child_flat.push(base + ci);
            }
            child_lists.push((c0, child_flat.len() as u32));
            let mut class = RoleClass::of(&role);
            if let Some(backend) = raw.backend_dom_node_id.filter(|&b| p.clickable.contains(b)) {
                if !class.has(RoleClass::SKIPPED) {
                    class.0 |= RoleClass::CLICKABLE;
                    if let Some(hint) = p.clickable.hint(backend) {
                        hints.insert(nodes.len() as u32, hint.into());
                    }
                }
            }
            nodes.push(Node {
                element_id: 0,
                cdp_id: raw.node_id.as_ref().map_or(CdpId::Int(0), CdpId::of),
                class,
                role,
                name,
                norm_name,
                name_from_contents,
                sep_before: Sep::None,
                unshown_text: false,
                value,
                props: (p0, props.len() as u32),
                ignored: raw.ignored,
                backend_id: raw.backend_dom_node_id,
                frame: frame_index as u32,
                parent: NONE,
                children: (0, 0),
                structural: false,
                s_parent: NONE,
                s_children: (0, 0),
            });
        }
        frames.push(frame_id);
        // Parents, and the cycle of a node listing itself.
        for i in base..nodes.len() as u32 {
            let (a, b) = child_lists[i as usize];
            for k in a..b {
                let c = child_flat[k as usize];
                if c == i {
                    return Err(AxError::Cycle(nodes[i as usize].cdp_id.to_string()));
                }
                let prev = nodes[c as usize].parent;
                if prev != NONE {
                    return Err(AxError::TwoParents {
                        child: nodes[c as usize].cdp_id.to_string(),
                        first: nodes[prev as usize].cdp_id.to_string(),
                        second: nodes[i as usize].cdp_id.to_string(),
                    });
                }
                nodes[c as usize].parent = i;
            }
        }
        let roots: Vec<u32> = (base..nodes.len() as u32)
            .filter(|&i| nodes[i as usize].parent == NONE)
            .collect();
        if roots.is_empty() && nodes.len() as u32 > base {
            return Err(AxError::Cycle(nodes[base as usize].cdp_id.to_string()));
        }
        if let Some(owner) = owner {
            for &r in &roots {
                attach.push((owner, r));
                nodes[r as usize].parent = owner;
            }
        }
        tree_roots.push(roots);
    }

    // Final child lists: own childIds, then the roots of frames the node owns.
    attach.sort_by_key(|&(owner, _)| owner);
    let mut children: Vec<u32> = Vec::with_capacity(child_flat.len() + attach.len());
    let mut ai = 0;
    for (i, node) in nodes.iter_mut().enumerate() {
        let start = children.len() as u32;
        let (a, b) = child_lists[i];
        children.extend_from_slice(&child_flat[a as usize..b as usize]);
        while ai < attach.len() && attach[ai].0 == i as u32 {
            children.push(attach[ai].1);
            ai += 1;
        }
        node.children = (start, children.len() as u32);
    }
    let roots = tree_roots.into_iter().next().unwrap_or_default();

    let mut tree = AxTree {
        nodes,
        props,
        children,
        s_children: Vec::new(),
        roots,
        s_roots: Vec::new(),
        s_order: Vec::new(),
        frames,
        orphan_frames,
        by_element_id: FxHashMap::default(),
        hints,
    };
    tree.link_structure(max_depth)?;
    tree.assign_element_ids();
    Ok(tree)
}

/// The owner of a frame: prefer an `Iframe` node, else any node with that backend id.
fn find_owner(nodes: &[Node], backend: i64) -> Option<u32> {
    let mut any = None;
    for (i, n) in nodes.iter().enumerate() {
        if n.backend_id == Some(backend) {
            if n.role.as_ref() == "Iframe" {
                return Some(i as u32);
            }
            any.get_or_insert(i as u32);
        }
    }
    any
}

impl AxTree {
    /// One pre-order walk: checks that every node is reachable (no cycles), enforces the
    /// depth limit, builds the structural tree and notes what separates each structural
    /// node from its previous structural sibling ([`Sep`]).
    fn link_structure(&mut self, max_depth: usize) -> Result<(), AxError> {
        let n = self.nodes.len();
        let mut order: Vec<u32> = Vec::with_capacity(n);
        // Per structural parent (slot n: the roots): the raw parent of its latest structural
        // child, and whether a line break came after that child.
        let mut last_raw_parent: Vec<u32> = vec![NONE; n + 1];
        let mut pending_break: Vec<bool> = vec![false; n + 1];
        // (node, depth, nearest structural ancestor, inside a skipped subtree)
        let mut stack: Vec<(u32, usize, u32, bool)> = self
            .roots
            .iter()
            .rev()
            .map(|&r| (r, 0, NONE, false))
            .collect();
        while let Some((i, depth, s_anc, skipped)) = stack.pop() {
            if depth > max_depth {
                return Err(AxError::TooDeep {
                    node: self.nodes[i as usize].cdp_id.to_string(),
                    limit: max_depth,
                });
            }
            order.push(i);
            let node = &mut self.nodes[i as usize];
            let slot = if s_anc == NONE { n } else { s_anc as usize };
            if !skipped && !node.ignored && node.class.has(RoleClass::LINE_BREAK) {
                pending_break[slot] = true;
            }
            let skipped = skipped || node.class.has(RoleClass::SKIPPED);
            node.structural = !skipped && !node.ignored && node.backend_id.is_some();
            node.s_parent = s_anc;
            let unshown_text = !skipped
                && !node.structural
                && node.class.has(RoleClass::TEXT)
                && !node.name.trim().is_empty();
            if unshown_text && s_anc != NONE {
                self.nodes[s_anc as usize].unshown_text = true;
            }
            let node = &mut self.nodes[i as usize];
            if node.structural {
                let previous = last_raw_parent[slot];
                node.sep_before = if pending_break[slot] {
                    Sep::Break
                } else if previous != NONE && previous != node.parent {
                    Sep::Space
                } else {
                    Sep::None
                };
                pending_break[slot] = false;
                last_raw_parent[slot] = node.parent;
            }
            let next_anc = if node.structural { i } else { s_anc };
            let (a, b) = node.children;
            for k in (a..b).rev() {
                stack.push((self.children[k as usize], depth + 1, next_anc, skipped));
            }
        }
        if order.len() != n {
            let mut seen = vec![false; n];
            for &i in &order {
                seen[i as usize] = true;
            }
            let stray = seen.iter().position(|s| !s).unwrap_or(0);
            return Err(AxError::Cycle(self.nodes[stray].cdp_id.to_string()));
        }
        // Structural child lists, filled in pre-order so siblings keep document order.
        let mut counts = vec![0u32; n];
        for &i in &order {
            let node = &self.nodes[i as usize];
            if node.structural {
                self.s_order.push(i);
                if node.s_parent == NONE {
                    self.s_roots.push(i);
                } else {
                    counts[node.s_parent as usize] += 1;
                }
            }
        }
        let mut start = 0u32;
        let mut fill = vec![0u32; n];
        for (i, node) in self.nodes.iter_mut().enumerate() {
            node.s_children = (start, start + counts[i]);
            fill[i] = start;
            start += counts[i];
        }
        self.s_children = vec![0; start as usize];
        for &i in &order {
            let node = &self.nodes[i as usize];
            if node.structural && node.s_parent != NONE {
                let p = node.s_parent as usize;
                self.s_children[fill[p] as usize] = i;
                fill[p] += 1;
            }
        }
        Ok(())
    }

    /// A node's `nodeId` is its element id when it is an integer not yet taken (frames may
    /// reuse the main frame's numbers); otherwise it gets the next integer above all of them.
    fn assign_element_ids(&mut self) {
        let parsed: Vec<Option<i64>> = self.nodes.iter().map(|n| n.cdp_id.as_int()).collect();
        let mut next = parsed
            .iter()
            .flatten()
            .max()
            .map_or(1, |m| m.saturating_add(1));
        let mut used: FxHashSet<i64> =
            FxHashSet::with_capacity_and_hasher(self.nodes.len(), rustc_hash::FxBuildHasher);
        self.by_element_id.reserve(self.nodes.len());
        for (i, node) in self.nodes.iter_mut().enumerate() {
            let id = match parsed[i] {
                Some(v) if used.insert(v) => v,
                _ => {
                    let v = next;
                    next += 1;
                    used.insert(v);
                    v
                }
            };
            node.element_id = id;
            self.by_element_id.insert(id, i as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
