//! Any bytes as a JSON line: every long string reported is a member's value, in order and
//! apart from the others, and decodes to text with a printable character (the reader leaves it
//! unread on that promise). Surrogate escapes, which Python's decoder takes alone and
//! serde_json does not, are read as spaces. The values decoded with the ranges
//! (`long_member_texts`, `decode_string`) are serde_json's, or none where serde_json refuses a
//! lone surrogate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pagelens_core::json::{decode_string, long_member_strings, long_member_texts, without_lone_surrogates};

fuzz_target!(|data: &[u8]| {
    // Lone surrogate escapes become U+FFFD, nothing else changes: same length, and what
    // serde_json read before it reads the same after (pairs and escaped backslashes kept).
    let lenient = without_lone_surrogates(data);
    assert_eq!(lenient.len(), data.len());
    if let Ok(before) = serde_json::from_slice::<serde_json::Value>(data) {
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&lenient).ok(), Some(before));
    }
    let min = usize::from(data.first().copied().unwrap_or(0) % 8);
    let spans = long_member_strings(data, min);
    let texts = long_member_texts(data, min);
    assert_eq!(spans.len(), texts.len());
    for (&(start, end), (a, b, text)) in spans.iter().zip(&texts) {
        assert_eq!((start, end), (*a, *b));
        let serde: Option<String> = serde_json::from_slice(&data[start..end]).ok();
        assert_eq!(text, &serde, "{:?}", String::from_utf8_lossy(&data[start..end]));
        assert_eq!(decode_string(&data[start..end]), serde);
    }
    // The whole input as one string literal (serde_json also allows whitespace around it).
    if data.first() == Some(&b'"') && data.last() == Some(&b'"') {
        if let Ok(value) = serde_json::from_slice::<String>(data) {
            assert_eq!(decode_string(data), Some(value));
        }
    }
    let mut last = 0;
    for (start, end) in spans {
        assert!(last <= start && start + 2 <= end && end <= data.len());
        last = end;
        assert_eq!((data[start], data[end - 1]), (b'"', b'"'));
        assert!(end - start - 2 >= min);
        let before = data[..start]
            .iter()
            .rev()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
        assert_eq!(before, Some(&b':'));
        let text: String =
            serde_json::from_slice(&without_surrogates(&data[start..end])).expect("a valid string");
        assert!(text.chars().any(|c| c.is_ascii_graphic()), "{text:?}");
    }
});

/// The string with each `\uD800`..`\uDFFF` escape (not itself escaped) made `\u0020`.
fn without_surrogates(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\' && s.get(i + 1) == Some(&b'u') && i + 6 <= s.len() {
            let hex = std::str::from_utf8(&s[i + 2..i + 6])
                .ok()
                .and_then(|h| u16::from_str_radix(h, 16).ok());
            if hex.is_some_and(|h| (0xd800..=0xdfff).contains(&h)) {
                out.extend_from_slice(b"\\u0020");
            } else {
                out.extend_from_slice(&s[i..i + 6]);
            }
            i += 6;
        } else if s[i] == b'\\' && i + 1 < s.len() {
            out.extend_from_slice(&s[i..i + 2]);
            i += 2;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}
