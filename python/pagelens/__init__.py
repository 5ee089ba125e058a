"""pagelens: turn live web pages into what an LLM web agent should read.

The accessibility-tree core lives in Rust (``pagelens._core``); this package re-exports it
with a typed API::

    import pagelens
    tree = pagelens.AXTree.from_cdp(payload)   # CDP Accessibility.getFullAXTree result
    obs = tree.render()                        # occam form; tree.render("webarena") too
    print(obs.text, obs.token_count)
"""

import os

from pagelens._core import (
    CHUNK_KINDS,
    CLEAN_PROFILES,
    CORE_VERSION,
    DEFAULT_MAX_DEPTH,
    DEFAULT_TOKENIZER,
    RENDER_MODES,
    TOKENIZERS,
    AXNode,
    AXTree,
    AXTreeError,
    Chunk,
    Dom,
    DomError,
    Element,
    Observation,
    RawHtml,
    Tokenizer,
    chunk,
    count_tokens,
    escape_page_text,
)
from pagelens.corpus import builtin_page
from pagelens.errors import ArgumentError, ArgumentTypeError, NodeNotFoundError, PagelensError, TokenizerError


def __getattr__(name: str) -> str:
    # The installed version, read when asked: importlib.metadata costs a shell command's
    # start-up (~15 ms) that `pagelens browser click` should not pay.
    if name == "__version__":
        from importlib import metadata

        try:
            version = metadata.version("pagelens")
        except metadata.PackageNotFoundError:  # a source tree on sys.path, not installed
            version = CORE_VERSION
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module 'pagelens' has no attribute {name!r}")


def load_tokenizer(spec: "str | os.PathLike[str]") -> Tokenizer:
    """A tokenizer by name (``gpt2``, ``cl100k_base``, ``o200k_base``: embedded, offline) or a
    Hugging Face ``tokenizer.json`` by path."""
    if os.fspath(spec).endswith(".json"):
        return Tokenizer.from_file(spec)
    return Tokenizer(os.fspath(spec))


def find_chunk(chunks: "list[Chunk]", node_id: int) -> "int | None":
    """Index of the chunk that holds element ``node_id`` (ScribeAgent trains on it)."""
    for i, c in enumerate(chunks):
        if node_id in c.node_ids:
            return i
    return None


__all__ = [
    "CHUNK_KINDS",
    "CLEAN_PROFILES",
    "CORE_VERSION",
    "RENDER_MODES",
    "TOKENIZERS",
    "__version__",
    "ArgumentError",
    "ArgumentTypeError",
    "AXNode",
    "AXTree",
    "AXTreeError",
    "Chunk",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_TOKENIZER",
    "Dom",
    "DomError",
    "Element",
    "NodeNotFoundError",
    "Observation",
    "PagelensError",
    "RawHtml",
    "Tokenizer",
    "TokenizerError",
    "builtin_page",
    "chunk",
    "count_tokens",
    "escape_page_text",
    "find_chunk",
    "load_tokenizer",
]
