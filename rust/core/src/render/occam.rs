//! Spec section 3: the aligned ("occam") form.
//!
//! The renderer walks the structural tree with an explicit stack (no recursion), deciding
//! per node whether it prints a line, dissolves into its parent (blank containers), or is
//! printed as Markdown (rows, list items, description lists), on one line (option popups)
//! or as part of a run of text. Every structural node is handled by exactly one of these
//! paths, which is what keeps each action target on the page exactly once.
//!
//! Text is decided run by run, never piece by piece: a run (consecutive text and inline
//! formatting siblings) is printed whole or, when an ancestor's name or a neighbouring
//! control's label already says all of it, not at all.

use std::collections::HashSet;

use rustc_hash::FxHashMap;

use super::runs::{
    code_lines, concat, fence_for, holds_line_break, join_line, squash, Piece, PieceKind,
};
use super::{IdStyle, Rendered, OWN_BRACKET};
use crate::axtree::roles::occam_shown_prop;
use crate::axtree::{AxTree, Prop, RoleClass, Sep, Value, NONE};
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
    /// Labels in place of ids, and new-element marks.
    pub ids: IdStyle<'m>,
}

impl Default for OccamOptions<'_> {
    fn default() -> Self {
        OccamOptions {
            show_ids: true,
            show_urls: false,
            mask: None,
            ids: IdStyle::default(),
        }
    }
}

pub fn render(tree: &AxTree, opts: OccamOptions) -> Rendered {
    let mut r = Renderer::new(tree, opts);
    r.run();
    r.out.seal();
    r.out
}

/// Work left on the stack.
enum Frame {
    /// Render node `n` at `depth`; `merge` is the nearest ancestor whose printed name
    /// absorbs text contained in it (NONE when there is none).
    Enter { n: u32, depth: u32, merge: u32 },
    /// A line already composed (a run of text, a code block's line, a list item's content).
    Line {
        depth: u32,
        text: String,
        ids: Vec<i64>,
    },
    /// A run of term/definition siblings.
    Terms { kids: Vec<u32>, depth: u32 },
    /// After a list item's content: put its marker on the item's first line.
    ItemExit {
        start: usize,
        depth: u32,
        marker: String,
    },
}

/// Per-node facts computed bottom-up once, before rendering.
struct Facts {
    /// The subtree is text and inline formatting only, with no action target (joins a run).
    inline_text: Vec<bool>,
    /// The subtree fits on one Markdown line (list item content).
    inlineable: Vec<bool>,
    /// The subtree holds text with a line break (preformatted).
    pre_text: Vec<bool>,
    /// A strict descendant (in the mask) is an action target.
    target_below: Vec<bool>,
    /// A strict descendant (in the mask) has a non-blank name.
    text_below: Vec<bool>,
    /// A text in the subtree is not shown (see `Node::unshown_text`).
    unshown_below: Vec<bool>,
}

struct Renderer<'t> {
    t: &'t AxTree,
    o: OccamOptions<'t>,
    out: Rendered,
    f: Facts,
    stack: Vec<Frame>,
    /// `absorbed`'s verdict per node once computed (each subtree's text is read at most once
    /// for it, however deep the labelled nodes nest).
    absorbed_memo: std::cell::RefCell<Vec<Option<bool>>>,
    /// Per table (its arena index): how many more of its rows each column is taken by a cell
    /// above that spans rows. Rows are entered in document order, so a row finds what the
    /// rows before it left.
    row_spans: FxHashMap<u32, Vec<u32>>,
}

/// The most columns or rows one cell is taken to span: a page's `colspan="1000"` on every cell
/// must not print thousands of empty cells per row.
const MAX_SPAN: u32 = 64;

const TRANSPARENT_WHEN_BLANK: u32 = RoleClass::DROP_WHEN_BLANK
    | RoleClass::INLINE
    | RoleClass::IMAGE
    | RoleClass::TEXT
    | RoleClass::TABLE
    | RoleClass::LIST
    | RoleClass::ROWGROUP
    | RoleClass::DESCRIPTION_LIST;

/// Roles that say nothing about an element: a clickable one prints as `clickable`.
fn role_is_generic(role: &str) -> bool {
    matches!(role, "generic" | "none" | "Section" | "group" | "Div")
}

fn is_bullet(s: &str) -> bool {
    s.chars().all(|c| "•◦▪▫■□●○‣⁃–—-*·►▸➢✓✔ ".contains(c))
}

fn is_ordinal(s: &str) -> bool {
    let body = s.strip_suffix('.').or_else(|| s.strip_suffix(')'));
    matches!(body, Some(b) if !b.is_empty() && b.chars().count() <= 10 && b.chars().all(char::is_alphanumeric))
}

/// A property value as the occam form prints it: booleans spelled one way, `true`/`false`,
/// whether Chromium sent a JSON boolean or a tristate token.
fn occam_value(v: &Value) -> String {
    match v {
        Value::Bool(true) => "true".into(),
        Value::Bool(false) => "false".into(),
        other => other.py_str(),
    }
}

/// Pieces of one line being collected, with the boundary still to attach to the next one.
#[derive(Default)]
struct Run {
    pieces: Vec<Piece>,
    ids: Vec<i64>,
    sep: Sep,
    /// Preformatted: targets are not put inline but listed after the code.
    pre: bool,
    labels: Vec<(String, Vec<i64>)>,
    /// Non-blank bytes pushed so far, and how many the caller needs at most: a collect stops
    /// once it holds more (a name can only contain text, spacing aside, no longer than itself).
    len: usize,
    limit: Option<usize>,
}

impl Run {
    fn full(&self) -> bool {
        self.limit.is_some_and(|l| self.len > l)
    }

    fn push(&mut self, text: String, kind: PieceKind) {
        self.len += text
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(char::len_utf8)
            .sum::<usize>();
        let sep = std::mem::take(&mut self.sep);
        self.pieces.push(Piece {
            text,
            kind,
            sep,
            trailing_space: false,
        });
    }

    /// An element's label; `raw_name` is its name as the page spaces it. Text may follow
    /// a label with no space only where the label ends with that name, quoted.
    fn push_label(&mut self, label: String, raw_name: &str) {
        let ends_with_name = label.ends_with(['\'', '"']);
        self.push(label, PieceKind::Label);
        if let Some(last) = self.pieces.last_mut() {
            last.trailing_space = !ends_with_name
                || raw_name
                    .chars()
                    .next_back()
                    .is_some_and(char::is_whitespace);
        }
    }

    fn boundary(&mut self, sep: Sep) {
        self.sep = self.sep.max(sep);
    }
}

impl<'t> Renderer<'t> {
    fn new(t: &'t AxTree, o: OccamOptions<'t>) -> Self {
        let n = t.len();
        let mut f = Facts {
            inline_text: vec![false; n],
            inlineable: vec![false; n],
            pre_text: vec![false; n],
            target_below: vec![false; n],
            text_below: vec![false; n],
            unshown_below: vec![false; n],
        };
        let in_mask = |k: u32| o.mask.is_none_or(|m| m[k as usize]);
        // Children come after parents in pre-order, so the reverse sees them first.
        for &i in t.s_order.iter().rev() {
            let node = t.node(i);
            let c = node.class;
            let kids = t.s_children(i);
            let kids_text = kids.iter().all(|&k| f.inline_text[k as usize]);
            let kids_inline = kids.iter().all(|&k| f.inlineable[k as usize]);
            // A text node is always part of its run (anything odd below it is collected in
            // line); inline formatting only when all it holds is text.
            f.inline_text[i as usize] = !c.has(RoleClass::TARGET)
                && (c.has(RoleClass::TEXT) || (kids_text && c.has(RoleClass::INLINE)));
            let wrapper = c.has(RoleClass::DROP_WHEN_BLANK)
                && !c.has(RoleClass::LIST | RoleClass::LIST_ITEM)
                && node.norm_name().is_empty();
            f.inlineable[i as usize] = kids_inline
                && (wrapper
                    || c.has(
                        RoleClass::TEXT
                            | RoleClass::INLINE
                            | RoleClass::TARGET
                            | RoleClass::IMAGE
                            | RoleClass::LIST_MARKER,
                    ));
            f.pre_text[i as usize] = (c.has(RoleClass::TEXT) && node.name.contains('\n'))
                || kids.iter().any(|&k| f.pre_text[k as usize]);
            f.unshown_below[i as usize] =
                node.unshown_text || kids.iter().any(|&k| f.unshown_below[k as usize]);
            for &k in kids.iter().filter(|&&k| in_mask(k)) {
                let kid = t.node(k);
                f.target_below[i as usize] |=
                    kid.class.has(RoleClass::TARGET) || f.target_below[k as usize];
                f.text_below[i as usize] |= !kid.norm_name().is_empty() || f.text_below[k as usize];
            }
        }
        Renderer {
            t,
            o,
            out: Rendered::default(),
            f,
            stack: Vec::new(),
            absorbed_memo: std::cell::RefCell::new(vec![None; n]),
            row_spans: FxHashMap::default(),
        }
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

    fn is_target(&self, n: u32) -> bool {
        self.class(n).has(RoleClass::TARGET)
    }

    /// The node's name was computed from contents that the tree shows in full: printing
    /// the contents says the name.
    fn contents_say_name(&self, n: u32) -> bool {
        self.t.node(n).name_from_contents && !self.f.unshown_below[n as usize]
    }

    /// The name the node prints. A name computed from the node's own contents is not
    /// printed where those contents are (they hold an action target, so they print
    /// themselves): every text reaches the model once. Action targets keep their names, and
    /// so does a node whose contents hold text the tree does not show.
    fn printed_name(&self, n: u32) -> &'t str {
        let node = self.t.node(n);
        if self.contents_say_name(n) && !self.is_target(n) && self.f.target_below[n as usize] {
            ""
        } else {
            node.norm_name()
        }
    }

    fn shown_props(&self, n: u32) -> impl Iterator<Item = &'t Prop> + '_ {
        self.t.props(n).iter().filter(move |p| {
            let name = p.name.as_ref();
            let empty = matches!(&p.value, Value::Str(v) if v.trim().is_empty());
            !empty
                // `required` only when true: "required: false" says nothing.
                && ((occam_shown_prop(name) && (name != "required" || p.value.is_true()))
                    || (self.o.show_urls && name == "url"))
        })
    }

    /// A blank container or formatting node: prints nothing, its children take its place.
    fn transparent(&self, n: u32) -> bool {
        let c = self.class(n);
        c.has(TRANSPARENT_WHEN_BLANK)
            && !c.has(RoleClass::TARGET)
            && self.printed_name(n).is_empty()
            && self.shown_props(n).next().is_none()
    }

    /// A plain node (not an action target, nothing rendered specially) whose whole label
    /// would repeat the absorbing ancestor's name: `link 'Logo' > image 'Logo'`.
    fn repeats_ancestor(&self, n: u32, merge: u32) -> bool {
        const SPECIAL: u32 = RoleClass::TARGET
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
        self.is_target(n) || (!self.class(n).has(RoleClass::ID_HIDDEN) && !self.transparent(n))
    }

    /// Whether `text` is already printed by `merge`'s name or current value. A name
    /// Chromium computed from the contents is compared spacing aside (it spaces block
    /// boundaries by layout, which the tree does not show).
    fn contained(&self, merge: u32, text: &str) -> bool {
        if merge == NONE {
            return false;
        }
        let node = self.t.node(merge);
        let name = node.norm_name();
        name.contains(text)
            || matches!(&node.value, Some(Value::Str(v)) if normalize_ws(v).contains(text))
            || (node.name_from_contents && squash(name).contains(&squash(text)))
    }

    /// An action target's name already says `text` (a label beside its checkbox).
    fn said_by_target(&self, n: u32, text: &str) -> bool {
        self.in_mask(n) && self.class(n).has(RoleClass::INTERACTIVE) && self.name(n).contains(text)
    }

    /// The ancestor whose name absorbs the children's text, once `n` printed `name`.
    fn merge_after(&self, n: u32, printed_name: &str, inherited: u32) -> u32 {
        let has_value =
            matches!(&self.t.node(n).value, Some(Value::Str(v)) if !v.trim().is_empty());
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
        if c.has(RoleClass::TEXT | RoleClass::LABEL_TEXT) && !c.has(RoleClass::TARGET) {
            s.push_str("text");
        } else if c.has(RoleClass::CLICKABLE)
            && (role_is_generic(&node.role) || c.has(RoleClass::TEXT))
        {
            s.push_str("clickable");
        } else {
            s.push_str(&node.role);
        }
        if self.o.show_ids
            && (c.has(RoleClass::TARGET) || !c.has(RoleClass::ID_HIDDEN))
            && self.o.ids.push(&mut s, node.element_id, true, false)
        {
            ids.push(node.element_id);
        }
        if !name.is_empty() {
            s.push(' ');
            push_py_repr(&mut s, name);
        }
        let mut has_value = false;
        match &node.value {
            Some(Value::Str(v)) => {
                let v = normalize_ws(v);
                if !v.is_empty() {
                    s.push_str(" value: ");
                    push_py_repr(&mut s, &v);
                    has_value = true;
                }
            }
            Some(v) => {
                s.push_str(" value: ");
                s.push_str(&occam_value(v));
                has_value = true;
            }
            None => {}
        }
        // An unnamed target with nothing to read (an icon): what its DOM says, marked as such.
        if c.has(RoleClass::TARGET)
            && name.is_empty()
            && !has_value
            && !self.f.text_below[n as usize]
        {
            if let Some(hint) = self.t.hint(n) {
                s.push_str(" hint: ");
                push_py_repr(&mut s, &normalize_ws(hint));
            }
        }
        for p in self.shown_props(n) {
            s.push(' ');
            s.push(OWN_BRACKET); // a property: pagelens' own bracket
            s.push_str(&p.name);
            s.push_str(": ");
            s.push_str(&occam_value(&p.value));
            s.push(']');
        }
        s
    }

    fn masked_kids(&self, n: u32) -> Vec<u32> {
        self.t
            .s_children(n)
            .iter()
            .copied()
            .filter(|&k| self.in_mask(k))
            .collect()
    }

    /// Options of a popup (or of a combobox owning one) when all of them are plain
    /// options whose text is their name, so one line loses nothing.
    fn options_of(&self, n: u32) -> Option<Vec<u32>> {
        let c = self.class(n);
        if !c.has(RoleClass::OPTION_POPUP | RoleClass::COMBOBOX) {
            return None;
        }
        let kids = self.masked_kids(n);
        // A popup that is itself a target (clickable) keeps its own line and id.
        if c.has(RoleClass::COMBOBOX)
            && kids.len() == 1
            && self.class(kids[0]).has(RoleClass::OPTION_POPUP)
            && !self.is_target(kids[0])
        {
            let inner = self.masked_kids(kids[0]);
            return self.simple_options(&inner).then_some(inner);
        }
        self.simple_options(&kids).then_some(kids)
    }

    fn simple_options(&self, kids: &[u32]) -> bool {
        !kids.is_empty()
            && kids.iter().all(|&o| {
                if !self.class(o).has(RoleClass::OPTION) || self.f.target_below[o as usize] {
                    return false;
                }
                let mut stack: Vec<u32> = self.t.s_children(o).to_vec();
                while let Some(d) = stack.pop() {
                    let dn = self.name(d);
                    let fits = self.class(d).has(RoleClass::TEXT | RoleClass::INLINE)
                        && (dn.is_empty() || self.contained(o, dn));
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
            if self.o.show_ids && self.o.ids.push(&mut s, node.element_id, false, true) {
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

    /// Whether `n`'s own name or value already says all the text of its subtree. Only text
    /// no longer than the name and value can be contained, so the subtree is read no
    /// further than that, and each node's verdict is computed once.
    fn says_subtree(&self, n: u32) -> bool {
        if let Some(known) = self.absorbed_memo.borrow()[n as usize] {
            return known;
        }
        let node = self.t.node(n);
        let value_len = match &node.value {
            Some(Value::Str(v)) => v.len(),
            _ => 0,
        };
        let mut run = Run {
            limit: Some(node.name.len() + value_len),
            ..Run::default()
        };
        self.collect(n, NONE, true, &mut run);
        let says = !run.full() && self.contained(n, &join_line(&run.pieces));
        self.absorbed_memo.borrow_mut()[n as usize] = Some(says);
        says
    }

    /// A target's descendants print nothing new: they hold no other target, and the
    /// target's name already says their text.
    fn absorbed(&self, n: u32, name: &str) -> bool {
        if self.f.target_below[n as usize] || !self.f.text_below[n as usize] {
            return !self.f.target_below[n as usize];
        }
        !name.is_empty() && self.says_subtree(n)
    }

    /// An element whose edges are a block boundary for the text around and inside it:
    /// Chromium joins names from contents with a space between different block flows, and
    /// so does the page. Inline formatting, text and targets (set off as labels) are not.
    fn is_block(&self, n: u32) -> bool {
        let parent = self.t.node(n).s_parent;
        !self.class(n).has(
            RoleClass::INLINE
                | RoleClass::TEXT
                | RoleClass::TARGET
                | RoleClass::IMAGE
                | RoleClass::LIST_MARKER,
        ) && (parent == NONE || !self.class(parent).has(RoleClass::TEXT)) // text holds no blocks
    }

    /// Collects a subtree into `run`, in reading order: text as the page has it, labelled
    /// nodes (action targets, named images) as `role [id] 'name'`. With `skip_root_name`,
    /// the root prints no name (its contents do).
    fn collect(&self, root: u32, merge: u32, skip_root_name: bool, run: &mut Run) {
        // (node, merge) to enter, or NONE and the node to leave. Below a label (`m` other
        // than the run's own `merge`), text the label already says is not repeated.
        let mut stack: Vec<(u32, u32)> = vec![(root, merge)];
        while let Some((n, m)) = stack.pop() {
            if run.full() {
                return;
            }
            if n == NONE {
                run.boundary(Sep::Space); // the end of a block
                continue;
            }
            if !self.in_mask(n) {
                continue;
            }
            let node = self.t.node(n);
            let c = node.class;
            // (The first piece of a line ignores its boundary.)
            run.boundary(node.sep_before);
            let block = self.is_block(n);
            if block {
                run.boundary(Sep::Space);
            }
            let mut child_merge = m;
            if c.has(RoleClass::TEXT) && !c.has(RoleClass::TARGET) {
                if m == merge || !self.contained(m, self.name(n)) {
                    run.push(node.name.to_string(), PieceKind::Text);
                }
            } else if c.has(RoleClass::LIST_MARKER) && !c.has(RoleClass::TARGET) {
                let name = self.name(n);
                if !name.is_empty() && !is_bullet(name) && !self.contained(m, name) {
                    run.push(name.to_owned(), PieceKind::Spaced);
                }
            } else if n == root && skip_root_name {
                child_merge = NONE;
            } else if let Some(opts) = self.options_of(n) {
                let mut ids = Vec::new();
                let line = self.options_line(n, &opts, &mut ids);
                if run.pre {
                    run.labels.push((line, ids));
                } else {
                    run.ids.extend(ids);
                    run.push(line, PieceKind::Label);
                }
                continue;
            } else if run.pre && self.labelled(n) {
                // Code keeps only the page's text: a link's text stays where it is, and the
                // link (or any labelled element) is listed after the code.
                let mut ids = Vec::new();
                let label = self.label(n, self.name(n), &mut ids);
                run.labels.push((label, ids));
            } else if self.repeats_ancestor(n, m) {
                // Said by the ancestor already; its children still count.
            } else if self.labelled(n) {
                let name = self.printed_name(n);
                // An unnamed target whose contents are plain text takes them as its name.
                let own = if self.is_target(n) {
                    self.own_text(n, name, NONE)
                } else {
                    None
                };
                let shown = own.as_deref().unwrap_or(name);
                let mut ids = Vec::new();
                let label = self.label(n, shown, &mut ids);
                run.ids.extend(ids);
                run.push_label(label, if own.is_some() { shown } else { &node.name });
                if own.is_some() || self.absorbed(n, shown) {
                    continue;
                }
                child_merge = self.merge_after(n, shown, m);
            } else {
                let name = self.printed_name(n);
                if !name.is_empty() && !self.contents_say_name(n) && !self.contained(m, name) {
                    run.push(name.to_owned(), PieceKind::Spaced);
                    child_merge = self.merge_after(n, name, m);
                }
            }
            if block {
                stack.push((NONE, n));
            }
            for &k in self.t.s_children(n).iter().rev() {
                stack.push((k, child_merge));
            }
        }
    }

    /// A cell's, term's or detail's text: its content, and its name where the content
    /// does not already say it (a name computed from the content never prints twice).
    fn content_text(&self, n: u32, ids: &mut Vec<i64>) -> String {
        let mut run = Run::default();
        // A labelled node (a link straight inside a row) prints its own label.
        let labelled = self.labelled(n);
        self.collect(n, NONE, !labelled, &mut run);
        let joined = join_line(&run.pieces);
        let own_ids = run.ids.is_empty();
        ids.append(&mut run.ids);
        if labelled {
            return joined;
        }
        let node = self.t.node(n);
        let name = self.name(n);
        if node.name_from_contents
            && own_ids
            && !joined.is_empty()
            && squash(name) == squash(&joined)
        {
            // Chromium computed the name from this very text, with the page's block spacing.
            name.to_owned()
        } else if name.is_empty()
            || (self.contents_say_name(n) && !joined.is_empty())
            || Self::text_says(&joined, name)
        {
            joined
        } else if joined.is_empty() {
            name.to_owned()
        } else {
            format!("{name} {joined}")
        }
    }

    /// `text` already says `name` (spacing aside).
    fn text_says(text: &str, name: &str) -> bool {
        text.contains(name) || squash(text).contains(&squash(name))
    }

    /// Children that render: in the mask, with a consumed list marker replaced by what it
    /// holds (a marker can wrap a link).
    fn kids_of(&self, n: u32, marker: u32) -> Vec<u32> {
        let mut kids = Vec::new();
        for &k in self.t.s_children(n) {
            if !self.in_mask(k) {
                continue;
            }
            if k == marker {
                kids.extend(
                    self.t
                        .s_children(k)
                        .iter()
                        .copied()
                        .filter(|&d| self.in_mask(d)),
                );
            } else {
                kids.push(k);
            }
        }
        kids
    }

    /// Frames for a node's children: runs of text (or, in a list item, of inline content)
    /// composed into lines, preformatted stretches into code blocks, term/definition runs,
    /// and everything else entered on its own.
    fn push_children(&mut self, kids: Vec<u32>, depth: u32, merge: u32, markdown: bool) {
        let mut frames: Vec<Frame> = Vec::new();
        let mut seen_leaves: HashSet<&'t str> = HashSet::new();
        let is_term = |k: u32| self.class(k).has(RoleClass::TERM | RoleClass::DEFINITION);
        // Stretches of inline content, found in one pass: one that holds preformatted text
        // is one code block (links in it included).
        let mut stretch_end = vec![0usize; kids.len()];
        let mut stretch_pre = vec![false; kids.len()];
        let mut a = 0;
        while a < kids.len() {
            let inline = |k: u32| self.f.inlineable[k as usize] && !is_term(k);
            let mut b = a;
            while b < kids.len() && inline(kids[b]) {
                b += 1;
            }
            let b = b.max(a + 1);
            let pre = kids[a..b]
                .iter()
                .any(|&k| self.f.inline_text[k as usize] && self.f.pre_text[k as usize]);
            for j in a..b {
                stretch_end[j] = b;
                stretch_pre[j] = pre;
            }
            a = b;
        }
        let mut i = 0;
        while i < kids.len() {
            let k = kids[i];
            if is_term(k) {
                let end = (i..kids.len())
                    .find(|&j| !is_term(kids[j]))
                    .unwrap_or(kids.len());
                frames.push(Frame::Terms {
                    kids: kids[i..end].to_vec(),
                    depth,
                });
                i = end;
                continue;
            }
            let pre = stretch_pre[i];
            let end = if (pre || markdown) && self.f.inlineable[k as usize] {
                stretch_end[i]
            } else {
                (i..kids.len())
                    .find(|&j| !self.f.inline_text[kids[j] as usize])
                    .unwrap_or(kids.len())
            };
            if end == i {
                frames.push(Frame::Enter { n: k, depth, merge });
                i += 1;
                continue;
            }
            let before = i.checked_sub(1).map(|p| kids[p]);
            let after = kids.get(end).copied();
            let group = &kids[i..end];
            self.compose_run(
                group,
                depth,
                merge,
                pre,
                markdown,
                (before, after),
                &mut seen_leaves,
                &mut frames,
            );
            i = end;
        }
        self.stack.extend(frames.into_iter().rev());
    }

    /// One run of siblings as a line (or a code block), unless someone already says it:
    /// the absorbing ancestor's name, the label of the control beside it, or an identical
    /// lone text leaf before it among the same siblings.
    #[allow(clippy::too_many_arguments)]
    fn compose_run(
        &self,
        group: &[u32],
        depth: u32,
        merge: u32,
        pre: bool,
        markdown: bool,
        beside: (Option<u32>, Option<u32>),
        seen_leaves: &mut HashSet<&'t str>,
        frames: &mut Vec<Frame>,
    ) {
        let mut run = Run {
            pre,
            ..Run::default()
        };
        for &k in group {
            self.collect(k, merge, false, &mut run);
        }
        let preformatted = pre && holds_line_break(&run.pieces);
        if preformatted {
            if let Some(lines) = code_lines(&concat(&run.pieces, true)) {
                let fence = fence_for(&lines);
                frames.push(Frame::Line {
                    depth,
                    text: fence.clone(),
                    ids: Vec::new(),
                });
                for line in lines {
                    frames.push(Frame::Line {
                        depth,
                        text: line,
                        ids: Vec::new(),
                    });
                }
                frames.push(Frame::Line {
                    depth,
                    text: fence,
                    ids: Vec::new(),
                });
                for (label, ids) in run.labels {
                    frames.push(Frame::Line {
                        depth,
                        text: label,
                        ids,
                    });
                }
                return;
            }
        }
        // Not code after all: targets go back inline.
        if !run.labels.is_empty() {
            run = Run::default();
            for &k in group {
                self.collect(k, merge, false, &mut run);
            }
        }
        let text = join_line(&run.pieces);
        if text.is_empty() {
            return;
        }
        if run.ids.is_empty() {
            if self.contained(merge, &text) {
                return;
            }
            let (prev, next) = beside;
            if prev.is_some_and(|p| self.said_by_target(p, &text))
                || next.is_some_and(|n| self.said_by_target(n, &text))
            {
                return;
            }
            let lone_leaf = group.len() == 1
                && self.class(group[0]).has(RoleClass::TEXT)
                && self.t.s_children(group[0]).is_empty();
            if lone_leaf && !seen_leaves.insert(self.name(group[0])) {
                return;
            }
        }
        let line = if markdown || run.pieces.iter().any(|p| p.kind == PieceKind::Label) {
            text
        } else {
            let mut s = String::from("text ");
            push_py_repr(&mut s, &text);
            s
        };
        frames.push(Frame::Line {
            depth,
            text: line,
            ids: run.ids,
        });
    }

    fn push_with_ids(&mut self, depth: u32, text: String, ids: Vec<i64>) {
        let at = self.out.push_line(depth, text);
        self.out.ids.extend(ids.into_iter().map(|id| (at, id)));
    }

    fn run(&mut self) {
        for &r in self.t.s_roots.iter().rev() {
            if self.in_mask(r) {
                self.stack.push(Frame::Enter {
                    n: r,
                    depth: 0,
                    merge: NONE,
                });
            }
        }
        while let Some(frame) = self.stack.pop() {
            match frame {
                Frame::Enter { n, depth, merge } => self.enter(n, depth, merge),
                Frame::Line { depth, text, ids } => self.push_with_ids(depth, text, ids),
                Frame::Terms { kids, depth } => self.terms(kids, depth),
                Frame::ItemExit {
                    start,
                    depth,
                    marker,
                } => {
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
        if c.has(RoleClass::LIST_MARKER) && !c.has(RoleClass::TARGET) {
            // A marker outside a list item (the item consumes its own).
            let name = self.name(n);
            if !name.is_empty() && !is_bullet(name) {
                let line = self.label(n, name, &mut Vec::new());
                self.out
                    .push_line(depth, line.replacen("ListMarker", "text", 1));
            }
            let kids = self.kids_of(n, NONE);
            self.push_children(kids, depth, merge, false);
        } else if c.has(RoleClass::ROW) {
            self.row(n, depth);
        } else if let Some(opts) = self.options_of(n) {
            let mut ids = Vec::new();
            let line = self.options_line(n, &opts, &mut ids);
            self.push_with_ids(depth, line, ids);
        } else if c.has(RoleClass::LIST_ITEM) {
            self.list_item(n, depth, merge);
        } else if self.transparent(n) || self.repeats_ancestor(n, merge) {
            let kids = self.kids_of(n, NONE);
            self.push_children(kids, depth, merge, false);
        } else {
            let mut ids = Vec::new();
            let name = self.printed_name(n);
            if let Some(text) = self.own_text(n, name, NONE) {
                // The only text of an unnamed node becomes its name: button [4] 'Search'.
                let line = self.label(n, &text, &mut ids);
                self.push_with_ids(depth, line, ids);
                return;
            }
            let line = self.label(n, name, &mut ids);
            self.push_with_ids(depth, line, ids);
            if self.is_target(n) && self.absorbed(n, name) {
                return;
            }
            let merge = self.merge_after(n, name, NONE);
            let kids = self.kids_of(n, NONE);
            self.push_children(kids, depth + 1, merge, false);
        }
    }

    /// A node with nothing to print: blank, no target, no text anywhere below.
    fn prints_nothing(&self, n: u32) -> bool {
        self.transparent(n) && !self.f.text_below[n as usize] && !self.f.target_below[n as usize]
    }

    /// For an unnamed element (not a blank container) whose children are all plain text
    /// on one line: that text, to print as its name.
    fn own_text(&self, n: u32, name: &str, marker: u32) -> Option<String> {
        let c = self.class(n);
        if !name.is_empty() || (c.has(RoleClass::DROP_WHEN_BLANK) && !c.has(RoleClass::TARGET)) {
            return None;
        }
        // A value already says the contents (an editor's text): they are no name as well.
        if matches!(&self.t.node(n).value, Some(Value::Str(v)) if !v.trim().is_empty()) {
            return None;
        }
        // Children that print nothing (an unnamed decorative image) do not count.
        let shown = |kids: Vec<u32>| -> Vec<u32> {
            kids.into_iter()
                .filter(|&k| !self.prints_nothing(k))
                .collect()
        };
        let mut kids = shown(self.kids_of(n, marker));
        // A clickable element's words in a box of their own (`<span onclick><div>Reply</div>
        // </span>`) are still all it says: a blank plain container that is all it holds is
        // looked through (not a list item, a row: what a list or a table holds is no name).
        if c.has(RoleClass::TARGET) && role_is_generic(&self.t.node(n).role) {
            while let [only] = kids[..] {
                if !self.transparent(only)
                    || !role_is_generic(&self.t.node(only).role)
                    || self.f.inline_text[only as usize]
                {
                    break;
                }
                kids = shown(self.kids_of(only, NONE));
            }
        }
        if kids.is_empty() || !kids.iter().all(|&k| self.f.inline_text[k as usize]) {
            return None;
        }
        // A target below prints its own label, so there is no plain text to take; asking the
        // walk would collect every nested target's subtree twice per level (exponential).
        if kids
            .iter()
            .any(|&k| self.is_target(k) || self.f.target_below[k as usize])
        {
            return None;
        }
        let mut run = Run::default();
        for &k in &kids {
            self.collect(k, NONE, false, &mut run);
        }
        if run.pieces.iter().any(|p| p.kind == PieceKind::Label) {
            return None; // an element in there prints its own label
        }
        if holds_line_break(&run.pieces) && code_lines(&concat(&run.pieces, true)).is_some() {
            return None; // code keeps its lines
        }
        Some(join_line(&run.pieces)).filter(|t| !t.is_empty())
    }

    fn list_item(&mut self, n: u32, depth: u32, merge: u32) {
        let marker_node = self
            .t
            .s_children(n)
            .iter()
            .copied()
            .find(|&k| {
                self.in_mask(k) && self.class(k).has(RoleClass::LIST_MARKER) && !self.is_target(k)
            })
            .unwrap_or(NONE);
        let marker = self.marker(marker_node);
        let start = self.out.lines.len();
        self.stack.push(Frame::ItemExit {
            start,
            depth,
            marker,
        });
        let mut name = self.printed_name(n);
        let own;
        if self.is_target(n) {
            // A clickable item prints as its label: - listitem [13] 'Folder A'.
            own = self.own_text(n, name, marker_node);
            let shown = own.as_deref().unwrap_or(name);
            let mut ids = Vec::new();
            let line = self.label(n, shown, &mut ids);
            self.push_with_ids(depth + 1, line, ids);
            if own.is_some() || self.absorbed(n, shown) {
                return;
            }
            name = shown;
        } else if !name.is_empty() {
            self.out.push_line(depth + 1, name.to_owned());
        }
        let merge = self.merge_after(n, name, merge);
        let kids = self.kids_of(n, marker_node);
        self.push_children(kids, depth + 1, merge, true);
    }

    /// `| a | b |`, and `| --- |` after a row of column headers. A clickable row prints
    /// its label first: `row [5] | a | b |`.
    fn row(&mut self, n: u32, depth: u32) {
        // Texts straight inside a row (no cell around them) that follow one another are one
        // run of text, so one cell: two that touch stay joined, as everywhere else.
        let mut cells: Vec<Vec<u32>> = Vec::new();
        for k in self.masked_kids(n) {
            let text = self.class(k).has(RoleClass::TEXT);
            match cells.last_mut() {
                Some(last) if text && self.class(last[0]).has(RoleClass::TEXT) => last.push(k),
                _ => cells.push(vec![k]),
            }
        }
        let header = !cells.is_empty()
            && cells
                .iter()
                .all(|group| self.t.node(group[0]).role.as_ref() == "columnheader");
        let mut ids = Vec::new();
        let texts: Vec<String> = cells
            .iter()
            .map(|group| match group.as_slice() {
                [one] => self.content_text(*one, &mut ids),
                run_of_texts => {
                    let mut run = Run::default();
                    for &t in run_of_texts {
                        self.collect(t, NONE, false, &mut run);
                    }
                    ids.append(&mut run.ids);
                    join_line(&run.pieces)
                }
            })
            .collect();
        let mut texts = self.aligned(n, &cells, texts);
        // A row's name is normally its cells' text; one that says more is kept, first.
        let name = self.name(n);
        let named = !name.is_empty()
            && !self.contents_say_name(n)
            && !Self::text_says(&texts.join(" "), name);
        if named {
            texts.insert(0, name.to_owned());
        }
        let mut line = String::new();
        if self.is_target(n) {
            let mut own = Vec::new();
            line.push_str(&self.label(n, "", &mut own));
            line.push(' ');
            own.append(&mut ids);
            ids = own;
        }
        if texts.is_empty() && line.is_empty() {
            return;
        }
        line.push('|');
        for t in &texts {
            line.push(' ');
            push_md_cell(&mut line, t);
            line.push_str(" |");
        }
        let columns = texts.len();
        self.push_with_ids(depth, line, ids);
        if header && !named {
            let sep = format!("|{}", " --- |".repeat(columns));
            self.out.push_line(depth, sep);
        }
    }

    /// A row's cell texts with an empty cell wherever a cell spans more than one column (after
    /// it) or a cell of a row above spans down into this one (`colspan`, `rowspan`, as
    /// pagelens' capture reads them): the columns stay under their headers.
    fn aligned(&mut self, row: u32, cells: &[Vec<u32>], texts: Vec<String>) -> Vec<String> {
        let span = |k: u32, name: &str| match self.t.prop(k, name) {
            Some(Value::Int(v)) => u32::try_from(*v).unwrap_or(1).clamp(1, MAX_SPAN),
            _ => 1,
        };
        let spans: Vec<(u32, u32)> = cells
            .iter()
            .map(|group| match group.as_slice() {
                [one] => (span(*one, "colspan"), span(*one, "rowspan")),
                _ => (1, 1),
            })
            .collect();
        // No cell spans here or above (Chromium's tree never says so): nothing to look up.
        if self.row_spans.is_empty() && spans.iter().all(|&s| s == (1, 1)) {
            return texts;
        }
        let mut table = self.t.node(row).s_parent;
        while table != NONE && !self.class(table).has(RoleClass::TABLE) {
            table = self.t.node(table).s_parent;
        }
        let above = self.row_spans.remove(&table).unwrap_or_default();
        let mut below: Vec<u32> = above.iter().map(|r| r.saturating_sub(1)).collect();
        let mut out = Vec::with_capacity(texts.len());
        let mut col = 0usize;
        for (text, (colspan, rowspan)) in texts.into_iter().zip(spans) {
            while above.get(col).is_some_and(|&r| r > 0) {
                out.push(String::new());
                col += 1;
            }
            out.push(text);
            out.extend((1..colspan).map(|_| String::new()));
            let end = col + colspan as usize;
            if rowspan > 1 {
                if below.len() < end {
                    below.resize(end, 0);
                }
                below[col..end].fill(rowspan - 1);
            }
            col = end;
        }
        // Columns after the last cell that a cell above still takes.
        while above.get(col).is_some_and(|&r| r > 0) {
            out.push(String::new());
            col += 1;
        }
        if table != NONE && below.iter().any(|&r| r > 0) {
            self.row_spans.insert(table, below);
        }
        out
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

    fn flush_entry(
        &mut self,
        depth: u32,
        terms: &mut Vec<String>,
        details: &mut Vec<String>,
        ids: &mut Vec<i64>,
    ) {
        if terms.is_empty() && details.is_empty() {
            return;
        }
        let terms_text = terms
            .iter()
            .filter(|t| !t.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(" / ");
        let details_text = details
            .iter()
            .filter(|d| !d.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        // Terms often carry their own colon ("Rating:"); never print two.
        let colon = if terms_text.ends_with(':') || terms_text.ends_with('：') {
            ""
        } else {
            ":"
        };
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
