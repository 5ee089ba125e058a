"""pagelens: turn live web pages into what an LLM web agent should read.

The accessibility-tree core lives in Rust (``pagelens._core``); this package re-exports it
with a typed API::

    import pagelens
    tree = pagelens.AXTree.from_cdp(payload)   # CDP Accessibility.getFullAXTree result
    obs = tree.render()                        # occam form; tree.render("webarena") too
    print(obs.text, obs.token_count)
"""

from pagelens._core import (
    DEFAULT_MAX_DEPTH,
    AXNode,
    AXTree,
    AXTreeError,
    Observation,
    count_tokens,
)
from pagelens.corpus import builtin_page

__all__ = [
    "AXNode",
    "AXTree",
    "AXTreeError",
    "DEFAULT_MAX_DEPTH",
    "Observation",
    "builtin_page",
    "count_tokens",
]
