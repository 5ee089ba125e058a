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

/// `json` with every escaped lone surrogate (`\ud800` with no low half after it, or a low half
/// with no high one before it) written `\ufffd` instead, so that a reader that cannot hold
/// one (Rust's text) reads the rest: a page's `'😀'.slice(1)` must not make the whole
/// accessibility tree unreadable. Same length, so byte offsets keep; borrowed when there is
/// none. Only escapes count: a backslash escaped itself (`\\ud800`) starts no escape. Linear.
#[must_use]
pub fn without_lone_surrogates(json: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !memchr::memmem::find_iter(json, b"\\u").any(|i| surrogate_at(json, i + 2).is_some()) {
        return std::borrow::Cow::Borrowed(json);
    }
    let mut out = json.to_vec();
    // Walk escapes from the start (a backslash's meaning depends on those before it).
    let mut i = 0;
    let mut pending_high: Option<usize> = None; // where an escaped high surrogate starts
    while let Some(at) = memchr::memchr(b'\\', &json[i..]).map(|k| i + k) {
        let next = json.get(at + 1).copied();
        if next == Some(b'u') {
            match surrogate_at(json, at + 2) {
                Some(true) => {
                    if let Some(h) = pending_high.take() {
                        out[h..h + 6].copy_from_slice(b"\\ufffd");
                    }
                    pending_high = Some(at);
                }
                Some(false) => {
                    // A low half: paired only when it directly follows a high one.
                    match pending_high.take() {
                        Some(h) if h + 6 == at => {}
                        Some(h) => {
                            out[h..h + 6].copy_from_slice(b"\\ufffd");
                            out[at..at + 6].copy_from_slice(b"\\ufffd");
                        }
                        None => out[at..at + 6].copy_from_slice(b"\\ufffd"),
                    }
                }
                None => {
                    if let Some(h) = pending_high.take() {
                        out[h..h + 6].copy_from_slice(b"\\ufffd");
                    }
                }
            }
            i = at + 6.min(json.len() - at);
        } else {
            // Any other escape (`\\` included) is two bytes; a high half waits no longer.
            if let Some(h) = pending_high.take() {
                out[h..h + 6].copy_from_slice(b"\\ufffd");
            }
            i = at + 2;
        }
        if i >= json.len() {
            break;
        }
    }
    if let Some(h) = pending_high {
        out[h..h + 6].copy_from_slice(b"\\ufffd");
    }
    std::borrow::Cow::Owned(out)
}

/// Whether the four bytes at `at` are the hex digits of a surrogate: Some(true) for a high
/// (first) half, Some(false) for a low one, None otherwise.
fn surrogate_at(json: &[u8], at: usize) -> Option<bool> {
    let unit = hex_unit(json.get(at..at + 4)?)?;
    match unit {
        0xD800..=0xDBFF => Some(true),
        0xDC00..=0xDFFF => Some(false),
        _ => None,
    }
}

/// Byte ranges (quotes included) of the string values of object members in `line` whose
/// contents are at least `min_len` bytes, in order. A line that is not UTF-8 has none (its
/// decoder rejects it whole). Linear in the line, no recursion.
#[must_use]
pub fn long_member_strings(line: &[u8], min_len: usize) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    long_members(line, min_len, None, |start, end, _| {
        spans.push((start, end));
    });
    spans
}

/// [`long_member_strings`] with each string's value, decoded in the same pass: `None` for one
/// with an escaped lone surrogate, which Rust's text cannot hold (Python's decoder keeps it).
#[must_use]
pub fn long_member_texts(line: &[u8], min_len: usize) -> Vec<(usize, usize, Option<String>)> {
    let mut texts = Vec::new();
    let mut buffer = Vec::new();
    long_members(line, min_len, Some(&mut buffer), |start, end, text| {
        texts.push((start, end, text));
    });
    texts
}

/// The JSON string `literal` (quotes included) decoded, or `None` when it is not one, holds
/// an escaped lone surrogate, or is not alone.
#[must_use]
pub fn decode_string(literal: &[u8]) -> Option<String> {
    if literal.first() != Some(&b'"') || std::str::from_utf8(literal).is_err() {
        return None;
    }
    let mut out = Vec::with_capacity(literal.len());
    let (end, valid, _) = string_end(literal, 1, Some(&mut out));
    match end {
        Some(end) if valid && end + 1 == literal.len() => decoded(out),
        _ => None,
    }
}

/// Each long member string: `found(start, end, value)`, the value decoded into `buffer` when
/// one is given (`None` otherwise or when it cannot be held).
fn long_members(
    line: &[u8],
    min_len: usize,
    mut buffer: Option<&mut Vec<u8>>,
    mut found: impl FnMut(usize, usize, Option<String>),
) {
    if std::str::from_utf8(line).is_err() {
        return;
    }
    // Whether the last byte outside strings and whitespace was a member's colon.
    let mut after_colon = false;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                // Only a member's value is decoded (keys and array items are never reported).
                let out = buffer.as_deref_mut().filter(|_| after_colon);
                let decoding = out.is_some();
                let (end, valid, printable) = string_end(line, i + 1, out);
                let Some(end) = end else { break }; // unterminated: the decoder's to report
                if after_colon && valid && printable && end - (i + 1) >= min_len {
                    let text = if decoding {
                        buffer
                            .as_deref_mut()
                            .and_then(|b| decoded(std::mem::take(b)))
                    } else {
                        None
                    };
                    found(i, end + 1, text);
                }
                if let Some(b) = buffer.as_deref_mut() {
                    b.clear();
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
}

/// What [`string_end`] decoded: UTF-8 (plain runs come from a UTF-8 line, escapes are
/// written as characters), unless a lone surrogate was met (marked by a lone `0xFF`).
fn decoded(bytes: Vec<u8>) -> Option<String> {
    String::from_utf8(bytes).ok()
}

/// The closing quote of the string whose contents start at `start` (or `None`: the line ends
/// first), whether the string is valid JSON and whether it has a printable character outside
/// its escapes (both: safe to stand in for, see the module's note). With `out`, the string's
/// value is appended to it as it is read.
fn string_end(
    line: &[u8],
    start: usize,
    mut out: Option<&mut Vec<u8>>,
) -> (Option<usize>, bool, bool) {
    let mut valid = true;
    let mut printable = false;
    let mut i = start;
    loop {
        let k = plain_run_end(line, i);
        let plain = &line[i..k];
        printable = printable || plain.iter().any(|&b| b > b' ' && b < 0x7f);
        if let Some(out) = out.as_deref_mut() {
            out.extend_from_slice(plain);
        }
        i = k;
        match line.get(i) {
            None => return (None, false, false),
            Some(b'"') => return (Some(i), valid, printable),
            Some(b'\\') => {}
            Some(_) => {
                // A raw control character: invalid JSON.
                valid = false;
                i += 1;
                continue;
            }
        }
        let escaped = match line.get(i + 1) {
            Some(&c @ (b'"' | b'\\' | b'/')) => c,
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                let unit = line.get(i + 2..i + 6).and_then(hex_unit);
                if let Some(unit) = unit {
                    if let Some(out) = out.as_deref_mut() {
                        // Its digits are not the text's characters (`\u0020` is a space).
                        i += utf16_escape(line, i, unit, out);
                    } else {
                        i += 4;
                    }
                } else {
                    // Not four hex digits: read on from the `u` (a quote among them closes
                    // the string).
                    valid = false;
                }
                // The escaped character is never a closing quote.
                i += 2;
                if i > line.len() {
                    return (None, false, false);
                }
                continue;
            }
            Some(_) => {
                valid = false;
                0
            }
            None => return (None, false, false),
        };
        if let Some(out) = out.as_deref_mut() {
            out.push(escaped);
        }
        i += 2;
    }
}

/// The end of the run of bytes from `i` that a JSON string holds as they are (no quote,
/// backslash or control character), read 8 at a time: an escape comes every 10 to 20 bytes
/// of a page's HTML, too often for a vector search's set-up to pay.
fn plain_run_end(line: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Bytes equal to zero (x ^ c for a given c) or below 0x20, marked in their top bit: the
    // lowest mark is exact (a borrow only marks bytes above a true one).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    while let Some(word) = line.get(i..i + 8) {
        let w = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        let stops = zero(w ^ (ONES * u64::from(b'"')))
            | zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS);
        if stops != 0 {
            return i + (stops.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    i + line[i..]
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .unwrap_or(line.len() - i)
}

/// The code unit of four hex digits.
fn hex_unit(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |unit, &d| {
        Some(unit << 4 | char::from(d).to_digit(16)?)
    })
}

/// Writes the character that the `\uXXXX` escape at `i` (code unit `unit`) begins: a pair of
/// escaped surrogates makes one character; a lone one is written as a lone `0xFF` byte, which
/// makes the value unreadable as UTF-8 (see [`decoded`]). Returns how far past the escape's
/// `\u` the digits read reach: 4, or 10 for a pair.
fn utf16_escape(line: &[u8], i: usize, unit: u32, out: &mut Vec<u8>) -> usize {
    let mut put = |c: char| out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    if (0xD800..0xDC00).contains(&unit) {
        let low = (line.get(i + 6..i + 8) == Some(b"\\u"))
            .then(|| line.get(i + 8..i + 12).and_then(hex_unit))
            .flatten()
            .filter(|low| (0xDC00..0xE000).contains(low));
        if let Some(low) = low {
            let c = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
            put(char::from_u32(c).expect("a surrogate pair is a character"));
            return 10;
        }
        out.push(0xFF);
    } else if let Some(c) = char::from_u32(unit) {
        put(c);
    } else {
        out.push(0xFF); // a lone low surrogate
    }
    4
}

#[cfg(test)]
mod tests {

    #[test]
    fn lone_surrogate_escapes_become_replacement_characters() {
        use super::without_lone_surrogates;
        let lenient = |s: &str| {
            String::from_utf8(without_lone_surrogates(s.as_bytes()).into_owned()).unwrap()
        };
        for (json, want) in [
            (r#"["a\ud800b"]"#, r#"["a\ufffdb"]"#),
            (r#"["\udfff"]"#, r#"["\ufffd"]"#),
            (r#"["\ud83d\ude00"]"#, r#"["\ud83d\ude00"]"#), // a pair is one character
            (r#"["\ud83d\ud83d\ude00"]"#, r#"["\ufffd\ud83d\ude00"]"#),
            (r#"["\ud83dx\ude00"]"#, r#"["\ufffdx\ufffd"]"#),
            (r#"["\ud83d\n"]"#, r#"["\ufffd\n"]"#),
            (r#"["\\ud800"]"#, r#"["\\ud800"]"#), // an escaped backslash, then text
            (r#"["\\\ud800"]"#, r#"["\\\ufffd"]"#),
            (r#"["\ud800"#, r#"["\ufffd"#),
            (r#"["\ud8"]"#, r#"["\ud8"]"#), // not an escape JSON allows: left to the reader
        ] {
            assert_eq!(lenient(json), want, "{json}");
        }
        // Every result is read by serde_json, with one U+FFFD per lone surrogate.
        let v: Vec<String> = serde_json::from_slice(&without_lone_surrogates(
            br#"["\ud800\udc00\udc00", "\ud800"]"#,
        ))
        .unwrap();
        assert_eq!(v, ["\u{10000}\u{FFFD}", "\u{FFFD}"]);
        assert!(matches!(
            without_lone_surrogates(br#"["plain \u0041"]"#),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    use super::{decode_string, long_member_strings, long_member_texts};

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
        // A short `\u` escape skips no more than itself: the quote after it closes the
        // string, and what follows is read as the line's structure, not as string text.
        assert_eq!(spans(r#",,"x\u0:"k""k"{:"k""#, 1), Vec::<&str>::new());
        assert_eq!(spans(r#"{"a": "\u0", "b": "<p>"}"#, 1), [r#""<p>""#]);
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

    /// Decoded values are `serde_json`'s: every escape, pairs of escaped surrogates, raw
    /// non-ASCII; a lone surrogate (first or second half, or a high one before another
    /// escape) gives none, where `serde_json` gives an error.
    #[test]
    fn values_decode_as_serde_json_decodes_them() {
        let values = [
            r#""<p class=\"x\">a\\b\/c\n\r\t\b\f</p>""#,
            r#""caf\u00e9 \u00E9 \u4e2d \ud83d\ude00 \uD83D\uDE00 é 中 🙂""#,
            r#""<a>\u0020\u0000\u001f</a>""#,
            r#""<x>\ud800</x>""#,
            r#""<x>\udc00</x>""#,
            r#""<x>\ud800\u0041</x>""#,
            r#""<x>\ud800\n</x>""#,
            r#""<x>\ud800""#,
        ];
        for value in values {
            let serde: Option<String> = serde_json::from_str(value).ok();
            assert_eq!(decode_string(value.as_bytes()), serde, "{value}");
            let line = format!("{{\"k\": [1, \"x\"], \"html\": {value}}}");
            let texts = long_member_texts(line.as_bytes(), 1);
            let (start, end, text) = texts.last().expect("the value is reported");
            assert_eq!(&line[*start..*end], value);
            assert_eq!(text, &serde, "{value}");
        }
        assert!(decode_string(br#""\ud800""#).is_none());
        // Not one string alone.
        for bad in [&br#""a" "#[..], br#""a"#, b"a", br#""a\x""#, b"\"\xff\""] {
            assert_eq!(
                decode_string(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }
}
