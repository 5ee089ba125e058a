"""One ``Accessibility.getFullAXTree`` per frame, merged into a single :class:`AXTree`, with
the elements that respond to clicks marked from one ``DOMSnapshot.captureSnapshot`` per
renderer session.

Same-process iframes are read through the page's CDP session with their ``frameId``;
out-of-process iframes (another site, under site isolation) have a CDP session of their own.
Each child frame is hung under the node of its owner ``<iframe>`` (``DOM.getFrameOwner``), so
ids stay unique and every node keeps its frame for acting on it later. No per-node calls.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import CDPSession, Frame, Page
from playwright.async_api import Error as PlaywrightError

from pagelens._core import AXTree, snapshot_clickables
from pagelens.browser.devtools import DevToolsError, DevToolsSocket, cdp, raw_call
from pagelens.browser.pagetree import build_tree


@dataclass
class FrameRecord:
    """A frame of the page as CDP sees it, and how to reach its nodes."""

    frame_id: str
    session: CDPSession  # the session that owns the frame's document
    parent_id: str | None
    owner_backend_id: int | None  # the <iframe> element in the parent's document
    owner_session: CDPSession | None  # the session that owns the parent's document
    url: str = ""
    # How its ids name nodes: "ax", read by Chromium (its tree, or DOM.getDocument for the HTML
    # view): an id's node is its backendDOMNodeId; "dom", pagelens' own capture (an id is the
    # page-side registry's, see capture.py).
    source: str = "ax"
    # The DevTools target of its session (the page's, or its out-of-process frame's): its calls
    # go over pagelens' raw socket when there is one.
    target: str | None = None


class FrameSessions:
    """CDP sessions of one page: the page's own and one per out-of-process iframe."""

    def __init__(self, page: Page):
        self.page = page
        self._main: CDPSession | None = None
        self._opening: asyncio.Future[CDPSession] | None = None
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        page.on("close", self._on_close)
        self._oopif: dict[Frame, CDPSession | None] = {}
        self._targets: dict[CDPSession, str] = {}
        # The page's browser context, as DevTools names it (read with the main frame's target).
        self.context_id: str | None = None
        page.on("framenavigated", self._forget)
        page.on("framedetached", self._forget)

    def _on_close(self, _: Page) -> None:
        if not self._closed.done():
            self._closed.set_result(None)

    def _forget(self, frame: Frame) -> None:
        session = self._oopif.pop(frame, None)
        if session is not None:
            self._targets.pop(session, None)

    async def target_id(self, session: CDPSession, timeout: float = 60.0) -> str:
        """The DevTools target behind a session (the page's, or an out-of-process frame's)."""
        if session not in self._targets:
            info = (await cdp(session, "Target.getTargetInfo", timeout=timeout))["targetInfo"]
            self._targets[session] = info["targetId"]
            if session is self._main:
                self.context_id = info.get("browserContextId")
        return self._targets[session]

    def open_main(self) -> asyncio.Future[CDPSession]:
        """Starts opening the page's own session (once), without waiting for it."""
        if self._opening is None:
            self._opening = asyncio.ensure_future(self.page.context.new_cdp_session(self.page))
            # A page closed before the session opened: its failure is read, not logged.
            self._opening.add_done_callback(lambda f: f.cancelled() or f.exception())
        return self._opening

    async def main(self) -> CDPSession:
        """The page's own session, opened once: callers at the same time share its opening,
        and one that gives up waiting (a timeout) leaves it to finish for the next."""
        if self._main is None:
            opening = self.open_main()
            # A tab a script held from its start may never let the session attach: its close
            # (see scripts.py) ends the wait.
            waits: set[asyncio.Future[Any]] = {opening, self._closed}
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if not opening.done():
                raise PlaywrightError(f"the tab closed ({self.page.url})")
            try:
                self._main = opening.result()
            except PlaywrightError:
                self._opening = None  # the page went away meanwhile: a later call tries again
                raise
        return self._main

    async def main_record(self, timeout: float = 60.0) -> FrameRecord:
        """The main frame's record: the page's own session and its target (a page target's id
        is its main frame's)."""
        session = await self.main()
        target = await self.target_id(session, timeout)
        return FrameRecord(target, session, None, None, None, target=target)

    async def another(self, session: CDPSession) -> CDPSession:
        """A new session to ``session``'s target (the page's or an out-of-process frame's), for
        work that turns domains on and off: a domain's state and its node ids are the session's,
        so the page's own session keeps its own. The caller detaches it."""
        if session is self._main:
            return await self.page.context.new_cdp_session(self.page)
        frame = next((f for f, s in self._oopif.items() if s is session), None)
        if frame is None:
            raise PlaywrightError("the session is none of this page's (its frame went away?)")
        return await self.page.context.new_cdp_session(frame)

    async def out_of_process(self) -> list[CDPSession]:
        """Sessions of the page's out-of-process frames (Playwright refuses the others). A frame
        not met before is asked about once, all such frames at once: a document's first reading
        meets all its frames, and asked one after another they cost ~1 ms each (the frame list
        of a first reading of bbc-1, 12 frames: 15.4 ms asked in turn, 7.8 ms at once, medians of 6)."""
        frames = [f for f in self.page.frames if f is not self.page.main_frame]
        new = [f for f in frames if f not in self._oopif]
        if new:
            opened = await asyncio.gather(*(self.page.context.new_cdp_session(f) for f in new), return_exceptions=True)
            for frame, got in zip(new, opened, strict=True):
                if isinstance(got, BaseException) and not isinstance(got, Exception):
                    raise got  # cancelled, not refused
                # Refused: "part of the parent frame's session" (same process).
                self._oopif[frame] = None if isinstance(got, BaseException) else got
        return [s for f in frames if (s := self._oopif.get(f)) is not None]


def _walk(tree: dict[str, Any], skip: set[str]) -> list[tuple[str, str | None, str]]:
    """(frame id, parent id, url) of a Page.getFrameTree result, without subtrees in ``skip``."""
    out = []
    root = tree["frame"]
    # An out-of-process frame's own tree names its parent (in another session) on its root.
    stack = [(tree, root.get("parentId"))]
    while stack:
        node, parent = stack.pop()
        frame = node["frame"]
        if frame["id"] in skip and frame is not root:
            continue
        out.append((frame["id"], parent, frame.get("url", "")))
        for child in reversed(node.get("childFrames", [])):
            stack.append((child, frame["id"]))
    return out


# What a clickable element needs from a DOM snapshot: no computed styles, no rectangles.
_SNAPSHOT_PARAMS = {"computedStyles": [], "includeDOMRects": False, "includePaintOrder": False}


async def full_ax_tree(
    record: FrameRecord, params: dict[str, Any], timeout: float, devtools: DevToolsSocket | None
) -> Any:
    """One getFullAXTree (of the record's session's document, or of ``params["frameId"]``)."""
    return await raw_call(record.session, record.target, "Accessibility.getFullAXTree", params, timeout, devtools)


async def accessibility_off(record: FrameRecord, timeout: float, devtools: DevToolsSocket | None) -> None:
    """Chromium's accessibility turned off again in ``session``'s renderer after its tree was
    read through that channel (``devtools``: pagelens' socket; None: Playwright's session). A
    getFullAXTree leaves it on for the session that asked, and from then on every rendering
    frame of the page updates Chromium's tree as well: 40 -> 72 ms a frame on wikipedia-2
    (benches/README.md). A disable alone turns off nothing the session did not enable, so it is
    an enable and a disable. Best effort: a tab or frame gone meanwhile has nothing left on."""
    try:
        for method in ("Accessibility.enable", "Accessibility.disable"):
            await raw_call(record.session, record.target, method, {}, timeout, devtools)
    except (PlaywrightError, DevToolsError, asyncio.TimeoutError):
        pass


async def clickable_elements(
    record: FrameRecord, timeout: float, devtools: DevToolsSocket | None
) -> dict[str, dict[int, str | None]]:
    """Elements that respond to clicks in every document of the record's session, by frame id:
    one ``DOMSnapshot.captureSnapshot`` (its ``isClickable`` counts listeners added by script)."""
    snapshot = await raw_call(
        record.session, record.target, "DOMSnapshot.captureSnapshot", _SNAPSHOT_PARAMS, timeout, devtools
    )
    by_frame: dict[str, dict[int, str | None]] = {}
    for frame_id, clickable in await asyncio.to_thread(snapshot_clickables, snapshot):
        if frame_id is not None:
            by_frame.setdefault(frame_id, {}).update(clickable)
    return by_frame


@dataclass
class Capture:
    """The page's tree, how to reach each frame, and what could not be read."""

    tree: AXTree
    frames: dict[str, FrameRecord]  # by CDP frame id; the main frame also under ""
    frame_errors: list[str]  # frames whose tree could not be read (their content is missing)
    notes: list[str] = field(default_factory=list)  # degradations: no clickables for a frame
    # Each stage in ms: the main frame's AX tree, listing the frames, the child frames' trees
    # (the longest), the DOM snapshot (the longest), parsing and merging them in the core.
    timings_ms: dict[str, float] = field(default_factory=dict)
    # The document read (its performance.timeOrigin), when the capture says which.
    document: float | None = None
    # The main document's title, when the capture read it (document.title, as the tab's).
    title: str | None = None
    # Rows pagelens' capture copied from its last reading (nothing had changed under them).
    reused_rows: int = 0


# Frames read per observation, the main frame included.
MAX_FRAMES = 100


def cap_frames(
    records: dict[str, FrameRecord], children: list[FrameRecord], max_frames: int, errors: list[str]
) -> list[FrameRecord]:
    """A page of thousands of frames (ads, widgets) is read up to a cap, the main frame
    included, in document order: the children kept; the rest leave ``records`` and are said
    in one line of ``errors``."""
    if len(children) < max_frames:
        return children
    errors.append(
        f"{len(children) - (max_frames - 1)} frames left out: at most {max_frames} frames are read (max_frames)"
    )
    for record in children[max_frames - 1 :]:
        del records[record.frame_id]
    return children[: max_frames - 1]


async def _timed(awaitable: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    return await awaitable, (time.perf_counter() - t0) * 1e3


async def list_frames(
    sessions: FrameSessions,
    main_record: FrameRecord,
    include_frames: bool,
    timeout: float,
    devtools: DevToolsSocket | None = None,
    max_frames: int | None = None,
    errors: list[str] | None = None,
) -> tuple[str, dict[str, FrameRecord], dict[str, CDPSession]]:
    """The page's frames: (main frame id, a record per frame by id, the root frame id of
    each out-of-process session). One ``Page.getFrameTree`` per session (the main one over the
    raw socket when given); a child's ``owner_session`` is the session of its parent's document;
    each record names its session's target. With ``max_frames``, at most that many (the main one
    included), in document order: the rest are said in a line of ``errors`` (see :func:`cap_frames`)."""
    main, main_target = main_record.session, main_record.target
    if devtools is not None:
        main_tree = json.loads(await raw_call(main, main_target, "Page.getFrameTree", {}, timeout, devtools))["result"]
    else:
        main_tree = await cdp(main, "Page.getFrameTree", timeout=timeout)
    main_root = main_tree["frameTree"]["frame"]["id"]
    records: dict[str, FrameRecord] = {}
    if not include_frames:
        url = main_tree["frameTree"]["frame"].get("url", "")
        records[main_root] = FrameRecord(main_root, main, None, None, None, url, target=main_target)
        return main_root, records, {}
    oopif = await sessions.out_of_process()
    # Each out-of-process frame's target and frame tree, all asked at once.
    asked = await asyncio.gather(
        *(sessions.target_id(s, timeout) for s in oopif),
        *(cdp(s, "Page.getFrameTree", timeout=timeout) for s in oopif),
        return_exceptions=True,
    )
    ids, trees = asked[: len(oopif)], asked[len(oopif) :]
    targets: dict[CDPSession, str | None] = {main: main_target}
    for session, target in zip(oopif, ids, strict=True):
        if isinstance(target, BaseException) and not isinstance(target, (PlaywrightError, asyncio.TimeoutError)):
            raise target
        # A frame gone meanwhile has no target: its calls go through Playwright (and fail there).
        targets[session] = target if isinstance(target, str) else None
    roots: dict[str, CDPSession] = {}
    for session, tree in zip(oopif, trees, strict=True):
        if not isinstance(tree, BaseException):
            roots[tree["frameTree"]["frame"]["id"]] = session
    listed = [(main, main_tree)] + [
        (roots[t["frameTree"]["frame"]["id"]], t)
        for t in trees
        if not isinstance(t, BaseException) and t["frameTree"]["frame"]["id"] in roots
    ]
    for session, tree in listed:
        for frame_id, parent, url in _walk(tree["frameTree"], set(roots)):
            if frame_id not in records:
                records[frame_id] = FrameRecord(frame_id, session, parent, None, None, url, target=targets.get(session))
    # An out-of-process root's parent lives in another session: the one that owns its parent.
    for record in records.values():
        if record.parent_id is not None:
            parent_record = records.get(record.parent_id)
            record.owner_session = parent_record.session if parent_record else None
    if max_frames is not None:
        children = [r for r in records.values() if r.parent_id is not None]
        cap_frames(records, children, max_frames, errors if errors is not None else [])
    return main_root, records, roots


async def fetch_tree(
    sessions: FrameSessions,
    include_frames: bool = True,
    timeout: float = 60.0,
    max_depth: int | None = None,
    devtools: DevToolsSocket | None = None,
    clickables: bool = True,
    snapshot_timeout: float = 10.0,
    max_frames: int = MAX_FRAMES,
    keep_accessibility: bool = True,
) -> Capture:
    """The page's accessibility tree with every frame's tree merged under its owner, and,
    with ``clickables``, each frame's script-clickable elements marked (a snapshot that
    fails, times out or names no frame of the tree leaves a note, never an exception).
    ``keep_accessibility=False``: Chromium's accessibility is turned off again in every session
    read (see :func:`accessibility_off`), for a reading that stands in for pagelens' capture;
    the AX source keeps it on for its next reading."""
    main_record = await sessions.main_record(timeout)
    main = main_record.session
    errors: list[str] = []
    snapshots: dict[CDPSession, asyncio.Future[Any]] = {}

    def snapshot_of(record: FrameRecord) -> None:
        if clickables and record.session not in snapshots:
            snapshots[record.session] = asyncio.ensure_future(
                _timed(clickable_elements(record, snapshot_timeout, devtools))
            )

    # The main frame's tree is the long call: it starts first and runs while the frames are listed.
    main_ax = asyncio.ensure_future(_timed(full_ax_tree(main_record, {}, timeout, devtools)))
    snapshot_of(main_record)
    try:
        (main_root, records, roots), list_ms = await _timed(
            list_frames(sessions, main_record, include_frames, timeout, None, max_frames, errors)
        )
    except BaseException:
        main_ax.cancel()
        for f in snapshots.values():
            f.cancel()
        raise
    for root in roots:
        if root in records:
            snapshot_of(records[root])
    children = [r for r in records.values() if r.parent_id is not None and r.owner_session is not None]

    async def owner(record: FrameRecord) -> None:
        assert record.owner_session is not None
        reply = await cdp(record.owner_session, "DOM.getFrameOwner", {"frameId": record.frame_id}, timeout)
        record.owner_backend_id = reply["backendNodeId"]

    frame_ms = 0.0

    async def ax(record: FrameRecord) -> Any:
        nonlocal frame_ms
        params = {} if record.frame_id == main_root else {"frameId": record.frame_id}
        payload, ms = await _timed(full_ax_tree(record, params, timeout, devtools))
        frame_ms = max(frame_ms, ms)
        return payload

    snapshot_sessions = list(snapshots)
    results = await asyncio.gather(
        main_ax,
        *(ax(r) for r in children),
        *(owner(r) for r in children),
        *(snapshots[s] for s in snapshot_sessions),
        return_exceptions=True,
    )
    if not keep_accessibility:  # after every reading: one still running would turn it on again
        read = {main: main_record, **{r.session: r for r in children}}
        await asyncio.gather(*(accessibility_off(r, timeout, devtools) for r in read.values()))
    if isinstance(results[0], BaseException):
        raise results[0]
    payload, main_ms = results[0]
    k = len(children)
    ax_results, owned_results, snapshot_results = results[1 : 1 + k], results[1 + k : 1 + 2 * k], results[1 + 2 * k :]

    notes: list[str] = []
    clickable: dict[str, dict[int, str | None]] = {}
    snapshot_ms = 0.0
    snapshot_failed: set[CDPSession] = set()
    for session, result in zip(snapshot_sessions, snapshot_results, strict=True):
        if isinstance(result, BaseException):
            snapshot_failed.add(session)
            reason = "timed out" if isinstance(result, asyncio.TimeoutError) else f"{type(result).__name__}: {result}"
            notes.append(
                f"no DOM snapshot ({reason}): script-clickable elements have no ids in "
                f"{'the page' if session is main else 'an out-of-process frame'}"
            )
            continue
        by_frame, ms = result
        snapshot_ms = max(snapshot_ms, ms)
        clickable.update(by_frame)

    def clickable_of(record: FrameRecord) -> dict[int, str | None] | None:
        if not clickables or record.session in snapshot_failed:
            return None
        found = clickable.get(record.frame_id)
        if found is None:
            notes.append(
                f"frame {record.url or record.frame_id}: not in the DOM snapshot; "
                "its script-clickable elements have no ids"
            )
        return found

    frames = []
    included = {main_root}
    # Parents come before their children (pre-order walks); a frame whose parent is missing
    # has no owner node to hang under, so it is reported rather than merged.
    for record, result, owned in zip(children, ax_results, owned_results, strict=True):
        if isinstance(result, BaseException) or isinstance(owned, BaseException):
            failure = result if isinstance(result, BaseException) else owned
            errors.append(f"frame {record.url or record.frame_id}: {type(failure).__name__}: {failure}")
            continue
        if record.parent_id not in included:
            errors.append(f"frame {record.url or record.frame_id}: its parent frame could not be read")
            continue
        included.add(record.frame_id)
        frames.append(
            {
                "owner": record.owner_backend_id,
                "payload": result,
                "frame_id": record.frame_id,
                "clickable": clickable_of(record),
            }
        )
    main_clickable = clickable_of(records[main_root])
    records[""] = records[main_root]
    tree, parse_ms = await build_tree(payload, frames, max_depth, main_clickable)
    given = len(main_clickable or ()) + sum(len(f["clickable"] or ()) for f in frames)
    if given and not tree.clickable_ids:
        notes.append(
            f"the DOM snapshot's {given} clickable elements match no node of the accessibility tree "
            "(the page changed between the two?)"
        )
    timings = {
        "main_ax_tree": main_ms,
        "frame_list": list_ms,
        "frame_ax_trees": frame_ms,
        "snapshot": snapshot_ms,
        "parse": parse_ms,
    }
    return Capture(tree, records, errors, notes, timings)
