//! What a DOM query or cleaning request can get wrong (parsing HTML itself never fails).

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DomError {
    /// A CSS selector that does not parse.
    Selector { css: String, reason: String },
    /// A node path that is not `/tag[index]/...`.
    Path { path: String, reason: String },
    /// A cleaning profile that does not exist.
    UnknownProfile(String),
    /// An id to keep through cleaning that names no element.
    NoElement(u32),
    /// A cleaning option that does not exist or has a value of the wrong type.
    Option(String),
    /// A character-encoding label that names no encoding.
    UnknownEncoding(String),
    /// Live nodes that do not form a tree (a parent that is not an earlier element).
    Tree(String),
}

impl fmt::Display for DomError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DomError::Selector { css, reason } => {
                write!(f, "invalid CSS selector {css:?}: {reason}")
            }
            DomError::Path { path, reason } => write!(f, "invalid node path {path:?}: {reason}"),
            DomError::UnknownProfile(name) => {
                let expected: Vec<String> = super::CleanOptions::PROFILES
                    .iter()
                    .map(|p| format!("{p:?}"))
                    .collect();
                write!(
                    f,
                    "unknown cleaning profile {name:?}; expected {}",
                    expected.join(" or ")
                )
            }
            DomError::NoElement(id) => write!(f, "no element with node id {id} to keep"),
            DomError::Option(why) => write!(f, "cleaning option: {why}"),
            DomError::Tree(why) => write!(f, "live DOM nodes: {why}"),
            DomError::UnknownEncoding(label) => write!(
                f,
                "unknown encoding {label:?}: not a WHATWG label (utf-8, windows-1252, shift_jis, ...)"
            ),
        }
    }
}

impl std::error::Error for DomError {}
