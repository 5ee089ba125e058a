"""The live page as HTML, for models that read HTML (ScribeAgent): a :class:`pagelens.Dom`
built node for node (``Dom.from_nodes``) whose ids are the ones ``pagelens prep`` gives the
same document (reverse document order). Beside it, which live element each id is, so that an
action on an id acts on that element through the same executor as the AX observation.

The nodes come from pagelens' own capture (``__pagelens.html`` in ``data/capture.js``, in
pagelens' isolated world): one pass per frame document of its own origin, and an element's id
is the page-side registry's, the one path every action takes. A page the capture cannot read
whole (closed shadow roots, a frame without pagelens' world) is read with ``DOM.getDocument``
instead, its targets Chromium's backend node ids, and the observation says so.

The live tree is never written as markup and parsed again: a re-parse is not the live tree
(the tree builder clones, moves or swallows elements), and a mark written into the page's
attributes could be forged by the page. Here which input node became which id comes from the
structure itself; nothing the page writes is read as a mark.

Both readings give the shape DevTools gives: whitespace-only text left out, a shadow root's
nodes before the host's own, a frame's ``<body>`` content after its ``<iframe>`` element,
inside a ``<div>`` (an ``<iframe>``'s own content is raw text to a reader).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from playwright.async_api import Error as PlaywrightError

from pagelens._core import Dom
from pagelens.browser.capture import InPageCapture, frames_to_pass, world_document
from pagelens.browser.devtools import DevToolsError, cdp
from pagelens.browser.frames import FrameRecord, FrameSessions, list_frames
from pagelens.errors import PagelensError

if TYPE_CHECKING:
    from pagelens.browser.devtools import DevToolsSocket

_HTML_NS = "http://www.w3.org/1999/xhtml"
# One live node as Dom.from_nodes takes it: (parent index, CDP node type, name or text,
# flat attribute list, outside the HTML namespace).
LiveNode = tuple[int, int, str, list[str], bool]


@dataclass
class HtmlCapture:
    """The page as one document, and how to reach each of its elements."""

    dom: Dom  # ids in reverse document order, as `pagelens prep` numbers the same markup
    # node id -> (the element's id in its frame: the registry's where the frame's record says
    # source "dom", else its backendDOMNodeId; the CDP frame id)
    targets: dict[int, tuple[int, str]]
    frames: dict[str, FrameRecord]  # by CDP frame id; the main frame also under ""
    frame_errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    nodes: list[LiveNode] = field(default_factory=list)  # what `dom` was built from, node for node
    read_ms: float = 0.0  # reading the page (the capture's passes, or DOM.getDocument)
    parse_ms: float = 0.0  # turning the answers into the document
    # The document the page showed (see capture.world_document), when it could be told
    document: float | None = None


def live_nodes(
    document: dict[str, Any], frame_ids: list[str], documents: dict[str, dict[str, Any]], owners: dict[str, int]
) -> tuple[list[LiveNode], list[tuple[int, int] | None]]:
    """A ``DOM.getDocument`` answer as ``Dom.from_nodes`` input, in document order, and per
    node the live element it is: ``(frame index, backendNodeId)`` where the index is into
    ``frame_ids`` (``frame_ids[0]``: the document's own frame), None for anything else.
    ``documents`` holds other sessions' documents by frame id (out-of-process iframes). Frames
    met on the way are appended to ``frame_ids`` and their ``<iframe>``'s backend id put in
    ``owners``. Iterative: a deep page cannot exhaust the stack."""
    nodes: list[LiveNode] = []
    targets: list[tuple[int, int] | None] = []
    # (CDP node, its frame's index, the index of its parent in `nodes`; -1: the document)
    stack: list[tuple[dict[str, Any], int, int]] = [(document, 0, -1)]
    while stack:
        node, fi, parent = stack.pop()
        kind = node.get("nodeType")
        if kind in (3, 8):  # text, comment
            nodes.append((parent, kind, str(node.get("nodeValue", "")), [], False))
            targets.append(None)
        elif kind == 10:  # doctype, of the page only
            if not nodes:
                nodes.append((parent, 10, str(node.get("nodeName") or "html"), [], False))
                targets.append(None)
        elif kind in (9, 11):  # document, shadow root: their children in place
            stack.extend((c, fi, parent) for c in reversed(node.get("children", [])))
        elif kind == 1:
            foreign = node.get("namespaceURI", _HTML_NS) != _HTML_NS
            tag = str(node.get("localName") or node.get("nodeName", ""))
            attrs = [str(a) for a in node.get("attributes", [])]
            here = len(nodes)
            nodes.append((parent, 1, tag, attrs, foreign))
            targets.append((fi, int(node["backendNodeId"])))
            if tag.lower() in ("iframe", "frame") and not foreign:
                frame_id = node.get("frameId")
                frame_doc = node.get("contentDocument") or documents.get(frame_id or "")
                if frame_id and frame_doc is not None:
                    owners[frame_id] = node["backendNodeId"]
                    frame_ids.append(frame_id)
                    # The frame's body goes after the <iframe>, in a <div> of the parent's.
                    holder = len(nodes)
                    nodes.append((parent, 1, "div", [], False))
                    targets.append(None)
                    stack.append((_frame_body(frame_doc), len(frame_ids) - 1, holder))
                continue
            children = node.get("templateContent", {}).get("children", []) if tag == "template" else []
            children = children or node.get("children", [])
            stack.extend((c, fi, here) for c in reversed(children))
            for root in reversed(node.get("shadowRoots", [])):
                # A user-agent shadow root (an <input>'s, a <select>'s) is the browser's own
                # rendering, not the page's content: no recording holds it.
                if root.get("shadowRootType") != "user-agent":
                    stack.append((root, fi, here))
    return nodes, targets


def _frame_body(document: dict[str, Any]) -> dict[str, Any]:
    """What of a frame's document goes into the page: its ``<body>`` (or ``<frameset>``)'s
    children, else the whole document element."""
    root = next((c for c in document.get("children", []) if c.get("nodeType") == 1), None)
    if root is None:
        return {"nodeType": 11, "children": []}
    body = next((c for c in root.get("children", []) if (c.get("localName") or "") in ("body", "frameset")), None)
    return {"nodeType": 11, "children": (body or root).get("children", [])}


async def fetch_html(sessions: FrameSessions, include_frames: bool = True, timeout: float = 60.0) -> HtmlCapture:
    """The page and its frames as one :class:`HtmlCapture`: one ``DOM.getDocument`` per
    renderer session (a frame whose document cannot be read is reported, not fatal)."""
    t0 = time.perf_counter()
    main_record = await sessions.main_record(timeout)
    main = main_record.session
    params = {"depth": -1, "pierce": True}
    main_doc = asyncio.ensure_future(cdp(main, "DOM.getDocument", params, timeout))
    try:
        main_root, records, oopif_roots = await list_frames(sessions, main_record, include_frames, timeout)
    except BaseException:
        main_doc.cancel()
        raise
    answers = await asyncio.gather(
        main_doc, *(cdp(s, "DOM.getDocument", params, timeout) for s in oopif_roots.values()), return_exceptions=True
    )
    if isinstance(answers[0], BaseException):
        raise answers[0]
    cdp_ms = (time.perf_counter() - t0) * 1e3
    documents: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    for frame_id, answer in zip(oopif_roots, answers[1:], strict=True):
        if isinstance(answer, BaseException):
            record = records.get(frame_id)
            errors.append(f"frame {(record.url if record else '') or frame_id}: {type(answer).__name__}: {answer}")
        else:
            documents[frame_id] = answer["root"]
    t1 = time.perf_counter()
    frame_ids: list[str] = [main_root]
    owners: dict[str, int] = {}
    nodes, live = await asyncio.to_thread(live_nodes, answers[0]["root"], frame_ids, documents, owners)
    dom, ids = await asyncio.to_thread(Dom.from_nodes, nodes)
    for frame_id, owner in owners.items():
        if frame_id in records:
            records[frame_id].owner_backend_id = owner
    targets: dict[int, tuple[int, str]] = {}
    for node_id, element in zip(ids, live, strict=True):
        if node_id is not None and element is not None:
            targets[node_id] = (element[1], frame_ids[element[0]])
    records[""] = records[main_root]
    return HtmlCapture(dom, targets, records, errors, [], nodes, cdp_ms, (time.perf_counter() - t1) * 1e3)


class _Unreadable(PagelensError):
    """The capture cannot read the page whole: why, for the observation's note (caught here,
    never raised to a caller)."""


async def capture_html(
    capture: InPageCapture,
    sessions: FrameSessions,
    include_frames: bool = True,
    timeout: float = 60.0,
    devtools: DevToolsSocket | None = None,
    max_frames: int = 100,
) -> HtmlCapture:
    """The page and its frames as one :class:`HtmlCapture` read by pagelens' capture (its
    targets the registry's ids); what it cannot read whole is read by :func:`fetch_html`, said."""
    try:
        return await _capture_html(capture, sessions, include_frames, timeout, devtools, max_frames)
    except _Unreadable as e:
        reason = str(e)
    except (PlaywrightError, DevToolsError, asyncio.TimeoutError, ValueError, KeyError, IndexError, TypeError) as e:
        reason = f"pagelens' capture failed ({type(e).__name__}: {str(e)[:200]})"
    main = await sessions.main_record(timeout)
    # Which document is read: asked first (an id must never reach a later document's element).
    document = await world_document(capture, main.session, main.frame_id, timeout)
    fetched = await fetch_html(sessions, include_frames, timeout)
    fetched.notes.append(f"read with DevTools' DOM.getDocument: {reason}")
    fetched.document = document
    return fetched


async def _capture_html(
    capture: InPageCapture,
    sessions: FrameSessions,
    include_frames: bool,
    timeout: float,
    devtools: DevToolsSocket | None,
    max_frames: int,
) -> HtmlCapture:
    t0 = time.perf_counter()
    main_record = await sessions.main_record(timeout)
    main_frame = main_record.frame_id

    async def read(record: FrameRecord, body: bool) -> tuple[Any, list[Any]]:
        walked = await capture.walk(
            sessions,
            record,
            timeout,
            devtools,
            max_nodes=5_000_000,
            frames=include_frames,
            max_frames=max_frames,
            view="html",
            body=body,
        )
        value = await asyncio.to_thread(_value, walked.payload)  # megabytes of JSON: off the loop
        if value.get("closed"):
            raise _Unreadable(f"{len(value['closed'])} closed shadow roots a page script cannot read")
        if value.get("truncated"):
            raise _Unreadable("more nodes than one pass reads")
        return walked, value["n"]

    walked, nodes = await read(main_record, False)
    errors: list[str] = []
    if include_frames and (walked.head.unread or walked.head.frames):
        main_root, records, _ = await list_frames(
            sessions, main_record, include_frames, timeout, devtools, max_frames, errors
        )
    else:
        main_root, records = main_frame, {main_frame: main_record}
    main_record = records.get(main_root, main_record)
    walked.record = main_record
    views: dict[str, list[Any]] = {main_root: nodes}
    # (the frame of the pass that holds an <iframe>, the <iframe>'s id there) -> the frame its
    # own pass read
    inner: dict[tuple[str, int], str] = {}
    passes = {main_root: walked}
    async for record, parent, owner_id in frames_to_pass(capture, records, passes, errors, timeout):
        try:
            child, child_nodes = await read(record, True)
        except (PlaywrightError, DevToolsError, asyncio.TimeoutError) as e:  # no world in the frame
            raise _Unreadable(f"frame {record.url or record.frame_id}: {type(e).__name__}: {str(e)[:120]}") from e
        passes[record.frame_id] = child
        views[record.frame_id] = child_nodes
        inner[(parent.record.frame_id, owner_id)] = record.frame_id
    read_ms = (time.perf_counter() - t0) * 1e3
    t1 = time.perf_counter()
    live, live_targets = await asyncio.to_thread(_assemble, main_root, views, inner)
    dom, ids = await asyncio.to_thread(Dom.from_nodes, live)
    targets = {
        node_id: target for node_id, target in zip(ids, live_targets, strict=True) if node_id is not None and target
    }
    for record in records.values():
        record.source = "dom"  # read by a pass of its own, or in its parent's
    records[""] = main_record
    parse_ms = (time.perf_counter() - t1) * 1e3
    return HtmlCapture(dom, targets, records, errors, [], live, read_ms, parse_ms, document=walked.head.document)


def _value(payload: Any) -> dict[str, Any]:
    """The value of a pass's ``Runtime.evaluate`` (raw bytes or Playwright's dict)."""
    data = json.loads(payload)["result"] if isinstance(payload, bytes) else payload
    if "exceptionDetails" in data:
        details = data["exceptionDetails"]
        raise DevToolsError(str(details.get("exception", {}).get("description") or details.get("text")))
    value = data.get("result", {}).get("value")
    if not isinstance(value, dict) or not isinstance(value.get("n"), list):
        raise ValueError("the capture's HTML pass answered something else")
    return value


def _assemble(
    root: str, views: dict[str, list[Any]], inner: dict[tuple[str, int], str]
) -> tuple[list[LiveNode], list[tuple[int, str] | None]]:
    """The passes' nodes as one document: a frame read by a pass of its own goes after its
    ``<iframe>``, in a ``<div>``; per node its target (registry id, frame id) or None.
    Iterative (frames nest as deep as a page makes them)."""
    nodes: list[LiveNode] = []
    targets: list[tuple[int, str] | None] = []
    # (pass's frame, its flat nodes, where to go on, its node -> index in `nodes`, the index
    # of what its top nodes sit in; -1: nothing)
    stack: list[tuple[str, list[Any], int, list[int], int]] = [(root, views[root], 0, [], -1)]
    while stack:
        frame_id, flat, at, placed, holder = stack.pop()
        while at + 6 <= len(flat):
            parent, kind, name, attrs, foreign, rid = flat[at : at + 6]
            at += 6
            under = holder if parent < 0 else placed[parent]
            placed.append(len(nodes))
            nodes.append((under, kind, name, attrs or [], bool(foreign)))
            targets.append((rid, frame_id) if rid else None)
            child = inner.get((frame_id, rid)) if rid else None
            if child is not None:
                nodes.append((under, 1, "div", [], False))
                targets.append(None)
                stack.append((frame_id, flat, at, placed, holder))
                stack.append((child, views[child], 0, [], len(nodes) - 1))
                break
    return nodes, targets
