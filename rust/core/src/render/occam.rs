//! Spec section 3: the aligned ("occam") form.
//!
//! The renderer walks the structural tree with an explicit stack (no recursion), deciding
//! per node whether it prints a line, dissolves into its parent (blank containers), or is
//! printed as Markdown (rows, list items, description lists) or on one line (option
//! popups). Every structural node is handled by exactly one of these paths, which is what
//! keeps each action target on the page exactly once.

use std::collections::HashSet;

use super::Rendered;
use crate::axtree::roles::occam_shown_prop;
use crate::axtree::{AxTree, Prop, RoleClass, Value, NONE};
use crate::text::{normalize_ws, push_md_cell, push_py_repr};

/// How to render.
#[derive(Debug, Clone, Copy)]
pub struct OccamOptions<'m> {
    /// Print element ids on action targets (false for history replay).
    pub show_ids: bool,
    /// Print links' `url` property (hidden by default: it doubles a page's length).
    pub show_urls: bool,
    /// Render only the nodes marked true (the pivotal subtree).
    pub mask: Option<&'m [bool]>,
}

impl Default for OccamOptions<'_> {
    fn default() -> Self {
        OccamOptions { show_ids: true, show_urls: false, mask: None }
    }
}

pub fn render(tree: &AxTree, opts: OccamOptions) -> Rendered {
    let mut r = Renderer::new(tree, opts);
    r.run();
    r.out
}

/// Work left on the stack.
enum Frame {
    /// Render node `n` at `depth`; `merge` is the nearest ancestor whose printed name
    /// absorbs text contained in it (NONE when there is none).
    Enter { n: u32, depth: u32, merge: u32 },
    /// Consecutive siblings printed as one line: a `text` run, or in a list item the
    /// item's inline content.
    Group { kids: Vec<u32>, depth: u32, merge: u32, markdown: bool },
    /// A run of term/definition siblings.
    Terms { kids: Vec<u32>, depth: u32 },
    /// After a list item's content: put its marker on the item's first line.
    ItemExit { start: usize, depth: u32, marker: String },
}

struct Renderer<'t> {
    t: &'t AxTree,
    o: OccamOptions<'t>,
    out: Rendered,
    /// The subtree is text and inline formatting only (joins a text run).
    inline_text: Vec<bool>,
    /// The subtree fits on one Markdown line (list item content).
    inlineable: Vec<bool>,
    stack: Vec<Frame>,
}

const TRANSPARENT_WHEN_BLANK: u32 = RoleClass::DROP_WHEN_BLANK
    | RoleClass::INLINE
    | RoleClass::IMAGE
    | RoleClass::TEXT
    | RoleClass::TABLE
    | RoleClass::LIST
    | RoleClass::ROWGROUP
    | RoleClass::DESCRIPTION_LIST;

fn is_bullet(s: &str) -> bool {
    s.chars().all(|c| "•◦▪▫■□●○‣⁃–—-*·►▸➢✓✔ ".contains(c))
}

fn is_ordinal(s: &str) -> bool {
    let body = s.strip_suffix('.').or_else(|| s.strip_suffix(')'));
    matches!(body, Some(b) if !b.is_empty() && b.chars().count() <= 10 && b.chars().all(char::is_alphanumeric))
}

impl<'t> Renderer<'t> {
    fn new(t: &'t AxTree, o: OccamOptions<'t>) -> Self {
        let n = t.len();
        let mut inline_text = vec![false; n];
        let mut inlineable = vec![false; n];
        // Children come after parents in pre-order, so the reverse sees them first.
        for &i in t.s_order.iter().rev() {
            let node = t.node(i);
            let c = node.class;
            let kids = t.s_children(i);
            let kids_text = kids.iter().all(|&k| inline_text[k as usize]);
            let kids_inline = kids.iter().all(|&k| inlineable[k as usize]);
            inline_text[i as usize] = kids_text
                && c.has(RoleClass::TEXT | RoleClass::INLINE)
                && !c.has(RoleClass::INTERACTIVE);
            let wrapper = c.has(RoleClass::DROP_WHEN_BLANK)
                && !c.has(RoleClass::LIST | RoleClass::LIST_ITEM)
                && node.norm_name().is_empty();
            inlineable[i as usize] = kids_inline
                && (wrapper
                    || c.has(
                        RoleClass::TEXT
                            | RoleClass::INLINE
                            | RoleClass::INTERACTIVE
                            | RoleClass::IMAGE
                            | RoleClass::LIST_MARKER,
                    ));
        }
        Renderer { t, o, out: Rendered::default(), inline_text, inlineable, stack: Vec::new() }
    }

    fn in_mask(&self, n: u32) -> bool {
        self.o.mask.is_none_or(|m| m[n as usize])
    }

    fn class(&self, n: u32) -> RoleClass {
        self.t.node(n).class
    }

    fn name(&self, n: u32) -> &'t str {
        self.t.node(n).norm_name()
    }

    fn shown_props(&self, n: u32) -> impl Iterator<Item = &'t Prop> + '_ {
        self.t.props(n).iter().filter(move |p| {
            let name = p.name.as_ref();
            let empty = matches!(&p.value, Value::Str(v) if v.trim().is_empty());
            !empty
                && ((occam_shown_prop(name) && !(name == "required" && !p.value.is_true()))
                    || (self.o.show_urls && name == "url"))
        })
    }

    /// A blank container or formatting node: prints nothing, its children take its place.
    fn transparent(&self, n: u32) -> bool {
        self.class(n).has(TRANSPARENT_WHEN_BLANK)
            && self.name(n).is_empty()
            && self.shown_props(n).next().is_none()
    }

    /// A plain node (not an action target, nothing rendered specially) whose whole label
    /// would repeat the absorbing ancestor's name: `link 'Logo' > image 'Logo'`.
    fn repeats_ancestor(&self, n: u32, merge: u32) -> bool {
        const SPECIAL: u32 = RoleClass::INTERACTIVE
            | RoleClass::ROW
            | RoleClass::LIST_ITEM
            | RoleClass::LIST_MARKER
            | RoleClass::OPTION_POPUP
            | RoleClass::TERM
            | RoleClass::DEFINITION
            | RoleClass::DOCUMENT;
        let name = self.name(n);
        !self.class(n).has(SPECIAL)
            && !name.is_empty()
            && self.contained(merge, name)
            && self.t.node(n).value.is_none()
            && self.shown_props(n).next().is_none()
    }

    /// Prints as its own labelled piece (role, id) rather than as bare text.
    fn labelled(&self, n: u32) -> bool {
        !self.class(n).has(RoleClass::ID_HIDDEN) && !self.transparent(n)
    }

    /// Whether `text` is already printed by `merge`'s name or current value.
    fn contained(&self, merge: u32, text: &str) -> bool {
        if merge == NONE {
            return false;
        }
        self.name(merge).contains(text)
            || matches!(&self.t.node(merge).value, Some(Value::Str(v)) if normalize_ws(v).contains(text))
    }

    /// An action target's name already says `text` (a label beside its checkbox).
    fn said_by_target(&self, n: u32, text: &str) -> bool {
        self.in_mask(n) && self.class(n).has(RoleClass::INTERACTIVE) && self.name(n).contains(text)
    }

    /// The ancestor whose name absorbs the children's text, once `n` printed `name`.
    fn merge_after(&self, n: u32, printed_name: &str, inherited: u32) -> u32 {
        let has_value = matches!(&self.t.node(n).value, Some(Value::Str(v)) if !v.trim().is_empty());
        if printed_name.is_empty() && !has_value {
            inherited
        } else if self.class(n).has(RoleClass::DOCUMENT) {
            NONE
        } else {
            n
        }
    }

    fn label(&self, n: u32, name: &str, ids: &mut Vec<i64>) -> String {
        let node = self.t.node(n);
        let c = node.class;
        let mut s = String::with_capacity(node.role.len() + name.len() + 12);
        if c.has(RoleClass::TEXT | RoleClass::LABEL_TEXT) {
            s.push_str("text");
        } else {
            s.push_str(&node.role);
        }
        if self.o.show_ids && !c.has(RoleClass::ID_HIDDEN) {
            s.push_str(" [");
            s.push_str(&node.element_id.to_string());
            s.push(']');
            ids.push(node.element_id);
        }
        if !name.is_empty() {
            s.push(' ');
            push_py_repr(&mut s, name);
        }
        match &node.value {
            Some(Value::Str(v)) => {
                let v = normalize_ws(v);
                if !v.is_empty() {
                    s.push_str(" value: ");
                    push_py_repr(&mut s, &v);
                }
            }
            Some(v) => {
                s.push_str(" value: ");
                s.push_str(&v.py_str());
            }
            None => {}
        }
        for p in self.shown_props(n) {
            s.push_str(" [");
            s.push_str(&p.name);
            s.push_str(": ");
            s.push_str(&p.value.py_str());
            s.push(']');
        }
        s
    }

    fn masked_kids(&self, n: u32) -> Vec<u32> {
        self.t.s_children(n).iter().copied().filter(|&k| self.in_mask(k)).collect()
    }

    /// Options of a popup (or of a combobox owning one) when all of them are plain
    /// options whose text is their name, so one line loses nothing.
    fn options_of(&self, n: u32) -> Option<Vec<u32>> {
        let c = self.class(n);
        if !c.has(RoleClass::OPTION_POPUP | RoleClass::COMBOBOX) {
            return None;
        }
        let kids = self.masked_kids(n);
        if c.has(RoleClass::COMBOBOX)
            && kids.len() == 1
            && self.class(kids[0]).has(RoleClass::OPTION_POPUP)
        {
            let inner = self.masked_kids(kids[0]);
            return self.simple_options(&inner).then_some(inner);
        }
        self.simple_options(&kids).then_some(kids)
    }

    fn simple_options(&self, kids: &[u32]) -> bool {
        !kids.is_empty()
            && kids.iter().all(|&o| {
                if !self.class(o).has(RoleClass::OPTION) {
                    return false;
                }
                let name = self.name(o);
                let mut stack: Vec<u32> = self.t.s_children(o).to_vec();
                while let Some(d) = stack.pop() {
                    let dn = self.name(d);
                    let fits = self.class(d).has(RoleClass::TEXT | RoleClass::INLINE)
                        && (dn.is_empty() || name.contains(dn));
                    if !fits {
                        return false;
                    }
                    stack.extend_from_slice(self.t.s_children(d));
                }
                true
            })
    }

    fn options_line(&self, n: u32, options: &[u32], ids: &mut Vec<i64>) -> String {
        let mut s = self.label(n, self.name(n), ids);
        s.push_str(" options:");
        for (k, &o) in options.iter().enumerate() {
            s.push_str(if k == 0 { " " } else { "; " });
            let node = self.t.node(o);
            if self.o.show_ids {
                s.push('[');
                s.push_str(&node.element_id.to_string());
                s.push_str("] ");
                ids.push(node.element_id);
            }
            push_py_repr(&mut s, node.norm_name());
            for flag in ["selected", "checked", "disabled"] {
                if self.t.prop(o, flag).is_some_and(Value::is_true) {
                    s.push_str(" (");
                    s.push_str(flag);
                    s.push(')');
                }
            }
        }
        s
    }

    fn marker(&self, marker_node: u32) -> String {
        if marker_node == NONE {
            return "-".into();
        }
        let t = self.name(marker_node);
        if t.is_empty() || is_bullet(t) {
            "-".into()
        } else if is_ordinal(t) {
            t.to_owned()
        } else {
            format!("- {t}")
        }
    }

    /// Flattens a subtree into pieces of one line, in reading order: text as is,
    /// labelled nodes (action targets, named images) as `role [id] 'name'`.
    fn flatten(&self, root: u32, merge: u32, skip_root_name: bool, pieces: &mut Vec<String>, ids: &mut Vec<i64>) {
        let mut stack: Vec<(u32, u32)> = vec![(root, merge)];
        while let Some((n, m)) = stack.pop() {
            if !self.in_mask(n) {
                continue;
            }
            let c = self.class(n);
            let name = self.name(n);
            let mut child_merge = m;
            if c.has(RoleClass::LIST_MARKER) {
                if !name.is_empty() && !is_bullet(name) && !self.contained(m, name) {
                    pieces.push(name.to_owned());
                }
            } else if let Some(opts) = self.options_of(n) {
                pieces.push(self.options_line(n, &opts, ids));
                continue;
            } else if n == root && skip_root_name {
                child_merge = NONE;
            } else if self.repeats_ancestor(n, m) {
                // Said by the ancestor already; its children still count.
            } else if self.labelled(n) {
                pieces.push(self.label(n, name, ids));
                child_merge = self.merge_after(n, name, m);
            } else if !name.is_empty() && !self.contained(m, name) {
                pieces.push(name.to_owned());
                child_merge = self.merge_after(n, name, m);
            }
            for &k in self.t.s_children(n).iter().rev() {
                stack.push((k, child_merge));
            }
        }
    }

    /// A cell's, term's or detail's text: its content, and its name where the content
    /// does not already say it.
    fn content_text(&self, n: u32, ids: &mut Vec<i64>) -> String {
        let mut pieces = Vec::new();
        // A labelled node (a link straight inside a row) prints its own label.
        let labelled = self.labelled(n);
        self.flatten(n, NONE, !labelled, &mut pieces, ids);
        if labelled {
            return pieces.join(" ");
        }
        let joined = pieces.join(" ");
        let name = self.name(n);
        if name.is_empty() || joined.contains(name) {
            joined
        } else if joined.is_empty() {
            name.to_owned()
        } else {
            format!("{name} {joined}")
        }
    }

    fn push_with_ids(&mut self, depth: u32, text: String, ids: Vec<i64>) {
        let at = self.out.push_line(depth, text);
        self.out.ids.extend(ids.into_iter().map(|id| (at, id)));
    }

    /// Children that render: in the mask, not the consumed list marker, and text leaves
    /// that neither repeat the absorbing ancestor's name nor an earlier sibling.
    fn kids_of(&self, n: u32, merge: u32, skip: u32) -> Vec<u32> {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut kids = Vec::new();
        let all = self.t.s_children(n);
        for (pos, &k) in all.iter().enumerate() {
            if k == skip || !self.in_mask(k) {
                continue;
            }
            if self.class(k).has(RoleClass::TEXT) && self.t.s_children(k).is_empty() {
                let text = self.name(k);
                let beside = |p: Option<usize>| p.and_then(|p| all.get(p)).is_some_and(|&s| self.said_by_target(s, text));
                if text.is_empty()
                    || self.contained(merge, text)
                    || beside(pos.checked_sub(1))
                    || beside(Some(pos + 1))
                    || !seen.insert(text)
                {
                    continue;
                }
            }
            kids.push(k);
        }
        kids
    }

    fn push_children(&mut self, kids: Vec<u32>, depth: u32, merge: u32, markdown: bool) {
        let mut frames: Vec<Frame> = Vec::new();
        let mut group: Vec<u32> = Vec::new();
        let mut terms: Vec<u32> = Vec::new();
        for k in kids {
            let is_term = self.class(k).has(RoleClass::TERM | RoleClass::DEFINITION);
            let joins = !is_term
                && if markdown { self.inlineable[k as usize] } else { self.inline_text[k as usize] };
            if !group.is_empty() && !joins {
                frames.push(Frame::Group { kids: std::mem::take(&mut group), depth, merge, markdown });
            }
            if !terms.is_empty() && !is_term {
                frames.push(Frame::Terms { kids: std::mem::take(&mut terms), depth });
            }
            if is_term {
                terms.push(k);
            } else if joins {
                group.push(k);
            } else {
                frames.push(Frame::Enter { n: k, depth, merge });
            }
        }
        if !group.is_empty() {
            frames.push(Frame::Group { kids: group, depth, merge, markdown });
        }
        if !terms.is_empty() {
            frames.push(Frame::Terms { kids: terms, depth });
        }
        self.stack.extend(frames.into_iter().rev());
    }

    fn run(&mut self) {
        for &r in self.t.s_roots.iter().rev() {
            if self.in_mask(r) {
                self.stack.push(Frame::Enter { n: r, depth: 0, merge: NONE });
            }
        }
        while let Some(frame) = self.stack.pop() {
            match frame {
                Frame::Enter { n, depth, merge } => self.enter(n, depth, merge),
                Frame::Group { kids, depth, merge, markdown } => {
                    let mut pieces = Vec::new();
                    let mut ids = Vec::new();
                    for k in kids {
                        self.flatten(k, merge, false, &mut pieces, &mut ids);
                    }
                    if pieces.is_empty() {
                        continue;
                    }
                    let joined = pieces.join(" ");
                    let text = if markdown {
                        joined
                    } else {
                        let mut s = String::from("text ");
                        push_py_repr(&mut s, &joined);
                        s
                    };
                    self.push_with_ids(depth, text, ids);
                }
                Frame::Terms { kids, depth } => self.terms(kids, depth),
                Frame::ItemExit { start, depth, marker } => {
                    if let Some(line) = self.out.lines.get_mut(start) {
                        line.depth = depth;
                        line.text = format!("{marker} {}", line.text);
                    } else if marker != "-" {
                        // An empty item still shows its number or custom marker.
                        self.out.push_line(depth, marker);
                    }
                }
            }
        }
    }

    fn enter(&mut self, n: u32, depth: u32, merge: u32) {
        let c = self.class(n);
        let name = self.name(n);
        if c.has(RoleClass::LIST_MARKER) {
            // A marker outside a list item (the item consumes its own).
            if !name.is_empty() && !is_bullet(name) {
                let line = self.label(n, name, &mut Vec::new());
                self.out.push_line(depth, line.replacen("ListMarker", "text", 1));
            }
            let kids = self.kids_of(n, merge, NONE);
            self.push_children(kids, depth, merge, false);
        } else if c.has(RoleClass::ROW) {
            self.row(n, depth);
        } else if let Some(opts) = self.options_of(n) {
            let mut ids = Vec::new();
            let line = self.options_line(n, &opts, &mut ids);
            self.push_with_ids(depth, line, ids);
        } else if c.has(RoleClass::LIST_ITEM) {
            let marker_node = self
                .t
                .s_children(n)
                .iter()
                .copied()
                .find(|&k| self.in_mask(k) && self.class(k).has(RoleClass::LIST_MARKER))
                .unwrap_or(NONE);
            let marker = self.marker(marker_node);
            let start = self.out.lines.len();
            self.stack.push(Frame::ItemExit { start, depth, marker });
            if !name.is_empty() {
                self.out.push_line(depth + 1, name.to_owned());
            }
            let merge = self.merge_after(n, name, merge);
            let kids = self.kids_of(n, merge, marker_node);
            self.push_children(kids, depth + 1, merge, true);
        } else if self.transparent(n) || self.repeats_ancestor(n, merge) {
            let kids = self.kids_of(n, merge, NONE);
            self.push_children(kids, depth, merge, false);
        } else {
            let mut ids = Vec::new();
            if name.is_empty() && !c.has(RoleClass::DROP_WHEN_BLANK) {
                // The only text of an unnamed node becomes its name: button [4] 'Search'.
                let kids = self.kids_of(n, NONE, NONE);
                if !kids.is_empty() && kids.iter().all(|&k| self.inline_text[k as usize]) {
                    let mut pieces = Vec::new();
                    for &k in &kids {
                        self.flatten(k, NONE, false, &mut pieces, &mut ids);
                    }
                    let line = self.label(n, &pieces.join(" "), &mut ids);
                    self.push_with_ids(depth, line, ids);
                    return;
                }
            }
            let line = self.label(n, name, &mut ids);
            self.push_with_ids(depth, line, ids);
            let merge = self.merge_after(n, name, NONE);
            let kids = self.kids_of(n, merge, NONE);
            self.push_children(kids, depth + 1, merge, false);
        }
    }

    /// `| a | b |`, and `| --- |` after a row of column headers.
    fn row(&mut self, n: u32, depth: u32) {
        let cells = self.masked_kids(n);
        let mut ids = Vec::new();
        let mut texts: Vec<String> = cells.iter().map(|&c| self.content_text(c, &mut ids)).collect();
        // A row's name is normally its cells' text; one that says more is kept, first.
        let name = self.name(n);
        if !name.is_empty() && !texts.join(" ").contains(name) {
            texts.insert(0, name.to_owned());
        }
        if texts.is_empty() {
            return;
        }
        let mut line = String::from("|");
        for t in &texts {
            line.push(' ');
            push_md_cell(&mut line, t);
            line.push_str(" |");
        }
        self.push_with_ids(depth, line, ids);
        let header = !cells.is_empty()
            && texts.len() == cells.len()
            && cells.iter().all(|&c| self.t.node(c).role.as_ref() == "columnheader");
        if header {
            let sep = format!("|{}", " --- |".repeat(cells.len()));
            self.out.push_line(depth, sep);
        }
    }

    /// `Term: Detail` lines for a run of term/definition siblings (inside a
    /// `DescriptionList` or any element with an ARIA role that kept `<dt>`/`<dd>`).
    /// Several details of one term are joined with `; `.
    fn terms(&mut self, kids: Vec<u32>, depth: u32) {
        let mut terms: Vec<String> = Vec::new();
        let mut details: Vec<String> = Vec::new();
        let mut ids: Vec<i64> = Vec::new();
        for k in kids {
            if self.class(k).has(RoleClass::TERM) {
                if !details.is_empty() {
                    self.flush_entry(depth, &mut terms, &mut details, &mut ids);
                }
                let t = self.content_text(k, &mut ids);
                terms.push(t);
            } else {
                let d = self.content_text(k, &mut ids);
                details.push(d);
            }
        }
        self.flush_entry(depth, &mut terms, &mut details, &mut ids);
    }

    fn flush_entry(&mut self, depth: u32, terms: &mut Vec<String>, details: &mut Vec<String>, ids: &mut Vec<i64>) {
        if terms.is_empty() && details.is_empty() {
            return;
        }
        let terms_text = terms.iter().filter(|t| !t.is_empty()).cloned().collect::<Vec<_>>().join(" / ");
        let details_text = details.iter().filter(|d| !d.is_empty()).cloned().collect::<Vec<_>>().join("; ");
        // Terms often carry their own colon ("Rating:"); never print two.
        let colon = if terms_text.ends_with(':') || terms_text.ends_with('：') { "" } else { ":" };
        let line = match (terms_text.is_empty(), details_text.is_empty()) {
            (false, false) => format!("{terms_text}{colon} {details_text}"),
            (false, true) => format!("{terms_text}{colon}"),
            (true, _) => details_text,
        };
        terms.clear();
        details.clear();
        let ids = std::mem::take(ids);
        if !line.is_empty() {
            self.push_with_ids(depth, line, ids);
        }
    }
}
