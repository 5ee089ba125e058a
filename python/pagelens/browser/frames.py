"""One ``Accessibility.getFullAXTree`` per frame, merged into a single :class:`AXTree`.

Same-process iframes are read through the page's CDP session with their ``frameId``;
out-of-process iframes (another site, under site isolation) have a CDP session of their own.
Each child frame is hung under the node of its owner ``<iframe>`` (``DOM.getFrameOwner``), so
ids stay unique and every node keeps its frame for acting on it later. No per-node calls.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from typing import Any

from playwright.async_api import CDPSession, Frame, Page

from pagelens._core import AXTree
from pagelens.browser.devtools import DevToolsError, DevToolsSocket


@dataclass
class FrameRecord:
    """A frame of the page as CDP sees it, and how to reach its nodes."""

    frame_id: str
    session: CDPSession  # the session that owns the frame's document
    parent_id: str | None
    owner_backend_id: int | None  # the <iframe> element in the parent's document
    owner_session: CDPSession | None  # the session that owns the parent's document
    url: str = ""


async def cdp(session: CDPSession, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0) -> Any:
    """A CDP call with a deadline: a hung renderer gives an error, not a hang."""
    return await asyncio.wait_for(session.send(method, params or {}), timeout)


class FrameSessions:
    """CDP sessions of one page: the page's own and one per out-of-process iframe."""

    def __init__(self, page: Page):
        self.page = page
        self._main: CDPSession | None = None
        self._oopif: dict[Frame, CDPSession | None] = {}
        self._targets: dict[CDPSession, str] = {}
        page.on("framenavigated", self._forget)
        page.on("framedetached", self._forget)

    def _forget(self, frame: Frame) -> None:
        session = self._oopif.pop(frame, None)
        if session is not None:
            self._targets.pop(session, None)

    async def target_id(self, session: CDPSession, timeout: float = 60.0) -> str:
        """The DevTools target behind a session (the page's, or an out-of-process frame's)."""
        if session not in self._targets:
            info = await cdp(session, "Target.getTargetInfo", timeout=timeout)
            self._targets[session] = info["targetInfo"]["targetId"]
        return self._targets[session]

    async def main(self) -> CDPSession:
        if self._main is None:
            self._main = await self.page.context.new_cdp_session(self.page)
        return self._main

    async def out_of_process(self) -> list[CDPSession]:
        """Sessions of the page's out-of-process frames (Playwright refuses the others)."""
        sessions = []
        for frame in self.page.frames:
            if frame is self.page.main_frame:
                continue
            if frame not in self._oopif:
                try:
                    self._oopif[frame] = await self.page.context.new_cdp_session(frame)
                except Exception:  # "part of the parent frame's session": same process
                    self._oopif[frame] = None
            session = self._oopif[frame]
            if session is not None:
                sessions.append(session)
        return sessions


def _walk(tree: dict, skip: set[str]) -> list[tuple[str, str | None, str]]:
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


_FAILED = re.compile(rb'^\s*\{\s*"id"\s*:\s*\d+\s*,\s*"error"')


async def full_ax_tree(
    sessions: FrameSessions, session: CDPSession, params: dict, timeout: float, devtools: DevToolsSocket | None
) -> Any:
    """One getFullAXTree: raw bytes over the DevTools socket when there is one, else a dict."""
    if devtools is None:
        return await cdp(session, "Accessibility.getFullAXTree", params, timeout)
    target = await sessions.target_id(session, timeout)
    message = await devtools.target_call(target, "Accessibility.getFullAXTree", params, timeout)
    if _FAILED.match(message):
        raise DevToolsError(json.loads(message)["error"].get("message", "the browser refused"))
    return message


async def fetch_tree(
    sessions: FrameSessions,
    include_frames: bool = True,
    timeout: float = 60.0,
    max_depth: int | None = None,
    devtools: DevToolsSocket | None = None,
) -> tuple[AXTree, dict[str, FrameRecord], list[str]]:
    """The page's accessibility tree with every frame's tree merged under its owner.

    Returns the tree, the frame records by CDP frame id (the main frame's under its own id and
    under ``""``), and a message per frame whose tree could not be read.
    """
    main = await sessions.main()
    if not include_frames:
        payload = await full_ax_tree(sessions, main, {}, timeout, devtools)
        root = (await cdp(main, "Page.getFrameTree", timeout=timeout))["frameTree"]["frame"]["id"]
        record = FrameRecord(root, main, None, None, None)
        return _build(payload, [], max_depth), {root: record, "": record}, []

    # The main frame's tree is the long call: it starts first and runs while the frames are listed.
    main_ax = asyncio.ensure_future(full_ax_tree(sessions, main, {}, timeout, devtools))
    try:
        oopif = await sessions.out_of_process()
    except BaseException:
        main_ax.cancel()
        raise
    trees = await asyncio.gather(
        cdp(main, "Page.getFrameTree", timeout=timeout),
        *(cdp(s, "Page.getFrameTree", timeout=timeout) for s in oopif),
        return_exceptions=True,
    )
    main_tree = trees[0]
    if isinstance(main_tree, BaseException):
        main_ax.cancel()
        raise main_tree
    roots: dict[str, CDPSession] = {}
    for session, tree in zip(oopif, trees[1:]):
        if not isinstance(tree, BaseException):
            roots[tree["frameTree"]["frame"]["id"]] = session
    records: dict[str, FrameRecord] = {}
    main_root = main_tree["frameTree"]["frame"]["id"]
    owner_of: dict[str, CDPSession] = {}
    for session, tree in [(main, main_tree), *((roots[t["frameTree"]["frame"]["id"]], t) for t in trees[1:]
                                                if not isinstance(t, BaseException)
                                                and t["frameTree"]["frame"]["id"] in roots)]:
        for frame_id, parent, url in _walk(tree["frameTree"], set(roots)):
            if frame_id in records:
                continue
            records[frame_id] = FrameRecord(frame_id, session, parent, None, None, url)
            owner_of[frame_id] = session
    # An out-of-process root's parent lives in another session: the one that owns its parent.
    for frame_id, record in records.items():
        if record.parent_id is not None:
            parent = records.get(record.parent_id)
            record.owner_session = parent.session if parent else None

    errors: list[str] = []
    children = [r for r in records.values() if r.parent_id is not None and r.owner_session is not None]

    async def owner(record: FrameRecord) -> None:
        reply = await cdp(record.owner_session, "DOM.getFrameOwner", {"frameId": record.frame_id}, timeout)
        record.owner_backend_id = reply["backendNodeId"]

    async def ax(record: FrameRecord) -> Any:
        params = {} if record.frame_id == main_root else {"frameId": record.frame_id}
        return await full_ax_tree(sessions, record.session, params, timeout, devtools)

    results = await asyncio.gather(
        main_ax,
        *(ax(r) for r in children),
        *(owner(r) for r in children),
        return_exceptions=True,
    )
    payload = results[0]
    if isinstance(payload, BaseException):
        raise payload
    frames = []
    included = {main_root}
    # Parents come before their children (pre-order walks); a frame whose parent is missing
    # has no owner node to hang under, so it is reported rather than merged.
    for record, result, owned in zip(children, results[1 : 1 + len(children)], results[1 + len(children) :]):
        if isinstance(result, BaseException) or isinstance(owned, BaseException):
            failure = result if isinstance(result, BaseException) else owned
            errors.append(f"frame {record.url or record.frame_id}: {type(failure).__name__}: {failure}")
            continue
        if record.parent_id not in included:
            errors.append(f"frame {record.url or record.frame_id}: its parent frame could not be read")
            continue
        included.add(record.frame_id)
        frames.append((record.owner_backend_id, result, record.frame_id))
    records[""] = records[main_root]
    return _build(payload, frames, max_depth), records, errors


def _build(payload: Any, frames: list, max_depth: int | None) -> AXTree:
    # A hidden <iframe> has no AX node: its frame cannot be shown and is left out.
    if max_depth is None:
        return AXTree.from_cdp(payload, frames=frames, skip_orphan_frames=True)
    return AXTree.from_cdp(payload, frames=frames, max_depth=max_depth, skip_orphan_frames=True)
