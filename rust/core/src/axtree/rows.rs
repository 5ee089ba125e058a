//! pagelens' own capture (`capture.js`, run in an isolated world of the page) as rows: one
//! ASCII string of numbers and one table of strings, read here into the same records a CDP
//! payload gives, so both sources build one arena and meet one renderer (spec section 1b).
//!
//! Numbers are zigzag-encoded, five bits a character of a 64-character alphabet, a character
//! of the upper half saying more follow. Each row: the id (minus the previous row's), the
//! parent (how many rows back; 0: none), role, name (-1: none), flags, then the value if
//! `flags & 16`, the hint if `flags & 32`, and if `flags & 64` a count of properties and that
//! many triples `name, kind, value`. Strings are indices into the table. Everything is
//! checked: a bad index, count or character is an error, never a panic.

use std::borrow::Cow;

use super::records::{
    AxValue, ClickableEntry, IdRef, NameValue, ParsedPayload, RawNode, RawProp, Scalar,
};
use crate::error::AxError;

/// Flag bits of a row.
const FROM_CONTENTS: i64 = 1;
const CLICKABLE: i64 = 2;
const IGNORED: i64 = 4;
const HAS_VALUE: i64 = 16;
const HAS_HINT: i64 = 32;
const HAS_PROPS: i64 = 64;

/// Property kinds.
const KIND_BOOL: i64 = 0;
const KIND_INT: i64 = 1;
const KIND_STR: i64 = 2;
const KIND_NUMBER: i64 = 3;

/// The 64 characters, in the order of their values.
const DIGITS: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn digit(c: u8) -> Option<u64> {
    Some(u64::from(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'-' => 62,
        b'_' => 63,
        _ => return None,
    }))
}

/// Writes numbers as the capture does (for tests and fuzzing).
#[must_use]
pub fn encode(values: &[i64]) -> String {
    let mut out = String::new();
    for &v in values {
        #[allow(clippy::cast_sign_loss)]
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        while z >= 32 {
            out.push(char::from(DIGITS[32 + (z % 32) as usize]));
            z /= 32;
        }
        out.push(char::from(DIGITS[z as usize]));
    }
    out
}

/// Reads the numbers off the string, one at a time.
struct Numbers<'s> {
    bytes: &'s [u8],
    at: usize,
    row: usize,
}

impl Numbers<'_> {
    fn next(&mut self) -> Result<i64, AxError> {
        let mut z: u64 = 0;
        let mut shift = 0u32;
        loop {
            let c = *self
                .bytes
                .get(self.at)
                .ok_or_else(|| bad("a cut row", self.row))?;
            self.at += 1;
            let d = digit(c).ok_or_else(|| bad("a character outside the alphabet", self.row))?;
            if shift > 60 {
                return Err(bad("a number too long", self.row));
            }
            z |= (d % 32) << shift;
            shift += 5;
            if d < 32 {
                break;
            }
        }
        #[allow(clippy::cast_possible_wrap)]
        Ok(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }
}

fn bad(what: &str, row: usize) -> AxError {
    AxError::Json(format!("capture rows: {what} in row {row}"))
}

/// A number as CDP writes it: an integer when it is one.
fn number(text: &str) -> Option<Scalar<'static>> {
    let f: f64 = text.trim().parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    #[allow(clippy::cast_possible_truncation)]
    let i = f as i64;
    #[allow(clippy::cast_precision_loss)]
    Some(if (i as f64 - f).abs() < f64::EPSILON && f.abs() < 9.0e15 {
        Scalar::Int(i)
    } else {
        Scalar::Float(f)
    })
}

/// Roles whose value is a number (Chromium sends `valuenow` as one).
fn numeric_value(role: &str) -> bool {
    matches!(
        role,
        "slider" | "spinbutton" | "progressbar" | "meter" | "scrollbar"
    )
}

/// The rows as CDP-shaped records: node ids are the capture's ids, and each node's
/// `backendDOMNodeId` is its id too (an action resolves it through the page's registry).
///
/// # Errors
/// A row, string index or character out of range, a parent that does not come before its
/// child, an id that overflows.
pub fn read_rows<'a>(
    strings: &[Cow<'a, str>],
    encoded: &str,
) -> Result<ParsedPayload<'a>, AxError> {
    let string = |i: i64, row: usize, what: &str| -> Result<Option<Cow<'a, str>>, AxError> {
        if i == -1 {
            return Ok(None);
        }
        usize::try_from(i)
            .ok()
            .and_then(|i| strings.get(i))
            .cloned()
            .map(Some)
            .ok_or_else(|| bad(&format!("{what} string {i} out of range"), row))
    };
    let mut numbers = Numbers {
        bytes: encoded.as_bytes(),
        at: 0,
        row: 0,
    };
    let mut nodes: Vec<RawNode<'a>> = Vec::new();
    let mut children: Vec<Vec<IdRef<'a>>> = Vec::new();
    let mut clickable = Vec::new();
    let mut id: i64 = 0;
    while !numbers.done() {
        let row = nodes.len();
        numbers.row = row;
        id = id
            .checked_add(numbers.next()?)
            .ok_or_else(|| bad("an id out of range", row))?;
        let back = numbers.next()?;
        let role = numbers.next()?;
        let name = numbers.next()?;
        let flags = numbers.next()?;
        let value = if flags & HAS_VALUE != 0 {
            numbers.next()?
        } else {
            -1
        };
        let hint = if flags & HAS_HINT != 0 {
            numbers.next()?
        } else {
            -1
        };
        let nprops = if flags & HAS_PROPS != 0 {
            usize::try_from(numbers.next()?).map_err(|_| bad("a negative property count", row))?
        } else {
            0
        };
        // Every property takes at least three characters: a count past that is a lie.
        if nprops > encoded.len() {
            return Err(bad("a property count past the end", row));
        }
        let role_text = string(role, row, "role")?.unwrap_or(Cow::Borrowed("none"));
        let mut properties = Vec::with_capacity(nprops);
        for _ in 0..nprops {
            let (key, kind, raw) = (numbers.next()?, numbers.next()?, numbers.next()?);
            let Some(prop_name) = string(key, row, "property name")? else {
                return Err(bad("a property without a name", row));
            };
            let scalar = match kind {
                KIND_BOOL => Scalar::Bool(raw != 0),
                KIND_INT => Scalar::Int(raw),
                KIND_STR => Scalar::Str(string(raw, row, "property")?.unwrap_or_default()),
                KIND_NUMBER => string(raw, row, "property")?
                    .and_then(|s| number(&s))
                    .unwrap_or(Scalar::Other),
                _ => return Err(bad("an unknown property kind", row)),
            };
            properties.push(RawProp {
                name: prop_name,
                value: Some(AxValue {
                    value: Some(scalar),
                }),
            });
        }
        let value = string(value, row, "value")?.map(|v| {
            let scalar = if numeric_value(&role_text) {
                number(&v).unwrap_or(Scalar::Str(v))
            } else {
                Scalar::Str(v)
            };
            AxValue {
                value: Some(scalar),
            }
        });
        let name = string(name, row, "name")?;
        if flags & CLICKABLE != 0 {
            clickable.push(ClickableEntry {
                backend_id: id,
                hint: string(hint, row, "hint")?.map(Cow::into_owned),
            });
        }
        if back != 0 {
            let p = usize::try_from(back)
                .ok()
                .and_then(|b| row.checked_sub(b))
                .ok_or_else(|| bad(&format!("a parent {back} rows back, before the first"), row))?;
            children[p].push(IdRef::Int(id));
        }
        nodes.push(RawNode {
            node_id: Some(IdRef::Int(id)),
            ignored: flags & IGNORED != 0,
            role: Some(AxValue {
                value: Some(Scalar::Str(role_text)),
            }),
            name: Some(NameValue {
                value: name.map(Scalar::Str),
                from_contents: flags & FROM_CONTENTS != 0,
            }),
            properties: Some(properties),
            value,
            child_ids: None,
            backend_dom_node_id: Some(id),
            frame_id: None,
        });
        children.push(Vec::new());
    }
    for (node, kids) in nodes.iter_mut().zip(children) {
        node.child_ids = Some(kids);
    }
    Ok(ParsedPayload {
        nodes,
        clickable,
        notes: super::records::CaptureNotes::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::encode;
    use crate::axtree::ParseOptions;
    use crate::error::AxError;
    use crate::render::occam::{render, OccamOptions};
    use crate::AxTree;

    fn tree(strings: &[&str], rows: &str) -> Result<AxTree, AxError> {
        let payload = serde_json::json!({"id": 3, "result": {"result": {"type": "object",
            "value": {"x": [7], "v": 2, "s": strings, "r": rows, "closed": [], "truncated": false}}}});
        AxTree::parse_page(
            payload.to_string().as_bytes(),
            None,
            &[],
            ParseOptions::default(),
        )
    }

    fn occam(tree: &AxTree) -> String {
        render(tree, OccamOptions::default())
            .lines
            .iter()
            .map(|l| format!("{}{}", "\t".repeat(l.depth as usize), l.text))
            .collect::<Vec<_>>()
            .join("\n")
    }

    const S: [&str; 10] = [
        "RootWebArea",
        "Page",
        "link",
        "Home",
        "url",
        "https://x.test/",
        "StaticText",
        "button",
        "slider",
        "42",
    ];

    #[test]
    fn numbers_round_trip() {
        let values = [
            0,
            1,
            -1,
            31,
            32,
            -33,
            1_000_000,
            i64::from(i32::MAX),
            -5_000_000_000,
        ];
        let encoded = encode(&values);
        let mut numbers = super::Numbers {
            bytes: encoded.as_bytes(),
            at: 0,
            row: 0,
        };
        for v in values {
            assert_eq!(numbers.next().unwrap(), v);
        }
        assert!(numbers.done());
    }

    #[test]
    fn rows_build_the_tree_a_cdp_payload_would() {
        // root; link 'Home' [url] with its text; a clickable unnamed button with a hint; a
        // slider whose value is a number. Ids 1, 5, 6, 9, 11.
        let rows = encode(&[
            1,
            0,
            0,
            1,
            8, //
            4,
            1,
            2,
            3,
            1 | 64,
            1,
            4,
            2,
            5, //
            1,
            1,
            6,
            3,
            0, //
            3,
            3,
            7,
            -1,
            2 | 32,
            3, //
            2,
            4,
            8,
            -1,
            16,
            9,
        ]);
        let t = tree(&S, &rows).unwrap();
        let text = occam(&t);
        assert!(text.contains("link [5] 'Home'"), "{text}");
        assert_eq!(t.capture_notes.unread_frames, vec![7]);
        let link = t.node(t.index_of(5).unwrap());
        assert_eq!(link.backend_id, Some(5));
        assert!(link.name_from_contents);
        assert_eq!(
            t.prop(t.index_of(5).unwrap(), "url")
                .map(super::super::Value::py_str)
                .as_deref(),
            Some("https://x.test/")
        );
        assert_eq!(t.hint(t.index_of(9).unwrap()), Some("Home"));
        let slider = t.node(t.index_of(11).unwrap());
        assert_eq!(slider.value, Some(super::super::Value::Int(42)));
    }

    #[test]
    fn bad_rows_are_errors_never_panics() {
        let cases = [
            encode(&[1, 0, 0, 1]),                 // a cut row
            encode(&[1, 0, 0, 99, 0]),             // a name past the table
            encode(&[1, 1, 0, 1, 0]),              // a parent before the first row
            encode(&[1, 0, 0, 1, 64, -1]),         // a negative property count
            encode(&[1, 0, 0, 1, 64, 2, 4, 0, 1]), // properties past the end
            encode(&[1, 0, 0, 1, 64, 1, 4, 9, 1]), // an unknown property kind
            "B!".to_owned(),                       // a character outside the alphabet
            "gggggggggggggggggA".to_owned(),       // a number too long
        ];
        for rows in &cases {
            let err = tree(&S, rows).unwrap_err();
            assert!(err.to_string().contains("capture rows"), "{rows}: {err}");
        }
        // Two rows with one id: the tree's own check.
        assert!(tree(&S, &encode(&[1, 0, 0, 1, 0, 0, 1, 6, 3, 0])).is_err());
    }

    #[test]
    fn a_page_exception_is_named() {
        let payload = br#"{"id":1,"result":{"result":{"type":"object"},"exceptionDetails":{"text":"Uncaught","exception":{"description":"TypeError: x is not a function\n    at capture"}}}}"#;
        let err = AxTree::parse_page(payload, None, &[], ParseOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains("TypeError: x is not a function"),
            "{err}"
        );
        assert!(!err.to_string().contains("at capture"), "{err}");
    }
}
