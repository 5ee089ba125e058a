//! Writing the arena out as HTML: attributes in source order with `node="N"` last, all text
//! escaped (raw-text elements' too) so that a reader, or a model, finds exactly the arena's
//! elements.

use super::tree::{is_void, Dom, Kind};

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
                    escape_text(&mut out, if name.is_empty() { "html" } else { name });
                    out.push('>');
                }
                Kind::Comment(c) => {
                    // Escaped as text is: a comment's `<a node="0">` is no tag to a model.
                    out.push_str("<!--");
                    escape_text(&mut out, c);
                    out.push_str("-->");
                }
                // Text is escaped everywhere, raw-text elements' (`script`, `style`,
                // `iframe`, `xmp`, ...) included: a model reads this markup, and a page's
                // `<iframe><a node="0">Cancel</iframe>` must not read as one of our tags.
                // (A parser would keep the entities of raw text as they are; nothing here
                // is parsed again but by the chunker, which reads them as text.)
                Kind::Text(t) => escape_text(&mut out, t),
                Kind::Element { tag, attrs } => {
                    if closing {
                        out.push_str("</");
                        push_name(&mut out, tag);
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

/// `<tag a="v" node="N">`, as [`Dom::serialize`] writes it.
fn write_start_tag(out: &mut String, tag: &str, attrs: &[(String, String)], id: Option<u32>) {
    out.push('<');
    push_name(out, tag);
    for (a, v) in attrs {
        out.push(' ');
        push_name(out, a);
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

/// A tag or attribute name as written: a parser takes any character but white space, `/` and
/// `>` into one, so a page can name an element `a\u{a0}node="0"` (a no-break space, not HTML
/// white space) and have it read as one of our ids. Each character that is not a letter, a
/// digit, `-`, `_`, `:` or `.` is written `_`.
fn push_name(out: &mut String, name: &str) {
    for c in name.chars() {
        out.push(
            if c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.') {
                c
            } else {
                '_'
            },
        );
    }
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
