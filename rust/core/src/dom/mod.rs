//! HTML documents: parsing with html5ever, node ids, cleaning profiles (spec `dom.md`).

pub mod clean;
mod encoding;
pub mod tree;

pub use clean::{clean, CleanOptions};
pub use encoding::{decode, sniff};
pub use tree::{Dom, Kind};
