//! What changed between two renderings of a page, line by line: the MCP server and the shell
//! sessions answer an action with the lines that changed, not the whole page again.
//!
//! Myers' diff (via `similar`) is O((N+M)·D); a page that changed everywhere would make D large,
//! so the search has a deadline, after which the diff is still exact (applying it turns the old
//! text into the new one) though maybe not minimal, which only makes the answer fall back to the
//! whole text sooner.

use std::time::{Duration, Instant};

use similar::{capture_diff_slices_deadline, Algorithm, DiffOp};

/// How long the search for a minimal diff may run before it settles for an exact, coarser one.
pub const DEADLINE: Duration = Duration::from_millis(100);

/// One run of the diff: `old_len` lines of the old text from `old_start` become `new_len` lines
/// of the new text from `new_start`. `Equal` runs have equal lengths; `Insert` has no old lines,
/// `Delete` no new ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRun {
    pub kind: RunKind,
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    Equal,
    Insert,
    Delete,
    Replace,
}

impl RunKind {
    /// The names the binding hands out (difflib's opcode tags).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            RunKind::Equal => "equal",
            RunKind::Insert => "insert",
            RunKind::Delete => "delete",
            RunKind::Replace => "replace",
        }
    }
}

/// The runs that turn `old`'s lines into `new`'s (lines split on `\n`), in order, covering both
/// texts wholly.
#[must_use]
pub fn line_runs(old: &str, new: &str) -> Vec<LineRun> {
    let old_lines: Vec<&str> = old.split('\n').collect();
    let new_lines: Vec<&str> = new.split('\n').collect();
    let deadline = Instant::now().checked_add(DEADLINE);
    let ops = capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, deadline);
    let mut runs: Vec<LineRun> = Vec::with_capacity(ops.len());
    // Positions are counted here from the runs' lengths: the library's indices of a deletion
    // in the new text (and of an insertion in the old) do not always name the running position.
    let (mut old_at, mut new_at) = (0usize, 0usize);
    for op in ops {
        let (kind, old_len, new_len) = match op {
            DiffOp::Equal { len, .. } => (RunKind::Equal, len, len),
            DiffOp::Insert { new_len, .. } => (RunKind::Insert, 0, new_len),
            DiffOp::Delete { old_len, .. } => (RunKind::Delete, old_len, 0),
            DiffOp::Replace {
                old_len, new_len, ..
            } => (RunKind::Replace, old_len, new_len),
        };
        if old_len == 0 && new_len == 0 {
            continue;
        }
        let run = LineRun {
            kind,
            old_start: old_at,
            old_len,
            new_start: new_at,
            new_len,
        };
        old_at += old_len;
        new_at += new_len;
        // Adjacent deletions and insertions read as one replacement.
        if let Some(last) = runs.last_mut() {
            if last.kind != RunKind::Equal
                && run.kind != RunKind::Equal
                && last.old_start + last.old_len == run.old_start
                && last.new_start + last.new_len == run.new_start
            {
                last.old_len += run.old_len;
                last.new_len += run.new_len;
                last.kind = match (last.old_len, last.new_len) {
                    (0, _) => RunKind::Insert,
                    (_, 0) => RunKind::Delete,
                    _ => RunKind::Replace,
                };
                continue;
            }
        }
        runs.push(run);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applying the runs to the old lines gives the new lines, and the runs cover both texts.
    fn check(old: &str, new: &str) -> Vec<LineRun> {
        let runs = line_runs(old, new);
        let (o, n): (Vec<&str>, Vec<&str>) = (old.split('\n').collect(), new.split('\n').collect());
        let (mut oi, mut ni) = (0, 0);
        let mut rebuilt: Vec<&str> = Vec::new();
        for r in &runs {
            assert_eq!((r.old_start, r.new_start), (oi, ni), "{runs:?}");
            if r.kind == RunKind::Equal {
                assert_eq!(o[oi..oi + r.old_len], n[ni..ni + r.new_len]);
                rebuilt.extend(&o[oi..oi + r.old_len]);
            } else {
                rebuilt.extend(&n[ni..ni + r.new_len]);
            }
            oi += r.old_len;
            ni += r.new_len;
        }
        assert_eq!((oi, ni), (o.len(), n.len()));
        assert_eq!(rebuilt, n);
        runs
    }

    #[test]
    fn one_changed_line_is_one_replacement() {
        let runs = check("a\nb\nc\nd", "a\nb\nX\nd");
        let changed: Vec<_> = runs.iter().filter(|r| r.kind != RunKind::Equal).collect();
        assert_eq!(changed.len(), 1);
        assert_eq!(
            (changed[0].kind, changed[0].new_start, changed[0].new_len),
            (RunKind::Replace, 2, 1)
        );
    }

    #[test]
    fn insertions_deletions_and_empty_texts() {
        check("", "a\nb");
        check("a\nb", "");
        check("a\nb\nc", "a\nc");
        check("a\nc", "a\nb\nc");
        check("x\ny", "y\nx");
        check("t\nt\n\tt", "t\n\tt\n\tt"); // a deletion the library places oddly in the new text
        let runs = check("same", "same");
        assert_eq!(runs.len(), 1);
    }

    #[test]
    fn a_page_changed_everywhere_is_answered_quickly_and_exactly() {
        let old = (0..60_000)
            .map(|i| format!("line {i}"))
            .collect::<Vec<_>>()
            .join("\n");
        let new = (0..60_000)
            .map(|i| format!("line {}", i * 7 % 60_001))
            .collect::<Vec<_>>()
            .join("\n");
        let start = Instant::now();
        check(&old, &new);
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }
}
