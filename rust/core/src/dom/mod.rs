//! HTML documents: parsing with html5ever, node ids, cleaning profiles (spec `dom.md`).

pub mod clean;
pub mod select;
mod encoding;
pub mod tree;

pub use clean::{clean, CleanOptions};
pub use encoding::{decode, sniff};
pub use select::Selector;
pub use tree::{Dom, Kind};
