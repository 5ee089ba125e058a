//! pagelens-core: turns a page's accessibility tree into the text an LLM web agent reads.
//!
//! - [`axtree`]: parsing CDP `Accessibility.getFullAXTree` payloads into an arena.
//! - [`render`](mod@render): the `webarena` and `occam` text forms, the pivotal subtree, token budgets.
//! - [`snapshot`]: clickable elements from `DOMSnapshot.captureSnapshot`.
//! - [`tokenizer`]: offline GPT-2 / cl100k / o200k BPE counting; [`chunk`]: token-budget chunks.
//! - [`dom`]: HTML documents (parsed, or built from a live DOM), cleaning, queries.
//! - [`json`]: where a JSON line's long string values are, for readers that leave them undecoded.
//!
//! The behaviour is specified in `docs/spec/observation.md` and `docs/spec/dom.md`; every pass is iterative and
//! at worst O(n log n), so hostile trees cannot overflow the stack or stall.

pub mod annotate;
pub mod axtree;
pub mod chunk;
pub mod diff;
pub mod dom;
pub mod error;
pub mod json;
pub mod render;
pub mod search;
pub mod snapshot;
pub mod text;
pub mod tokenizer;

/// The core's version (the workspace's).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub use axtree::{AxTree, FrameInput};
pub use error::AxError;
pub use render::{Mode, Observation};
pub use tokenizer::{Encoding, Tokenizer, TokenizerError, DEFAULT_TOKENIZER};

/// Renders a whole tree in `mode` (`occam` options apply to the occam form, its id labels to
/// both); with
/// `budget`, cuts it to that many tokens.
pub fn render(
    tree: &AxTree,
    mode: Mode,
    occam: render::occam::OccamOptions,
    budget: Option<(Encoding, usize)>,
) -> Observation {
    let rendered = mode.render(tree, occam);
    match budget {
        Some((enc, max)) => render::fit_to_budget(rendered, enc, max),
        None => Observation::whole(rendered),
    }
}
