//! Errors of the core. Each one says what is wrong and, where there is one, which node.

use std::fmt;

/// Why an accessibility-tree payload was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AxError {
    /// Not JSON, or JSON of the wrong shape; carries serde's line and column.
    Json(String),
    /// Bytes that are not UTF-8.
    Utf8(String),
    /// A node lacks a field the tree cannot do without.
    MissingField { index: usize, field: &'static str },
    /// Two different nodes claim the same `nodeId`.
    DuplicateId(String),
    /// `childIds` names a node that is not in the payload.
    UnknownChild { parent: String, child: String },
    /// A node is listed as the child of two parents.
    TwoParents {
        child: String,
        first: String,
        second: String,
    },
    /// The child links form a cycle.
    Cycle(String),
    /// The tree is deeper than the caller allowed.
    TooDeep { node: String, limit: usize },
    /// A frame's owner node could not be found.
    FrameOwner(i64),
}

impl fmt::Display for AxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AxError::Json(m) => write!(f, "malformed accessibility-tree JSON: {m}"),
            AxError::Utf8(m) => write!(f, "accessibility-tree payload is not valid UTF-8: {m}"),
            AxError::MissingField { index, field } => {
                write!(f, "node at position {index} has no \"{field}\" field")
            }
            AxError::DuplicateId(id) => {
                write!(f, "duplicate nodeId {id}: two different nodes share it")
            }
            AxError::UnknownChild { parent, child } => {
                write!(f, "node {parent} lists unknown child id {child}")
            }
            AxError::TwoParents {
                child,
                first,
                second,
            } => {
                write!(
                    f,
                    "node {child} is a child of both node {first} and node {second}"
                )
            }
            AxError::Cycle(id) => write!(f, "the child links form a cycle through node {id}"),
            AxError::TooDeep { node, limit } => {
                write!(f, "tree deeper than {limit} levels at node {node}")
            }
            AxError::FrameOwner(id) => {
                write!(f, "no node with backendDOMNodeId {id} to own the frame")
            }
        }
    }
}

impl std::error::Error for AxError {}
