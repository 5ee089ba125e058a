"""Type stubs for the Rust extension ``pagelens._core``."""

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, final

__all__ = [
    "PagelensError",
    "AXTreeError",
    "TokenizerError",
    "ArgumentError",
    "ArgumentTypeError",
    "NodeNotFoundError",
    "DomError",
    "Tokenizer",
    "Dom",
    "Element",
    "Chunk",
    "chunk",
    "tiktoken_bpe_file",
    "snapshot_clickables",
    "AXTree",
    "Observation",
    "AXNode",
    "count_tokens",
    "escape_page_text",
    "find_lines",
    "line_changes",
    "draw_ids",
    "long_member_strings",
    "long_member_texts",
    "RawHtml",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_TOKENIZER",
    "RENDER_MODES",
    "RenderMode",
    "CLEAN_PROFILES",
    "TOKENIZERS",
    "CHUNK_KINDS",
    "BUILD_COMMIT",
    "CORE_VERSION",
]

DEFAULT_MAX_DEPTH: int
DEFAULT_TOKENIZER: str  # "gpt2": the default of every `tokenizer` parameter below
# The core's registries (the default first where there is one): the CLI's choices derive from them.
RENDER_MODES: list[str]
RenderMode: TypeAlias = Literal["occam", "webarena"]
"""A mode's name: ``typing.Literal`` of RENDER_MODES (a test holds this list to it)."""
CLEAN_PROFILES: list[str]
TOKENIZERS: list[str]  # embedded encodings; a tokenizer.json path also works where a file is accepted
CHUNK_KINDS: list[str]
CORE_VERSION: str
BUILD_COMMIT: str  # the git commit the extension was built from ("" without a checkout)

_Payload = bytes | bytearray | str | Mapping[str, Any] | Sequence[Mapping[str, Any]]
_FrameSpec = tuple[int, _Payload] | tuple[int, _Payload, str | None] | Mapping[str, Any]
# Elements that respond to clicks: backend DOM node ids, or those ids mapped to DOM hints.
_Clickable = Iterable[int] | Mapping[int, str | None]

class PagelensError(Exception):
    """The base of every error pagelens raises on bad input."""

class AXTreeError(PagelensError, ValueError):
    """A payload that cannot be parsed; the message names the problem and the node."""

class TokenizerError(PagelensError, ValueError):
    """A tokenizer name that is not embedded, or a tokenizer.json that does not load."""

class ArgumentError(PagelensError, ValueError):
    """An argument outside its domain: an unknown mode or chunk kind, a budget of zero tokens."""

class ArgumentTypeError(PagelensError, TypeError):
    """An argument of the wrong type."""

class NodeNotFoundError(PagelensError, KeyError):
    """An id that names no node of the tree or document."""

@final
class Observation:
    """Rendered text and what it shows."""

    @property
    def text(self) -> str: ...
    @property
    def ids(self) -> list[int]:
        """Element ids shown, in reading order (empty for a pivotal subtree)."""
    @property
    def mode(self) -> RenderMode | Literal["subtree"]: ...
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

@final
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
    def clickable(self) -> bool:
        """Its DOM element responds to clicks (a script's listener), whatever its role."""
    @property
    def hint(self) -> str | None:
        """What the DOM says of a clickable element (title, alt, image file name, class words)."""
    @property
    def name_from_contents(self) -> bool:
        """The name was computed from the node's own contents (CDP ``name.sources``)."""
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

@final
class AXTree:
    """A page's accessibility tree (all frames), parsed once in Rust."""

    @staticmethod
    def from_cdp(
        payload: _Payload,
        frames: Iterable[_FrameSpec] | None = None,
        max_depth: int = ...,
        skip_orphan_frames: bool = False,
        clickable: _Clickable | None = None,
    ) -> AXTree:
        """Parse ``Accessibility.getFullAXTree`` output: bytes are fastest; ``frames`` hang
        each child frame's tree under the node whose backendDOMNodeId owns it (a frame whose
        owner is not in the tree is an error, or with ``skip_orphan_frames`` left out and
        listed in ``orphan_frames``). ``clickable`` names the main frame's elements that
        respond to clicks (a frame dict carries its own under ``"clickable"``); each becomes
        an action target in the occam form."""
    def render(
        self,
        mode: RenderMode = "occam",
        max_tokens: int | None = None,
        tokenizer: str = ...,
        show_urls: bool = False,
        labels: Mapping[int, str] | None = None,
        seen_ids: Iterable[int] | None = None,
    ) -> Observation:
        """``labels`` print in place of the ids they map (another tool's ids: at most 64
        characters, no space, bracket, quote or ``*``; an empty one hides the id); with ``seen_ids`` (the previous
        observation's ids), the occam form marks every other shown id as new: ``*[id]``."""
    def subtree(self, ids: Sequence[int], max_nodes: int | None = None, tokenizer: str = ...) -> Observation:
        """The pivotal subtree of ``ids`` in occam form without ids (history replay)."""
    def node(self, id: int) -> AXNode:
        """Raises KeyError for an unknown id."""
    def ids(self) -> list[int]: ...
    def rendered_ids(self) -> list[int]:
        """Element ids of the nodes the renderers can show (not ignored, with a DOM node, not
        an ``InlineTextBox``)."""
    @property
    def roots(self) -> list[int]: ...
    @property
    def frames(self) -> list[str | None]: ...
    @property
    def clickable_ids(self) -> list[int]:
        """Element ids of the nodes marked clickable."""
    @property
    def orphan_frames(self) -> list[tuple[int, str | None]]: ...
    @property
    def unread_frames(self) -> list[int]:
        """pagelens' own capture: ids of the ``<iframe>`` elements whose document it could not
        read (another origin); empty for a tree from CDP."""
    @property
    def closed_shadow_hosts(self) -> list[int]:
        """pagelens' own capture: ids of the elements that hold a closed shadow root."""
    @property
    def capture_truncated(self) -> bool:
        """pagelens' own capture stopped at its node limit."""
    def __len__(self) -> int: ...
    def __contains__(self, id: int, /) -> bool: ...

def count_tokens(text: str | RawHtml, tokenizer: str = ...) -> int:
    """Token count under an offline tokenizer: gpt2/r50k_base, cl100k_base, o200k_base."""

def long_member_strings(line: bytes, min_len: int) -> list[tuple[int, int]]:
    """Byte ranges (quotes included) of a JSON line's object members' string values of at least
    ``min_len`` bytes that decode to non-blank text without error."""

def long_member_texts(line: bytes, min_len: int) -> list[tuple[int, int, RawHtml | None]]:
    """``long_member_strings`` with each value decoded in the same pass: ``(start, end, value)``;
    the value is None when it cannot be held (an escaped lone surrogate: decode the range)."""

@final
class RawHtml:
    """A page's HTML as the core holds it (UTF-8). ``pagelens prep`` reads a JSON file's pages
    into these: decoding a page into a Python ``str`` and encoding it back to UTF-8 for the
    parser took as long as the parse. ``Dom.parse`` and ``Tokenizer.count`` read one as they
    read a ``str``; ``str(raw)`` is the text; it equals a ``str`` with the same text."""

    def __new__(cls, text: str) -> RawHtml: ...
    @staticmethod
    def from_json(literal: bytes) -> RawHtml | None:
        """The value of a JSON string (its bytes, quotes included), or None when the bytes are
        not one JSON string or its value cannot be held (an escaped lone surrogate)."""
    @property
    def nbytes(self) -> int:
        """The text's length in UTF-8 bytes."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[RawHtml], tuple[str]]: ...

class DomError(PagelensError, ValueError):
    """A bad DOM query or cleaning request: an invalid CSS selector or node path, an unknown
    cleaning profile, an id to keep that is not there (parsing HTML itself never fails)."""

@final
class Tokenizer:
    """An offline tokenizer: gpt2/r50k_base, cl100k_base, o200k_base (embedded), or a
    Hugging Face tokenizer.json via ``from_file``."""

    def __new__(cls, name: str = ...) -> Tokenizer: ...
    @staticmethod
    def from_file(path: str | os.PathLike[str]) -> Tokenizer: ...
    @property
    def name(self) -> str: ...
    def encode(self, text: str) -> list[int]: ...
    def count(self, text: str | RawHtml) -> int: ...

@final
class Element:
    @property
    def node_id(self) -> int: ...
    @property
    def tag(self) -> str: ...
    @property
    def attributes(self) -> dict[str, str]: ...
    @property
    def text(self) -> str: ...
    @property
    def parent(self) -> int | None: ...

@final
class Dom:
    """An HTML document parsed with html5ever; element ids in reverse document order."""

    @staticmethod
    def parse(html: str | RawHtml | bytes | bytearray, encoding: str | None = None, keep_ids: bool = False) -> Dom: ...
    @staticmethod
    def from_nodes(nodes: Iterable[tuple[int, int, str, Sequence[str], bool]]) -> tuple[Dom, list[int | None]]:
        """A document built from a live DOM's nodes, each ``(parent, node_type, name_or_text,
        attributes, foreign)`` in document order (``parent``: an earlier node's index, -1 for
        the document; ``node_type``: 1, 3, 8 or 10 as CDP's; ``attributes``: CDP's flat list).
        Returns the document and the id each input node's element got (None otherwise). No
        markup is parsed: the page cannot forge, clone or hide an element's id."""
    def clean(
        self,
        profile: Literal["scribe", "minimal"] = "scribe",
        tokenizer: str | Tokenizer | None = None,
        keep: Sequence[int] | None = None,
        *,
        remove_scripts: bool = ...,
        remove_comments: bool = ...,
        strip_head: bool = ...,
        unwrap_tags: bool = ...,
        filter_attributes: bool = ...,
        prune_random: bool = ...,
        random_min_length: int = ...,
        random_min_ratio: float = ...,
        max_value_length: int = ...,
        drop_event_handlers: bool = ...,
        collapse_whitespace: bool = ...,
        remove_empty: bool = ...,
    ) -> Dom: ...
    @property
    def rescued_ids(self) -> list[int]:
        """Ids passed to ``clean(keep=...)`` that a cleaning rule would have removed."""
    def select(self, selector: str) -> list[int]:
        """Ids of the elements matching a CSS selector, in document order (DomError if invalid)."""
    def find_path(self, path: str) -> int | None:
        """Id of the element at ``/html/body/div[2]/a`` (1-based among same-tag siblings)."""
    def start_tag(self, node_id: int) -> str:
        """The element's start tag exactly as ``html()`` writes it."""
    def html(self) -> str: ...
    def chunks(self, max_tokens: int, tokenizer: Tokenizer | str | None = None, from_end: bool = False) -> list[Chunk]:
        """``chunk(self.html(), max_tokens, tokenizer, kind="dom", from_end=from_end)``, without
        the document's HTML ever becoming a Python str."""
    def element(self, node_id: int) -> Element: ...
    def node_ids(self) -> list[int]: ...
    @property
    def flattened_tags(self) -> int:
        """Start tags the parse dropped, their content kept: past 1,024 open elements, or past 24
        formatting elements waiting to be reopened (0 on every real page known)."""
    def __len__(self) -> int: ...
    def __contains__(self, node_id: int, /) -> bool: ...

@final
class Chunk:
    @property
    def text(self) -> str: ...
    @property
    def token_count(self) -> int: ...
    @property
    def node_ids(self) -> list[int]: ...
    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def oversized(self) -> bool: ...

def chunk(
    text: str,
    max_tokens: int,
    tokenizer: str | Tokenizer | None = None,
    kind: Literal["dom", "text"] = "dom",
    from_end: bool = False,
) -> list[Chunk]: ...
def escape_page_text(text: str) -> str:
    """Page text printed beside an observation (a tab's title, a URL, a dialog's message),
    escaped as the trees' text is: a backslash before each ``[`` that could read as an id or
    a mark (observation spec 3.16)."""

def find_lines(text: str | RawHtml, pattern: str | RawHtml, regex: bool = False) -> list[int]:
    """Indices of the lines of ``text`` that contain ``pattern`` (case-insensitively), or match
    it as a regular expression with ``regex``: linear in the text whatever the pattern (no
    look-around or back-references). A bad or too large pattern is an ``ArgumentError``."""

def line_changes(old: str | RawHtml, new: str | RawHtml) -> list[tuple[str, int, int, int, int]]:
    """The runs that turn ``old``'s lines into ``new``'s (split on ``\\n``), as difflib's
    opcodes ``(tag, old_start, old_end, new_start, new_end)``, tag ``equal``, ``insert``,
    ``delete`` or ``replace``, covering both texts in order. Exact for any inputs; a text that
    changed everywhere is answered within a deadline with a coarser, still exact, diff."""

def draw_ids(png: bytes, boxes: Sequence[tuple[int, float, float, float, float]], scale: float = 1.0) -> bytes:
    """``png`` with each ``(id, x, y, width, height)`` box (CSS pixels) outlined and its id
    written on it, drawn on the pixels (never into the page); ``scale``: image pixels per CSS
    pixel. An ``ArgumentError`` for bytes that are not an RGB(A) PNG."""

def tiktoken_bpe_file(name: str) -> bytes:
    """The published .tiktoken file of an embedded encoding, rebuilt from its ranks."""

def snapshot_clickables(snapshot: _Payload) -> list[tuple[str | None, dict[int, str | None]]]:
    """The clickable elements of a ``DOMSnapshot.captureSnapshot`` result, per document: its
    frame id and backend DOM node id -> hint (or None), for elements with a layout box."""
