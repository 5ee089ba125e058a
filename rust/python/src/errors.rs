//! The exceptions `pagelens._core` raises, and the one place where the core's errors become them.
//!
//! Every class derives from `PagelensError` and from the built-in class a caller expects
//! (`ValueError`, `TypeError`, `KeyError`): `except pagelens.PagelensError` catches all that
//! the package raises on bad input, and `except ValueError` still catches a bad value.

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

use pagelens_core::annotate::ImageError;
use pagelens_core::chunk::ChunkError;
use pagelens_core::dom::DomError;
use pagelens_core::render::UnknownMode;
use pagelens_core::search::PatternError;
use pagelens_core::{AxError, TokenizerError};

pyo3::create_exception!(
    pagelens,
    PagelensError,
    PyException,
    "The base of every error pagelens raises on bad input."
);

/// The exception classes below `PagelensError`.
#[derive(Clone, Copy)]
pub enum ErrorKind {
    AxTree,
    Dom,
    Tokenizer,
    Argument,
    ArgumentType,
    NodeNotFound,
}

const CLASSES: [(ErrorKind, &str, &str, &str); 6] = [
    (ErrorKind::AxTree, "AXTreeError", "ValueError",
     "An accessibility-tree payload that cannot be parsed; the message names the problem and the node."),
    (ErrorKind::Dom, "DomError", "ValueError",
     "A bad DOM query or cleaning request: an invalid CSS selector or node path, an unknown cleaning \
      profile, an id to keep that is not there (parsing HTML itself never fails)."),
    (ErrorKind::Tokenizer, "TokenizerError", "ValueError",
     "A tokenizer name that is not embedded, or a tokenizer.json that does not load."),
    (ErrorKind::Argument, "ArgumentError", "ValueError",
     "An argument outside its domain: an unknown mode or chunk kind, a budget of zero tokens, a frame \
      without its owner."),
    (ErrorKind::ArgumentType, "ArgumentTypeError", "TypeError",
     "An argument of the wrong type (a payload that is not bytes, text or JSON-like, clickable ids that \
      are not ints)."),
    (ErrorKind::NodeNotFound, "NodeNotFoundError", "KeyError", "An id that names no node of the tree or document."),
];

static TYPES: PyOnceLock<Vec<Py<PyType>>> = PyOnceLock::new();

fn types(py: Python<'_>) -> &Vec<Py<PyType>> {
    TYPES.get_or_init(py, || {
        let builtins = py
            .import("builtins")
            .expect("builtins is always importable");
        let make = builtins.getattr("type").expect("builtins.type exists");
        CLASSES
            .iter()
            .map(|(_, name, builtin, doc)| {
                let base = builtins
                    .getattr(*builtin)
                    .expect("a built-in exception class");
                let bases = PyTuple::new(py, [py.get_type::<PagelensError>().into_any(), base])
                    .expect("a tuple of two classes");
                let body = PyDict::new(py);
                body.set_item("__doc__", doc).expect("a str key");
                body.set_item("__module__", "pagelens").expect("a str key");
                make.call1((name, bases, body))
                    .and_then(|t| Ok(t.cast_into::<PyType>()?))
                    .expect("two exception bases with compatible layouts")
                    .unbind()
            })
            .collect()
    })
}

/// The class for `kind`.
pub fn class(py: Python<'_>, kind: ErrorKind) -> Bound<'_, PyType> {
    types(py)[kind as usize].bind(py).clone()
}

/// An exception of class `kind`.
pub fn err(kind: ErrorKind, message: impl Into<String>) -> PyErr {
    let message = message.into();
    Python::attach(|py| PyErr::from_type(class(py, kind), message))
}

/// A core error and the class it is raised as.
pub trait CoreError: std::fmt::Display {
    const KIND: ErrorKind;
}

impl CoreError for AxError {
    const KIND: ErrorKind = ErrorKind::AxTree;
}
impl CoreError for DomError {
    const KIND: ErrorKind = ErrorKind::Dom;
}
impl CoreError for TokenizerError {
    const KIND: ErrorKind = ErrorKind::Tokenizer;
}
impl CoreError for ChunkError {
    const KIND: ErrorKind = ErrorKind::Argument;
}
impl CoreError for UnknownMode {
    const KIND: ErrorKind = ErrorKind::Argument;
}
impl CoreError for ImageError {
    const KIND: ErrorKind = ErrorKind::Argument;
}
impl CoreError for PatternError {
    const KIND: ErrorKind = ErrorKind::Argument;
}

/// The Python exception for a core error (`.map_err(py_err)?`).
pub fn py_err<E: CoreError>(e: E) -> PyErr {
    err(E::KIND, e.to_string())
}

/// Adds `PagelensError` and its subclasses to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("PagelensError", py.get_type::<PagelensError>())?;
    for (kind, name, _, _) in CLASSES {
        m.add(name, class(py, kind))?;
    }
    Ok(())
}
