"""The live page as HTML, for models that read HTML (ScribeAgent): one ``DOM.getDocument``
per renderer session, turned into a :class:`pagelens.Dom` node for node (``Dom.from_nodes``)
whose ids are the ones ``pagelens prep`` gives the same document (reverse document order).
Beside it, which live element (``backendDOMNodeId`` and frame) each id is, so that an action
on an id acts on that element through the same executor as the AX observation.

The live tree is never written as markup and parsed again: a re-parse is not the live tree
(the tree builder clones, moves or swallows elements), and a mark written into the page's
attributes could be forged by the page. Here which input node became which id comes from the
structure itself; nothing the page writes is read as a mark.

``pierce`` brings same-process iframes and shadow roots in the same answer; an out-of-process
iframe's document comes from its own session. A frame's ``<body>`` content is put after its
``<iframe>`` element, inside a ``<div>`` (an ``<iframe>``'s own content is raw text to a
reader).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from pagelens._core import Dom
from pagelens.browser.frames import FrameRecord, FrameSessions, cdp, list_frames

_HTML_NS = "http://www.w3.org/1999/xhtml"
# One live node as Dom.from_nodes takes it: (parent index, CDP node type, name or text,
# flat attribute list, outside the HTML namespace).
LiveNode = tuple[int, int, str, list[str], bool]


@dataclass
class HtmlCapture:
    """The page as one document, and how to reach each of its elements."""

    dom: Dom  # ids in reverse document order, as `pagelens prep` numbers the same markup
    targets: dict[int, tuple[int, str]]  # node id -> (backendDOMNodeId, CDP frame id)
    frames: dict[str, FrameRecord]  # by CDP frame id; the main frame also under ""
    frame_errors: list[str] = field(default_factory=list)
    cdp_ms: float = 0.0  # the DOM.getDocument calls
    parse_ms: float = 0.0  # turning the answers into the document


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
    main = await sessions.main()
    params = {"depth": -1, "pierce": True}
    main_doc = asyncio.ensure_future(cdp(main, "DOM.getDocument", params, timeout))
    try:
        main_root, records, oopif_roots = await list_frames(sessions, main, include_frames, timeout)
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
    return HtmlCapture(dom, targets, records, errors, cdp_ms, (time.perf_counter() - t1) * 1e3)
