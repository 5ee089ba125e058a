//! Where a JSON line's long string values are, without decoding them: a reader that only
//! needs a record's small fields (the prep driver cutting a file into shards) hands the
//! decoder the line with those strings swapped for short stand-ins, and the worker that needs
//! one decodes its bytes where it reads them.
//!
//! A string is reported only when decoding it cannot fail and cannot yield blank text: every
//! escape is one JSON allows, no raw control character, and some character outside any escape
//! is printable ASCII other than a space. Swapping such a string for another string then keeps
//! the line valid or invalid exactly as before, and its value's checks ("a non-empty string")
//! answer as before.

/// Byte ranges (quotes included) of the string values of object members in `line` whose
/// contents are at least `min_len` bytes, in order. A line that is not UTF-8 has none (its
/// decoder rejects it whole). Linear in the line, no recursion.
#[must_use]
pub fn long_member_strings(line: &[u8], min_len: usize) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    if std::str::from_utf8(line).is_err() {
        return spans;
    }
    // Whether the last byte outside strings and whitespace was a member's colon.
    let mut after_colon = false;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let (end, safe) = string_end(line, i + 1);
                let Some(end) = end else { break }; // unterminated: the decoder's to report
                if after_colon && safe && end - (i + 1) >= min_len {
                    spans.push((i, end + 1));
                }
                after_colon = false;
                i = end + 1;
            }
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b => {
                after_colon = b == b':';
                i += 1;
            }
        }
    }
    spans
}

/// The closing quote of the string whose contents start at `start` (or `None`: the line ends
/// first), and whether the string is safe to stand in for (see the module's note).
fn string_end(line: &[u8], start: usize) -> (Option<usize>, bool) {
    let mut valid = true;
    let mut printable = false;
    let mut i = start;
    // From one quote or backslash to the next (found by `memchr`'s vector search); the bytes
    // between are checked in passes the compiler vectorizes too.
    while let Some(k) = memchr::memchr2(b'"', b'\\', &line[i..]) {
        let plain = &line[i..i + k];
        valid &= !plain.iter().any(|&b| b < 0x20);
        printable = printable || plain.iter().any(|&b| b > b' ' && b < 0x7f);
        i += k;
        if line[i] == b'"' {
            return (Some(i), valid && printable);
        }
        match line.get(i + 1) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {}
            Some(b'u') => {
                let hex = line.get(i + 2..i + 6);
                if hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    // Its digits are not the text's characters (`\u0020` is a space).
                    i += 4;
                } else {
                    valid = false;
                }
            }
            Some(_) => valid = false,
            None => return (None, false),
        }
        // The escaped character is never a closing quote.
        i += 2;
        if i > line.len() {
            return (None, false);
        }
    }
    (None, false)
}

#[cfg(test)]
mod tests {
    use super::long_member_strings;

    fn spans(line: &str, min: usize) -> Vec<&str> {
        long_member_strings(line.as_bytes(), min)
            .into_iter()
            .map(|(a, b)| &line[a..b])
            .collect()
    }

    #[test]
    fn finds_member_values_at_or_over_the_length() {
        let line = r#"{"html": "<p>hi</p>", "id": "w1", "k": ["<long list item>"], "n": {"x":"<nested value>"}}"#;
        assert_eq!(spans(line, 5), [r#""<p>hi</p>""#, r#""<nested value>""#]);
        assert_eq!(spans(line, 11), [r#""<nested value>""#]);
        // Keys and array items are never reported.
        assert_eq!(
            spans(r#"{"a very long key indeed": 1}"#, 1),
            Vec::<&str>::new()
        );
    }

    #[test]
    fn escapes_are_skipped_and_checked() {
        assert_eq!(
            spans(r#"{"h": "a\"b\\\"c\u00e9"}"#, 1),
            [r#""a\"b\\\"c\u00e9""#]
        );
        // Escapes JSON does not allow, short `\u`, raw control characters: never reported.
        for bad in [r#"{"h": "a\xb"}"#, r#"{"h": "a\u12"}"#, "{\"h\": \"a\tb\"}"] {
            assert_eq!(spans(bad, 1), Vec::<&str>::new(), "{bad}");
        }
        // Lone surrogates are allowed (Python's decoder accepts them).
        assert_eq!(spans(r#"{"h": "<\ud800>"}"#, 1), [r#""<\ud800>""#]);
    }

    #[test]
    fn possibly_blank_strings_are_not_reported() {
        // Only spaces, escapes (`\n` has a printable `n`) and non-ASCII (which may be
        // whitespace to the reader): the value could be blank.
        for blank in [
            r#"{"h": "   "}"#,
            r#"{"h": "\n\t\u0020"}"#,
            "{\"h\": \"\u{a0}\u{2003}\"}",
        ] {
            assert_eq!(spans(blank, 1), Vec::<&str>::new(), "{blank}");
        }
    }

    #[test]
    fn unterminated_and_non_utf8_lines_have_none() {
        assert_eq!(spans(r#"{"h": "<p>"#, 1), Vec::<&str>::new());
        assert_eq!(spans(r#"{"h": "<p>\"#, 1), Vec::<&str>::new());
        assert!(long_member_strings(b"{\"h\": \"<p>\xff\"}", 1).is_empty());
    }
}
