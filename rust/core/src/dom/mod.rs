//! HTML documents: parsing with html5ever, node ids, cleaning profiles (spec `dom.md`).

mod build;
pub mod clean;
mod encoding;
mod error;
mod parse;
pub mod select;
mod serialize;
pub(crate) mod tokenize;
pub mod tree;

pub use build::{LiveKind, LiveNode};
pub use clean::{clean, CleanOptions};
pub use encoding::{decode, encoding_for_label, sniff};
pub use error::DomError;
pub use parse::{MAX_FORMATTING, MAX_NESTING};
pub use select::Selector;
pub use tree::{Dom, Kind};
