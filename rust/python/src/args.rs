//! Integer arguments (and id labels), converted so that a value out of range or of the wrong type is one of
//! pagelens' own errors naming the argument (pyo3's default is a bare `OverflowError`).
//! Used through `#[pyo3(from_py_with = ...)]`.

use pyo3::exceptions::PyOverflowError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use pagelens_core::render::{IdLabels, IdStyle, SeenIds};

use crate::errors::{err, ErrorKind};

/// An int that fits 64 bits.
fn int(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<i64> {
    obj.extract::<i64>().map_err(|e| {
        if e.is_instance_of::<PyOverflowError>(obj.py()) {
            err(ErrorKind::Argument, format!("{what} {obj} is out of range"))
        } else {
            let kind = obj
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default();
            err(
                ErrorKind::ArgumentType,
                format!("{what} must be an int, not {kind}"),
            )
        }
    })
}

/// An int that is zero or more.
fn non_negative(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    let v = int(obj, what)?;
    usize::try_from(v).map_err(|_| {
        err(
            ErrorKind::Argument,
            format!("{what} must be 0 or more, not {v}"),
        )
    })
}

fn optional(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<usize>> {
    if obj.is_none() {
        return Ok(None);
    }
    non_negative(obj, what).map(Some)
}

pub fn max_tokens(obj: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    optional(obj, "max_tokens")
}

pub fn max_nodes(obj: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
    optional(obj, "max_nodes")
}

pub fn max_depth(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    non_negative(obj, "max_depth")
}

pub fn budget(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    non_negative(obj, "max_tokens")
}

/// A node id to look up: `None` when no node can have it (an int out of every id's range).
pub fn lookup_id(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    match obj.extract::<i64>() {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<PyOverflowError>(obj.py()) => Ok(None),
        Err(_) => int(obj, "node id").map(Some),
    }
}

/// A frame's owner (a backendDOMNodeId).
pub fn owner(obj: &Bound<'_, PyAny>) -> PyResult<i64> {
    int(obj, "frame owner")
}

/// Accessibility-tree node ids.
pub fn node_ids(obj: &Bound<'_, PyAny>) -> PyResult<Vec<i64>> {
    obj.try_iter()
        .map_err(|_| err(ErrorKind::ArgumentType, "ids must be an iterable of ints"))?
        .map(|item| int(&item?, "node id"))
        .collect()
}

/// `render`'s `labels`: element id -> the text printed in its place.
pub fn id_labels(obj: &Bound<'_, PyAny>) -> PyResult<Option<IdLabels>> {
    if obj.is_none() {
        return Ok(None);
    }
    let d = obj.cast::<PyDict>().map_err(|_| {
        err(
            ErrorKind::ArgumentType,
            "labels must be a dict of element ids (int) to labels (str)",
        )
    })?;
    let mut out = IdLabels::default();
    for (k, v) in d.iter() {
        let id = int(&k, "labels' element id")?;
        let label: String = v.extract().map_err(|_| {
            err(
                ErrorKind::ArgumentType,
                format!("the label of element {id} must be a str"),
            )
        })?;
        if !IdStyle::valid_label(&label) {
            return Err(err(
                ErrorKind::Argument,
                format!(
                    "the label of element {id} ({:?}) cannot stand for an id: at most 64 \
                     characters, no space, bracket, quote or '*'",
                    label.chars().take(80).collect::<String>()
                ),
            ));
        }
        out.insert(id, label);
    }
    Ok(Some(out))
}

/// `render`'s `seen_ids`: the element ids of the previous observation.
pub fn seen_ids(obj: &Bound<'_, PyAny>) -> PyResult<Option<SeenIds>> {
    if obj.is_none() {
        return Ok(None);
    }
    Ok(Some(node_ids(obj)?.into_iter().collect()))
}

/// DOM node ids (`node="N"`): an id no element can have is reported as missing.
pub fn dom_ids(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u32>>> {
    if obj.is_none() {
        return Ok(None);
    }
    obj.try_iter()
        .map_err(|_| {
            err(
                ErrorKind::ArgumentType,
                "keep must be an iterable of node ids",
            )
        })?
        .map(|item| {
            let item = item?;
            let v = int(&item, "node id")?;
            u32::try_from(v).map_err(|_| {
                err(
                    ErrorKind::Dom,
                    format!("no element with node id {v} to keep"),
                )
            })
        })
        .collect::<PyResult<Vec<u32>>>()
        .map(Some)
}

/// `Dom.from_nodes`' input: a sequence of `(parent, node_type, text, attributes, foreign)`.
pub fn live_nodes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<pagelens_core::dom::LiveNode>> {
    use pagelens_core::dom::{LiveKind, LiveNode};
    let bad = |i: usize, why: &str| {
        err(
            ErrorKind::ArgumentType,
            format!(
                "live node {i}: {why}; expected (parent, node_type, text, attributes, foreign)"
            ),
        )
    };
    let mut out = Vec::new();
    let items = obj.try_iter().map_err(|_| {
        err(
            ErrorKind::ArgumentType,
            "live nodes must be an iterable of tuples",
        )
    })?;
    for (i, item) in items.enumerate() {
        let item = item?;
        let shape = || bad(i, "not a tuple of int, int, str, list[str], bool");
        let (parent, node_type, text, attrs, foreign): (
            i64,
            i64,
            Bound<'_, PyAny>,
            Vec<Bound<'_, PyAny>>,
            bool,
        ) = item.extract().map_err(|_| shape())?;
        // A page's text may hold lone surrogates: read leniently, as every text is.
        let text = crate::text::lenient_string(&text).ok_or_else(shape)?;
        let attrs = attrs
            .iter()
            .map(|a| crate::text::lenient_string(a).ok_or_else(shape))
            .collect::<PyResult<Vec<String>>>()?;
        let parent = if parent < 0 {
            None
        } else {
            Some(u32::try_from(parent).map_err(|_| {
                err(
                    ErrorKind::Argument,
                    format!("live node {i}: parent {parent} is out of range"),
                )
            })?)
        };
        let kind = match node_type {
            1 => LiveKind::Element {
                tag: text,
                attrs: attrs
                    .chunks_exact(2)
                    .map(|p| (p[0].clone(), p[1].clone()))
                    .collect(),
                foreign,
            },
            3 => LiveKind::Text(text),
            8 => LiveKind::Comment(text),
            10 => LiveKind::Doctype(text),
            other => {
                return Err(err(
                    ErrorKind::Argument,
                    format!("live node {i}: node type {other} is not 1, 3, 8 or 10"),
                ))
            }
        };
        out.push(LiveNode { parent, kind });
    }
    Ok(out)
}

/// An id for a message: the number, or "out of range".
pub(crate) fn shown_id(id: Option<i64>) -> String {
    id.map_or_else(|| "out of range".to_owned(), |i| i.to_string())
}
