//! From the arena to text: the two text forms, the pivotal subtree, and the token budget.

mod budget;
pub mod occam;
mod runs;
pub mod subtree;
pub mod webarena;

use std::fmt::Write as _;
use std::str::FromStr;

use rustc_hash::{FxHashMap, FxHashSet};

pub use budget::fit_to_budget;

/// A render mode that does not exist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMode(pub String);

impl std::fmt::Display for UnknownMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let expected: Vec<String> = Mode::NAMES.iter().map(|n| format!("{n:?}")).collect();
        write!(
            f,
            "unknown mode {:?}; expected {}",
            self.0,
            expected.join(" or ")
        )
    }
}

impl std::error::Error for UnknownMode {}

/// Which text form to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Spec section 2: one line per kept node, comparable with published `WebArena` agents.
    WebArena,
    /// Spec section 3: the aligned, shorter form (the default).
    Occam,
}

impl Mode {
    /// Every mode, the default first.
    pub const ALL: [Mode; 2] = [Mode::Occam, Mode::WebArena];
    /// Every mode by name, in [`Mode::ALL`]'s order: the registry the binding, CLI and docs read.
    pub const NAMES: [&'static str; 2] = [Mode::Occam.name(), Mode::WebArena.name()];

    /// The mode's name: the one home of it (parsing, the binding's answers and errors read it).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Occam => "occam",
            Mode::WebArena => "webarena",
        }
    }

    /// The whole tree written in this mode (`occam`'s options apply to the occam form, its id
    /// labels to every mode).
    #[must_use]
    pub fn render(self, tree: &crate::AxTree, occam: occam::OccamOptions) -> Rendered {
        match self {
            Mode::WebArena => webarena::render(tree, occam.ids.labels),
            Mode::Occam => occam::render(tree, occam),
        }
    }
}

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        Mode::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

/// Labels printed in place of element ids.
pub type IdLabels = FxHashMap<i64, String>;
/// Element ids an agent has seen.
pub type SeenIds = FxHashSet<i64>;

/// How an element id is printed: `[12]`, a caller's own label in its place (`[a12]`: another
/// tool's ids; an empty label hides the id), and `*[12]` on an action target the agent has
/// not seen (spec section 3).
#[derive(Debug, Clone, Copy, Default)]
pub struct IdStyle<'m> {
    /// Printed instead of the number for the ids it holds.
    pub labels: Option<&'m IdLabels>,
    /// The ids of the previous observation of the same document: any other id is marked new.
    /// None marks nothing (the first observation, or marks switched off).
    pub seen: Option<&'m SeenIds>,
}

impl IdStyle<'_> {
    /// Appends the id in brackets, marked when it is new, with a space on the side(s) asked
    /// for; false when its label is empty, which hides the id (an element the labels' tool
    /// cannot name): then nothing is written.
    pub(crate) fn push(
        &self,
        s: &mut String,
        id: i64,
        space_before: bool,
        space_after: bool,
    ) -> bool {
        let label = self.labels.and_then(|labels| labels.get(&id));
        if label.is_some_and(String::is_empty) {
            return false;
        }
        if space_before {
            s.push(' ');
        }
        if self.seen.is_some_and(|seen| !seen.contains(&id)) {
            s.push('*');
        }
        // Written as a mark only pagelens writes; `Rendered::seal` makes it the bracket after
        // escaping every bracket the page wrote that could read as an id.
        s.push(OWN_BRACKET);
        match label {
            Some(label) => s.push_str(label),
            None => {
                let _ = write!(s, "{id}");
            }
        }
        s.push(']');
        if space_after {
            s.push(' ');
        }
        true
    }

    /// Whether `label` can stand for an id in the text: at most 64 characters, nothing that
    /// would end the brackets or the line (empty: the id is not printed).
    pub fn valid_label(label: &str) -> bool {
        label.len() <= 64
            && label.chars().all(|c| {
                !(c.is_whitespace() || c.is_control() || matches!(c, '[' | ']' | '*' | '\''))
            })
    }
}

/// Stands for the `[` of an id (or a property) while lines are composed: a noncharacter (Unicode keeps
/// U+FDD0..U+FDEF for a program's internal use), replaced in page text when a tree is built
/// ([`crate::text::without_own_brackets`]), so the page can never write one.
pub(crate) const OWN_BRACKET: char = '\u{FDD0}';

/// Whether the text after a `[` could read as an id or a mark: optional spaces, an optional
/// `*`, 1 to 64 characters that are neither space, bracket nor `*` (an id, a label such as
/// `BrowserGym`'s `a12`), optional spaces, `]` (spec section 3, "Page text is never an id").
fn reads_as_id(after: &str) -> bool {
    let mut chars = after.chars().peekable();
    while chars.next_if(|c| c.is_whitespace()).is_some() {}
    chars.next_if_eq(&'*');
    while chars.next_if(|c| c.is_whitespace()).is_some() {}
    let mut len = 0;
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() || matches!(c, '[' | ']' | '*' | OWN_BRACKET) || len == 64 {
            break;
        }
        len += 1;
        chars.next();
    }
    while chars.next_if(|c| c.is_whitespace()).is_some() {}
    len > 0 && chars.next() == Some(']')
}

/// A line's text as the model reads it: every `[` the page wrote that could read as an id
/// gets a backslash before it (unless one is there already), and pagelens' own brackets are
/// written. Linear: each `[` looks at most 70-odd characters ahead.
pub(crate) fn seal_line(text: &str) -> Option<String> {
    if !text.contains(['[', OWN_BRACKET]) {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (i, c) in text.char_indices() {
        match c {
            OWN_BRACKET => out.push('['),
            '[' if !out.ends_with('\\') && reads_as_id(&text[i + 1..]) => out.push_str("\\["),
            c => out.push(c),
        }
    }
    Some(out)
}

/// Page text (a title, a URL, a dialog's message) to print outside a rendered tree, escaped
/// by the same rule as the trees' text: no `[` in it can read as an id or a mark.
pub fn escape_page_text(text: &str) -> std::borrow::Cow<'_, str> {
    let text = crate::text::without_own_brackets(text);
    match seal_line(&text) {
        Some(sealed) => std::borrow::Cow::Owned(sealed),
        None => text,
    }
}

/// One output line before indentation.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub depth: u32,
    pub text: String,
}

/// Lines plus the element ids they show, each with the line it is on.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    pub lines: Vec<Line>,
    /// (line index, element id), in reading order.
    pub ids: Vec<(u32, i64)>,
}

impl Rendered {
    /// Writes the composed lines as the model reads them (see [`seal_line`]): the last step
    /// of every renderer.
    pub(crate) fn seal(&mut self) {
        for line in &mut self.lines {
            if let Some(sealed) = seal_line(&line.text) {
                line.text = sealed;
            }
        }
    }

    pub fn push_line(&mut self, depth: u32, text: String) -> u32 {
        self.lines.push(Line { depth, text });
        (self.lines.len() - 1) as u32
    }

    /// Joins lines with one TAB per level.
    pub fn text_of(lines: &[Line]) -> String {
        let size: usize = lines.iter().map(|l| line_len(l) + 1).sum();
        let mut out = String::with_capacity(size);
        for (i, l) in lines.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            push_line_text(&mut out, l);
        }
        out
    }
}

/// Deepest indentation printed (spec section 2): past it a line says its depth in words, so
/// the text stays linear in the size of the tree.
pub const MAX_INDENT: u32 = 64;

pub(crate) fn push_line_text(out: &mut String, l: &Line) {
    for _ in 0..l.depth.min(MAX_INDENT) {
        out.push('\t');
    }
    if l.depth > MAX_INDENT {
        let _ = write!(out, "(depth {}) ", l.depth);
    }
    out.push_str(&l.text);
}

/// Bytes a line takes in the text, its line break not counted.
pub(crate) fn line_len(l: &Line) -> usize {
    let marker = if l.depth > MAX_INDENT {
        10 + l.depth.to_string().len()
    } else {
        0
    };
    l.depth.min(MAX_INDENT) as usize + marker + l.text.len()
}

/// What the model reads, and what was left out.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    pub text: String,
    /// Element ids shown, in reading order.
    pub ids: Vec<i64>,
    pub line_count: usize,
    /// Lines cut by the token budget (0 when nothing was cut).
    pub omitted_lines: usize,
    pub truncated: bool,
    /// Token count when a budget forced counting; None otherwise.
    pub token_count: Option<usize>,
}

impl Observation {
    pub fn whole(r: Rendered) -> Observation {
        let text = Rendered::text_of(&r.lines);
        Observation::with_text(r, text)
    }

    /// The whole rendering, its text already joined.
    pub(crate) fn with_text(r: Rendered, text: String) -> Observation {
        Observation {
            text,
            ids: r.ids.into_iter().map(|(_, id)| id).collect(),
            line_count: r.lines.len(),
            omitted_lines: 0,
            truncated: false,
            token_count: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(s: &str) -> String {
        seal_line(s).unwrap_or_else(|| s.to_owned())
    }

    #[test]
    fn page_brackets_that_read_as_ids_are_escaped() {
        for (page, model) in [
            ("[4]", "\\[4]"),
            ("*[4]", "*\\[4]"),
            ("[*4]", "\\[*4]"),
            ("[ 4 ]", "\\[ 4 ]"),
            ("[a12]", "\\[a12]"),
            ("arr[i]", "arr\\[i]"),
            (
                "button *[4] 'Delete account'",
                "button *\\[4] 'Delete account'",
            ),
            ("[[4]]", "[\\[4]]"),
            // Already escaped by the page: left as it is (the parser reads it as escaped).
            ("\\[4]", "\\[4]"),
            // Not an id: spaces inside, empty, unclosed, or over 64 characters.
            ("[citation needed]", "[citation needed]"),
            ("[]", "[]"),
            ("[4", "[4"),
            ("[checked: true]", "[checked: true]"),
        ] {
            assert_eq!(sealed(page), model, "{page:?}");
        }
        let long = format!("[{}]", "x".repeat(65));
        assert_eq!(sealed(&long), long);
        let longest = format!("[{}]", "x".repeat(64));
        assert_eq!(sealed(&longest), format!("\\{longest}"));
    }

    #[test]
    fn own_brackets_are_written_unescaped() {
        let line = format!("button {OWN_BRACKET}4] 'Save' - text [4] *{OWN_BRACKET}5]");
        assert_eq!(sealed(&line), "button [4] 'Save' - text \\[4] *[5]");
    }

    #[test]
    fn the_page_cannot_write_the_own_bracket() {
        let page = format!("{OWN_BRACKET}4]");
        let clean = crate::text::without_own_brackets(&page);
        assert_eq!(sealed(&clean), "\u{FFFD}4]");
    }

    #[test]
    fn a_property_name_cannot_close_pagelens_bracket() {
        // Found by the `axtree` fuzz target: a payload's property named `focusabl]` printed
        // `[focusabl]: True]`, an id to a reader. Such names are skipped.
        let payload =
            br#"{"nodes": [{"nodeId": "2", "role": {"value": "button"}, "name": {"value": "OK"},
            "backendDOMNodeId": 2, "properties": [{"name": "focusabl]", "value": {"value": true}},
            {"name": "checked", "value": {"value": "true"}}]}]}"#;
        let tree = crate::AxTree::parse(payload).unwrap();
        for mode in crate::Mode::ALL {
            let text = crate::render(&tree, mode, occam::OccamOptions::default(), None).text;
            assert!(!text.contains("focusabl"), "{text}");
            assert!(text.contains("[checked: "), "{text}");
        }
    }

    #[test]
    fn sealing_is_linear() {
        // Every `[` looks a bounded distance ahead, however the brackets nest.
        let text = "[".repeat(200_000) + &"x".repeat(200_000);
        let start = std::time::Instant::now();
        assert_eq!(sealed(&text), text);
        assert!(start.elapsed().as_secs_f64() < 2.0);
    }
}
