//! CDP `DOMSnapshot.captureSnapshot`: which elements respond to clicks, and what their DOM
//! says about them (spec section 3, rule 13).
//!
//! A snapshot lists every document of a renderer (the page and its same-process frames) as
//! flat arrays indexed by node, strings interned in one table. Only what the rule needs is
//! read: `isClickable` (listeners added by script count), whether the element has a layout
//! box (hidden elements do not count), and the attributes a hint is made of.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::Deserialize;

use crate::axtree::Clickables;
use crate::error::AxError;

/// The clickable elements of one document of the snapshot.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameClickables {
    /// The document's frame (CDP frame id), when the snapshot names it.
    pub frame_id: Option<String>,
    pub clickable: Clickables,
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    documents: Option<Vec<Document>>,
    #[serde(borrow, default)]
    strings: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    result: Option<Box<Envelope<'a>>>,
    #[serde(borrow, default)]
    error: Option<CdpError<'a>>,
}

#[derive(Deserialize)]
struct CdpError<'a> {
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Document {
    #[serde(rename = "frameId", default = "no_string")]
    frame_id: i64,
    nodes: Nodes,
    #[serde(default)]
    layout: Layout,
}

fn no_string() -> i64 {
    -1
}

#[derive(Deserialize)]
struct Nodes {
    #[serde(rename = "parentIndex", default)]
    parent: Vec<i64>,
    #[serde(rename = "nodeName", default)]
    name: Vec<i64>,
    #[serde(rename = "backendNodeId", default)]
    backend: Vec<i64>,
    #[serde(default)]
    attributes: Vec<Vec<i64>>,
    #[serde(rename = "isClickable", default)]
    clickable: RareBool,
    #[serde(rename = "currentSourceURL", default)]
    source_url: RareString,
}

#[derive(Deserialize, Default)]
struct RareBool {
    #[serde(default)]
    index: Vec<i64>,
}

#[derive(Deserialize, Default)]
struct RareString {
    #[serde(default)]
    index: Vec<i64>,
    #[serde(default)]
    value: Vec<i64>,
}

#[derive(Deserialize, Default)]
struct Layout {
    #[serde(rename = "nodeIndex", default)]
    node: Vec<i64>,
}

/// Attributes that name an element outright, in order of preference.
const LABEL_ATTRIBUTES: [&str; 5] = [
    "aria-label",
    "title",
    "alt",
    "aria-description",
    "placeholder",
];
/// Longest hint kept (an icon needs a word or two, not a paragraph).
const MAX_HINT_CHARS: usize = 80;
/// How far above an image its clickable ancestor may be (`<a><span><img>`).
const IMAGE_DEPTH: usize = 4;

struct Doc<'d, 's> {
    nodes: &'d Nodes,
    /// Indices of the nodes that have a layout box (the page renders them).
    layout: &'d [i64],
    strings: &'d [Cow<'s, str>],
}

impl<'d> Doc<'d, '_> {
    fn string(&self, index: i64) -> Option<&'d str> {
        usize::try_from(index)
            .ok()
            .and_then(|i| self.strings.get(i))
            .map(AsRef::as_ref)
    }

    fn tag(&self, node: usize) -> &'d str {
        self.nodes
            .name
            .get(node)
            .and_then(|&s| self.string(s))
            .unwrap_or("")
    }

    fn attr(&self, node: usize, name: &str) -> Option<&'d str> {
        let attrs = self.nodes.attributes.get(node)?;
        attrs
            .chunks_exact(2)
            .find(|kv| {
                self.string(kv[0])
                    .is_some_and(|k| k.eq_ignore_ascii_case(name))
            })
            .and_then(|kv| self.string(kv[1]))
    }

    /// The file an image element shows: `src`, else the resolved current source, else an
    /// SVG `<use>`'s reference.
    fn image_source(&self, node: usize, current: &FxHashMap<usize, i64>) -> Option<&'d str> {
        let tag = self.tag(node);
        if tag.eq_ignore_ascii_case("img") || tag.eq_ignore_ascii_case("input") {
            self.attr(node, "src")
                .or_else(|| current.get(&node).and_then(|&s| self.string(s)))
        } else if tag.eq_ignore_ascii_case("use") {
            self.attr(node, "href")
                .or_else(|| self.attr(node, "xlink:href"))
        } else {
            None
        }
    }
}

/// `https://x.test/icons/star-outline.png?v=2` → `star-outline`; `#icon-trash` → `icon-trash`.
fn file_stem(url: &str) -> Option<String> {
    if url.starts_with("data:") {
        return None;
    }
    let path = url.split(['?', '#']).next().unwrap_or("");
    let fragment = url.split_once('#').map_or("", |(_, f)| f);
    let last = path.rsplit('/').next().unwrap_or("");
    let stem = last.rsplit_once('.').map_or(last, |(s, _)| s);
    let word = if stem.is_empty() { fragment } else { stem };
    let word = word.trim();
    (!word.is_empty() && word.chars().any(char::is_alphabetic)).then(|| word.to_owned())
}

/// Class or id words that read as words: letters and dashes, not generated hashes.
fn readable_words(value: &str) -> impl Iterator<Item = &str> {
    value.split_whitespace().filter(|w| {
        w.len() <= 24
            && w.chars().any(char::is_alphabetic)
            && w.chars().all(|c| c.is_alphabetic() || c == '-' || c == '_')
    })
}

fn clip(mut hint: String) -> String {
    if let Some((cut, _)) = hint.char_indices().nth(MAX_HINT_CHARS) {
        hint.truncate(cut);
    }
    hint
}

/// The hint of a clickable element: a naming attribute; else its image's file name and its
/// class words; else its id's words.
fn hint_of(doc: &Doc, node: usize, image: Option<&str>) -> Option<String> {
    for name in LABEL_ATTRIBUTES {
        if let Some(v) = doc.attr(node, name) {
            let v = crate::text::normalize_ws(v);
            if !v.is_empty() {
                return Some(clip(v));
            }
        }
    }
    let mut words: Vec<String> = Vec::new();
    if let Some(stem) = image.and_then(file_stem) {
        words.push(stem);
    }
    if let Some(class) = doc.attr(node, "class") {
        for w in readable_words(class).take(4) {
            if !words.iter().any(|x| x == w) {
                words.push(w.to_owned());
            }
        }
    }
    if words.is_empty() {
        if let Some(id) = doc.attr(node, "id") {
            words.extend(readable_words(id).take(2).map(str::to_owned));
        }
    }
    (!words.is_empty()).then(|| clip(words.join(" ")))
}

fn clickables_of(doc: &Doc, frame: Option<String>) -> FrameClickables {
    let n = doc.nodes.backend.len();
    let mut rendered = vec![false; n];
    for &i in doc.layout {
        if let Some(r) = usize::try_from(i).ok().and_then(|i| rendered.get_mut(i)) {
            *r = true;
        }
    }
    let mut clickable = vec![false; n];
    for &i in &doc.nodes.clickable.index {
        if let Some(c) = usize::try_from(i).ok().and_then(|i| clickable.get_mut(i)) {
            *c = true;
        }
    }
    let current: FxHashMap<usize, i64> = doc
        .nodes
        .source_url
        .index
        .iter()
        .zip(&doc.nodes.source_url.value)
        .filter_map(|(&i, &v)| usize::try_from(i).ok().map(|i| (i, v)))
        .collect();
    // An image under a clickable element names it (the icon inside a button-like span).
    let mut image_of: FxHashMap<usize, &str> = FxHashMap::default();
    for i in 0..n {
        let Some(src) = doc.image_source(i, &current) else {
            continue;
        };
        let mut at = i;
        for _ in 0..=IMAGE_DEPTH {
            if clickable[at] && rendered[at] {
                image_of.entry(at).or_insert(src);
            }
            match doc
                .nodes
                .parent
                .get(at)
                .and_then(|&p| usize::try_from(p).ok())
            {
                Some(p) if p < n => at = p,
                _ => break,
            }
        }
    }
    let mut out = Clickables::new();
    for i in (0..n).filter(|&i| clickable[i] && rendered[i]) {
        let hint = hint_of(doc, i, image_of.get(&i).copied());
        out.insert(doc.nodes.backend[i], hint.as_deref());
    }
    FrameClickables {
        frame_id: frame,
        clickable: out,
    }
}

/// Reads a `DOMSnapshot.captureSnapshot` result (bytes of the result object, or of the whole
/// CDP response message): per document, its clickable elements that have a layout box.
///
/// # Errors
/// A payload that is not a `DOMSnapshot.captureSnapshot` result.
pub fn clickables(bytes: &[u8]) -> Result<Vec<FrameClickables>, AxError> {
    let text = std::str::from_utf8(bytes).map_err(|e| AxError::Utf8(e.to_string()))?;
    let mut envelope: Envelope =
        serde_json::from_str(text).map_err(|e| AxError::Json(format!("DOM snapshot: {e}")))?;
    loop {
        if let Some(error) = envelope.error {
            let message = error.message.as_deref().unwrap_or("no message").to_owned();
            return Err(AxError::Json(format!(
                "DOM snapshot: the browser answered with an error: {message}"
            )));
        }
        match envelope.result {
            Some(inner) if envelope.documents.is_none() => envelope = *inner,
            _ => break,
        }
    }
    let documents = envelope
        .documents
        .ok_or_else(|| AxError::Json("DOM snapshot: no \"documents\" array".to_owned()))?;
    let strings = envelope.strings.unwrap_or_default();
    let mut out = Vec::with_capacity(documents.len());
    for d in &documents {
        let len = d.nodes.backend.len();
        if d.nodes.parent.len() > len || d.nodes.name.len() > len || d.nodes.attributes.len() > len
        {
            return Err(AxError::Json(
                "DOM snapshot: node arrays of different lengths".to_owned(),
            ));
        }
        let frame = usize::try_from(d.frame_id)
            .ok()
            .and_then(|i| strings.get(i))
            .map(std::string::ToString::to_string);
        let doc = Doc {
            nodes: &d.nodes,
            layout: &d.layout.node,
            strings: &strings,
        };
        out.push(clickables_of(&doc, frame));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SNAPSHOT: &str = r##"{"documents": [{"frameId": 0, "nodes": {
        "parentIndex": [-1, 0, 1, 1, 1, 4, 1, 1],
        "nodeName": [1, 2, 3, 3, 3, 4, 3, 5],
        "backendNodeId": [10, 11, 12, 13, 14, 15, 16, 17],
        "attributes": [[], [], [6, 7], [6, 8], [], [9, 10], [11, 12], [9, 13]],
        "isClickable": {"index": [2, 3, 4, 6, 7]}},
        "layout": {"nodeIndex": [0, 1, 2, 3, 4, 5, 7]}}],
        "strings": ["F1", "#document", "BODY", "SPAN", "IMG", "DIV", "class", "icon trash",
                    "x css1n7v3ny", "src", "/icons/star-outline.png?v=2", "title", "Archive",
                    "data:image/png;base64,xyz"]}"##;

    #[test]
    fn reads_clickables_with_layout_and_hints() {
        let docs = clickables(SNAPSHOT.as_bytes()).unwrap();
        assert_eq!(docs.len(), 1);
        let d = &docs[0];
        assert_eq!(d.frame_id.as_deref(), Some("F1"));
        let c = &d.clickable;
        assert_eq!(c.hint(12), Some("icon trash"));
        assert_eq!(c.hint(13), Some("x")); // a generated class word is left out
        assert_eq!(c.hint(14), Some("star-outline")); // from the image inside
        assert!(!c.contains(16), "no layout box: hidden");
        assert!(
            c.contains(17) && c.hint(17).is_none(),
            "a data: URL says nothing"
        );
        assert_eq!(c.len(), 4);
    }

    #[test]
    fn envelopes_and_errors() {
        let wrapped = format!("{{\"id\": 3, \"result\": {SNAPSHOT}}}");
        assert_eq!(clickables(wrapped.as_bytes()).unwrap().len(), 1);
        let e = clickables(br#"{"id": 3, "error": {"message": "no target"}}"#).unwrap_err();
        assert!(e.to_string().contains("no target"), "{e}");
        assert!(clickables(b"{}").is_err());
        assert!(clickables(b"\xff").is_err());
        let ragged = r#"{"documents": [{"frameId": 0, "nodes": {"parentIndex": [-1, 0], "backendNodeId": [1]}}], "strings": []}"#;
        assert!(clickables(ragged.as_bytes()).is_err());
    }

    #[test]
    fn file_stems() {
        assert_eq!(
            file_stem("https://x.test/a/star-outline.png?v=2").as_deref(),
            Some("star-outline")
        );
        assert_eq!(file_stem("#icon-trash").as_deref(), Some("icon-trash"));
        assert_eq!(file_stem("sprite.svg#heart").as_deref(), Some("sprite"));
        assert_eq!(file_stem("data:image/png;base64,AAA"), None);
        assert_eq!(file_stem("/img/123.png"), None);
    }
}
