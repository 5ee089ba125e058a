//! Parsing HTML into the arena with html5ever's tree builder, as a browser would, under a
//! nesting limit.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};

use html5ever::interface::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::State;
use html5ever::tokenizer::{Tag, TagKind, Token, TokenSink, TokenSinkResult};
use html5ever::tree_builder::TreeBuilder;
use html5ever::{Attribute, LocalName, ParseOpts, QualName};
use rustc_hash::FxHashMap;

use super::encoding::decode;
use super::tokenize::html5ever_tokenize;
use super::tree::{is_void, Dom, DomNode, Kind, NONE};

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

/// Formatting elements (`<b>`, `<font>`, `<a>`, ...) waiting to be reopened at once. The
/// tree builder reopens every such element that is no longer open before the next text (the
/// spec's "active formatting elements"; three alike at most, but any number that differ), so
/// a few bytes of `<p>x` could rebuild thousands of elements: 40 KB of `<b id=N>`s then
/// `<p>x</p>`s built four million. Past this many, a formatting start tag is dropped and its
/// content kept, as past [`MAX_NESTING`]. (No page of the corpus comes near it.)
pub const MAX_FORMATTING: usize = 24;

fn is_formatting(tag: &str) -> bool {
    matches!(
        tag,
        "a" | "b"
            | "big"
            | "code"
            | "em"
            | "font"
            | "i"
            | "nobr"
            | "s"
            | "small"
            | "strike"
            | "strong"
            | "tt"
            | "u"
    )
}

/// Tags whose start or end ends the waiting formatting elements' scope: the spec's markers
/// (`<td>`, `<object>`, ...) and the table parts whose arrival closes a cell. The model
/// forgets them all at any of these, more often than the tree builder does: it errs towards
/// never dropping a tag a page needs.
fn ends_formatting_scope(tag: &str) -> bool {
    matches!(
        tag,
        "applet"
            | "object"
            | "marquee"
            | "template"
            | "td"
            | "th"
            | "caption"
            | "tr"
            | "tbody"
            | "thead"
            | "tfoot"
            | "table"
    )
}

/// A formatting element as the spec compares them: its name, and its attributes in any order
/// (a hash of them: two that differ yet hash alike count as one, which errs towards keeping).
type Formatting = (LocalName, u64);

fn attributes_hash(attrs: &[Attribute]) -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    // Summed per attribute, so that their order does not count.
    attrs.iter().fold(0u64, |sum, a| {
        let mut h = rustc_hash::FxBuildHasher.build_hasher();
        a.name.local.hash(&mut h);
        a.value.hash(&mut h);
        sum.wrapping_add(h.finish())
    })
}

/// Sits between the tokenizer and the tree builder and enforces [`MAX_NESTING`] and
/// [`MAX_FORMATTING`].
struct NestingLimit {
    inner: TreeBuilder<u32, Sink>,
    depth: Cell<usize>,
    dropped: RefCell<Vec<LocalName>>,
    flattened: Cell<usize>,
    /// A model of the waiting formatting elements. It forgets sooner than the tree builder
    /// (at every marker or table part), erring towards admitting a tag.
    formatting: RefCell<Vec<Formatting>>,
}

impl NestingLimit {
    /// Whether a formatting start tag goes on to the tree builder, as the model sees it.
    fn admit_formatting(&self, tag: &Tag) -> bool {
        let mut waiting = self.formatting.borrow_mut();
        if &*tag.name == "a" || &*tag.name == "nobr" {
            // A new `<a>` (or `<nobr>`) closes the one before it.
            waiting.retain(|(name, _)| *name != tag.name);
        }
        let entry = (tag.name.clone(), attributes_hash(&tag.attrs));
        // Three alike at most (the spec's "Noah's Ark" clause): the earliest goes, and the
        // list does not grow.
        if waiting.iter().filter(|e| **e == entry).count() >= 3 {
            let earliest = waiting.iter().position(|e| *e == entry);
            waiting.remove(earliest.unwrap_or(0));
        } else if waiting.len() >= MAX_FORMATTING {
            return false;
        }
        waiting.push(entry);
        true
    }
}

impl TokenSink for NestingLimit {
    type Handle = u32;

    fn process_token(&self, token: Token, line: u64) -> TokenSinkResult<u32> {
        if let Token::TagToken(tag) = &token {
            if ends_formatting_scope(&tag.name) {
                self.formatting.borrow_mut().clear();
            }
            let formatting = is_formatting(&tag.name);
            let counted = !tag.self_closing && !is_void(&tag.name) && !optional_end(&tag.name);
            match tag.kind {
                TagKind::StartTag if counted || formatting => {
                    // Deep as the tags count it, or as the tree stands: an end tag that
                    // closes nothing (`<b>x</a>`) leaves the count behind the tree.
                    let deep = counted
                        && (self.depth.get() >= MAX_NESTING
                            || self.inner.sink.open_depth.get() >= MAX_NESTING);
                    if deep || (formatting && !self.admit_formatting(tag)) {
                        self.dropped.borrow_mut().push(tag.name.clone());
                        self.flattened.set(self.flattened.get() + 1);
                        return TokenSinkResult::Continue;
                    }
                    if counted {
                        self.depth.set(self.depth.get() + 1);
                    }
                }
                TagKind::EndTag if counted => {
                    let mut dropped = self.dropped.borrow_mut();
                    if dropped.last() == Some(&tag.name) {
                        dropped.pop();
                        return TokenSinkResult::Continue;
                    }
                    if formatting {
                        let mut waiting = self.formatting.borrow_mut();
                        if let Some(i) = waiting.iter().rposition(|(n, _)| *n == tag.name) {
                            waiting.remove(i);
                        }
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

impl Dom {
    /// Parses bytes as a browser would: `encoding` (a WHATWG label) when given, else a BOM
    /// or a `<meta charset>`, else UTF-8; invalid bytes become U+FFFD. Never fails.
    /// With `keep_ids`, elements that carry a `node="N"` attribute keep N.
    pub fn parse(bytes: &[u8], encoding: Option<&str>, keep_ids: bool) -> Dom {
        build(bytes, encoding, keep_ids, |text, sink| {
            super::tokenize::tokenize(text, sink);
        })
    }

    /// [`Dom::parse`] with html5ever's own tokenizer in front of the tree builder: what the
    /// tests and the `dom` fuzz target hold `parse` equal to. One difference is
    /// html5ever's, not kept: told to drop a byte order mark, its tokenizer drops a U+FEFF
    /// wherever it resumes (after every `</script>` and `<meta charset>`), not only at the
    /// start; a browser keeps those, and so does `parse`. Here it drops the first one only.
    #[doc(hidden)]
    pub fn parse_reference(bytes: &[u8], encoding: Option<&str>, keep_ids: bool) -> Dom {
        build(bytes, encoding, keep_ids, |text, sink| {
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            html5ever_tokenize(sink, text, State::Data, None, true);
        })
    }
}

/// Decodes, tokenizes with `tokenize` into the tree builder (behind the nesting limit), and
/// finishes the arena.
fn build(
    bytes: &[u8],
    encoding: Option<&str>,
    keep_ids: bool,
    tokenize: impl FnOnce(&str, &NestingLimit),
) -> Dom {
    let text = decode(bytes, encoding);
    let opts = ParseOpts::default();
    let limit = NestingLimit {
        inner: TreeBuilder::new(Sink::default(), opts.tree_builder),
        depth: Cell::new(0),
        dropped: RefCell::new(Vec::new()),
        flattened: Cell::new(0),
        formatting: RefCell::new(Vec::new()),
    };
    tokenize(text.as_ref(), &limit);
    let flattened = limit.flattened.get();
    let mut dom = limit.inner.sink.finish();
    dom.flattened_tags = flattened;
    dom.assign_ids(keep_ids);
    dom
}

/// html5ever's tree builder writes through `&self`, hence the `RefCell`.
/// The nodes are built as they will be kept, their qualified names beside them (the tree
/// builder asks for those; only the namespace outlives the parse), so that finishing moves
/// nothing: the arena is never held twice.
#[derive(Default)]
struct Sink {
    nodes: RefCell<Vec<DomNode>>,
    names: RefCell<Vec<QualName>>,
    /// Each node's depth in the tree when it was last placed (a moved subtree's nodes keep
    /// theirs: the figure only has to be right near [`MAX_NESTING`], which pages never reach).
    depths: RefCell<Vec<u32>>,
    /// The depth of the tree builder's current node, as its insertions and pops show it: the
    /// depth of the last element inserted, of the parent of the last text, or of the parent
    /// of the last element popped.
    open_depth: Cell<usize>,
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
        self.depths.borrow_mut().push(0);
        (nodes.len() - 1) as u32
    }

    /// Records that `parent` was given a child: `element` (its arena index), which becomes
    /// the current node unless it is void (popped at once), or text or a comment.
    fn placed(&self, parent: u32, element: Option<u32>) {
        let mut depths = self.depths.borrow_mut();
        let depth = depths[parent as usize] + u32::from(element.is_some());
        if let Some(element) = element {
            depths[element as usize] = depth;
        }
        self.open_depth.set(depth as usize);
    }

    /// Node 0 is always the document.
    fn ensure_document(&self) {
        let mut nodes = self.nodes.borrow_mut();
        if nodes.is_empty() {
            nodes.push(Dom::new_empty().nodes.remove(0));
            self.names.borrow_mut().push(blank_name());
            self.depths.borrow_mut().push(0);
        }
    }

    fn detach(&self, child: u32) {
        let mut nodes = self.nodes.borrow_mut();
        let p = nodes[child as usize].parent;
        if p != NONE {
            // Searched from the end: the tree builder moves and inserts near a parent's last
            // children (foster parenting before a table, the adoption agency), so a scan
            // from the front made a page of such content quadratic.
            let siblings = &mut nodes[p as usize].children;
            if let Some(i) = siblings.iter().rposition(|&c| c == child) {
                siblings.remove(i);
            }
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
                        drop(nodes);
                        self.placed(parent, None);
                        return;
                    }
                }
                drop(nodes);
                let n = self.push(Kind::Text(t.to_string()), blank_name());
                let mut nodes = self.nodes.borrow_mut();
                nodes[n as usize].parent = parent;
                nodes[parent as usize].children.insert(pos, n);
                drop(nodes);
                self.placed(parent, None);
            }
            NodeOrText::AppendNode(n) => {
                self.detach(n);
                let mut nodes = self.nodes.borrow_mut();
                nodes[n as usize].parent = parent;
                nodes[parent as usize].children.insert(pos, n);
                let element = matches!(nodes[n as usize].kind, Kind::Element { .. });
                drop(nodes);
                self.placed(parent, element.then_some(n));
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
        drop(self.depths);
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
            .rposition(|c| c == sibling)
            .unwrap_or(0);
        if let NodeOrText::AppendNode(n) = &new_node {
            if self.nodes.borrow()[*n as usize].parent == parent {
                // Moving within the same parent: detach first, then recompute.
                self.detach(*n);
                let pos = self.nodes.borrow()[parent as usize]
                    .children
                    .iter()
                    .rposition(|c| c == sibling)
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
            // A set of the names held: a scan of them for each new one would be quadratic
            // (a page may repeat `<body>` with thousands of attributes).
            let mut held: rustc_hash::FxHashSet<String> =
                existing.iter().map(|(k, _)| k.clone()).collect();
            for a in &attrs {
                let name = attr_name(a);
                if held.insert(name.clone()) {
                    existing.push((name, a.value.to_string()));
                }
            }
        }
    }

    fn pop(&self, node: &u32) {
        let depth = self.depths.borrow()[*node as usize];
        self.open_depth.set(depth.saturating_sub(1) as usize);
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
