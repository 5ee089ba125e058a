"""Type stubs for the Rust extension ``pagelens._core``."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

DEFAULT_MAX_DEPTH: int

Payload = bytes | bytearray | str | Mapping[str, Any] | Sequence[Mapping[str, Any]]
FrameSpec = tuple[int, Payload] | tuple[int, Payload, str | None] | Mapping[str, Any]

class AXTreeError(ValueError):
    """A payload that cannot be parsed; the message names the problem and the node."""

class Observation:
    """Rendered text and what it shows."""

    @property
    def text(self) -> str: ...
    @property
    def ids(self) -> list[int]:
        """Element ids shown, in reading order (empty for a pivotal subtree)."""
    @property
    def mode(self) -> Literal["occam", "webarena", "subtree"]: ...
    @property
    def tokenizer(self) -> str: ...
    @property
    def token_count(self) -> int:
        """Tokens of ``text`` under ``tokenizer`` (counted on first use, offline)."""
    @property
    def line_count(self) -> int: ...
    @property
    def omitted_lines(self) -> int:
        """Lines cut by ``max_tokens`` (0 when nothing was cut)."""
    @property
    def truncated(self) -> bool: ...
    @property
    def unknown_ids(self) -> list[int]:
        """Pivot ids that name no rendered node (``subtree`` only)."""
    @property
    def included_ids(self) -> list[int]:
        """Every node kept by ``subtree``, in document order."""

class AXNode:
    """One node, for resolving an element id back to the page."""

    @property
    def id(self) -> int: ...
    @property
    def cdp_id(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> str | int | float | bool | None: ...
    @property
    def properties(self) -> dict[str, str | int | float | bool]: ...
    @property
    def backend_dom_node_id(self) -> int | None: ...
    @property
    def frame_id(self) -> str | None: ...
    @property
    def ignored(self) -> bool: ...
    @property
    def rendered(self) -> bool:
        """Part of what the renderers show (not ignored, has a DOM node, not an InlineTextBox)."""
    @property
    def parent(self) -> int | None: ...
    @property
    def children(self) -> list[int]: ...
    @property
    def rendered_parent(self) -> int | None: ...
    @property
    def rendered_children(self) -> list[int]: ...

class AXTree:
    """A page's accessibility tree (all frames), parsed once in Rust."""

    @staticmethod
    def from_cdp(
        payload: Payload,
        frames: Iterable[FrameSpec] | None = None,
        max_depth: int = ...,
    ) -> AXTree:
        """Parse ``Accessibility.getFullAXTree`` output: bytes are fastest; ``frames`` hang
        each child frame's tree under the node whose backendDOMNodeId owns it."""
    def render(
        self,
        mode: Literal["occam", "webarena"] = "occam",
        max_tokens: int | None = None,
        tokenizer: str = "gpt2",
        show_urls: bool = False,
    ) -> Observation: ...
    def subtree(self, ids: Sequence[int], max_nodes: int | None = None, tokenizer: str = "gpt2") -> Observation:
        """The pivotal subtree of ``ids`` in occam form without ids (history replay)."""
    def node(self, id: int) -> AXNode:
        """Raises KeyError for an unknown id."""
    def ids(self) -> list[int]: ...
    @property
    def roots(self) -> list[int]: ...
    @property
    def frames(self) -> list[str | None]: ...
    def __len__(self) -> int: ...
    def __contains__(self, id: int) -> bool: ...

def count_tokens(text: str, tokenizer: str = "gpt2") -> int:
    """Token count under an offline tokenizer: gpt2/r50k_base, cl100k_base, o200k_base."""
