//! A document built from a live DOM's nodes (the browser's `DOM.getDocument`), without
//! writing it out as markup and parsing it again.
//!
//! Why not markup: a re-parse is not the live tree. The tree builder's repairs move, clone
//! or swallow elements (`<p><b><div>` clones `<b>`, everything after `<plaintext>` is text,
//! nested `<form>`s vanish), and any mark written into an attribute can be forged by the
//! page (`DATA-MARK` in another letter case, `setAttributeNS` on SVG). Here every live
//! element is one arena element, and which input node became which id is returned beside
//! the document: nothing the page writes is ever read as a mark.
//!
//! What the page can write is made safe for the serializer instead: names that are not
//! names are dropped, comments cannot end early, and a page's own `node` attributes are
//! dropped (ids are the document's); text, raw text included, is escaped when written.

use html5ever::LocalName;

use super::error::DomError;
use super::tree::{is_void, Dom, DomNode, Kind, NONE, RAW_TEXT_ELEMENTS};

/// One node of a live document, in document order; `parent` indexes an earlier node of the
/// same input (`None`: a child of the document).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveNode {
    pub parent: Option<u32>,
    pub kind: LiveKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum LiveKind {
    Element {
        tag: String,
        attrs: Vec<(String, String)>,
        /// Outside the HTML namespace (SVG, `MathML`).
        foreign: bool,
    },
    Text(String),
    Comment(String),
    Doctype(String),
}

/// A tag or attribute name the serializer can write as it is.
pub fn is_markup_name(name: &str) -> bool {
    !name.is_empty()
        && !name.contains([
            ' ', '"', '\'', '<', '>', '/', '=', '\t', '\n', '\x0c', '\r', '\0',
        ])
}

/// A comment's text that ends where the serializer's `-->` does.
fn safe_comment(text: &str) -> String {
    let mut s = text.replace("--", "- -");
    if s.starts_with('>') || s.starts_with("->") {
        s.insert(0, ' '); // `<!-->` and `<!--->` are whole (empty) comments to a reader
    }
    if s.ends_with('-') || s.ends_with("<!") {
        s.push(' ');
    }
    s
}

impl Dom {
    /// Builds the document from a live DOM's nodes. Returns, for each input node, the id
    /// its element got (`None` for other nodes and for elements left out: a tag that is not
    /// a name, or anything below one). Ids are in reverse document order, as [`Dom::parse`]
    /// numbers them. Linear in the input; never recursive.
    ///
    /// # Errors
    /// A `parent` that is not an earlier node of the input.
    pub fn from_nodes(nodes: &[LiveNode]) -> Result<(Dom, Vec<Option<u32>>), DomError> {
        let mut dom = Dom::new_empty();
        dom.nodes.reserve(nodes.len());
        // Input index -> arena index (NONE: left out, or not an element).
        let mut arena = vec![NONE; nodes.len()];
        let mut is_element = vec![false; nodes.len()];
        for (i, node) in nodes.iter().enumerate() {
            let parent = match node.parent {
                None => dom.root,
                Some(p) if (p as usize) < i => {
                    if arena[p as usize] == NONE {
                        continue; // below a node that was left out
                    }
                    if !is_element[p as usize] {
                        return Err(DomError::Tree(format!(
                            "node {i}: its parent {p} is not an element"
                        )));
                    }
                    arena[p as usize]
                }
                Some(p) => {
                    return Err(DomError::Tree(format!(
                        "node {i}: parent {p} does not come before it"
                    )))
                }
            };
            if parent == NONE {
                continue;
            }
            let (parent_tag, parent_foreign) = match &dom.nodes[parent as usize].kind {
                Kind::Element { tag, .. } => {
                    (Some(tag.clone()), dom.nodes[parent as usize].foreign)
                }
                _ => (None, false),
            };
            if parent_tag.as_deref().is_some_and(is_void) && !parent_foreign {
                // A void element's children (a user-agent shadow root's, or a script's) are
                // never serialized: they stay out, with everything below them.
                continue;
            }
            let raw_named = parent_tag
                .as_deref()
                .is_some_and(|t| RAW_TEXT_ELEMENTS.contains(&t));
            if raw_named && !matches!(node.kind, LiveKind::Text(_)) {
                // Inside `<script>`, `<style>`, `<noscript>`... a reader sees only text (one
                // that does not track namespaces, an SVG `<script>`'s too): an element a
                // script put there is not rendered, and its markup would read as text.
                continue;
            }
            let kind = match &node.kind {
                LiveKind::Element {
                    tag,
                    attrs,
                    foreign,
                } => {
                    if !is_markup_name(tag) {
                        continue;
                    }
                    // HTML names are case-insensitive (the parser lowercases them); SVG's
                    // and MathML's keep their case (`foreignObject`).
                    let tag = if tag.eq_ignore_ascii_case("plaintext") {
                        // A reader takes everything after a `<plaintext>` start tag as its
                        // text (in any namespace, to one that does not track them), so no
                        // markup can hold what follows one: written as the preformatted text
                        // it shows.
                        LocalName::from("pre")
                    } else if *foreign {
                        LocalName::from(tag.as_str())
                    } else {
                        LocalName::from(tag.to_ascii_lowercase())
                    };
                    let mut kept: Vec<(String, String)> = Vec::with_capacity(attrs.len());
                    for (name, value) in attrs {
                        if is_markup_name(name)
                            && !name.eq_ignore_ascii_case("node")
                            && !kept.iter().any(|(k, _)| k == name)
                        {
                            kept.push((name.clone(), value.clone()));
                        }
                    }
                    is_element[i] = true;
                    let idx = push(&mut dom, parent, Kind::Element { tag, attrs: kept });
                    dom.nodes[idx as usize].foreign = *foreign;
                    arena[i] = idx;
                    continue;
                }
                LiveKind::Text(t) => {
                    // Raw text too is kept as the page has it: the serializer escapes all
                    // text, so none can end its element or pass for a tag.
                    let text = t.clone();
                    // Adjacent texts are one text to a reader: merged, as a parse gives them.
                    if let Some(&last) = dom.nodes[parent as usize].children.last() {
                        if let Kind::Text(prev) = &mut dom.nodes[last as usize].kind {
                            prev.push_str(&text);
                            arena[i] = last;
                            continue;
                        }
                    }
                    Kind::Text(text)
                }
                LiveKind::Comment(c) => Kind::Comment(safe_comment(c)),
                LiveKind::Doctype(name) => {
                    if parent != dom.root {
                        continue;
                    }
                    let name = if name.chars().all(|c| c.is_ascii_alphanumeric()) {
                        name.clone()
                    } else {
                        String::new()
                    };
                    Kind::Doctype(name)
                }
            };
            arena[i] = push(&mut dom, parent, kind);
        }
        dom.assign_ids(false);
        let ids = arena
            .iter()
            .zip(&is_element)
            .map(|(&a, &element)| {
                if element {
                    dom.nodes[a as usize].id
                } else {
                    None
                }
            })
            .collect();
        Ok((dom, ids))
    }
}

fn push(dom: &mut Dom, parent: u32, kind: Kind) -> u32 {
    let idx = u32::try_from(dom.nodes.len()).unwrap_or(NONE - 1);
    dom.nodes.push(DomNode {
        kind,
        parent,
        children: Vec::new(),
        id: None,
        foreign: false,
    });
    dom.nodes[parent as usize].children.push(idx);
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(parent: Option<u32>, tag: &str, attrs: &[(&str, &str)]) -> LiveNode {
        LiveNode {
            parent,
            kind: LiveKind::Element {
                tag: tag.into(),
                attrs: attrs
                    .iter()
                    .map(|(a, v)| ((*a).into(), (*v).into()))
                    .collect(),
                foreign: false,
            },
        }
    }

    fn text(parent: u32, t: &str) -> LiveNode {
        LiveNode {
            parent: Some(parent),
            kind: LiveKind::Text(t.into()),
        }
    }

    #[test]
    fn every_live_element_is_one_element_even_where_a_parse_would_repair() {
        // <p><b><div>x</div></b></p>: a parse clones <b> around the <div>.
        let nodes = vec![
            el(None, "p", &[]),
            el(Some(0), "b", &[("node", "7"), ("NODE", "8")]),
            el(Some(1), "div", &[]),
            text(2, "x"),
            el(None, "plaintext", &[]),
            text(4, "</plaintext><a node=\"1\">"),
            el(None, "i", &[]),
        ];
        let (dom, ids) = Dom::from_nodes(&nodes).unwrap();
        let html = dom.serialize().0;
        assert_eq!(
            html,
            "<p node=\"4\"><b node=\"3\"><div node=\"2\">x</div></b></p>\
             <pre node=\"1\">&lt;/plaintext&gt;&lt;a node=\"1\"&gt;</pre><i node=\"0\"></i>"
        );
        assert_eq!(
            ids,
            vec![Some(4), Some(3), Some(2), None, Some(1), None, Some(0)]
        );
    }

    #[test]
    fn comments_cannot_end_early_and_bad_names_leave_their_subtree_out() {
        let nodes = vec![
            LiveNode {
                parent: None,
                kind: LiveKind::Comment("><a node=\"0\">--><b>".into()),
            },
            el(None, "a b", &[]),
            el(Some(1), "span", &[]),
            el(None, "em", &[("on\"x", "1"), ("title", "t")]),
        ];
        let (dom, ids) = Dom::from_nodes(&nodes).unwrap();
        let html = dom.serialize().0;
        // The comment's text is escaped too: its `<a node="0">` is no tag to a reader.
        assert_eq!(
            html,
            "<!-- &gt;&lt;a node=\"0\"&gt;- -&gt;&lt;b&gt;--><em title=\"t\" node=\"0\"></em>"
        );
        assert_eq!(ids, vec![None, None, None, Some(0)]);
        assert!(Dom::from_nodes(&[el(Some(0), "p", &[])]).is_err());
    }
}
