//! Writing the arena out as HTML: attributes in source order with `node="N"` last, raw text
//! kept raw where a reader expects it, everything else escaped so that a reader finds exactly
//! the arena's elements.

use super::tokenize::script_text_hides_end_tag;
use super::tree::{is_void, Dom, Kind, NONE, RAW_TEXT_ELEMENTS};

impl Dom {
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
                    if raw_in == Some("script") && script_text_hides_end_tag(t) {
                        // `<!--` then `<script` with no way back: a reader would take our
                        // `</script>` as more script. `<\!--` reads the same inside a JS
                        // string or regex and keeps the reader out of that state; so does
                        // `<\/script`, for the `</script`s the escape had kept inside.
                        write_unescaped_script(&mut out, t);
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

/// Script text with `<!--` written `<\!--` and `</script` (any case) `<\/script`: a reader
/// never enters the escape states, and meets no end tag inside.
fn write_unescaped_script(out: &mut String, text: &str) {
    let mut rest = text;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let after = &rest.as_bytes()[i + 1..];
        if after.starts_with(b"!--") {
            out.push_str("<\\!");
            rest = &rest[i + 2..];
        } else if after.len() >= 7
            && after[0] == b'/'
            && after[1..7].eq_ignore_ascii_case(b"script")
        {
            out.push_str("<\\/");
            rest = &rest[i + 2..];
        } else {
            out.push('<');
            rest = &rest[i + 1..];
        }
    }
    out.push_str(rest);
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
