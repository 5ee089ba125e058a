"""From an id of the last observation to the live element it names.

An id names a node of pagelens' capture (an AX-like row, or in an HTML observation an element
of the page's markup): the page-side registry gives its live element and that element's
``backendDOMNodeId``. Read from Chromium's tree (or DevTools' DOM.getDocument), an id names
its ``backendDOMNodeId`` directly. The backend id is resolved in the CDP session that owns its
frame and handed to Playwright as an ``ElementHandle`` (parked for a moment on the frame's ``window`` under a
random key: no attribute is written into the page). The resolver holds what the last
observation saw — its ids and its frames — and nothing else: the environment tells it what
was observed, the executor asks it for elements.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from playwright.async_api import ElementHandle, Frame
from playwright.async_api import Error as PlaywrightError

from pagelens.actions import ActionError, UnknownElementError
from pagelens.browser._util import quietly
from pagelens.browser.capture import (
    InPageCapture,
    frame_owner,
    registry_boxes,
    registry_content_box,
    registry_element,
    registry_field,
    registry_focus,
    registry_point,
    world_document,
)
from pagelens.browser.devtools import cdp
from pagelens.browser.frames import FrameRecord
from pagelens.browser.records import Box

if TYPE_CHECKING:
    from playwright.async_api import CDPSession, Page

    from pagelens._core import AXNode, AXTree
    from pagelens.browser.config import BrowserConfig
    from pagelens.browser.records import HtmlObservation, PageObservation

_PARK = """function(key) {
  const el = this.nodeType === 1 ? this : this.parentElement;
  (this.ownerDocument || document).defaultView[key] = el;
}"""
# A removed element can still be resolved while something holds it; it is gone all the same.
_UNPARK = "key => { const el = window[key]; delete window[key]; return el && el.isConnected ? el : null; }"

# What an agent told of an id that names nothing can do.
_LOOK_AGAIN = ": observe the page again and use an id it shows"
_NOT_OBSERVED = "no observation yet: observe the page before acting on its elements"


@dataclass(frozen=True)
class Resolved:
    """A live element an id named: its handle, and the CDP session and backend id it was
    resolved through (for what CDP does to it without Playwright's waits)."""

    handle: ElementHandle
    session: CDPSession
    backend_id: int


class ElementResolver:
    """The last observation's ids and frames, and the live elements they name."""

    def __init__(self, config: BrowserConfig, capture: InPageCapture | None = None) -> None:
        self.config = config  # read at each call: a run may change its timeouts
        self._capture = capture
        self._key = "__pagelens_" + secrets.token_hex(8)
        self._frames: dict[str, FrameRecord] = {}
        self._ax: PageObservation | None = None
        self._html: HtmlObservation | None = None
        self._document: float | None = None  # the document the observation was of

    # -- what was observed --------------------------------------------------------------------

    def observed(
        self,
        observation: PageObservation | HtmlObservation,
        frames: dict[str, FrameRecord],
        document: float | None = None,
    ) -> None:
        """The observation whose ids actions now name (an AX or an HTML one), its frames, and the
        document it was of (see :func:`~pagelens.browser.capture.world_document`)."""
        from pagelens.browser.records import HtmlObservation  # a dataclass module, no cycle

        self._frames, self._document = frames, document
        if isinstance(observation, HtmlObservation):
            self._ax, self._html = None, observation
        else:
            self._ax, self._html = observation, None

    def forget(self) -> None:
        """A new browser context: no id names anything yet."""
        self._frames, self._ax, self._html, self._document = {}, None, None, None

    @property
    def last_observation(self) -> PageObservation | None:
        """The last AX observation, when the last observation was one."""
        return self._ax

    def _main_record(self) -> FrameRecord | None:
        """The observed tab's main frame."""
        return next((r for r in self._frames.values() if r.parent_id is None), None)

    def frame_record(self, frame_id: str | None) -> FrameRecord:
        record = self._frames.get(frame_id or "") or self._frames.get("")
        if record is None:
            raise ActionError(_NOT_OBSERVED)
        return record

    def element_ref(self, element_id: int | None) -> tuple[int, str | None, str]:
        """(the element's id in its frame, CDP frame id, a short description) of an id of the
        last observation, AX or HTML; an :class:`ActionError` says why there is none. The id in
        the frame is the registry's where the frame's record says source "dom", else the
        element's backendDOMNodeId."""
        if self._html is not None:
            html = self._html
            if element_id is None or element_id not in html.targets:
                raise UnknownElementError(f"there is no element [{element_id}] in the current observation{_LOOK_AGAIN}")
            in_frame, frame_id = html.targets[element_id]
            return in_frame, frame_id, html.dom.start_tag(element_id)
        obs = self._ax
        if obs is None:
            raise ActionError(_NOT_OBSERVED)
        if element_id is None or element_id not in obs.tree:
            raise UnknownElementError(f"there is no element [{element_id}] in the current observation{_LOOK_AGAIN}")
        node = obs.tree.node(element_id)
        if node.backend_dom_node_id is None:
            raise ActionError(f"element [{element_id}] ({node.role}) has no DOM node to act on")
        return node.backend_dom_node_id, node.frame_id, f"{node.role} {node.name!r}"

    async def boxes(self, limit: int = 500) -> list[tuple[int, float, float, float, float]]:
        """(id, x, y, width, height) in the viewport of the last AX observation's shown ids whose
        element is in the main frame and has a box now (the first ``limit`` of them)."""
        obs = self._ax
        if obs is None:
            return []
        main = self._main_record()
        if main is None:
            return []
        if main.source == "dom" and self._capture is not None:
            shown = [i for i in obs.ids[:limit] if obs.tree.node(i).frame_id is None]
            return await registry_boxes(self._capture, main, shown, self.config.cdp_timeout_s)
        wanted = []
        for element_id in obs.ids[:limit]:
            node = obs.tree.node(element_id)
            if node.backend_dom_node_id is not None and self._frames.get(node.frame_id or "") is main:
                wanted.append((element_id, node.backend_dom_node_id))

        async def box(element_id: int, backend_id: int) -> tuple[int, float, float, float, float] | None:
            try:
                model = await cdp(main.session, "DOM.getBoxModel", {"backendNodeId": backend_id}, 10)
            except (PlaywrightError, asyncio.TimeoutError):
                return None  # gone, or no layout box (display: none)
            quad = model["model"]["border"]
            xs, ys = quad[0::2], quad[1::2]
            return element_id, min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)

        found = await asyncio.gather(*(box(i, b) for i, b in wanted))
        return [b for b in found if b is not None and b[3] > 0 and b[4] > 0]

    async def content_box(self, limit: int = 20_000) -> Box | None:
        """The part of the viewport holding the main frame's content (see
        :func:`registry_content_box`); None when it cannot be told (the AX source, a page
        too large), which means the whole viewport."""
        main = self._main_record()
        if main is None or main.source != "dom" or self._capture is None:
            return None
        try:
            return await registry_content_box(self._capture, main, limit, self.config.cdp_timeout_s)
        except (PlaywrightError, asyncio.TimeoutError, KeyError):
            return None  # the document went away: the whole viewport

    async def focus(self) -> str | None:
        """Where typed keys go now in the active tab (see :func:`registry_focus`), None when
        that cannot be told."""
        main = self._main_record()
        if main is None or self._capture is None:
            return None
        try:
            return await registry_focus(self._capture, main, self.config.cdp_timeout_s)
        except (PlaywrightError, asyncio.TimeoutError, KeyError):
            return None  # the document went away meanwhile

    # -- the live element ---------------------------------------------------------------------

    async def point(self, element_id: int | None, settle: bool = False) -> tuple[CDPSession, float, float, Box] | None:
        """Where a click on ``element_id`` lands now, when pagelens' own capture read it in the
        tab's main frame: the page's CDP session and the point and box in its viewport (see
        :func:`registry_point`). None — the id is Chromium's, in a frame, not in view, covered,
        disabled, gone... — means: take the element by :meth:`element` and let Playwright wait
        and say what is wrong. ``settle``: after a rendering frame (the pointer has arrived)."""
        own = self._in_main_registry(element_id)
        if own is None or self._capture is None:
            return None
        capture_id, record = own
        try:
            found = await registry_point(
                self._capture, record, capture_id, self._document, settle, self.config.cdp_timeout_s
            )
        except (PlaywrightError, asyncio.TimeoutError, KeyError):
            return None
        if isinstance(found, str):
            return None
        return record.session, *found

    async def field(self, element_id: int | None) -> tuple[CDPSession, Box] | None:
        """The text field ``element_id`` names made ready for typed text (in view, its text
        selected, focused), when pagelens' own capture read it in the tab's main frame: the
        page's CDP session and the field's box (see :func:`registry_field`). None — not such a
        field now (disabled, hidden, inert, the focus sent elsewhere), or not one pagelens'
        capture read — means nothing is typed this way: take the element by :meth:`element` and
        let Playwright wait and say what is wrong."""
        own = self._in_main_registry(element_id)
        if own is None or self._capture is None:
            return None
        capture_id, record = own
        try:
            found = await registry_field(self._capture, record, capture_id, self._document, self.config.cdp_timeout_s)
        except (PlaywrightError, asyncio.TimeoutError, KeyError):
            return None
        if isinstance(found, str):
            return None
        return record.session, found

    def _in_main_registry(self, element_id: int | None) -> tuple[int, FrameRecord] | None:
        """The capture's id of ``element_id`` and the frame record, when pagelens' capture
        read it in the tab's main frame."""
        if (self._ax is None and self._html is None) or self._capture is None or element_id is None:
            return None
        try:
            capture_id, frame_id, _ = self.element_ref(element_id)
            record = self.frame_record(frame_id)
        except ActionError:
            return None
        if record.source != "dom" or record.parent_id is not None:
            return None
        return capture_id, record

    async def element(self, page: Page, element_id: int | None) -> ElementHandle:
        """The live element ``element_id`` names in ``page`` (the tab it was observed in). Ids
        are the observed document's: once the tab shows another document, none is resolved
        (node ids can be reused by a new renderer, and an id must never reach another element)."""
        return (await self.resolve(page, element_id)).handle

    async def resolve(self, page: Page, element_id: int | None) -> Resolved:
        """:meth:`element`, with the CDP session and backend id it was resolved through."""
        in_frame, frame_id, described = self.element_ref(element_id)
        backend_id = in_frame
        main = self._main_record()
        if self._document is not None and main is not None and self._capture is not None:
            now = await world_document(self._capture, main.session, main.frame_id, self.config.cdp_timeout_s)
            if now is not None and now != self._document:
                raise UnknownElementError(
                    f"element [{element_id}] ({described}) is from the page observed before, and the tab "
                    f"now shows another document ({page.url}): read the new observation and use its ids"
                )
        record = self.frame_record(frame_id)
        if record.source == "dom" and self._capture is not None:
            # The id is the page-side registry's: it names the live node, whose backend id
            # and frame CDP gives for it now.
            found = await registry_element(self._capture, record, in_frame, self.config.cdp_timeout_s)
            if found is None:
                raise UnknownElementError(f"element [{element_id}] ({described}) is no longer on the page{_LOOK_AGAIN}")
            backend_id, element_frame = found
            record = self.frame_record(element_frame)
        frame = await self._playwright_frame(page, record)
        handle = await self._handle(record.session, backend_id, frame)
        if handle is None:
            raise UnknownElementError(f"element [{element_id}] ({described}) is no longer on the page{_LOOK_AGAIN}")
        return Resolved(handle, record.session, backend_id)

    async def scroll_into_view(self, resolved: Resolved) -> None:
        """Scrolls a resolved element into view, as Chromium does for DevTools: no wait for it
        to be visible or stable (an <option> of a closed list has no box of its own: nothing
        moves)."""
        with contextlib.suppress(PlaywrightError, asyncio.TimeoutError):
            await cdp(
                resolved.session,
                "DOM.scrollIntoViewIfNeeded",
                {"backendNodeId": resolved.backend_id},
                self.config.cdp_timeout_s,
            )

    async def _handle(self, session: Any, backend_id: int, frame: Frame) -> ElementHandle | None:
        t = self.config.cdp_timeout_s
        try:
            resolved = await cdp(session, "DOM.resolveNode", {"backendNodeId": backend_id}, t)
        except PlaywrightError:
            return None  # "No node with given id found": the element went away
        object_id = resolved["object"].get("objectId")
        if object_id is None:
            return None
        try:
            await cdp(
                session,
                "Runtime.callFunctionOn",
                {"objectId": object_id, "functionDeclaration": _PARK, "arguments": [{"value": self._key}]},
                t,
            )
        finally:
            await quietly(cdp(session, "Runtime.releaseObject", {"objectId": object_id}, t))
        handle = await frame.evaluate_handle(_UNPARK, self._key)
        element = handle.as_element()
        if element is None:
            await handle.dispose()
        return element

    async def _playwright_frame(self, page: Page, record: FrameRecord) -> Frame:
        """The Playwright frame of a CDP frame: the main frame, or the content frame of its
        owner <iframe>, found the same way from the parent down."""
        if record.parent_id is None:
            return page.main_frame
        parent = self.frame_record(record.parent_id)
        if record.owner_backend_id is None and record.owner_session is not None:
            with contextlib.suppress(PlaywrightError, asyncio.TimeoutError):
                await frame_owner(record, self.config.cdp_timeout_s)  # the capture reads frames without it
        if parent.frame_id != record.parent_id or record.owner_backend_id is None or record.owner_session is None:
            raise ActionError("the element's frame is no longer on the page")
        parent_frame = await self._playwright_frame(page, parent)
        owner = await self._handle(record.owner_session, record.owner_backend_id, parent_frame)
        if owner is None:
            raise ActionError("the element's frame is no longer on the page")
        try:
            frame = await owner.content_frame()
        finally:
            await release(owner)
        if frame is None:
            raise ActionError("the element's frame has no document")
        return frame


async def release(handle: ElementHandle) -> None:
    await quietly(handle.dispose())


def ids_read_alike(before: AXTree, after: AXTree, mode: str) -> list[tuple[AXNode, AXNode]] | None:
    """The (node after, node before) pairs of every shown id, when ``after`` reads exactly as
    ``before`` did, ids aside (a document that replaced another as it was); None otherwise."""
    texts = []
    for tree in (before, after):
        rendered = tree.render(mode, labels=dict.fromkeys(tree.ids(), "x"))  # type: ignore[arg-type]  # a config's mode
        texts.append((rendered.text, rendered.ids))
    (text_before, ids_before), (text_after, ids_after) = texts
    if text_before != text_after or len(ids_before) != len(ids_after):
        return None
    return [(after.node(a), before.node(b)) for a, b in zip(ids_after, ids_before, strict=True)]
