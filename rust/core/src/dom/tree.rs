//! The HTML arena: the document's data model (nodes, ids in reverse document order) and
//! queries over it. Building it is in `parse` (html5ever) and `build` (a live DOM); writing it
//! out is in `serialize`. Every walk is iterative.

use html5ever::LocalName;
use rustc_hash::FxHashMap;

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

#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct Dom {
    pub nodes: Vec<DomNode>,
    pub root: u32,
    pub(super) by_id: FxHashMap<u32, u32>,
    /// Start tags dropped by the parse's limits ([`super::MAX_NESTING`], [`super::MAX_FORMATTING`]);
    /// 0 for every real page we know.
    pub flattened_tags: usize,
}

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
    fn raw_text_is_escaped_so_it_forms_no_tag() {
        // A page's fallback text inside an <iframe> (raw text to a parser) must not read as
        // one of our tags with a node id: `Cancel` would pass for element 0.
        let dom = Dom::parse(
            b"<a>Delete account</a><iframe><a node=\"0\">Cancel</a></iframe>",
            None,
            false,
        );
        let html = dom.serialize().0;
        assert!(
            html.contains("&lt;a node=\"0\"&gt;Cancel&lt;/a&gt;</iframe>"),
            "{html}"
        );
        assert_eq!(html.matches("<a ").count(), 1, "{html}");
        // Found by the `dom` fuzz target: a script left double-escaped runs to the end of the
        // file; written escaped, what follows it is read as markup again.
        for source in [
            &b"<p>a</p><script><!--<script>x"[..],
            b"<script><!-- a='<script>)</script >'; b='<script>",
            b"<xmp></xmp ><b>x</b></xmp>",
            b"<noembed><b node=3>x</noembed>",
        ] {
            let dom = Dom::parse(source, None, false);
            let ids: Vec<u32> = dom.nodes.iter().filter_map(|n| n.id).collect();
            let html = dom.serialize().0;
            let again = Dom::parse(format!("{html}<b>after</b>").as_bytes(), None, false);
            for id in ids {
                assert!(again.element(id).is_some(), "{id} lost in {html}");
            }
            assert!(again.serialize().0.contains("<b node="), "{html}");
        }
        // A name a parser accepts but no reader should take as markup: `<a\u{a0}node="0">`
        // (a no-break space is no HTML white space) or `<node="7"<` is written with `_`.
        let dom = Dom::parse(
            "<p>x</p><a\u{a0}node=\"0\">y</a><b c\u{a0}node=\"0\">z</b>".as_bytes(),
            None,
            false,
        );
        let html = dom.serialize().0;
        assert_eq!(
            html.matches(" node=\"").count(),
            dom.nodes.iter().filter(|n| n.id.is_some()).count(),
            "{html}"
        );
        assert!(
            html.contains("<a_node__0_ ") && html.contains(" c_node=\"0\""),
            "{html}"
        );
        // An SVG script's text is markup text: escaped like any other.
        let svg = Dom::parse(b"<svg><script>&lt;b&gt;</script></svg>", None, false);
        let svg_html = svg.serialize().0;
        assert!(svg_html.contains("&lt;b&gt;</script>"), "{svg_html}");
    }
}
