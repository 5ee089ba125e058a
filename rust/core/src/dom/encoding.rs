//! Choosing the encoding as a browser does, then decoding with replacement.

use std::borrow::Cow;

use encoding_rs::{Encoding, UTF_8};

use crate::dom::DomError;

/// The encoding a WHATWG label names (`"latin1"`, `"shift_jis"`...), or an error.
///
/// # Errors
/// A label that names no WHATWG encoding.
pub fn encoding_for_label(label: &str) -> Result<&'static Encoding, DomError> {
    Encoding::for_label(label.trim().as_bytes())
        .ok_or_else(|| DomError::UnknownEncoding(label.to_owned()))
}

/// The caller's label wins, then a byte-order mark, then a `<meta charset>` (or
/// `http-equiv` content) in the first 1024 bytes, then UTF-8.
pub fn sniff(bytes: &[u8], label: Option<&str>) -> &'static Encoding {
    if let Some(enc) = label.and_then(|l| Encoding::for_label(l.trim().as_bytes())) {
        return enc;
    }
    if let Some((enc, _)) = Encoding::for_bom(bytes) {
        return enc;
    }
    meta_charset(&bytes[..bytes.len().min(1024)]).unwrap_or(UTF_8)
}

/// A light prescan: the first `charset=` inside a `<meta` tag.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let lower: Vec<u8> = head.iter().map(u8::to_ascii_lowercase).collect();
    let mut from = 0;
    while let Some(pos) = find(&lower[from..], b"<meta") {
        let start = from + pos;
        let end = find(&lower[start..], b">").map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset=") {
            let rest = &tag[c + 8..];
            let rest = rest
                .strip_prefix(b"\"")
                .or_else(|| rest.strip_prefix(b"'"))
                .unwrap_or(rest);
            let len = rest
                .iter()
                .position(|b| matches!(b, b'"' | b'\'' | b' ' | b';' | b'/' | b'>'))
                .unwrap_or(rest.len());
            if let Some(enc) = Encoding::for_label(&rest[..len]) {
                // A page that says UTF-16 in ASCII bytes is not UTF-16 (WHATWG rule).
                return Some(if enc.name().starts_with("UTF-16") {
                    UTF_8
                } else {
                    enc
                });
            }
        }
        from = end;
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decodes with the sniffed encoding; invalid sequences become U+FFFD.
pub fn decode<'a>(bytes: &'a [u8], label: Option<&str>) -> Cow<'a, str> {
    let enc = sniff(bytes, label);
    let (text, _, _) = enc.decode(bytes);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_meta_bom_and_label() {
        let latin1 = b"<html><head><meta charset=\"iso-8859-1\"></head><body>caf\xe9</body></html>";
        assert!(decode(latin1, None).contains("café"));
        assert!(decode(latin1, Some("utf-8")).contains("caf\u{fffd}"));
        let bom = b"\xef\xbb\xbf<p>\xc3\xa9</p>";
        assert_eq!(decode(bom, None), "<p>é</p>");
        let http_equiv = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\"><p>\xcf</p>";
        assert!(decode(http_equiv, None).contains('П'));
        assert!(!decode(b"\xff\xfe junk \x00", None).is_empty());
    }
}
