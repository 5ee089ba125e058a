"""The live page as HTML, for models that read HTML (ScribeAgent): one ``DOM.getDocument``
per renderer session, written out as markup with every element's ``backendDOMNodeId`` and
frame as a mark, and parsed into a :class:`pagelens.Dom` whose ids are the ones ``pagelens
prep`` gives the same markup (reverse document order). The marks come out before anyone
reads the document; they say which live element each id is, so that an action on an id acts
on that element through the same executor as the AX observation.

``pierce`` brings same-process iframes and shadow roots in the same answer; an out-of-process
iframe's document comes from its own session. A frame's ``<body>`` is written after its
``<iframe>`` element, inside a ``<div>`` (an ``<iframe>``'s own content is raw text to a
parser).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from pagelens._core import Dom
from pagelens.browser.frames import FrameRecord, FrameSessions, cdp, list_frames

MARK = "data-pagelens-node"

_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# Text inside these is not markup to a parser (the Rust core's RAW_TEXT_ELEMENTS).
_RAW_TEXT = frozenset("script style xmp iframe noembed noframes noscript plaintext".split())
_HTML_NS = "http://www.w3.org/1999/xhtml"


@dataclass
class HtmlCapture:
    """The page as one document, and how to reach each of its elements."""

    dom: Dom  # ids in reverse document order, as `pagelens prep` numbers the same markup
    targets: dict[int, tuple[int, str]]  # node id -> (backendDOMNodeId, CDP frame id)
    frames: dict[str, FrameRecord]  # by CDP frame id; the main frame also under ""
    frame_errors: list[str] = field(default_factory=list)
    cdp_ms: float = 0.0  # the DOM.getDocument calls
    parse_ms: float = 0.0  # writing the markup and parsing it


def _escape_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _escape_attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _attr_name_ok(name: str) -> bool:
    return bool(name) and not any(c in name for c in ' "\'<>/=\t\n\f\r')


def write_markup(document: dict[str, Any], frame_ids: list[str], documents: dict[str, dict[str, Any]],
                 owners: dict[str, int]) -> str:
    """A ``DOM.getDocument`` answer as HTML, each element marked ``frame.backendNodeId``
    where ``frame`` indexes ``frame_ids`` (``frame_ids[0]``: the document's own frame).
    ``documents`` holds other sessions' documents by frame id (out-of-process iframes). Frames
    met on the way are appended to ``frame_ids`` and their ``<iframe>``'s backend id put in
    ``owners``. Iterative: a deep page cannot exhaust the stack."""
    out: list[str] = []
    # Items: a node to write (with its frame's index and whether its text is raw), or a
    # string to write as is (end tags).
    stack: list[tuple[dict[str, Any], int, bool] | str] = [(document, 0, False)]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        node, fi, raw = item
        kind = node.get("nodeType")
        if kind == 3:  # text
            value = node.get("nodeValue", "")
            out.append(value.replace("</", "<\\/") if raw else _escape_text(value))
        elif kind == 8:  # comment
            out.append("<!--" + node.get("nodeValue", "").replace("--", "- -") + "-->")
        elif kind == 10:  # doctype, of the page only
            if not out:
                out.append(f"<!DOCTYPE {node.get('nodeName') or 'html'}>")
        elif kind in (9, 11):  # document, shadow root: their children in place
            stack.extend((c, fi, raw) for c in reversed(node.get("children", [])))
        elif kind == 1:
            tag = (node.get("localName") or node.get("nodeName", "")).lower()
            if not _attr_name_ok(tag):
                continue
            attrs = node.get("attributes", [])
            parts = [f"<{tag}"]
            for k in range(0, len(attrs) - 1, 2):
                name = attrs[k]
                if _attr_name_ok(name) and name != MARK:
                    parts.append(f' {name}="{_escape_attr(attrs[k + 1])}"')
            parts.append(f' {MARK}="{fi}.{node["backendNodeId"]}">')
            out.append("".join(parts))
            if tag in _VOID and node.get("namespaceURI", _HTML_NS) == _HTML_NS:
                continue
            if tag in ("iframe", "frame"):
                # Pushed in reverse: the end tag, then the frame's body in a <div>.
                frame_id = node.get("frameId")
                frame_doc = node.get("contentDocument") or documents.get(frame_id or "")
                if frame_id and frame_doc is not None:
                    owners[frame_id] = node["backendNodeId"]
                    frame_ids.append(frame_id)
                    stack.extend(["</div>", (_frame_body(frame_doc), len(frame_ids) - 1, False), "<div>"])
                stack.append(f"</{tag}>")
                continue
            stack.append(f"</{tag}>")
            child_raw = tag in _RAW_TEXT
            children = node.get("templateContent", {}).get("children", []) if tag == "template" else []
            children = children or node.get("children", [])
            stack.extend((c, fi, child_raw) for c in reversed(children))
            for root in reversed(node.get("shadowRoots", [])):
                stack.append((root, fi, False))
    return "".join(out)


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
    answers = await asyncio.gather(main_doc, *(cdp(s, "DOM.getDocument", params, timeout)
                                                for s in oopif_roots.values()), return_exceptions=True)
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
    markup = await asyncio.to_thread(write_markup, answers[0]["root"], frame_ids, documents, owners)
    dom, marks = await asyncio.to_thread(Dom.parse_marked, markup, MARK)
    for frame_id, owner in owners.items():
        if frame_id in records:
            records[frame_id].owner_backend_id = owner
    targets: dict[int, tuple[int, str]] = {}
    for node_id, mark in marks:
        index, _, backend = mark.partition(".")
        targets[node_id] = (int(backend), frame_ids[int(index)])
    records[""] = records[main_root]
    return HtmlCapture(dom, targets, records, errors, cdp_ms, (time.perf_counter() - t1) * 1e3)
