//! Building the arena from CDP payloads: every frame's nodes interned into one arena, frames
//! hung under their owners, the structural tree linked and element ids assigned. Iterative
//! throughout; a deep or cyclic payload is an error, never a stack overflow.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::parse::parse_payload;
use super::records::{CaptureNotes, IdRef, RawNode, Scalar};
use super::roles::RoleClass;
use super::tree::{
    AxTree, CdpId, Clickables, FrameInput, Node, ParseOptions, Prop, Sep, Value, NONE,
};
use crate::error::AxError;
use crate::json::without_lone_surrogates;
use crate::text::{is_normalized, normalize_ws, without_own_brackets};

/// A property name that can print in brackets: 1 to 64 ASCII letters, digits, `-` or `_`.
fn is_property_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Shares one allocation per distinct role or property name.
#[derive(Default)]
struct Interner<'a> {
    map: FxHashMap<&'a str, Arc<str>>,
}

impl<'a> Interner<'a> {
    fn get(&mut self, s: &'a str) -> Arc<str> {
        self.map
            .entry(s)
            .or_insert_with(|| Arc::from(without_own_brackets(s).as_ref()))
            .clone()
    }
}

struct Pending<'a> {
    raw: Vec<RawNode<'a>>,
    notes: CaptureNotes,
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
            notes: parsed.notes,
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
        // A page's lone surrogate (`'😀'.slice(1)`) reaches the JSON as an escape no Rust text
        // holds: read as U+FFFD, never a reason to lose the page.
        let main = without_lone_surrogates(main);
        let payloads: Vec<_> = frames
            .iter()
            .map(|f| without_lone_surrogates(f.payload))
            .collect();
        let mut pending = vec![Pending::new(&main, main_clickable, None, None)?];
        for (f, payload) in frames.iter().zip(&payloads) {
            pending.push(Pending::new(
                payload,
                f.clickable,
                Some(f.owner_backend_id),
                f.frame_id.clone(),
            )?);
        }
        build(pending, opts.max_depth, opts.skip_orphan_frames)
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
    let mut notes = CaptureNotes::default();
    for p in &pending {
        notes.unread_frames.extend(&p.notes.unread_frames);
        notes.closed.extend(&p.notes.closed);
        notes.truncated |= p.notes.truncated;
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
                Some(Scalar::Str(s)) => without_own_brackets(s).into(),
                _ => "".into(),
            };
            let name_from_contents = raw.name.as_ref().is_some_and(|n| n.from_contents);
            let norm_name = (!is_normalized(&name)).then(|| normalize_ws(&name).into_boxed_str());
            let p0 = props.len() as u32;
            for rp in raw.properties.iter().flatten() {
                // A property prints as `[name: value]` right after pagelens' own bracket: a
                // name that is not a word (`focusabl]`) would let the payload close it and
                // pass for an id. Chromium's names are words; anything else is skipped.
                if !is_property_name(&rp.name) {
                    continue;
                }
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
                        hints.insert(nodes.len() as u32, without_own_brackets(hint).into());
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
        // Chromium's snapshot calls every node inside an editor clickable (it is editable):
        // the editor's host is the target, its paragraphs and words are its value.
        for i in base..nodes.len() as u32 {
            let parent = nodes[i as usize].parent;
            if parent != NONE && nodes[i as usize].class.has(RoleClass::CLICKABLE) {
                let (a, b) = nodes[parent as usize].props;
                if props[a as usize..b as usize]
                    .iter()
                    .any(|p| &*p.name == "editable")
                {
                    nodes[i as usize].class.0 &= !RoleClass::CLICKABLE;
                    hints.remove(&i);
                }
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
        capture_notes: notes,
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
