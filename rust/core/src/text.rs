//! Text helpers shared by the renderers: whitespace normalisation and Python-compatible
//! quoting, so that the text a model reads matches what the published Python agents print.

use std::fmt::Write;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Collapses every run of whitespace (including `\xa0` and other Unicode spaces) into one
/// ASCII space and trims both ends. Nothing else is touched: `$`, `#`, `%` and symbols stay.
pub fn normalize_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_whitespace() {
            pending_space = !out.is_empty();
        } else {
            if pending_space {
                out.push(' ');
                pending_space = false;
            }
            out.push(c);
        }
    }
    out
}

/// `s` with the renderers' own id bracket (a Unicode noncharacter, U+FDD0) replaced by
/// U+FFFD: page text may hold any character, and that one must stay pagelens' alone.
pub fn without_own_brackets(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('\u{FDD0}') {
        std::borrow::Cow::Owned(s.replace('\u{FDD0}', "\u{FFFD}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// True when [`normalize_ws`] would return `s` unchanged (checked without allocating).
pub fn is_normalized(s: &str) -> bool {
    let mut prev_space = true; // a leading space is not normalised
    for c in s.chars() {
        if c == ' ' {
            if prev_space {
                return false;
            }
            prev_space = true;
        } else if c.is_whitespace() {
            return false;
        } else {
            prev_space = false;
        }
    }
    !prev_space || s.is_empty()
}

/// True when `s` has no non-whitespace character.
pub fn is_blank(s: &str) -> bool {
    s.chars().all(char::is_whitespace)
}

/// Python's `str.isprintable()` for one character: false for the categories Cc, Cf, Cs,
/// Co, Cn, Zl, Zp and Zs, except the ASCII space.
fn py_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    !matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::Surrogate
            | GeneralCategory::PrivateUse
            | GeneralCategory::Unassigned
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::SpaceSeparator
    )
}

/// Appends `s` quoted exactly as Python's `repr(str)` would print it.
pub fn push_py_repr(out: &mut String, s: &str) {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x7f => out.push(c),
            c if py_printable(c) => out.push(c),
            c if (c as u32) <= 0xff => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) <= 0xffff => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push(quote);
}

/// `repr(s)` as a new string.
pub fn py_repr(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_py_repr(&mut out, s);
    out
}

/// Python's `str(float)` for a JSON number that was not an integer.
///
/// Both languages print the shortest digits that round-trip, but where two such digit
/// strings are equally near (an exact tie, common for widened `f32` values) Python picks
/// the even one and Rust's shortest form the upper one; Rust's fixed-precision formatting
/// rounds ties to even, so the digits are re-rounded at the shortest length.
pub fn py_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let shortest = format!("{v:e}");
    let digits = shortest
        .split('e')
        .next()
        .unwrap_or("")
        .chars()
        .filter(char::is_ascii_digit)
        .count();
    let even = format!("{:.*e}", digits.saturating_sub(1), v);
    let sci = if even.parse::<f64>() == Ok(v) {
        even
    } else {
        shortest
    };
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    if (-4..16).contains(&exp) {
        // Positional, always with a fractional part, like Python's repr in this range.
        if exp < 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (exp.unsigned_abs() - 1) as usize));
            out.push_str(&digits);
        } else {
            let int_len = exp.unsigned_abs() as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let sign = if exp < 0 { '-' } else { '+' };
        let _ = write!(out, "e{sign}{:02}", exp.abs());
    }
    out
}

/// Escapes text for a Markdown table cell: a literal `|` would end the cell.
pub fn push_md_cell(out: &mut String, s: &str) {
    for c in s.chars() {
        if c == '|' {
            out.push_str("\\|");
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_whitespace_runs_and_nbsp() {
        assert_eq!(normalize_ws("  a\u{a0}\u{a0}b \n\t c  "), "a b c");
        assert_eq!(
            normalize_ws("$365.42 #12 50% ★★★★☆"),
            "$365.42 #12 50% ★★★★☆"
        );
        assert_eq!(normalize_ws(" \u{a0} "), "");
    }

    #[test]
    fn is_normalized_agrees_with_normalize() {
        for s in [
            "", "a", " a", "a ", "a  b", "a b", "a\u{a0}b", "é b", "a\tb", " ", "★ ☆",
        ] {
            assert_eq!(is_normalized(s), normalize_ws(s) == s, "{s:?}");
        }
    }

    #[test]
    fn repr_matches_python() {
        assert_eq!(py_repr("abc"), "'abc'");
        assert_eq!(py_repr("I'm"), "\"I'm\"");
        assert_eq!(py_repr("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(py_repr("tab\there\n"), "'tab\\there\\n'");
        assert_eq!(py_repr("back\\slash"), "'back\\\\slash'");
        assert_eq!(py_repr("nb\u{a0}sp"), "'nb\\xa0sp'");
        assert_eq!(py_repr("zw\u{200b}"), "'zw\\u200b'");
        assert_eq!(py_repr("é★中"), "'é★中'");
        assert_eq!(py_repr("\u{1}"), "'\\x01'");
    }

    #[test]
    fn floats_print_like_python() {
        assert_eq!(py_float(0.5), "0.5");
        assert_eq!(py_float(100.0), "100.0");
        assert_eq!(py_float(1e-5), "1e-05");
        assert_eq!(py_float(1e16), "1e+16");
        assert_eq!(py_float(0.0001), "0.0001");
        assert_eq!(py_float(-2.25), "-2.25");
        // An exact tie between two shortest forms: Python takes the even digit.
        // (the literal is the double's exact value: 512.97784423828125)
        #[allow(clippy::excessive_precision)]
        let tie = 512.977_844_238_281_25;
        assert_eq!(py_float(tie), "512.9778442382812");
        assert_eq!(py_float(1.5e300), "1.5e+300");
        assert_eq!(py_float(-0.000_123), "-0.000123");
        assert_eq!(py_float(123_456_789_012_345.6), "123456789012345.6");
        assert_eq!(py_float(0.0), "0.0");
    }
}
