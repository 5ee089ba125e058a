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
        write!(
            f,
            "unknown mode {:?}; expected \"occam\" or \"webarena\"",
            self.0
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
    /// Every mode by name, the default first: the registry the binding, CLI and docs read.
    pub const NAMES: [&'static str; 2] = ["occam", "webarena"];
}

impl FromStr for Mode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Mode, UnknownMode> {
        match s {
            "webarena" => Ok(Mode::WebArena),
            "occam" => Ok(Mode::Occam),
            other => Err(UnknownMode(other.to_owned())),
        }
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
        s.push('[');
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
