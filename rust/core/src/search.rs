//! Finding lines of an observation by a pattern a model or a user wrote: on a finite
//! automaton (the `regex` crate), so time is linear in the text whatever the pattern —
//! `(a+)+$` over a line of a's, which makes a backtracking engine run for hours, takes a pass.

use std::fmt;

use regex::RegexBuilder;

/// Compiled programs larger than this are refused (a pattern such as `\w{1000}{1000}`).
const MAX_PROGRAM_BYTES: usize = 1 << 22;

/// A pattern that is not a regular expression this engine runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PatternError {}

/// Indices of the lines of `text` (split at `\n`) that contain `pattern`, case-insensitively;
/// with `regex`, `pattern` is a regular expression (Rust's `regex` syntax: no look-around,
/// no back-references, which no linear-time engine can run).
///
/// # Errors
/// A pattern that does not compile, or compiles too large; the message says why.
pub fn matching_lines(text: &str, pattern: &str, regex: bool) -> Result<Vec<usize>, PatternError> {
    let source = if regex {
        pattern.to_owned()
    } else {
        regex::escape(pattern)
    };
    let matcher = RegexBuilder::new(&source)
        .case_insensitive(true)
        .size_limit(MAX_PROGRAM_BYTES)
        .dfa_size_limit(MAX_PROGRAM_BYTES)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => {
                PatternError(format!("the pattern {pattern:?} is too large to run"))
            }
            other => PatternError(format!(
                "not a regular expression this search runs: {pattern:?} ({})",
                other.to_string().lines().last().unwrap_or("invalid").trim()
            )),
        })?;
    Ok(text
        .split('\n')
        .enumerate()
        .filter(|(_, line)| matcher.is_match(line))
        .map(|(i, _)| i)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_regex_search_case_insensitively() {
        let text = "link [1] 'Docs'\n\ttext 'a (b) c'\nbutton [2] 'DOCS'";
        assert_eq!(matching_lines(text, "docs", false).unwrap(), [0, 2]);
        assert_eq!(matching_lines(text, "(b)", false).unwrap(), [1]);
        assert_eq!(matching_lines(text, r"\[\d\]", true).unwrap(), [0, 2]);
        assert!(matching_lines(text, "(", true).is_err());
        assert!(matching_lines(text, "(?=a)", true)
            .unwrap_err()
            .0
            .contains("not a regular expression"));
    }

    #[test]
    fn catastrophic_patterns_run_in_linear_time() {
        let line = "a".repeat(100_000) + "!";
        let start = std::time::Instant::now();
        for pattern in ["(a+)+$", "(a|aa)*b", "(a*)*$", "(.*a){20}"] {
            assert!(matching_lines(&line, pattern, true).is_ok());
        }
        assert!(start.elapsed().as_secs_f64() < 5.0);
        assert!(matching_lines("x", r"\w{1000}{1000}", true)
            .unwrap_err()
            .0
            .contains("too large"));
    }
}
