"""pagelens' own capture of a page, run inside it: ``capture.js`` in an isolated world of each
frame (``Page.createIsolatedWorld``), one ``Runtime.evaluate`` per document, answered as flat
rows the Rust core reads directly into the same tree the accessibility-tree source gives.

Nothing the page defines or patches is visible in the isolated world. The only piece in the
page's world is ``hook.js`` (an init script): it reports which elements a script made
clickable, and can change nothing else. Ids are the page-side registry's: one per node for as
long as it lives, so an element keeps its id across observations; an action turns an id back
into the live element through the same registry (:func:`registry_element`).

Same-origin frames are read in their parent's pass; a frame the pass cannot read (another
origin) is read by a pass of its own in its own world, hung under its ``<iframe>``. A page the
capture cannot read as a whole (a closed shadow root, an error) is read from Chromium's
accessibility tree instead, and the observation says so.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import secrets
import time
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from playwright.async_api import CDPSession
from playwright.async_api import Error as PlaywrightError

from pagelens.browser._util import quietly
from pagelens.browser.devtools import DevToolsError, DevToolsSocket, cdp, raw_call
from pagelens.browser.frames import (
    Capture,
    FrameRecord,
    FrameSessions,
    accessibility_off,
    full_ax_tree,
    list_frames,
)
from pagelens.browser.pagetree import build_tree
from pagelens.browser.records import Box
from pagelens.errors import PagelensError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from pagelens._core import AXTree

_CAPTURE_JS = (files("pagelens") / "data" / "capture.js").read_text(encoding="utf-8")
_HOOK_JS = (files("pagelens") / "data" / "hook.js").read_text(encoding="utf-8")

# Resolves true once the document has had no DOM change for QUIET ms, false after MOST ms.
_QUIET_JS = """new Promise(done => {
  let last = performance.now();
  const watch = new MutationObserver(() => { last = performance.now(); });
  watch.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  const end = (quiet) => { watch.disconnect(); done(quiet); };
  const until = setTimeout(() => end(false), MOST);
  const check = () => {
    const still = performance.now() - last;
    if (still >= QUIET) { clearTimeout(until); end(true); } else setTimeout(check, QUIET - still);
  };
  setTimeout(check, QUIET);
})"""

# How often a reading that copies rows is checked against a whole one in the field (see
# InPageCapture.self_check_every): one in this many.
SELF_CHECK_EVERY = 20

# Worlds' contexts remembered (per frame); past this the memory starts over.
_MAX_CONTEXTS = 1000
# Sheets of another origin read per pass (the rest at the next), and the longest one read.
_MAX_SHEETS = 64
_MAX_SHEET_CHARS = 4_000_000
_SHEETS_TIMEOUT_S = 10.0


async def sheet_texts(sessions: FrameSessions, session: CDPSession, hrefs: list[str], timeout: float) -> dict[str, str]:
    """The texts of the style sheets at these addresses of ``session``'s document, as DevTools
    reads them (a sheet that failed to load: ""). Read on a session of its own, detached after:
    the DOM and CSS domains it turns on would otherwise drop the node ids of whatever else works
    on the page's session meanwhile, and turning them off there again did so too."""
    own = await sessions.another(session)
    wanted = set(hrefs)
    ids: dict[str, str] = {}

    def added(event: dict[str, Any]) -> None:
        header = event.get("header") or {}
        url = header.get("sourceURL")
        if url in wanted and "styleSheetId" in header:
            ids.setdefault(url, header["styleSheetId"])

    own.on("CSS.styleSheetAdded", added)
    texts: dict[str, str] = {}
    try:
        await cdp(own, "DOM.enable", {}, timeout)
        await cdp(own, "CSS.enable", {}, timeout)
        for url, sheet in ids.items():
            try:
                texts[url] = (await cdp(own, "CSS.getStyleSheetText", {"styleSheetId": sheet}, timeout))["text"]
            except (PlaywrightError, KeyError):
                continue
        # DevTools names every sheet the renderer holds (its styleSheetAdded events come before
        # CSS.enable answers); one it does not name failed to load and has no rules.
        for url in wanted - ids.keys():
            texts[url] = ""
    finally:
        own.remove_listener("CSS.styleSheetAdded", added)
        await quietly(own.detach())  # its domains end with it
    return texts


async def style_counts(record: FrameRecord, timeout: float, devtools: DevToolsSocket | None) -> tuple[int, int] | None:
    """How many times Chromium computed styles and layouts in ``session``'s renderer (its
    ``Performance`` domain counts every document of the frames it renders, shadow trees and
    frames read in the same pass included), or None where it cannot say yet: the domain is
    turned on then, and counts from there.

    Every change that can restyle anything (a rule, a sheet, a media query, a shadow root, a slot,
    an animation, a state a selector reads, an element or a text) makes Chromium compute styles or
    layout again before anything reads them; a page can neither stop nor hide that. So counts
    that have not moved since a pass read a document say its styles are the ones it read."""
    try:
        for attempt in (0, 1):
            counts = _counts(await raw_call(record.session, record.target, *_METRICS, timeout, devtools))
            if counts is not None:
                return counts
            if attempt == 0:  # a session that has not counted yet (new, or attached again)
                await raw_call(record.session, record.target, "Performance.enable", {}, timeout, devtools)
    except (PlaywrightError, DevToolsError):
        pass  # the frame is going away: its pass will say so
    return None


_METRICS: tuple[str, dict[str, Any]] = ("Performance.getMetrics", {})


def _counts(reply: Any) -> tuple[int, int] | None:
    """The style-recalc and layout counts of a ``Performance.getMetrics`` answer (None: an
    error, or a session whose domain is not on)."""
    try:
        metrics = json.loads(reply)["result"]["metrics"] if isinstance(reply, bytes) else reply["metrics"]
        named = {m["name"]: m["value"] for m in metrics}
        return int(named["RecalcStyleCount"]), int(named["LayoutCount"])
    except (KeyError, ValueError, TypeError):
        return None


@dataclass
class _Walked:
    payload: Any
    record: FrameRecord
    context: int
    head: _Head  # what the answer says first, read once
    note: str | None = None  # what the observation should say of this pass (a self-check failed)
    checked_ms: float = 0.0  # the time of a pass that checked itself against a whole one


class InPageCapture:
    """The capture of one environment: its isolated world's name and the secret event names
    its hook answers to (new for every environment, so no page can know them)."""

    def __init__(self) -> None:
        token = secrets.token_hex(8)
        self.world_name = f"pagelens-{token}"
        self._events = {
            "askEvent": f"pagelens-ask-{token}",
            "markEvent": f"pagelens-mark-{token}",
            "closedEvent": f"pagelens-closed-{token}",
            "internalsEvent": f"pagelens-internals-{token}",
        }
        self._global = f"__pagelens_{token}"  # where the capture is found in its world
        self._contexts: dict[tuple[int, str], int] = {}  # (session, frame id) -> the world's context
        # The last whole answer of each frame's incremental pass, its number and its document: a
        # pass that would answer the same bytes says so instead of sending them (see walk).
        self._answers: dict[tuple[int, str], tuple[int, float | None, bytes]] = {}
        # Chromium's style-recalc and layout counts of each frame's renderer taken before the last
        # pass whose rows stand (None: not known; see walk): a pass copies rows only while they hold.
        self._styles: dict[tuple[int, str], tuple[int, int] | None] = {}
        # The self-check in the field: every SELF_CHECK_EVERY-th reading that copies rows is also
        # read whole in the same pass and compared; a frame whose reading differed is read whole
        # while its document lives (by its performance.timeOrigin), and the observation says so once.
        self.self_check_every = SELF_CHECK_EVERY
        self._copying = 0
        self._distrusted: dict[tuple[int, str], float | None] = {}
        # What style sheets of another origin say (their rules, which no page script can read,
        # read through DevTools), by address, for an incremental pass to know what a change may
        # reach; None: they could not be read. One reading at a time, in the background.
        self._sheet_facts: dict[str, dict[str, bool] | None] = {}
        self._learning: asyncio.Future[None] | None = None
        # The tree last built from a frameless page's answer, with that answer and the depth it
        # was cut at: an answer that is "the same" is the same bytes, whose tree is this one.
        self._built: tuple[bytes, int | None, AXTree] | None = None
        # Above every id given so far: a new document's (or frame's) registry starts here, so
        # that no id ever names two elements in a run (an old page's id never reaches the new).
        self.next_id = 1

    def forget(self) -> None:
        """A new browser context: no id of the old one names anything (ids start small again),
        and no world of it is there to be tried."""
        self.next_id = 1
        self._contexts.clear()
        self._answers.clear()
        self._styles.clear()
        self._distrusted.clear()
        self._built = None
        if self._learning is not None:
            self._learning.cancel()  # its sessions are the old context's

    def hook_script(self) -> str:
        """The init script for the page's world (add it to every browser context)."""
        return (
            _HOOK_JS.replace("__ASK__", self._events["askEvent"])
            .replace("__MARK__", self._events["markEvent"])
            .replace("__CLOSED__", self._events["closedEvent"])
            .replace("__INTERNALS__", self._events["internalsEvent"])
        )

    def _options(
        self,
        max_nodes: int,
        clickables: bool,
        frames: bool,
        max_frames: int,
        urls: bool,
        body: bool = False,
        incremental: bool = False,
        check: bool = False,
        have: int = 0,
        restyled: bool = True,
    ) -> str:
        options: dict[str, Any] = {
            "restyled": restyled,
            "sheetFacts": {h: f for h, f in self._sheet_facts.items() if f is not None} if incremental else None,
            "incremental": incremental,
            "check": check,
            "have": have,
            "body": body,
            "base": self.next_id,
            **self._events,
            "markClickable": clickables,
            "urls": urls,
            "maxNodes": max_nodes,
            "frames": frames,
            "maxFrames": max_frames,
        }
        return json.dumps(options)

    async def world(
        self,
        session: CDPSession,
        frame_id: str,
        timeout: float,
        target: str | None = None,
        devtools: DevToolsSocket | None = None,
    ) -> int:
        """The execution context of pagelens' world in a frame (made once per document;
        asked again, Chromium answers with the same world). Over the raw socket when there is
        one: a Playwright round trip costs more than the capture of a small page."""
        params = {"frameId": frame_id, "worldName": self.world_name, "grantUniveralAccess": False}
        if devtools is not None and target is not None:
            reply = json.loads(await raw_call(session, target, "Page.createIsolatedWorld", params, timeout, devtools))
            return int(reply["result"]["executionContextId"])
        reply = await cdp(session, "Page.createIsolatedWorld", params, timeout)
        return int(reply["executionContextId"])

    async def quiet_dom(
        self, session: CDPSession, frame_id: str, quiet_ms: float, most_ms: float, timeout: float
    ) -> bool:
        """Waits, in pagelens' world of the frame, until its document has had no change for
        ``quiet_ms`` (True) or ``most_ms`` passed (False)."""
        expression = _QUIET_JS.replace("QUIET", repr(float(quiet_ms))).replace("MOST", repr(float(most_ms)))
        result = await self.evaluate(session, frame_id, expression, timeout, by_value=True, awaits=True)
        return result.get("value") is True

    async def evaluate(
        self, session: CDPSession, frame_id: str, expression: str, timeout: float, by_value: bool, awaits: bool = False
    ) -> dict[str, Any]:
        """``expression`` evaluated in pagelens' world of a frame: its ``result`` object
        (``awaits``: the value of the promise it gives).

        The world's context id kept from an earlier call or pass is tried first (an action's
        calls would otherwise each pay a ``Page.createIsolatedWorld`` round trip), with the
        expression behind the capture's secret global: a stale id that now names another
        context (the page's own world, after a cross-process navigation) runs nothing there
        and answers the secret's name, and an id that names no context any more is refused
        before anything runs; either way the world is asked for and the call made there."""
        key = (id(session), frame_id)
        context = self._contexts.get(key)
        if context is not None:
            guarded = f"typeof {self._global} === 'object' ? ({expression}) : {self._global!r}"
            params = {"expression": guarded, "contextId": context, "returnByValue": by_value, "awaitPromise": awaits}
            try:
                result = (await cdp(session, "Runtime.evaluate", params, timeout)).get("result", {})
            except PlaywrightError as e:
                if "Cannot find context" not in str(e):
                    raise  # it ran and failed (the document went away meanwhile): the caller's
                result = None
            if isinstance(result, dict) and result.get("value") != self._global:
                return result
        context = await self.world(session, frame_id, timeout)
        self._remember(key, context)
        params = {"expression": expression, "contextId": context, "returnByValue": by_value, "awaitPromise": awaits}
        result = (await cdp(session, "Runtime.evaluate", params, timeout)).get("result", {})
        return result if isinstance(result, dict) else {}

    def _remember(self, key: tuple[int, str], context: int) -> None:
        if len(self._contexts) >= _MAX_CONTEXTS:  # frames come and go all day on some pages
            self._contexts.clear()
            self._answers.clear()
            self._styles.clear()  # (a frame without its counts reads whole once)
        self._contexts[key] = context

    async def walk(
        self,
        sessions: FrameSessions,
        record: FrameRecord,
        timeout: float,
        devtools: DevToolsSocket | None,
        max_nodes: int,
        clickables: bool = True,
        frames: bool = True,
        max_frames: int = 100,
        urls: bool = True,
        view: str = "capture",
        body: bool = False,
        incremental: bool = False,
        check: bool = False,
    ) -> _Walked:
        """One pass over a frame's document (and its same-origin frames): ``view`` "capture",
        the rows of the page (the AX-like tree), or "html", its nodes as markup (``body``: only
        the ``<body>`` contents, for a frame's own pass).

        The world's context id is kept per frame and tried first: a document's world lives as
        long as the document. The capture is found under a name secret to this environment,
        so a stale id that now names another context (a page's own world, after a navigation
        to another process) finds nothing there, and the world is asked for again; the script
        is only ever sent to a world Chromium has just named as pagelens'."""
        if view not in ("capture", "html"):
            raise ValueError(f"no view {view!r} of the capture")
        key = (id(record.session), record.frame_id)
        # The answer held for this frame (raw bytes: Playwright's dicts are not kept), named to
        # the pass: it answers "the same" rather than those bytes again.
        held = self._answers.get(key) if incremental and devtools is not None and view == "capture" else None
        have = held[0] if held is not None else 0
        # Chromium's style-recalc and layout counts of the frame's renderer before the pass: rows are
        # copied only when they have not moved since the last pass read them (see style_counts).
        gated = incremental and view == "capture"
        before = await style_counts(record, timeout, devtools) if gated else None
        restyled = before is None or self._styles.get(key) != before or key in self._distrusted
        self_check = False
        if not restyled and not check:
            self._copying += 1
            self_check = self._copying % self.self_check_every == 0
        t0 = time.perf_counter()
        options = self._options(
            max_nodes, clickables, frames, max_frames, urls, body, incremental, check or self_check, have, restyled
        )
        quick = f"typeof {self._global} === 'object' ? {self._global}.{view}({options}) : 0"
        context = self._contexts.get(key)

        async def whole() -> Any:
            """The pass again in the world found, copying no row, its bytes sent (never said to be
            "the same": the world's last pass, which it would be compared with, may be stale)."""
            options = self._options(max_nodes, clickables, frames, max_frames, urls, body, incremental, check)
            params = {"expression": f"{self._global}.{view}({options})", "contextId": context, "returnByValue": True}
            return await raw_call(record.session, record.target, "Runtime.evaluate", params, timeout, devtools)

        payload: Any = None
        if context is not None:
            params = {"expression": quick, "contextId": context, "returnByValue": True}
            try:
                payload = await raw_call(record.session, record.target, "Runtime.evaluate", params, timeout, devtools)
            except (PlaywrightError, DevToolsError):  # "Cannot find context with specified id"
                payload = None
        if payload is None or _is_zero(payload):
            context = await self.world(record.session, record.frame_id, timeout, record.target, devtools)
            self._remember(key, context)
            params = {"expression": quick, "contextId": context, "returnByValue": True}
            payload = await raw_call(record.session, record.target, "Runtime.evaluate", params, timeout, devtools)
            if _is_zero(payload):  # a new document: the script is not in its world yet
                params["expression"] = self.installing(f"__pagelens.{view}({options})")
                payload = await raw_call(record.session, record.target, "Runtime.evaluate", params, timeout, devtools)
        assert context is not None
        head = _head(payload)
        if gated:
            if not restyled:
                # A pass that copied is checked: the counts are asked again once it has answered (a
                # call sent before that answer may be served first).
                after = await style_counts(record, timeout, devtools)
                if after != before:
                    # Styles were computed during the pass, or just after: a change met it, and what
                    # it copied may be stale. Read again, copying nothing.
                    before = after
                    payload = await whole()
                    head = _head(payload)
            # Kept: the counts taken before the pass whose rows stand. The next reading copies only
            # when its own counts equal them, that is, when no style or layout was computed from
            # before this pass to before the next, this pass included: the check a count after
            # this pass would make, made then (a pass that read whole is not asked again).
            self._styles[key] = before
        if head.same and (held is None or held[:2] != (head.answer, head.document)):
            # Said of an answer numbered alike in another document of the frame (its world numbers
            # from 1 again, and its first answer never came back here): the bytes are asked for.
            payload = await whole()
            head = _head(payload)
        note = None
        checked_ms = (time.perf_counter() - t0) * 1e3 if self_check else 0.0
        if check:
            _check_same(payload, record)
        elif self_check and _differs(payload):
            self._distrusted[key] = head.document
            note = (
                "an incremental reading of this page differed from a whole one (a change pagelens "
                "could not see): the page is read whole from now on"
            )
            payload = await whole()
            head = _head(payload)
        if key in self._distrusted and self._distrusted[key] != head.document:
            del self._distrusted[key]  # another document: trusted again
        if incremental:
            self._learn_sheets(payload, sessions, record, context, timeout)
        self.next_id = max(self.next_id, head.next_id)
        if head.same and held is not None:
            payload = held[2]  # its rows, strings, unread frames and closed hosts: all the core reads
        elif incremental and view == "capture" and isinstance(payload, bytes):
            self._answers[key] = (head.answer, head.document, payload)
        return _Walked(payload, record, context, head, note, checked_ms)

    async def call(self, session: CDPSession, frame_id: str, then: str, timeout: float) -> dict[str, Any]:
        """``then``, an expression of ``__pagelens``, evaluated by value in pagelens' world of a
        frame, the capture installed first in a document that has none yet (one no capture has
        read: the AX source reads none)."""
        result = await self.evaluate(session, frame_id, f"typeof __pagelens === 'object' ? ({then}) : 0", timeout, True)
        if result.get("value") != 0:
            return result
        key = (id(session), frame_id)
        context = self._contexts.get(key)  # the world evaluate just ran in, kept by it
        if context is None:
            context = await self.world(session, frame_id, timeout)
            self._remember(key, context)
        params = {"expression": self.installing(then), "contextId": context, "returnByValue": True}
        reply = (await cdp(session, "Runtime.evaluate", params, timeout)).get("result", {})
        return reply if isinstance(reply, dict) else {}

    def _learn_sheets(
        self, payload: Any, sessions: FrameSessions, record: FrameRecord, context: int, timeout: float
    ) -> None:
        """Starts reading the sheets a pass could not read (its answer names them last), unless
        a reading is under way or they were read before."""
        raw = _as_bytes(payload)
        at = raw.rfind(b'"sheets":[', max(0, len(raw) - 262_144))  # near the end, after the rows
        if at < 0 or (self._learning is not None and not self._learning.done()):
            return
        try:
            hrefs, _ = json.JSONDecoder().raw_decode(raw[at + 9 :].decode("utf-8", "replace"))
        except ValueError:
            return
        new = [h for h in hrefs if isinstance(h, str) and h not in self._sheet_facts][:_MAX_SHEETS]
        if new:
            reading = self._read_sheets(sessions, record.session, context, new, min(timeout, _SHEETS_TIMEOUT_S))
            self._learning = asyncio.ensure_future(reading)
            self._learning.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _read_sheets(
        self, sessions: FrameSessions, session: CDPSession, context: int, hrefs: list[str], timeout: float
    ) -> None:
        texts = await sheet_texts(sessions, session, hrefs, timeout)
        known = [h for h in hrefs if len(texts.get(h, "")) <= _MAX_SHEET_CHARS and h in texts]
        facts: list[Any] = []
        if known:
            expression = (
                f"typeof {self._global} === 'object' ? "
                f"{self._global}.factsOfTexts({json.dumps([texts[h] for h in known])}) : null"
            )
            params = {"expression": expression, "contextId": context, "returnByValue": True}
            facts = (await cdp(session, "Runtime.evaluate", params, timeout)).get("result", {}).get("value") or []
        if len(self._sheet_facts) > 4 * _MAX_SHEETS:
            self._sheet_facts.clear()
        for h in hrefs:
            self._sheet_facts[h] = None
        for h, f in zip(known, facts, strict=False):  # a short answer leaves the rest unknown
            self._sheet_facts[h] = f if isinstance(f, dict) else None

    def installing(self, then: str) -> str:
        """An expression that installs the capture in a world that has none yet (a new
        document's), then evaluates ``then``."""
        return f"{_CAPTURE_JS}\n;globalThis.{self._global} = __pagelens;\n{then}"

    async def owner_id(self, parent: _Walked, record: FrameRecord, timeout: float) -> int | None:
        """The registry id, in the parent pass's world, of a frame's ``<iframe>`` (whose
        backend id is found first)."""
        await frame_owner(record, timeout)
        if record.owner_backend_id is None:
            return None
        resolved = await cdp(
            parent.record.session,
            "DOM.resolveNode",
            {"backendNodeId": record.owner_backend_id, "executionContextId": parent.context},
            timeout,
        )
        object_id = resolved["object"].get("objectId")
        if object_id is None:
            return None
        try:
            reply = await cdp(
                parent.record.session,
                "Runtime.callFunctionOn",
                {
                    "objectId": object_id,
                    "functionDeclaration": "function() { return __pagelens.idOf(this); }",
                    "returnByValue": True,
                },
                timeout,
            )
        finally:
            await cdp(parent.record.session, "Runtime.releaseObject", {"objectId": object_id}, timeout)
        value = reply.get("result", {}).get("value")
        return int(value) if isinstance(value, int) else None


async def frame_owner(record: FrameRecord, timeout: float) -> None:
    """Sets the backend id of a frame's ``<iframe>`` in its parent's document (once)."""
    if record.owner_backend_id is None and record.owner_session is not None:
        owner = await cdp(record.owner_session, "DOM.getFrameOwner", {"frameId": record.frame_id}, timeout)
        record.owner_backend_id = owner["backendNodeId"]


_HEAD = re.compile(
    rb'"value"\s*:\s*\{\s*"x"\s*:\s*\[([0-9,\s]*)\]\s*,\s*"next"\s*:\s*([0-9]+)\s*,'
    rb'\s*"frames"\s*:\s*([0-9]+)\s*,\s*"origin"\s*:\s*([0-9.eE+-]+)(?:\s*,\s*"reused"\s*:\s*([0-9]+))?'
    rb'(?:\s*,\s*"answer"\s*:\s*([0-9]+)\s*,\s*"same"\s*:\s*([01]))?'
)


@dataclass
class _Head:
    """What a pass's answer says first (read off the first bytes of a raw answer)."""

    unread: set[int]  # ids of the <iframe>s it could not read
    next_id: int  # its registry's next id
    frames: int  # frame documents it read in the same pass
    document: float | None  # its document's performance.timeOrigin (see world_document)
    reused: int = 0  # rows it copied from the last pass (an incremental one)
    answer: int = 0  # the answer's number in its world (an incremental pass)
    same: bool = False  # its rows are those of the answer the caller said it holds, not sent


def _head(payload: Any) -> _Head:
    if isinstance(payload, bytes):
        m = _HEAD.search(payload, 0, 500)
        if m is None:
            return _Head(set(), 0, 0, None)
        unread = {int(v) for v in m.group(1).split(b",") if v.strip()}
        return _Head(
            unread,
            int(m.group(2)),
            int(m.group(3)),
            float(m.group(4)),
            int(m.group(5) or 0),
            int(m.group(6) or 0),
            m.group(7) == b"1",
        )
    value = payload.get("result", {}).get("value", {})
    if not isinstance(value, dict):
        return _Head(set(), 0, 0, None)
    origin = value.get("origin")
    return _Head(
        {int(v) for v in value.get("x", [])},
        int(value.get("next", 0)),
        int(value.get("frames", 0)),
        float(origin) if isinstance(origin, (int, float)) else None,
        int(value.get("reused", 0)),
        int(value.get("answer", 0)),
        value.get("same") == 1,
    )


def _is_zero(payload: Any) -> bool:
    if isinstance(payload, bytes):
        return len(payload) < 400 and b'"value":0' in payload.replace(b" ", b"")
    return bool(payload.get("result", {}).get("type") == "number" and payload["result"].get("value") == 0)


def _as_bytes(payload: Any) -> Any:
    """Playwright's dict as the JSON the core reads (only without the raw socket)."""
    if isinstance(payload, bytes):
        return payload
    return json.dumps({"result": payload}).encode()


class CaptureCheckFailed(PagelensError, AssertionError):
    """A reading of only what changed differed from a reading of the whole page (raised only
    under ``BrowserConfig.check_incremental``: a bug of pagelens, never of the page; never
    turned into a reading of Chromium's tree as the capture's other failures are)."""


def _differs(payload: Any) -> bool:
    """Whether a pass that checked itself says its incremental rows differ from the whole pass it
    ran after them."""
    return b'"mismatch":{' in _as_bytes(payload)


def _check_same(payload: Any, record: FrameRecord) -> None:
    """Raises :class:`CaptureCheckFailed` when the pass says its incremental rows differ from
    the full pass it ran after them."""
    if not _differs(payload):
        return
    answer = json.loads(_as_bytes(payload))
    while isinstance(answer, dict) and "mismatch" not in answer:
        answer = answer.get("result") or answer.get("value") or {}
    raise CaptureCheckFailed(
        f"frame {record.url or record.frame_id}: an incremental reading differs from a full one: "
        f"{json.dumps(answer.get('mismatch'))[:2000]}"
    )


async def capture_page(
    capture: InPageCapture,
    sessions: FrameSessions,
    include_frames: bool = True,
    timeout: float = 60.0,
    max_depth: int | None = None,
    devtools: DevToolsSocket | None = None,
    max_frames: int = 100,
    max_nodes: int = 1_000_000,
    clickables: bool = True,
    urls: bool = True,
    incremental: bool = False,
    check: bool = False,
) -> Capture:
    """The page as rows from pagelens' own capture, every frame included; raises
    a :class:`~pagelens.browser.devtools.DevToolsError` (the page's exception, read by the core
    as an :class:`~pagelens.AXTreeError`) or a CDP error when the page cannot be read this way."""
    t0 = time.perf_counter()
    main_record = await sessions.main_record(timeout)
    main_frame = main_record.frame_id
    walked = await capture.walk(
        sessions,
        main_record,
        timeout,
        devtools,
        max_nodes=max_nodes,
        clickables=clickables,
        frames=include_frames,
        max_frames=max_frames,
        urls=urls,
        incremental=incremental,
        check=check,
    )
    walk_ms = (time.perf_counter() - t0) * 1e3
    head = walked.head
    reused = head.reused
    self_check_ms = walked.checked_ms
    # The frames, only for a page that has some (the pass says so): an action in one starts
    # from its record, another origin's gets a pass of its own.
    errors: list[str] = []
    if include_frames and (head.unread or head.frames):
        main_root, records, _ = await list_frames(
            sessions, main_record, include_frames, timeout, devtools, max_frames, errors
        )
    else:
        main_root, records = main_frame, {main_frame: main_record}
    list_ms = (time.perf_counter() - t0) * 1e3 - walk_ms
    main_record = records.get(main_root, main_record)
    walked.record = main_record
    notes: list[str] = [walked.note] if walked.note else []
    fallback: set[str] = set()  # frames read from Chromium's tree
    frames: list[dict[str, Any]] = []
    frame_ms = 0.0
    if len(records) > 1:
        t1 = time.perf_counter()
        passes: dict[str, _Walked] = {main_root: walked}
        async for record, _, owner_id in frames_to_pass(capture, records, passes, errors, timeout):
            try:
                child = await capture.walk(
                    sessions,
                    record,
                    timeout,
                    devtools,
                    max_nodes=max_nodes,
                    clickables=clickables,
                    urls=urls,
                    incremental=incremental,
                    check=check,
                )
            except CaptureCheckFailed:
                raise
            except Exception as e:
                # No world in this frame, or its pass failed: Chromium's tree of the frame, said.
                try:
                    payload = await full_ax_tree(record, {"frameId": record.frame_id}, timeout, devtools)
                    await accessibility_off(record, timeout, devtools)
                except Exception as ax_error:
                    errors.append(f"frame {record.url or record.frame_id}: {type(ax_error).__name__}: {ax_error}")
                    continue
                notes.append(
                    f"frame {record.url or record.frame_id}: read from Chromium's accessibility tree "
                    f"(the capture failed: {type(e).__name__}: {str(e)[:120]}); "
                    "its script-clickable elements have no ids"
                )
                fallback.add(record.frame_id)
                frames.append({"owner": owner_id, "payload": payload, "frame_id": record.frame_id})
                continue
            passes[record.frame_id] = child
            reused += child.head.reused
            self_check_ms += child.checked_ms
            if child.note:
                notes.append(f"frame {record.url or record.frame_id}: {child.note}")
            frames.append({"owner": owner_id, "payload": _as_bytes(child.payload), "frame_id": record.frame_id})
        frame_ms = (time.perf_counter() - t1) * 1e3
    records[""] = main_record
    built = capture._built
    if not frames and walked.head.same and built is not None and built[0] is walked.payload and built[1] == max_depth:
        tree, parse_ms = built[2], 0.0  # the answer held, and so its tree (trees are never changed)
    else:
        tree, parse_ms = await build_tree(_as_bytes(walked.payload), frames, max_depth)
        if not frames and isinstance(walked.payload, bytes):
            capture._built = (walked.payload, max_depth, tree)
    for record in records.values():
        record.source = "ax" if record.frame_id in fallback else "dom"
    if tree.capture_truncated:
        notes.append(f"the page has more than {max_nodes} nodes: the rest is not shown")
    timings = {"capture": walk_ms, "frame_list": list_ms, "frame_captures": frame_ms, "parse": parse_ms}
    if self_check_ms:
        timings["self_check"] = self_check_ms  # a pass that also read whole, to compare
    roots = tree.roots
    title = tree.node(roots[0]).name if roots else None
    return Capture(tree, records, errors, notes, timings, document=head.document, title=title, reused_rows=reused)


async def frames_to_pass(
    capture: InPageCapture,
    records: dict[str, FrameRecord],
    passes: dict[str, _Walked],
    errors: list[str],
    timeout: float,
) -> AsyncIterator[tuple[FrameRecord, _Walked, int]]:
    """The frames a pass of their own reads (their parent's pass could not: another origin),
    parents first, each with its parent's pass and its ``<iframe>``'s id there. The caller puts
    each frame's pass in ``passes`` (by frame id) before asking for the next: its children are
    found through it (the list is capped already: :func:`~pagelens.browser.frames.list_frames`)."""
    children = [r for r in records.values() if r.parent_id is not None]
    # Parents come before children (pre-order listing).
    for record in children:
        parent = passes.get(record.parent_id or "")
        if parent is None or not parent.head.unread:
            continue  # read in its parent's pass (same origin), or under a frame not read
        try:
            owner_id = await capture.owner_id(parent, record, timeout)
        except Exception as e:  # noqa: BLE001 (detached meanwhile: said, the rest read)
            errors.append(f"frame {record.url or record.frame_id}: {type(e).__name__}: {e}")
            continue
        if owner_id is None or owner_id not in parent.head.unread:
            continue  # hidden (no node), or read in the parent's pass
        yield record, parent, owner_id


async def _in_world(
    capture: InPageCapture, record: FrameRecord, expression: str, timeout: float, by_value: bool, awaits: bool = False
) -> dict[str, Any]:
    """:meth:`InPageCapture.evaluate` in the world of a frame record."""
    return await capture.evaluate(record.session, record.frame_id, expression, timeout, by_value, awaits)


async def world_document(capture: InPageCapture, session: CDPSession, frame_id: str, timeout: float) -> float | None:
    """Which document a frame shows now, read in pagelens' world (a page that redefines the
    getter answers only its own scripts): its ``performance.timeOrigin``, new with every
    document (a reload, a link followed, a redirect) and kept through same-document navigations
    (hash, history API); None when the frame cannot answer (closing, between documents)."""
    try:
        result = await capture.evaluate(session, frame_id, "performance.timeOrigin", timeout, by_value=True)
    except Exception:  # noqa: BLE001 (a closing or busy page: nothing to compare)
        return None
    value = result.get("value")
    return float(value) if isinstance(value, (int, float)) else None


async def registry_element(
    capture: InPageCapture, record: FrameRecord, element_id: int, timeout: float
) -> tuple[int, str | None] | None:
    """(backendNodeId, the CDP frame id of its document) of the live node a capture id names
    in a frame's registry, or None when it is gone."""
    expression = f"typeof __pagelens === 'object' ? __pagelens.lookup({int(element_id)}) : null"
    object_id = (await _in_world(capture, record, expression, timeout, by_value=False)).get("objectId")
    if object_id is None:
        return None
    try:
        described = await cdp(record.session, "DOM.describeNode", {"objectId": object_id}, timeout)
        owner = await cdp(
            record.session,
            "Runtime.callFunctionOn",
            {
                "objectId": object_id,
                "functionDeclaration": "function() { const d = this.ownerDocument; "
                "return d && d.defaultView && d !== document ? d.defaultView.frameElement : null; }",
            },
            timeout,
        )
        frame_id = None
        owner_object = owner.get("result", {}).get("objectId")
        if owner_object is not None:
            try:
                frame = await cdp(record.session, "DOM.describeNode", {"objectId": owner_object}, timeout)
                frame_id = frame["node"].get("frameId")
            finally:
                await cdp(record.session, "Runtime.releaseObject", {"objectId": owner_object}, timeout)
    finally:
        await cdp(record.session, "Runtime.releaseObject", {"objectId": object_id}, timeout)
    return int(described["node"]["backendNodeId"]), frame_id or record.frame_id


def _origin_literal(document: float | None) -> str:
    """A document's time origin as the JavaScript the world checks it with (``null``: any)."""
    return "null" if document is None or not math.isfinite(document) else repr(float(document))


async def registry_point(
    capture: InPageCapture, record: FrameRecord, element_id: int, document: float | None, settle: bool, timeout: float
) -> tuple[float, float, Box] | str:
    """Where a click on a registry id of the frame lands (x, y in the frame's viewport, and the
    element's box), or the word that says why it cannot land there now (see ``pointAt`` in
    capture.js); ``document``: the observed document's time origin, None to take any."""
    origin = _origin_literal(document)
    expression = (
        "typeof __pagelens === 'object' ? "
        f"__pagelens.pointAt({int(element_id)}, {origin}, {'true' if settle else 'false'}) : 'gone'"
    )
    value = (await _in_world(capture, record, expression, timeout, by_value=True, awaits=True)).get("value")
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or len(value) != 6 or not all(isinstance(v, (int, float)) for v in value):
        return "gone"
    x, y, bx, by, w, h = (float(v) for v in value)
    return x, y, (bx, by, w, h)


async def registry_field(
    capture: InPageCapture, record: FrameRecord, element_id: int, document: float | None, timeout: float
) -> Box | str:
    """A text field of the frame made ready for typed text (in view, its text selected, focused:
    see ``fieldAt`` in capture.js), and its box; or the word that says why it is not one now.
    ``document``: the observed document's time origin, None to take any."""
    origin = _origin_literal(document)
    expression = f"typeof __pagelens === 'object' ? __pagelens.fieldAt({int(element_id)}, {origin}) : 'gone'"
    value = (await _in_world(capture, record, expression, timeout, by_value=True)).get("value")
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or len(value) != 4 or not all(isinstance(v, (int, float)) for v in value):
        return "gone"
    x, y, w, h = (float(v) for v in value)
    return x, y, w, h


async def registry_content_box(capture: InPageCapture, record: FrameRecord, limit: int, timeout: float) -> Box | None:
    """The part of the viewport that holds the frame's content (x, y, width, height), from
    pagelens' world; None when the page has none in view or more than ``limit`` nodes."""
    expression = f"typeof __pagelens === 'object' ? __pagelens.contentBox({int(limit)}) : null"
    value = (await _in_world(capture, record, expression, timeout, by_value=True)).get("value")
    if not isinstance(value, list) or len(value) != 4 or not all(isinstance(v, (int, float)) for v in value):
        return None
    x, y, w, h = (float(v) for v in value)
    return (x, y, w, h) if w > 0 and h > 0 else None


async def registry_focus(capture: InPageCapture, record: FrameRecord, timeout: float) -> str | None:
    """Where typed keys go now in the frame, read in pagelens' world (see ``focusKind`` in
    capture.js): "text", "control", "nowhere" or "element" (the capture installed first in a
    document none has read); None when the frame cannot tell (its document going away)."""
    value = (await capture.call(record.session, record.frame_id, "__pagelens.focusKind()", timeout)).get("value")
    return value if value in ("text", "control", "nowhere", "element") else None


async def registry_boxes(
    capture: InPageCapture, record: FrameRecord, element_ids: list[int], timeout: float
) -> list[tuple[int, float, float, float, float]]:
    """(id, x, y, width, height) in the viewport of the ids whose node is in the frame's own
    document and has a box now: one call for all of them."""
    if not element_ids:
        return []
    expression = f"typeof __pagelens === 'object' ? __pagelens.boxes({json.dumps(element_ids)}) : []"
    value = (await _in_world(capture, record, expression, timeout, by_value=True)).get("value")
    if not isinstance(value, list):
        return []
    return [(int(b[0]), float(b[1]), float(b[2]), float(b[3]), float(b[4])) for b in value if len(b) == 5]


async def registry_adopt(
    capture: InPageCapture, record: FrameRecord, pairs: list[tuple[int, int]], timeout: float
) -> bool:
    """Names the frame's nodes by the ids they had in the document this one replaced as it was
    (see ``adopt`` in capture.js): each (id now, id before); all or none, True when done."""
    if not pairs:
        return True
    expression = f"typeof __pagelens === 'object' ? __pagelens.adopt({json.dumps(pairs)}) : false"
    return (await _in_world(capture, record, expression, timeout, by_value=True)).get("value") is True
