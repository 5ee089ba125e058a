//! The HTML arena: nodes built by html5ever's tree builder, element ids in reverse
//! document order, serialisation. Every walk is iterative.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};

use html5ever::interface::TokenizerResult;
use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer};
use html5ever::tree_builder::TreeBuilder;
use html5ever::{Attribute, LocalName, ParseOpts, QualName};
use rustc_hash::FxHashMap;

use super::encoding::decode;

pub const NONE: u32 = u32::MAX;

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Document,
    Element {
        /// An interned name: tags the parser knows take no allocation of their own.
        tag: LocalName,
        attrs: Vec<(String, String)>,
    },
    Text(String),
    Comment(String),
    Doctype(String),
}

#[derive(Debug, Clone)]
pub struct DomNode {
    pub kind: Kind,
    pub parent: u32,
    pub children: Vec<u32>,
    /// The `node="N"` id of an element (None for other nodes).
    pub id: Option<u32>,
    /// An element outside the HTML namespace (SVG, MathML): never void, whatever its name.
    pub foreign: bool,
}

/// A parsed (or cleaned) document.
#[derive(Debug, Clone)]
pub struct Dom {
    pub nodes: Vec<DomNode>,
    pub root: u32,
    by_id: FxHashMap<u32, u32>,
    /// Start tags dropped by the nesting limit (0 for every real page we know).
    pub flattened_tags: usize,
}

/// Open elements the parser lets nest. html5ever's tree builder scans the stack of open
/// elements for many start tags, so unbounded nesting is quadratic (100,000 nested
/// `<div>`s took over 30 s). Like Blink's 512-level cap, deeper start tags are dropped;
/// their content stays, attached to the deepest allowed element.
pub const MAX_NESTING: usize = 1024;

/// End tags that may be omitted: not counted, since the tree builder closes them itself.
fn optional_end(tag: &str) -> bool {
    matches!(
        tag,
        "p" | "li"
            | "dt"
            | "dd"
            | "option"
            | "optgroup"
            | "tr"
            | "td"
            | "th"
            | "thead"
            | "tbody"
            | "tfoot"
            | "colgroup"
            | "caption"
            | "rb"
            | "rt"
            | "rtc"
            | "rp"
            | "head"
            | "body"
            | "html"
    )
}

/// Sits between the tokenizer and the tree builder and enforces [`MAX_NESTING`].
struct NestingLimit<S: TreeSink<Handle = u32>> {
    inner: TreeBuilder<u32, S>,
    depth: Cell<usize>,
    dropped: RefCell<Vec<LocalName>>,
    flattened: Cell<usize>,
}

impl<S: TreeSink<Handle = u32>> TokenSink for NestingLimit<S> {
    type Handle = u32;

    fn process_token(&self, token: Token, line: u64) -> TokenSinkResult<u32> {
        if let Token::TagToken(tag) = &token {
            let counted = !tag.self_closing && !is_void(&tag.name) && !optional_end(&tag.name);
            match tag.kind {
                TagKind::StartTag if counted => {
                    if self.depth.get() >= MAX_NESTING {
                        self.dropped.borrow_mut().push(tag.name.clone());
                        self.flattened.set(self.flattened.get() + 1);
                        return TokenSinkResult::Continue;
                    }
                    self.depth.set(self.depth.get() + 1);
                }
                TagKind::EndTag if counted => {
                    let mut dropped = self.dropped.borrow_mut();
                    if dropped.last() == Some(&tag.name) {
                        dropped.pop();
                        return TokenSinkResult::Continue;
                    }
                    self.depth.set(self.depth.get().saturating_sub(1));
                }
                _ => {}
            }
        }
        self.inner.process_token(token, line)
    }

    fn end(&self) {
        self.inner.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.inner
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// Elements that never have an end tag.
/// Elements whose text is serialized as it is, not escaped (the HTML serialization
/// algorithm; a parser reads their contents as text): what looks like a tag inside them is
/// text. The chunker skips their contents for the same reason.
pub const RAW_TEXT_ELEMENTS: [&str; 8] = [
    "script",
    "style",
    "xmp",
    "iframe",
    "noembed",
    "noframes",
    "plaintext",
    "noscript",
];

pub fn is_void(tag: &str) -> bool {
    matches!(
        tag,
        "area"
            | "base"
            | "br"
            | "col"
            | "embed"
            | "hr"
            | "img"
            | "input"
            | "link"
            | "meta"
            | "source"
            | "track"
            | "wbr"
            | "param"
            | "keygen"
    )
}

impl Dom {
    /// Parses bytes as a browser would: `encoding` (a WHATWG label) when given, else a BOM
    /// or a `<meta charset>`, else UTF-8; invalid bytes become U+FFFD. Never fails.
    /// With `keep_ids`, elements that carry a `node="N"` attribute keep N.
    pub fn parse(bytes: &[u8], encoding: Option<&str>, keep_ids: bool) -> Dom {
        let text = decode(bytes, encoding);
        let opts = ParseOpts::default();
        let limit = NestingLimit {
            inner: TreeBuilder::new(Sink::default(), opts.tree_builder),
            depth: Cell::new(0),
            dropped: RefCell::new(Vec::new()),
            flattened: Cell::new(0),
        };
        let tokenizer = Tokenizer::new(limit, opts.tokenizer);
        let input = BufferQueue::default();
        input.push_back(StrTendril::from(text.as_ref()));
        while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
        tokenizer.end();
        let flattened = tokenizer.sink.flattened.get();
        let mut dom = tokenizer.sink.inner.sink.finish();
        dom.flattened_tags = flattened;
        dom.assign_ids(keep_ids);
        dom
    }

    pub fn new_empty() -> Dom {
        Dom {
            nodes: vec![DomNode {
                kind: Kind::Document,
                parent: NONE,
                children: Vec::new(),
                id: None,
                foreign: false,
            }],
            root: 0,
            by_id: FxHashMap::default(),
            flattened_tags: 0,
        }
    }

    /// Node indices in document (pre-)order.
    pub fn preorder(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.nodes.len());
        let mut stack = vec![self.root];
        while let Some(n) = stack.pop() {
            order.push(n);
            stack.extend(self.nodes[n as usize].children.iter().rev());
        }
        order
    }

    /// Ids in reverse document order: the last element gets 0, a parent's id is greater
    /// than its descendants'. With `keep`, existing `node` attributes win; the others get
    /// ids above the largest kept one, still in reverse document order.
    pub(super) fn assign_ids(&mut self, keep: bool) {
        let order = self.preorder();
        let elements: Vec<u32> = order
            .into_iter()
            .filter(|&n| matches!(self.nodes[n as usize].kind, Kind::Element { .. }))
            .collect();
        let mut kept: Vec<Option<u32>> = vec![None; elements.len()];
        if keep {
            for (k, &n) in elements.iter().enumerate() {
                if let Kind::Element { attrs, .. } = &self.nodes[n as usize].kind {
                    kept[k] = attrs
                        .iter()
                        .find(|(a, _)| a == "node")
                        .and_then(|(_, v)| v.parse().ok());
                }
            }
        }
        // An id given twice is kept by its first element; the others get fresh ids, above
        // every kept one (so none can collide), decreasing in document order.
        let mut seen = rustc_hash::FxHashSet::default();
        for k in &mut kept {
            if k.is_some_and(|id| !seen.insert(id)) {
                *k = None;
            }
        }
        let mut base = kept.iter().flatten().max().map_or(0, |&m| u64::from(m) + 1);
        let mut fresh = kept.iter().filter(|k| k.is_none()).count() as u64;
        if base + fresh > u64::from(u32::MAX) {
            // Given ids so large that fresh ones would not fit: number everything afresh.
            kept.fill(None);
            base = 0;
            fresh = kept.len() as u64;
        }
        let mut next = base + fresh;
        self.by_id.clear();
        for (k, &n) in elements.iter().enumerate() {
            let id = kept[k].unwrap_or_else(|| {
                next -= 1;
                next as u32
            });
            self.nodes[n as usize].id = Some(id);
            self.by_id.insert(id, n);
        }
        for n in &mut self.nodes {
            if let Kind::Element { attrs, .. } = &mut n.kind {
                attrs.retain(|(a, _)| a != "node");
            }
        }
    }

    /// Removes the attribute `name` from every element and returns, in document order, each
    /// element's id with the value it had. For marks the caller wrote into the HTML itself
    /// (a live page's backend node ids), which must not reach the model.
    pub fn take_attribute(&mut self, name: &str) -> Vec<(u32, String)> {
        let mut taken = Vec::new();
        for n in self.preorder() {
            let node = &mut self.nodes[n as usize];
            if let (Kind::Element { attrs, .. }, Some(id)) = (&mut node.kind, node.id) {
                if let Some(k) = attrs.iter().position(|(a, _)| a == name) {
                    taken.push((id, attrs.remove(k).1));
                }
            }
        }
        taken
    }

    /// Rebuilds the id index after a transform that carried ids over.
    pub fn index_ids(&mut self) {
        let order = self.preorder();
        self.by_id = order
            .into_iter()
            .filter_map(|i| self.nodes[i as usize].id.map(|id| (id, i)))
            .collect();
    }

    pub fn element(&self, id: u32) -> Option<u32> {
        self.by_id.get(&id).copied()
    }

    pub fn element_count(&self) -> usize {
        self.by_id.len()
    }

    pub fn tag(&self, n: u32) -> Option<&str> {
        match &self.nodes[n as usize].kind {
            Kind::Element { tag, .. } => Some(tag),
            _ => None,
        }
    }

    /// Text content of a subtree, whitespace runs collapsed.
    pub fn text_content(&self, n: u32) -> String {
        let mut out = String::new();
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            match &self.nodes[x as usize].kind {
                Kind::Text(t) => {
                    out.push_str(t);
                    out.push(' ');
                }
                Kind::Element { tag, .. }
                    if matches!(tag.as_str(), "script" | "style" | "template") => {}
                _ => stack.extend(self.nodes[x as usize].children.iter().rev()),
            }
        }
        crate::text::normalize_ws(&out)
    }

    /// The start tag of element `n` exactly as it appears in [`Dom::serialize`]'s output
    /// (the `Target:` line of `ScribeAgent`'s step format).
    pub fn start_tag(&self, n: u32) -> Option<String> {
        match &self.nodes[n as usize].kind {
            Kind::Element { tag, attrs } => {
                let mut out = String::new();
                write_start_tag(&mut out, tag, attrs, self.nodes[n as usize].id);
                Some(out)
            }
            _ => None,
        }
    }

    /// HTML text, attributes in source order with `node` last, no pretty-printing.
    /// Also returns, for each element start tag, its byte offset and id.
    pub fn serialize(&self) -> (String, Vec<(usize, u32)>) {
        let mut out = String::with_capacity(self.nodes.len() * 16);
        let mut tags = Vec::new();
        // (node, closing?)
        let mut stack: Vec<(u32, bool)> = vec![(self.root, false)];
        while let Some((n, closing)) = stack.pop() {
            let node = &self.nodes[n as usize];
            match &node.kind {
                Kind::Document => stack.extend(node.children.iter().rev().map(|&c| (c, false))),
                Kind::Doctype(name) => {
                    out.push_str("<!DOCTYPE ");
                    out.push_str(if name.is_empty() { "html" } else { name });
                    out.push('>');
                }
                Kind::Comment(c) => {
                    out.push_str("<!--");
                    out.push_str(c);
                    out.push_str("-->");
                }
                Kind::Text(t) => {
                    // Raw text is written as is, except in foreign content (an SVG
                    // `<script>` is parsed like any element, entities and all).
                    let parent = (node.parent != NONE).then(|| &self.nodes[node.parent as usize]);
                    let raw_in = parent
                        .filter(|p| !p.foreign)
                        .and_then(|_| self.tag(node.parent))
                        .filter(|t| RAW_TEXT_ELEMENTS.contains(t));
                    if raw_in == Some("script") && script_text_swallows_end_tag(t) {
                        // `<!--` then `<script` with no way back: a reader would take our
                        // `</script>` as more script. `<\!--` reads the same inside a JS
                        // string or regex and keeps the reader out of that state.
                        out.push_str(&t.replace("<!--", "<\\!--"));
                    } else if raw_in.is_some() {
                        out.push_str(t);
                    } else {
                        escape_text(&mut out, t);
                    }
                }
                Kind::Element { tag, attrs } => {
                    if closing {
                        out.push_str("</");
                        out.push_str(tag);
                        out.push('>');
                        continue;
                    }
                    if let Some(id) = node.id {
                        tags.push((out.len(), id));
                    }
                    write_start_tag(&mut out, tag, attrs, node.id);
                    // A parser drops one line break right after these start tags: write one
                    // more so that text beginning with a line break keeps it when re-read.
                    if !node.foreign
                        && matches!(tag.as_str(), "pre" | "textarea" | "listing")
                        && node.children.first().is_some_and(|&c| {
                            matches!(&self.nodes[c as usize].kind, Kind::Text(t) if t.starts_with('\n'))
                        })
                    {
                        out.push('\n');
                    }
                    if node.foreign || !is_void(tag) {
                        stack.push((n, true));
                        stack.extend(node.children.iter().rev().map(|&c| (c, false)));
                    }
                }
            }
        }
        (out, tags)
    }
}

/// Whether an HTML tokenizer reading `text` as the contents of a `<script>` ends in the
/// "script data double escaped" state, where the next `</script>` does not close the element
/// (HTML's script data escape states; `text` holds no `</script` that ends the element, as
/// it came from a parse).
fn script_text_swallows_end_tag(text: &str) -> bool {
    #[derive(PartialEq)]
    enum State {
        Data,
        Escaped,
        DoubleEscaped,
    }
    let b = text.as_bytes();
    let script_at = |i: usize| -> bool {
        b.len() >= i + 7
            && b[i..i + 6].eq_ignore_ascii_case(b"script")
            && matches!(
                b[i + 6],
                b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>'
            )
    };
    let mut state = State::Data;
    let mut i = 0;
    while i < b.len() {
        match state {
            State::Data if b[i..].starts_with(b"<!--") => {
                state = State::Escaped;
                // The two dashes of `<!--` may also begin its `-->` (`<!-->`).
                i += 2;
            }
            State::Escaped | State::DoubleEscaped if b[i..].starts_with(b"-->") => {
                state = State::Data;
                i += 3;
            }
            State::Escaped if b[i] == b'<' && script_at(i + 1) => {
                state = State::DoubleEscaped;
                i += 7;
            }
            State::DoubleEscaped if b[i..].starts_with(b"</") && script_at(i + 2) => {
                state = State::Escaped;
                i += 8;
            }
            _ => i += 1,
        }
    }
    state == State::DoubleEscaped
}

/// `<tag a="v" node="N">`, as [`Dom::serialize`] writes it.
fn write_start_tag(out: &mut String, tag: &str, attrs: &[(String, String)], id: Option<u32>) {
    out.push('<');
    out.push_str(tag);
    for (a, v) in attrs {
        out.push(' ');
        out.push_str(a);
        out.push_str("=\"");
        escape_attr(out, v);
        out.push('"');
    }
    if let Some(id) = id {
        out.push_str(" node=\"");
        out.push_str(&id.to_string());
        out.push('"');
    }
    out.push('>');
}

fn escape_text(out: &mut String, t: &str) {
    escape(out, t, false);
}

/// `<` and `>` are escaped in values too, so that `<` + letter in our output is always a tag.
fn escape_attr(out: &mut String, v: &str) {
    escape(out, v, true);
}

fn escape(out: &mut String, s: &str, quote: bool) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if quote => out.push_str("&quot;"),
            '\u{a0}' => out.push_str("&nbsp;"),
            c => out.push(c),
        }
    }
}

/// html5ever's tree builder writes through `&self`, hence the `RefCell`.
/// The nodes are built as they will be kept, their qualified names beside them (the tree
/// builder asks for those; only the namespace outlives the parse), so that finishing moves
/// nothing: the arena is never held twice.
#[derive(Default)]
struct Sink {
    nodes: RefCell<Vec<DomNode>>,
    names: RefCell<Vec<QualName>>,
}

fn blank_name() -> QualName {
    QualName::new(None, html5ever::ns!(), html5ever::local_name!(""))
}

fn attr_name(a: &Attribute) -> String {
    match &a.name.prefix {
        Some(p) => format!("{}:{}", p, a.name.local),
        None => a.name.local.to_string(),
    }
}

impl Sink {
    fn push(&self, kind: Kind, name: QualName) -> u32 {
        self.ensure_document();
        let mut nodes = self.nodes.borrow_mut();
        nodes.push(DomNode {
            foreign: matches!(kind, Kind::Element { .. }) && name.ns != html5ever::ns!(html),
            kind,
            parent: NONE,
            children: Vec::new(),
            id: None,
        });
        self.names.borrow_mut().push(name);
        (nodes.len() - 1) as u32
    }

    /// Node 0 is always the document.
    fn ensure_document(&self) {
        let mut nodes = self.nodes.borrow_mut();
        if nodes.is_empty() {
            nodes.push(Dom::new_empty().nodes.remove(0));
            self.names.borrow_mut().push(blank_name());
        }
    }

    fn detach(&self, child: u32) {
        let mut nodes = self.nodes.borrow_mut();
        let p = nodes[child as usize].parent;
        if p != NONE {
            nodes[p as usize].children.retain(|&c| c != child);
            nodes[child as usize].parent = NONE;
        }
    }

    /// Inserts at `pos` in `parent`'s children, merging text into a text neighbour.
    fn insert(&self, parent: u32, pos: usize, child: NodeOrText<u32>) {
        match child {
            NodeOrText::AppendText(t) => {
                let mut nodes = self.nodes.borrow_mut();
                if pos > 0 {
                    let prev = nodes[parent as usize].children[pos - 1];
                    if let Kind::Text(s) = &mut nodes[prev as usize].kind {
                        s.push_str(&t);
                        return;
                    }
                }
                drop(nodes);
                let n = self.push(Kind::Text(t.to_string()), blank_name());
                let mut nodes = self.nodes.borrow_mut();
                nodes[n as usize].parent = parent;
                nodes[parent as usize].children.insert(pos, n);
            }
            NodeOrText::AppendNode(n) => {
                self.detach(n);
                let mut nodes = self.nodes.borrow_mut();
                nodes[n as usize].parent = parent;
                nodes[parent as usize].children.insert(pos, n);
            }
        }
    }
}

impl TreeSink for Sink {
    type Handle = u32;
    type Output = Dom;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> Dom {
        self.ensure_document();
        drop(self.names);
        let mut nodes = self.nodes.into_inner();
        // Growth left up to half of each vector unused; a page's arena is its largest object.
        nodes.shrink_to_fit();
        for n in &mut nodes {
            n.children.shrink_to_fit();
            if let Kind::Element { attrs, .. } = &mut n.kind {
                attrs.shrink_to_fit();
            }
        }
        Dom {
            nodes,
            root: 0,
            by_id: FxHashMap::default(),
            flattened_tags: 0,
        }
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> u32 {
        self.ensure_document();
        0
    }

    fn elem_name<'a>(&'a self, target: &'a u32) -> Ref<'a, QualName> {
        Ref::map(self.names.borrow(), |n| &n[*target as usize])
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, _flags: ElementFlags) -> u32 {
        let tag = name.local.clone();
        let attrs = attrs
            .iter()
            .map(|a| (attr_name(a), a.value.to_string()))
            .collect();
        self.push(Kind::Element { tag, attrs }, name)
    }

    fn create_comment(&self, text: StrTendril) -> u32 {
        self.push(Kind::Comment(text.to_string()), blank_name())
    }

    fn create_pi(&self, _target: StrTendril, data: StrTendril) -> u32 {
        self.push(Kind::Comment(data.to_string()), blank_name())
    }

    fn append(&self, parent: &u32, child: NodeOrText<u32>) {
        let pos = self.nodes.borrow()[*parent as usize].children.len();
        self.insert(*parent, pos, child);
    }

    fn append_based_on_parent_node(
        &self,
        element: &u32,
        prev_element: &u32,
        child: NodeOrText<u32>,
    ) {
        if self.nodes.borrow()[*element as usize].parent == NONE {
            self.append(prev_element, child);
        } else {
            self.append_before_sibling(element, child);
        }
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        _public_id: StrTendril,
        _system_id: StrTendril,
    ) {
        let n = self.push(Kind::Doctype(name.to_string()), blank_name());
        self.append(&0, NodeOrText::AppendNode(n));
    }

    fn get_template_contents(&self, target: &u32) -> u32 {
        // Template contents hang under the template itself, so they serialise in place.
        *target
    }

    fn same_node(&self, x: &u32, y: &u32) -> bool {
        x == y
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &u32, new_node: NodeOrText<u32>) {
        let parent = self.nodes.borrow()[*sibling as usize].parent;
        if parent == NONE {
            return;
        }
        let pos = self.nodes.borrow()[parent as usize]
            .children
            .iter()
            .position(|c| c == sibling)
            .unwrap_or(0);
        if let NodeOrText::AppendNode(n) = &new_node {
            if self.nodes.borrow()[*n as usize].parent == parent {
                // Moving within the same parent: detach first, then recompute.
                self.detach(*n);
                let pos = self.nodes.borrow()[parent as usize]
                    .children
                    .iter()
                    .position(|c| c == sibling)
                    .unwrap_or(0);
                self.insert(parent, pos, new_node);
                return;
            }
        }
        self.insert(parent, pos, new_node);
    }

    fn add_attrs_if_missing(&self, target: &u32, attrs: Vec<Attribute>) {
        let mut nodes = self.nodes.borrow_mut();
        if let Kind::Element {
            attrs: existing, ..
        } = &mut nodes[*target as usize].kind
        {
            for a in &attrs {
                let name = attr_name(a);
                if !existing.iter().any(|(k, _)| *k == name) {
                    existing.push((name, a.value.to_string()));
                }
            }
        }
    }

    fn remove_from_parent(&self, target: &u32) {
        self.detach(*target);
    }

    fn reparent_children(&self, node: &u32, new_parent: &u32) {
        let kids = std::mem::take(&mut self.nodes.borrow_mut()[*node as usize].children);
        let mut nodes = self.nodes.borrow_mut();
        for &k in &kids {
            nodes[k as usize].parent = *new_parent;
        }
        nodes[*new_parent as usize].children.extend(kids);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn foreign_elements_named_like_void_ones_keep_their_children() {
        let dom = Dom::parse(
            b"<svg><input><a>link</a></input></svg><p><input>x</p>",
            None,
            false,
        );
        let html = dom.serialize().0;
        assert!(html.contains(">link</a></input></svg>"), "{html}");
        assert!(
            !html.contains("</input></p>"),
            "an HTML input stays void: {html}"
        );
        let again = Dom::parse(html.as_bytes(), Some("utf-8"), true);
        assert_eq!(again.serialize().0, html);
    }

    #[test]
    fn kept_ids_never_collide_or_wrap() {
        let ids = |html: &str| {
            let dom = Dom::parse(html.as_bytes(), None, true);
            let mut ids: Vec<u32> = dom.nodes.iter().filter_map(|n| n.id).collect();
            let all = ids.len();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), all, "duplicate ids in {html}");
            (dom, ids)
        };
        let (dom, _) = ids(r#"<p node="5">a</p><p node="5">b</p><p node="5">c</p>"#);
        assert!(dom.element(5).is_some());
        ids(r#"<p node="4294967295">a</p><p>b</p><p node="4294967294">c</p>"#);
        ids(r#"<p node="0">a</p><p node="0">b</p><p node="1">c</p>"#);
    }

    #[test]
    fn a_leading_line_break_in_pre_survives_a_round_trip() {
        let dom = Dom::parse(
            b"<pre>\n\nx</pre><textarea>\n\ny</textarea><pre>z</pre>",
            None,
            false,
        );
        let html = dom.serialize().0;
        let again = Dom::parse(html.as_bytes(), Some("utf-8"), true);
        assert_eq!(again.serialize().0, html);
        assert!(
            html.contains(">\n\nx</pre>") && html.contains(">z</pre>"),
            "{html}"
        );
    }

    #[test]
    fn a_script_left_double_escaped_still_ends_where_it_did() {
        // Found by the `dom` fuzz target: the script runs to the end of the file.
        let dom = Dom::parse(b"<p>a</p><script><!--<script>x", None, false);
        let ids: Vec<u32> = dom.nodes.iter().filter_map(|n| n.id).collect();
        let html = dom.serialize().0;
        assert!(html.contains("<\\!--<script>x</script>"), "{html}");
        let again = Dom::parse(
            format!("{html}<b>after</b>").as_bytes(),
            Some("utf-8"),
            true,
        );
        for id in ids {
            assert!(again.element(id).is_some(), "{id} lost in {html}");
        }
        assert!(again.serialize().0.contains("<b node="), "{html}");
        // Scripts that close their comment, or never open one, are written as they are.
        for text in [
            "<!--<script>x</script>y-->z",
            "<!-->  <script>x",
            "if (a<!--b) {}",
            "<!--<script",
        ] {
            assert!(!script_text_swallows_end_tag(text), "{text}");
        }
        assert!(script_text_swallows_end_tag("<!--<SCRIPT/x"));
        // An SVG script's text is markup text: escaped like any other.
        let svg = Dom::parse(b"<svg><script>&lt;b&gt;</script></svg>", None, false);
        let svg_html = svg.serialize().0;
        assert!(svg_html.contains("&lt;b&gt;</script>"), "{svg_html}");
    }

    #[test]
    fn taken_attributes_leave_the_tree_and_keep_their_element() {
        let mut dom = Dom::parse(
            b"<p data-m=\"a\">x<b data-m=\"b\" class=\"k\">y</b></p><i>z</i>",
            None,
            false,
        );
        let taken = dom.take_attribute("data-m");
        let p = dom
            .nodes
            .iter()
            .find(|n| matches!(&n.kind, Kind::Element { tag, .. } if &**tag == "p"));
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[0], (p.and_then(|n| n.id).unwrap(), "a".to_owned()));
        assert_eq!(taken[1].1, "b");
        let html = dom.serialize().0;
        assert!(
            !html.contains("data-m") && html.contains("class=\"k\""),
            "{html}"
        );
    }
}
