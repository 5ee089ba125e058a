"""What a browser run can set: one dataclass, read by the environment, the executor and the
element resolver (kept apart from all three so that none imports another for it)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pagelens import settle
from pagelens._core import DEFAULT_TOKENIZER, RenderMode
from pagelens.browser.frames import MAX_FRAMES
from pagelens.browser.launch import LaunchOptions
from pagelens.errors import ArgumentError

ObservationSource = Literal["dom", "ax"]
# Where observations come from, the default first (the CLI's --source choices).
OBSERVATION_SOURCES: tuple[str, ...] = get_args(ObservationSource)
SOURCE_HELP = (
    "where observations come from: dom, pagelens' own capture run in the page (fast; an element keeps "
    "its id across observations), or ax, Chromium's accessibility tree (its exact reading, slower on "
    "large pages)"
)


@dataclass
class BrowserConfig:
    """Everything a run can set. Every Playwright wait has one of these timeouts."""

    launch: LaunchOptions = field(default_factory=LaunchOptions)
    mode: RenderMode = "occam"
    # Where observations come from: "dom", pagelens' own capture run in the page (fast; ids
    # stay with their element across observations), or "ax", Chromium's accessibility tree
    # (its exact reading, slower on large pages). A page the capture cannot read falls back
    # to "ax" and its observation says so.
    source: ObservationSource = "dom"
    max_tokens: int | None = None
    tokenizer: str = DEFAULT_TOKENIZER
    show_urls: bool = False
    action_space: str | frozenset[str] = "all"
    # Hosts a run may navigate to; None: the host of each reset()'s URL.
    allowed_hosts: tuple[str, ...] | None = None
    # Also refuse sub-resources (scripts, images) from hosts off the list: a sealed run.
    block_other_hosts: bool = False
    home_url: str | None = None  # go_home's target; None: the reset() URL
    include_frames: bool = True
    max_frames: int = MAX_FRAMES  # frames read per observation (the main one included); the rest noted
    # Mark elements that respond to clicks (script listeners included) as action targets,
    # from one DOMSnapshot per renderer; a snapshot slower than this is given up (noted).
    clickables: bool = True
    # Mark the action targets that were not in the previous observation of the same document
    # (`*[id]`: what a click opened). The first observation of a document marks nothing.
    mark_new: bool = True
    # pagelens' capture re-reads only what changed since its last reading of the document (a
    # MutationObserver between readings; what it cannot see makes the reading a full one): the
    # text is the same. check_incremental (tests; the environment's PAGELENS_CHECK_INCREMENTAL=1)
    # reads the page whole after every such reading and raises CaptureCheckFailed if they differ.
    incremental: bool = True
    check_incremental: bool = field(default_factory=lambda: os.environ.get("PAGELENS_CHECK_INCREMENTAL") == "1")
    # A page's dialogs (alert, confirm, prompt) are dismissed as they come and reported with
    # the next observation; held, each waits in ``AsyncBrowserEnv.pending_dialogs`` for the
    # caller to answer it (the MCP server's browser_handle_dialog). beforeunload is always
    # accepted, so that a navigation asked for goes ahead.
    hold_dialogs: bool = False
    snapshot_timeout_s: float = 10.0
    action_timeout_ms: float = 5_000
    navigation_timeout_ms: float = 30_000
    cdp_timeout_s: float = 60.0
    # A page script that holds the tab's main thread this long (an endless loop, a handler that
    # never returns) is stopped, as a browser's "page unresponsive" would, and the step or
    # observation says so; nothing could be read or done in the tab until then. 0: never.
    script_timeout_s: float = 10.0
    # After an action, wait for the page to be quiet (no request in flight, no DOM change for
    # settle.QUIET_MS), at most this long, before observing.
    settle_ms: float = settle.AFTER_ACTION_MS
    screenshots: bool = False
    storage_state: str | dict[str, Any] | None = None  # Playwright storage state (a file or its contents)
    # Record every request and response of the run (bodies embedded) to this HAR file, written
    # when the browser context closes (WebArena-Verified checks a run's network events).
    har_path: str | None = None

    def __post_init__(self) -> None:
        # Anything but "dom" used to read Chromium's tree without a word: a reader is named.
        if self.source not in OBSERVATION_SOURCES:
            raise ArgumentError(f"source is {' or '.join(map(repr, OBSERVATION_SOURCES))}, not {self.source!r}")
