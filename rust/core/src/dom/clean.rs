//! Spec section 3: cleaning profiles. Every rule is a named option; `scribe` turns all of
//! them on, `minimal` only removes scripts, styles and comments and collapses whitespace.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::tree::{Dom, DomNode, Kind, NONE};
use crate::dom::DomError;
use crate::tokenizer::Tokenizer;

/// The rules of spec section 3, each switchable, with their parameters. The field names are
/// the option names callers use (`Dom.clean(remove_empty=False)`): see [`Self::with`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CleanOptions {
    /// Rule 1: script, style, noscript and template elements with their contents.
    pub remove_scripts: bool,
    /// Rule 1: comments.
    pub remove_comments: bool,
    /// Rule 1: everything in `head` but `title`.
    pub strip_head: bool,
    /// Rule 2: unwrap tags outside the tag whitelist.
    pub unwrap_tags: bool,
    /// Rule 3: drop attributes outside the attribute whitelist.
    pub filter_attributes: bool,
    /// Rule 4: drop random-looking attribute values (per word for `class`).
    pub prune_random: bool,
    pub random_min_length: usize,
    pub random_min_ratio: f64,
    /// Rule 5: cut kept values to this many characters (0 = off).
    pub max_value_length: usize,
    /// Rule 6: drop `on*` event-handler attributes.
    pub drop_event_handlers: bool,
    /// Rule 7: drop whitespace-only text, collapse runs of whitespace.
    pub collapse_whitespace: bool,
    /// Rule 8: drop empty non-interactive elements, bottom-up.
    pub remove_empty: bool,
}

impl CleanOptions {
    /// These options with some changed: `overrides` is a JSON object of option names and
    /// values (`{"remove_empty": false}`); an unknown name or a value of the wrong type is
    /// an error that names it.
    ///
    /// # Errors
    /// Overrides that are not a JSON object, or name an unknown option or a value of the wrong type.
    ///
    /// # Panics
    /// Never: the options always serialize to a JSON object.
    pub fn with(&self, overrides: &[u8]) -> Result<CleanOptions, DomError> {
        let bad = |e: serde_json::Error| DomError::Option(e.to_string());
        let changes: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(overrides).map_err(bad)?;
        let mut merged = serde_json::to_value(self).map_err(bad)?;
        let mut options = self.clone();
        for (name, value) in changes {
            let fields = merged
                .as_object_mut()
                .expect("a struct serialises as an object");
            fields.insert(name.clone(), value);
            // One change at a time, so that an error names the option it is about.
            options = serde_json::from_value(merged.clone())
                .map_err(|e| DomError::Option(format!("{name}: {e}")))?;
        }
        Ok(options)
    }

    /// Every cleaning profile by name, the default first (the registry the binding, CLI and
    /// docs read).
    pub const PROFILES: [&'static str; 2] = ["scribe", "minimal"];

    /// # Errors
    /// A name that is not one of [`Self::PROFILES`].
    pub fn profile(name: &str) -> Result<CleanOptions, DomError> {
        match name {
            "scribe" => Ok(CleanOptions {
                remove_scripts: true,
                remove_comments: true,
                strip_head: true,
                unwrap_tags: true,
                filter_attributes: true,
                prune_random: true,
                random_min_length: 32,
                random_min_ratio: 2.0,
                max_value_length: 64,
                drop_event_handlers: true,
                collapse_whitespace: true,
                remove_empty: true,
            }),
            "minimal" => Ok(CleanOptions {
                remove_scripts: true,
                remove_comments: true,
                strip_head: false,
                unwrap_tags: false,
                filter_attributes: false,
                prune_random: false,
                random_min_length: 32,
                random_min_ratio: 2.0,
                max_value_length: 0,
                drop_event_handlers: false,
                collapse_whitespace: true,
                remove_empty: false,
            }),
            other => Err(DomError::UnknownProfile(other.to_owned())),
        }
    }
}

pub fn tag_whitelisted(tag: &str) -> bool {
    matches!(
        tag,
        "html"
            | "body"
            | "div"
            | "span"
            | "p"
            | "a"
            | "button"
            | "input"
            | "select"
            | "option"
            | "optgroup"
            | "textarea"
            | "label"
            | "form"
            | "fieldset"
            | "legend"
            | "img"
            | "svg"
            | "ul"
            | "ol"
            | "li"
            | "dl"
            | "dt"
            | "dd"
            | "table"
            | "thead"
            | "tbody"
            | "tfoot"
            | "tr"
            | "th"
            | "td"
            | "caption"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "nav"
            | "header"
            | "footer"
            | "main"
            | "section"
            | "article"
            | "aside"
            | "details"
            | "summary"
            | "dialog"
            | "iframe"
            | "strong"
            | "em"
            | "b"
            | "i"
            | "u"
            | "small"
            | "code"
            | "pre"
            | "blockquote"
            | "time"
            | "title"
    )
}

fn attr_whitelisted(name: &str) -> bool {
    matches!(
        name,
        "alt"
            | "aria-role"
            | "aria-label"
            | "aria-selected"
            | "aria-expanded"
            | "aria-checked"
            | "data-content"
            | "placeholder"
            | "role"
            | "type"
            | "node"
            | "label"
            | "name"
            | "title"
            | "value"
            | "href"
            | "required"
            | "selected"
            | "checked"
            | "disabled"
            | "id"
            | "class"
            | "for"
    )
}

/// Exempt from random-string pruning and from truncation.
fn attr_exempt(name: &str) -> bool {
    matches!(name, "title" | "alt" | "aria-label" | "node")
}

/// Kept even when empty (rule 8).
pub fn is_interactive_tag(tag: &str) -> bool {
    matches!(
        tag,
        "a" | "button" | "input" | "select" | "option" | "textarea" | "label" | "img" | "iframe"
    )
}

fn removed_with_contents(tag: &str) -> bool {
    matches!(tag, "script" | "style" | "noscript" | "template")
}

/// Collapses whitespace runs to one space, keeping one leading/trailing space if present.
fn collapse(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut space = false;
    for c in t.chars() {
        if c.is_whitespace() {
            space = true;
        } else {
            if space {
                out.push(' ');
                space = false;
            }
            out.push(c);
        }
    }
    if space {
        out.push(' ');
    }
    out
}

/// Random-looking: long, and fewer than `ratio` characters per token. Verdicts are
/// cached per distinct value: pages repeat class words and URL prefixes a lot.
struct RandomTest<'a> {
    tok: &'a Tokenizer,
    min_length: usize,
    min_ratio: f64,
    seen: RefCell<FxHashMap<String, bool>>,
}

impl RandomTest<'_> {
    fn looks_random(&self, value: &str) -> bool {
        let chars = value.chars().count();
        if chars <= self.min_length {
            return false;
        }
        if let Some(&v) = self.seen.borrow().get(value) {
            return v;
        }
        let tokens = self.tok.count(value).max(1);
        let verdict = (chars as f64) / (tokens as f64) < self.min_ratio;
        self.seen.borrow_mut().insert(value.to_owned(), verdict);
        verdict
    }
}

fn clean_attrs(
    attrs: &[(String, String)],
    random: &RandomTest,
    o: &CleanOptions,
) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(attrs.len());
    for (name, value) in attrs {
        let lname = name.to_ascii_lowercase();
        if o.drop_event_handlers && lname.starts_with("on") {
            continue;
        }
        if o.filter_attributes && !attr_whitelisted(&lname) {
            continue;
        }
        // Truncate first (rule 5), then test what will be written (rule 4): cleaning
        // a cleaned DOM then finds nothing left to do.
        let exempt = attr_exempt(&lname);
        let value = if lname == "class" {
            let words = value
                .split_whitespace()
                .filter(|w| !(o.prune_random && random.looks_random(w)));
            let mut kept = String::new();
            for w in words {
                let extra = if kept.is_empty() {
                    w.chars().count()
                } else {
                    w.chars().count() + 1
                };
                if o.max_value_length > 0 && kept.chars().count() + extra > o.max_value_length {
                    break;
                }
                if !kept.is_empty() {
                    kept.push(' ');
                }
                kept.push_str(w);
            }
            if kept.is_empty() {
                continue;
            }
            kept
        } else {
            let value = if o.max_value_length > 0
                && !exempt
                && value.chars().count() > o.max_value_length
            {
                value.chars().take(o.max_value_length).collect()
            } else {
                value.clone()
            };
            if o.prune_random && !exempt && random.looks_random(&value) {
                continue;
            }
            value
        };
        out.push((name.clone(), value));
    }
    out
}

/// Returns the cleaned copy of `dom`; element ids are carried over unchanged.
///
/// # Panics
/// Never: with no ids to keep, [`clean_keeping`] cannot fail.
pub fn clean(dom: &Dom, o: &CleanOptions, tok: &Tokenizer) -> Dom {
    clean_keeping(dom, o, tok, &[])
        .map(|(d, _)| d)
        .expect("no ids to look up")
}

/// [`clean`], except that the elements with ids `keep` survive every rule: they are neither
/// removed (with an ancestor, as empty, as part of `head`) nor unwrapped. A dataset's action
/// target must stay addressable. Also returns the kept ids that a rule would have removed.
///
/// # Errors
/// An id in `keep` that names no element.
pub fn clean_keeping(
    dom: &Dom,
    o: &CleanOptions,
    tok: &Tokenizer,
    keep: &[u32],
) -> Result<(Dom, Vec<u32>), DomError> {
    let random = RandomTest {
        tok,
        min_length: o.random_min_length,
        min_ratio: o.random_min_ratio,
        seen: RefCell::new(FxHashMap::default()),
    };
    // Arena indices of the kept elements, and of everything on their ancestor paths.
    let mut target = vec![false; dom.nodes.len()];
    let mut on_path = vec![false; dom.nodes.len()];
    for &id in keep {
        let n = dom.element(id).ok_or(DomError::NoElement(id))?;
        target[n as usize] = true;
        let mut a = n;
        while a != NONE && !on_path[a as usize] {
            on_path[a as usize] = true;
            a = dom.nodes[a as usize].parent;
        }
    }
    let mut rescued: Vec<u32> = Vec::new();
    let mut kept_out: Vec<u32> = Vec::new();
    let mut out = Dom::new_empty();
    // (old node, new parent, inside <head>, a rule would have removed it)
    let mut stack: Vec<(u32, u32, bool, bool)> = dom.nodes[dom.root as usize]
        .children
        .iter()
        .rev()
        .map(|&c| (c, out.root, false, false))
        .collect();
    while let Some((n, parent, in_head, doomed)) = stack.pop() {
        let node = &dom.nodes[n as usize];
        let push_kids =
            |target: u32, in_head: bool, doomed: bool, stack: &mut Vec<(u32, u32, bool, bool)>| {
                stack.extend(
                    node.children
                        .iter()
                        .rev()
                        .map(|&c| (c, target, in_head, doomed)),
                );
            };
        match &node.kind {
            Kind::Document => push_kids(parent, in_head, doomed, &mut stack),
            Kind::Comment(_) if o.remove_comments => {}
            Kind::Comment(c) => {
                append(&mut out, parent, Kind::Comment(c.clone()), None);
            }
            Kind::Doctype(d) => {
                if !o.unwrap_tags {
                    append(&mut out, parent, Kind::Doctype(d.clone()), None);
                }
            }
            Kind::Text(t) => {
                if (o.strip_head && in_head) || doomed {
                    continue;
                }
                let t = if o.collapse_whitespace {
                    collapse(t)
                } else {
                    t.clone()
                };
                if o.collapse_whitespace && t.trim().is_empty() {
                    continue;
                }
                append_text(&mut out, parent, &t, o.collapse_whitespace);
            }
            Kind::Element { tag, attrs } => {
                let removed = (o.remove_scripts && removed_with_contents(tag))
                    || (o.strip_head && in_head && tag != "title");
                let doomed = doomed || removed;
                if doomed && !on_path[n as usize] {
                    continue;
                }
                // `title` is the one part of `head` kept, with its text.
                let now_in_head = (in_head || tag == "head") && tag != "title";
                let is_target = target[n as usize];
                let whitelisted = !o.unwrap_tags || tag_whitelisted(tag);
                if is_target && (doomed || !whitelisted) {
                    rescued.extend(node.id);
                }
                if whitelisted || is_target {
                    let attrs = clean_attrs(attrs, &random, o);
                    let e = append(
                        &mut out,
                        parent,
                        Kind::Element {
                            tag: tag.clone(),
                            attrs,
                        },
                        node.id,
                    );
                    out.nodes[e as usize].foreign = node.foreign;
                    if is_target {
                        kept_out.push(e);
                    }
                    push_kids(e, now_in_head, doomed, &mut stack);
                } else {
                    push_kids(parent, now_in_head, doomed, &mut stack);
                }
            }
        }
    }
    if o.remove_empty {
        for n in remove_empty(&mut out, &kept_out) {
            if let Some(id) = out.nodes[n as usize].id {
                if !rescued.contains(&id) {
                    rescued.push(id);
                }
            }
        }
    }
    out.index_ids();
    Ok((out, rescued))
}

fn append(out: &mut Dom, parent: u32, kind: Kind, id: Option<u32>) -> u32 {
    let n = out.nodes.len() as u32;
    out.nodes.push(DomNode {
        kind,
        parent,
        children: Vec::new(),
        id,
        foreign: false,
    });
    out.nodes[parent as usize].children.push(n);
    n
}

/// Adjacent text (after unwrapping) is one text node, its whitespace collapsed again.
fn append_text(out: &mut Dom, parent: u32, t: &str, collapse_ws: bool) {
    if let Some(&last) = out.nodes[parent as usize].children.last() {
        if let Kind::Text(prev) = &mut out.nodes[last as usize].kind {
            // Both are collapsed: only where they meet can two spaces follow each other.
            // (Collapsing the whole text again at each join made a block of many unwrapped
            // elements quadratic: 40,000 took 4 s.)
            let t = if collapse_ws && prev.ends_with(' ') {
                t.strip_prefix(' ').unwrap_or(t)
            } else {
                t
            };
            prev.push_str(t);
            return;
        }
    }
    append(out, parent, Kind::Text(t.to_owned()), None);
}

/// Rule 8, bottom-up: children are decided before their parent (reverse pre-order).
/// `keep` are never removed; returns those of them that the rule would have removed.
fn remove_empty(dom: &mut Dom, keep: &[u32]) -> Vec<u32> {
    let order = dom.preorder();
    let mut gone = vec![false; dom.nodes.len()];
    let mut spared = Vec::new();
    for &n in order.iter().rev() {
        let node = &dom.nodes[n as usize];
        if let Kind::Element { tag, attrs } = &node.kind {
            let empty = node.children.iter().all(|&c| gone[c as usize]);
            let labelled = attrs
                .iter()
                .any(|(a, _)| matches!(a.as_str(), "title" | "alt" | "aria-label"));
            if empty
                && !is_interactive_tag(tag)
                && !labelled
                && node.parent != NONE
                && tag != "html"
                && tag != "body"
            {
                if keep.contains(&n) {
                    spared.push(n);
                } else {
                    gone[n as usize] = true;
                }
            }
        }
    }
    for node in &mut dom.nodes {
        node.children.retain(|&c| !gone[c as usize]);
    }
    // Text on both sides of a removed element is now adjacent: make it one node again.
    for &n in &order {
        if gone[n as usize] || dom.nodes[n as usize].children.len() < 2 {
            continue;
        }
        let kids = std::mem::take(&mut dom.nodes[n as usize].children);
        let mut merged: Vec<u32> = Vec::with_capacity(kids.len());
        for k in kids {
            if let (Some(&last), Kind::Text(t)) = (merged.last(), &dom.nodes[k as usize].kind) {
                if matches!(dom.nodes[last as usize].kind, Kind::Text(_)) {
                    let t = t.clone();
                    if let Kind::Text(prev) = &mut dom.nodes[last as usize].kind {
                        prev.push_str(&t);
                        *prev = collapse(prev);
                    }
                    continue;
                }
            }
            merged.push(k);
        }
        dom.nodes[n as usize].children = merged;
    }
    spared
}

#[cfg(test)]
mod tests {

    #[test]
    fn options_change_by_name_and_errors_name_the_option() {
        let scribe = CleanOptions::profile("scribe").unwrap();
        let o = scribe
            .with(br#"{"remove_empty": false, "max_value_length": 8}"#)
            .unwrap();
        assert!(!o.remove_empty && o.max_value_length == 8 && o.remove_scripts);
        let e = scribe
            .with(br#"{"remove_empty": "no"}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("remove_empty") && e.contains("invalid type"),
            "{e}"
        );
        let e = scribe
            .with(br#"{"frobnicate": true}"#)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("frobnicate") && e.contains("unknown field"),
            "{e}"
        );
        assert!(scribe.with(b"[1]").is_err());
    }

    use super::*;
    use crate::dom::Dom;

    fn scribe(html: &str) -> String {
        let dom = Dom::parse(html.as_bytes(), None, false);
        let tok = Tokenizer::named("gpt2").unwrap();
        clean(&dom, &CleanOptions::profile("scribe").unwrap(), &tok)
            .serialize()
            .0
    }

    #[test]
    fn ids_are_reverse_document_order() {
        let dom = Dom::parse(b"<div><p>a</p><p>b</p></div>", None, false);
        let (html, _) = dom.serialize();
        assert_eq!(
            html,
            "<html node=\"5\"><head node=\"4\"></head><body node=\"3\"><div node=\"2\">\
             <p node=\"1\">a</p><p node=\"0\">b</p></div></body></html>"
        );
        assert_eq!(dom.tag(dom.element(0).unwrap()), Some("p"));
    }

    #[test]
    fn scribe_rules() {
        let html = r#"<html><head><title>T</title><meta name="x"><style>p{}</style></head><body>
            <!-- c --><script>alert(1)</script><font color="red"> Hello   <b onclick="x()">world</b></font>
            <div class="btn a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8 primary" data-x="1" style="s"></div>
            <a href="/a" title="Go">x</a><span></span><input type="text" value="0123456789012345678901234567890123456789012345678901234567890123456789">
            </body></html>"#;
        let out = scribe(html);
        assert!(out.starts_with("<html node="), "{out}");
        assert!(out.contains("<title node="));
        assert!(
            !out.contains("meta")
                && !out.contains("style")
                && !out.contains("script")
                && !out.contains("<!--")
        );
        assert!(out.contains("Hello <b node="), "{out}");
        assert!(!out.contains("font") && !out.contains("onclick"));
        assert!(!out.contains("<span"), "empty span removed: {out}");
        assert!(!out.contains("a1b2c3"), "random class word dropped: {out}");
        assert!(
            !out.contains("class=\"btn primary\"") || !out.contains("<div"),
            "empty div removed: {out}"
        );
        assert!(out.contains("<a href=\"/a\" title=\"Go\" node="));
        let v = "0123456789".repeat(7);
        assert!(out.contains(&format!("value=\"{}\"", &v[..64])), "{out}");
    }

    #[test]
    fn deep_nesting_and_junk_do_not_crash() {
        let deep = "<div>".repeat(100_000) + "x";
        let out = scribe(&deep);
        assert!(out.contains('x'));
        let junk: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        let dom = Dom::parse(&junk, None, false);
        assert!(dom.element_count() >= 3);
        assert!(Dom::parse(b"", None, false).element_count() >= 3);
    }

    #[test]
    fn kept_targets_survive_every_rule() {
        let html = r#"<html><head><meta name=x></head><body><div><custom-el><span class=icon></span></custom-el>
            <svg><path d="M0"></path></svg><noscript><b>x</b></noscript><p>text</p></div></body></html>"#;
        let d = Dom::parse(html.as_bytes(), Some("utf-8"), false);
        let tok = Tokenizer::named("gpt2").unwrap();
        let o = CleanOptions::profile("scribe").unwrap();
        let id_of = |tag: &str| {
            d.preorder()
                .into_iter()
                .find(|&n| d.tag(n) == Some(tag))
                .and_then(|n| d.nodes[n as usize].id)
                .unwrap()
        };
        let (span, path, custom, meta, p) = (
            id_of("span"),
            id_of("path"),
            id_of("custom-el"),
            id_of("meta"),
            id_of("p"),
        );
        let plain = clean(&d, &o, &tok);
        for id in [span, path, custom, meta] {
            assert!(plain.element(id).is_none(), "{id} is removed without keep");
        }
        let (kept, rescued) = clean_keeping(&d, &o, &tok, &[span, path, custom, meta, p]).unwrap();
        for id in [span, path, custom, meta, p] {
            let n = kept.element(id).unwrap_or_else(|| panic!("{id} kept"));
            assert!(kept
                .start_tag(n)
                .unwrap()
                .contains(&format!("node=\"{id}\"")));
        }
        let mut rescued = rescued;
        rescued.sort_unstable();
        let mut want = vec![span, path, custom, meta];
        want.sort_unstable();
        assert_eq!(rescued, want, "p needed no rescue");
        // Keeping nothing is the plain clean.
        assert_eq!(
            clean_keeping(&d, &o, &tok, &[]).unwrap().0.serialize().0,
            plain.serialize().0
        );
        assert!(clean_keeping(&d, &o, &tok, &[99_999]).is_err());
    }
}
