"""What the environment returns: an observation per step and the result of each action."""

from __future__ import annotations

from dataclasses import dataclass, field

from pagelens._core import AXTree, Dom, Observation, RenderMode, escape_page_text
from pagelens.actions import Action

# A rectangle in the viewport: x, y, width, height in CSS pixels.
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Tab:
    index: int
    title: str
    url: str
    active: bool


@dataclass
class PageObservation:
    """One look at the active tab: its accessibility tree (every frame) rendered for a model.

    ``tree`` resolves the ids in ``text`` back to nodes; ``dialogs`` are the page dialogs
    (alert, confirm, prompt) that appeared since the previous observation, already dismissed;
    ``frame_errors`` names frames whose tree could not be read (their content is missing);
    ``notes`` says where the observation is degraded but complete (no DOM snapshot for a
    frame: its script-clickable elements have no ids).
    """

    url: str
    title: str
    tabs: list[Tab]
    text: str
    mode: RenderMode
    tree: AXTree
    rendered: Observation
    dialogs: list[str] = field(default_factory=list)
    frame_count: int = 1
    frame_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    # Rows of the tree copied from pagelens' last reading of the document, nothing having
    # changed under them (an incremental capture; 0: read whole).
    reused_rows: int = 0
    screenshot: bytes | None = None
    # With a screenshot: the part of the viewport holding the page's content (x, y, width,
    # height; None: all of it, or not known), what a step viewer shows of the picture.
    content_box: tuple[float, float, float, float] | None = None
    # Which document was read (its performance.timeOrigin; None when unknown): two
    # observations of one document can be compared line by line, those of two cannot.
    document: float | None = None

    @property
    def ids(self) -> list[int]:
        return self.rendered.ids

    @property
    def token_count(self) -> int:
        return self.rendered.token_count

    def header(self) -> str:
        """Tabs and dialogs as lines to put above ``text`` in a prompt (the page's words escaped
        as the tree's are: none reads as an id)."""
        lines = []
        if len(self.tabs) > 1:
            lines.append(
                "Tabs: "
                + " | ".join(
                    f"{'*' if t.active else ''}[{t.index}] {escape_page_text(t.title or t.url)}" for t in self.tabs
                )
            )
        lines.extend(f"Dialog (dismissed): {escape_page_text(d)}" for d in self.dialogs)
        return "\n".join(lines)


@dataclass
class HtmlObservation:
    """One look at the active tab as HTML (every frame), for models that read HTML.

    ``dom`` numbers its elements as ``pagelens prep`` numbers the same markup; ``targets``
    says which live element each id is (its id in its frame's registry, or its
    ``backendDOMNodeId`` where DevTools read the page; and its CDP frame), so actions on these
    ids act on the page until the next observation of either kind. ``notes`` says what was
    read another way, and why."""

    url: str
    title: str
    tabs: list[Tab]
    dom: Dom
    targets: dict[int, tuple[int, str]]
    dialogs: list[str] = field(default_factory=list)
    frame_count: int = 1
    frame_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    ax_text: str | None = None  # the accessibility tree's text too, when asked for (a planner reads it)
    screenshot: bytes | None = None
    content_box: tuple[float, float, float, float] | None = None  # as PageObservation's

    @property
    def text(self) -> str:
        """The page as parsed (every element with its id), for trajectories."""
        return self.dom.html()


@dataclass
class StepResult:
    """What an action did. ``error`` is a sentence the agent can show the model as is."""

    action: Action
    ok: bool
    error: str | None = None
    # What kind of failure (ActionError.kind: unknown_id, refused, navigation, action).
    error_kind: str | None = None
    done: bool = False
    answer: str | None = None
    note: str | None = None
    observation: PageObservation | None = None
    elapsed_ms: float = 0.0
    # Where the acted element was in the viewport when the action began (x, y, width, height
    # in CSS pixels): the step viewer outlines it on the step's screenshot.
    target_box: Box | None = None
    # With screenshots on: the page as the action began (PNG), and the viewport region it
    # shows (x, y, width, height): target_box was measured on this same picture.
    picture: bytes | None = None
    picture_box: Box | None = None
