//! Reading a CDP `Accessibility.getFullAXTree` payload, or pagelens' capture answer (its rows
//! read by `rows`), into the borrowed records of `records`.

use std::borrow::Cow;

use serde::Deserialize;

pub use super::records::{
    AxValue, CaptureNotes, ClickableEntry, IdRef, NameValue, ParsedPayload, RawNode, RawProp,
    Scalar,
};
use crate::error::AxError;

#[derive(Deserialize)]
struct Payload<'a> {
    #[serde(borrow)]
    nodes: Option<Vec<RawNode<'a>>>,
    #[serde(default)]
    clickable: Option<Vec<ClickableEntry>>,
    /// A whole CDP response message, `{"id": 7, "result": {"nodes": [...]}, "sessionId": ...}`,
    /// as read off the `DevTools` socket: parsed without a copy of the inner object.
    #[serde(borrow)]
    result: Option<Box<Payload<'a>>>,
    #[serde(borrow)]
    error: Option<CdpError<'a>>,
    /// `Runtime.evaluate`'s answer: `{"result": {"type": "object", "value": {...}}}`.
    #[serde(borrow)]
    value: Option<Box<Payload<'a>>>,
    #[serde(rename = "exceptionDetails", borrow)]
    exception: Option<Exception<'a>>,
    /// pagelens' own capture: the string table and the rows (see `rows`).
    #[serde(rename = "s", borrow)]
    strings: Option<Vec<Cow<'a, str>>>,
    #[serde(rename = "r", borrow)]
    rows: Option<Cow<'a, str>>,
    #[serde(rename = "x", default)]
    unread_frames: Vec<i64>,
    #[serde(default)]
    closed: Vec<i64>,
    #[serde(default)]
    truncated: bool,
}

#[derive(Deserialize)]
struct Exception<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    exception: Option<ExceptionObject<'a>>,
}

#[derive(Deserialize)]
struct ExceptionObject<'a> {
    #[serde(borrow, default)]
    description: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct CdpError<'a> {
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
}

impl<'a> Payload<'a> {
    fn into_parsed(self) -> Result<ParsedPayload<'a>, AxError> {
        if let Some(error) = self.error {
            let message = error.message.as_deref().unwrap_or("no message").to_owned();
            return Err(AxError::Json(format!(
                "the browser answered with an error: {message}"
            )));
        }
        if let Some(e) = self.exception {
            let what = e
                .exception
                .and_then(|x| x.description)
                .or(e.text)
                .unwrap_or(Cow::Borrowed("no message"));
            let first = what
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(300)
                .collect::<String>();
            return Err(AxError::Json(format!("the page's capture failed: {first}")));
        }
        if let (Some(strings), Some(rows)) = (self.strings, self.rows) {
            let mut parsed = super::rows::read_rows(&strings, &rows)?;
            parsed.notes = CaptureNotes {
                unread_frames: self.unread_frames,
                closed: self.closed,
                truncated: self.truncated,
            };
            return Ok(parsed);
        }
        let clickable = self.clickable.unwrap_or_default();
        match (self.nodes, self.result, self.value) {
            (Some(nodes), _, _) => Ok(ParsedPayload {
                nodes,
                clickable,
                notes: CaptureNotes::default(),
            }),
            (None, Some(result), _) | (None, None, Some(result)) => result.into_parsed(),
            (None, None, None) => Err(AxError::Json(
                "the payload object has no \"nodes\" array".to_owned(),
            )),
        }
    }
}

fn json_error(e: serde_json::Error) -> AxError {
    AxError::Json(e.to_string())
}

/// Parses `{"nodes": [...]}` (optionally with a saved capture's `clickable` list), a bare
/// `[...]` of nodes, or a CDP response message that holds either in its `result`.
///
/// # Errors
/// Bytes that are not UTF-8 JSON of one of the payload forms.
pub fn parse_payload(bytes: &[u8]) -> Result<ParsedPayload<'_>, AxError> {
    let text = std::str::from_utf8(bytes).map_err(|e| AxError::Utf8(e.to_string()))?;
    let first = text.bytes().find(|b| !b.is_ascii_whitespace());
    match first {
        Some(b'[') => serde_json::from_str::<Vec<RawNode>>(text)
            .map(|nodes| ParsedPayload {
                nodes,
                clickable: Vec::new(),
                notes: CaptureNotes::default(),
            })
            .map_err(json_error),
        Some(b'{') => {
            let p: Payload = serde_json::from_str(text).map_err(json_error)?;
            p.into_parsed()
        }
        Some(_) => Err(AxError::Json(
            "expected an object {\"nodes\": [...]} or an array of nodes".to_owned(),
        )),
        None => Err(AxError::Json("empty payload".to_owned())),
    }
}
