//! Spec 3.3 and 3.11: joining the pieces of one line of text as the page has them.
//!
//! Chromium's `StaticText` names already carry the rendered whitespace, so text pieces are
//! concatenated with nothing inserted. A space is added only where the page has a boundary
//! the names do not show (a `<br>`, the edge of a dissolved block container) and around
//! pieces that are not page text (an element's label, an attribute-given name). A run whose
//! text holds line breaks is preformatted and keeps its lines (a fenced code block).

use crate::axtree::Sep;
use crate::text::normalize_ws;

/// What a piece of a line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceKind {
    /// Page text, exactly as Chromium gives it (joined verbatim to text beside it).
    Text,
    /// A name that is not the page's running text (an abbreviation's title, a list
    /// marker): set off by spaces.
    Spaced,
    /// An element printed as `role [id] 'name'`: set off by spaces.
    Label,
}

#[derive(Debug, Clone)]
pub struct Piece {
    pub text: String,
    pub kind: PieceKind,
    /// The boundary between this piece and the previous one.
    pub sep: Sep,
    /// The page's text ends with whitespace here though `text` does not show it (a
    /// label quotes a trimmed name: `link [4] '2017'` for the page's `2017 `).
    pub trailing_space: bool,
}

fn ends_ws(s: &str) -> bool {
    s.chars().next_back().is_some_and(char::is_whitespace)
}

fn starts_ws(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_whitespace)
}

/// The pieces concatenated with their boundaries, whitespace as the page has it (before
/// normalisation). In preformatted text a `<br>` is a line break, elsewhere a space.
pub fn concat(pieces: &[Piece], preformatted: bool) -> String {
    let size = pieces.iter().map(|p| p.text.len() + 1).sum();
    let mut out = String::with_capacity(size);
    let mut prev: Option<&Piece> = None;
    for p in pieces {
        if let Some(prev) = prev {
            if preformatted && p.sep == Sep::Break {
                out.push('\n');
            } else {
                // A label is set off from the text before it; after its closing quote the
                // page's own spacing follows.
                let boundary = p.sep != Sep::None
                    || p.kind != PieceKind::Text
                    || prev.kind == PieceKind::Spaced
                    || prev.trailing_space;
                if boundary && !ends_ws(&out) && !starts_ws(&p.text) {
                    out.push(' ');
                }
            }
        }
        out.push_str(&p.text);
        prev = Some(p);
    }
    out
}

/// One line of text: the pieces joined, whitespace runs collapsed.
pub fn join_line(pieces: &[Piece]) -> String {
    normalize_ws(&concat(pieces, false))
}

/// Whether text pieces hold a line break: Chromium keeps `\n` in a name only where the
/// page renders it (`<pre>`, `white-space: pre*`).
pub fn holds_line_break(pieces: &[Piece]) -> bool {
    pieces
        .iter()
        .any(|p| p.kind == PieceKind::Text && p.text.contains('\n'))
}

/// The lines of preformatted text: `\xa0` as a space, trailing whitespace and blank lines
/// at either end dropped, indentation kept. None when fewer than two lines remain (a
/// one-line `<pre>` reads as plain text).
pub fn code_lines(text: &str) -> Option<Vec<String>> {
    let lines: Vec<String> = text
        .split('\n')
        .map(|l| l.replace(['\u{a0}', '\r'], " ").trim_end().to_owned())
        .collect();
    let first = lines.iter().position(|l| !l.is_empty())?;
    let last = lines.iter().rposition(|l| !l.is_empty())?;
    (last > first).then(|| lines[first..=last].to_vec())
}

/// A Markdown code fence longer than any run of backticks in the code.
pub fn fence_for(lines: &[String]) -> String {
    let mut longest = 0;
    for l in lines {
        let mut run = 0;
        for c in l.chars() {
            run = if c == '`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
    }
    "`".repeat(longest.max(2) + 1)
}

/// Text with all whitespace removed: compares names and contents that Chromium and the
/// page space differently.
pub fn squash(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str, sep: Sep) -> Piece {
        Piece {
            text: s.into(),
            kind: PieceKind::Text,
            sep,
            trailing_space: false,
        }
    }

    #[test]
    fn text_pieces_join_verbatim() {
        let p = [
            text("re", Sep::None),
            text(".", Sep::None),
            text("compile", Sep::None),
            text("(", Sep::None),
        ];
        assert_eq!(join_line(&p), "re.compile(");
        let p = [
            text("$", Sep::None),
            text("12", Sep::None),
            text(".99", Sep::None),
        ];
        assert_eq!(join_line(&p), "$12.99");
        let p = [text("Pick ", Sep::None), text(" one", Sep::None)];
        assert_eq!(join_line(&p), "Pick one");
    }

    #[test]
    fn boundaries_and_labels_get_one_space() {
        let p = [text("Crazy", Sep::None), text("Lumify", Sep::Space)];
        assert_eq!(join_line(&p), "Crazy Lumify");
        let p = [text("line one", Sep::None), text("line two", Sep::Break)];
        assert_eq!(join_line(&p), "line one line two");
        assert_eq!(concat(&p, true), "line one\nline two");
        let label = Piece {
            text: "link [3] 'x'".into(),
            kind: PieceKind::Label,
            sep: Sep::None,
            trailing_space: false,
        };
        let p = [
            text("see", Sep::None),
            label.clone(),
            text(", then", Sep::None),
        ];
        assert_eq!(join_line(&p), "see link [3] 'x', then");
        let spaced = Piece {
            trailing_space: true,
            ..label
        };
        let p = [spaced, text("(11)", Sep::None)];
        assert_eq!(join_line(&p), "link [3] 'x' (11)");
    }

    #[test]
    fn code_lines_keep_indentation() {
        let lines = code_lines("\ndef f(x):\n    return x\u{a0}+ 1  \n\n").unwrap();
        assert_eq!(lines, vec!["def f(x):", "    return x + 1"]);
        assert_eq!(code_lines("one line\n"), None);
        assert_eq!(fence_for(&lines), "```");
        assert_eq!(fence_for(&["a ```` b".to_owned()]), "`````");
    }
}
