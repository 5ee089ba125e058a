//! Accessibility trees from CDP: parsing, the arena, and what roles mean.

mod build;
pub mod parse;
pub mod records;
pub mod roles;
pub mod rows;
mod tree;

pub use roles::RoleClass;
pub use tree::{
    AxTree, Clickables, FrameInput, Node, ParseOptions, Prop, Sep, Value, DEFAULT_MAX_DEPTH, NONE,
};
