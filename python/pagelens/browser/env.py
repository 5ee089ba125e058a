"""The live browser environment: ``reset(url)``, ``observe()``, ``step(action)``."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from playwright.async_api import (
    Browser,
    BrowserContext,
    CDPSession,
    Dialog,
    ElementHandle,
    Page,
)
from playwright.async_api import Error as PlaywrightError

from pagelens import settle
from pagelens._core import AXTree, Observation, draw_ids, escape_page_text
from pagelens.actions import ACTION_SPACES, Action, ActionError, NavigationRefused, internal_outcome, parse_action
from pagelens.browser._util import quietly
from pagelens.browser.allowlist import HostAllowList
from pagelens.browser.capture import (
    CaptureCheckFailed,
    InPageCapture,
    capture_page,
    registry_adopt,
    world_document,
)
from pagelens.browser.config import BrowserConfig
from pagelens.browser.devtools import DevToolsSocket
from pagelens.browser.execute import Acted, Executor, action_failure, goto, picture_region
from pagelens.browser.frames import Capture, FrameSessions, fetch_tree
from pagelens.browser.guard import Policy, Refusal
from pagelens.browser.html import capture_html
from pagelens.browser.pagetree import INLINE_RENDER_NODES
from pagelens.browser.pool import BrowserPool, SharedBrowser
from pagelens.browser.records import HtmlObservation, PageObservation, StepResult, Tab
from pagelens.browser.resolve import ElementResolver, ids_read_alike, release
from pagelens.browser.scripts import ScriptWatchdog
from pagelens.browser.tabs import ActiveTab, TabActivity
from pagelens.errors import ArgumentTypeError, PagelensError

# Resolves after the next rendering update (or 100 ms, for a tab that does not render).
# Resolves once the document has loaded and rendered once more (rAF does not run in hidden
# tabs, hence the 100 ms fallback; a load that never comes is given up after 5 s).
_LOADED_NEXT_FRAME = """new Promise(done => {
  const frame = () => { requestAnimationFrame(() => done()); setTimeout(done, 100); };
  if (document.readyState === "complete") frame();
  else { addEventListener("load", frame, { once: true }); setTimeout(frame, 5000); }
})"""

# How long closing a context is waited for before Chromium is asked directly (see _close_context).
CONTEXT_CLOSE_S = 20.0
# How long making a context and its first tab is waited for: a browser that takes longer does
# not answer, and is set aside as a dead one is (see _opened).
CONTEXT_OPEN_S = 60.0

T = TypeVar("T")


def _png_width(png: bytes) -> int:
    """A PNG's width in pixels (its IHDR chunk), 0 when it is not one."""
    return int.from_bytes(png[16:20], "big") if png[:8] == b"\x89PNG\r\n\x1a\n" else 0


class BrowserStateError(PagelensError, RuntimeError):
    """A call the environment's state does not allow yet (observing before ``reset``) or any
    more (after ``close``)."""


class PageCrashed(BrowserStateError):
    """The tab's renderer died (a page can do this: a DOM thousands of levels deep crashes
    Chromium's layout); nothing more can be read from it, nor done in it."""


def _left_out(frame_errors: list[str]) -> str:
    """Lines after the tree saying which frames it lacks (a frame that failed, detached or
    timed out, or frames over the cap): the agent knows part of the page is not shown."""
    if not frame_errors:
        return ""
    shown = [f"[not shown: {escape_page_text(error[:200])}]" for error in frame_errors[:3]]
    if len(frame_errors) > 3:
        shown.append(f"[not shown: {len(frame_errors) - 3} more frames]")
    return "\n" + "\n".join(shown)


class AsyncBrowserEnv:
    """A Playwright-driven Chromium with AX-tree observations and element-level actions.

    Use as ``async with AsyncBrowserEnv(config) as env: obs = await env.reset(url)``.
    """

    def __init__(self, config: BrowserConfig | None = None, *, pool: BrowserPool | None = None, **overrides: Any):
        config = config or BrowserConfig()
        for key in overrides:
            if not hasattr(config, key):
                raise ArgumentTypeError(f"unknown BrowserConfig field {key!r}")
        # A copy with the overrides, checked as a new config is (an unknown reader is refused).
        self.config = dataclasses.replace(config, **overrides) if overrides else config
        config = self.config
        # The browser comes from a pool: a shared one (its browsers hold many contexts), or one
        # of this environment's own, of one browser, closed with it.
        self._own_pool = pool is None
        self._pool = pool if pool is not None else BrowserPool(config.launch, contexts_per_browser=1, ready=0)
        self._shared: SharedBrowser | None = None
        self._browser: Browser | None = None
        self.pool_wait_s = 0.0  # how long its starts waited for a browser, in all
        # The context it holds now and its active tab (``_context``, ``_page``).
        self._active = ActiveTab()
        self._sessions: dict[Page, FrameSessions] = {}
        # pagelens' own capture (its isolated world and hook), and the last observation's ids.
        self._capture = InPageCapture()
        self._resolver = ElementResolver(config, self._capture)
        self._dialogs: list[str] = []
        # Dialogs held for the caller to answer (config.hold_dialogs), oldest first; set when
        # one comes, so that a caller can race an action against it.
        self.pending_dialogs: list[Dialog] = []
        self.dialog_opened = asyncio.Event()
        self._refused: list[Refusal] = []
        # The allow-list, held by Chromium for every request and redirect hop: this context's
        # terms, given to the browser's guard (see guard.py).
        self._policy = Policy(self._refused_navigation, owns_frame=self._owns_frame)
        # What each tab is doing (navigations, commits, requests in flight, a crash): the
        # settle after an action and the calls raced against a crash read it (see tabs.py).
        self._activity: dict[Page, TabActivity] = {}
        # Set whenever Playwright announces a page; with the context's id in Chromium, tells
        # a step that every tab its action opened is adopted (see _adopt_opened_pages).
        self._page_announced = asyncio.Event()
        # Page scripts that hold the active tab past the limit are stopped while a call runs
        # (see scripts.py), and the next observation says so.
        self._scripts = ScriptWatchdog(config, self._active, self._sessions, self._activity)
        # Per tab: the document, address and tree of its last observation (new-element marks,
        # and ids kept by a document that replaced that one as it was).
        self._observed: dict[Page, tuple[float | None, str, AXTree]] = {}
        # Per tab: its last reading's text, and the tree, marks and settings it was made of.
        self._rendered: dict[Page, tuple[AXTree, AXTree | None, tuple[object, ...], Observation]] = {}
        self._context_id: str | None = None
        self._browser_cdp: CDPSession | None = None
        self.allow: HostAllowList | None = None
        # Called with every page of every context as it is made, before it loads anything (a
        # front's console and request logs).
        self.page_watchers: list[Callable[[Page], None]] = []
        self.start_url: str | None = None
        self._executor = Executor(self, self._resolver, config)

    @property
    def _context(self) -> BrowserContext | None:
        return self._active.context

    @_context.setter
    def _context(self, context: BrowserContext | None) -> None:
        self._active.context = context

    @property
    def _page(self) -> Page | None:
        return self._active.page

    @_page.setter
    def _page(self, page: Page | None) -> None:
        self._active.page = page

    # -- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> AsyncBrowserEnv:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        """A browser leased from the pool (again, when the one leased died)."""
        shared = self._shared
        if shared is not None and not shared.lost.is_set():
            return
        if shared is not None:  # died: its context went with it
            await self._give_back()
        self._shared, waited = await self._pool.lease()
        self.pool_wait_s += waited
        self._browser, self._browser_cdp = self._shared.browser, self._shared.cdp

    async def _close_context(self) -> None:
        """This environment's context closed, in bounded time. Playwright's close waits for the
        driver's word that the context is gone, with no limit: once in CI it waited for minutes,
        the context still in the browser and the browser answering other calls, and the suite
        waited with it. Past :data:`CONTEXT_CLOSE_S` Chromium is asked directly (its own answer
        is bounded too); either way the environment goes on, at worst with the context left in
        its browser until the browser closes."""
        context, self._context = self._context, None
        if context is None:
            return
        try:
            await asyncio.wait_for(context.close(), CONTEXT_CLOSE_S)
        except asyncio.TimeoutError:
            if self._browser_cdp is not None and self._context_id is not None:
                dispose = self._browser_cdp.send("Target.disposeBrowserContext", {"browserContextId": self._context_id})
                await quietly(asyncio.wait_for(dispose, CONTEXT_CLOSE_S))
        except Exception:  # noqa: BLE001 (closed already, or its browser gone: nothing to close)
            pass

    async def _opened(self, call: Awaitable[T], what: str) -> T:
        """``call`` (making the context, its first tab), in bounded time. Playwright waits for
        them with no limit; a browser that does not answer within :data:`CONTEXT_OPEN_S` is
        set aside as a dead one is (its other contexts told so, a new browser for the next
        lease) and this reset fails saying so, rather than waiting for ever."""
        try:
            return await asyncio.wait_for(call, CONTEXT_OPEN_S)
        except asyncio.TimeoutError:
            if self._shared is not None:
                self._pool.discard(self._shared)
            raise BrowserStateError(
                f"the browser did not {what} within {CONTEXT_OPEN_S:g} s: it was set aside, and the next "
                "reset starts another"
            ) from None

    async def _raw_socket(self) -> DevToolsSocket | None:
        """The browser's raw DevTools socket for large answers, once connected; None without one."""
        return await self._shared.raw_socket() if self._shared is not None else None

    async def _give_back(self) -> None:
        """This environment's context closed, its policy gone from the guard, the browser given
        back to the pool."""
        shared, self._shared = self._shared, None
        await self._close_context()
        if shared is not None:
            shared.guard.remove(self._policy)
            self._pool.release(shared)
        self._browser = self._browser_cdp = None
        self._context_id = None
        self._page = None
        self._sessions.clear()

    async def close(self) -> None:
        await self._give_back()
        if self._own_pool:
            await self._pool.close()

    async def reset(self, url: str, observe: bool = True) -> PageObservation | None:
        """A fresh browser context (no cookies but ``storage_state``'s) at ``url``."""
        await self.start()
        assert self._browser is not None and self._shared is not None
        guard = self._shared.guard
        await self._close_context()
        guard.remove(self._policy)
        self._context_id = None
        self._sessions.clear()
        self._activity.clear()
        self._observed.clear()
        self._rendered.clear()
        self._resolver.forget()
        self._capture.forget()
        self._dialogs = []
        self.pending_dialogs = []
        self.dialog_opened.clear()
        self._refused = []
        self.start_url = url
        hosts = self.config.allowed_hosts
        self.allow = HostAllowList(hosts) if hosts else HostAllowList.for_start_url(url)
        if not self.allow.allows(url):
            raise NavigationRefused(f"the start URL {url} is not on the allow-list {list(self.allow.hosts)}")
        self._policy = Policy(
            self._refused_navigation, self.allow, self.config.block_other_hosts, owns_frame=self._owns_frame
        )
        guard.add(self._policy)  # before the context exists: its requests are held to it from the first
        launch = self.config.launch
        har: dict[str, Any] = (
            {"record_har_path": self.config.har_path, "record_har_content": "embed"} if self.config.har_path else {}
        )
        self._context = context = await self._opened(
            self._browser.new_context(
                viewport={"width": launch.viewport[0], "height": launch.viewport[1]},
                locale=launch.locale,
                timezone_id=launch.timezone,
                user_agent=launch.user_agent,
                storage_state=self.config.storage_state,  # type: ignore[arg-type]  # a dict is a StorageState
                **har,
            ),
            "make a browser context",
        )
        context.set_default_timeout(self.config.action_timeout_ms)
        context.set_default_navigation_timeout(self.config.navigation_timeout_ms)
        context.on("page", self._adopt_page)
        # Before any page script: the hook that tells the capture which elements scripts made
        # clickable (the only piece of pagelens in the page's own world).
        await self._opened(context.add_init_script(self._capture.hook_script()), "take the page hook")
        page = await self._opened(context.new_page(), "open a tab")
        self._page = page
        # The page's own session, opened before the page has any script (one attached while a
        # script holds the tab is itself held, even the stop the script watchdog sends), tells
        # the context's DevTools id with the page's target.
        sessions = self.sessions_for(page)
        await sessions.main_record(self.config.navigation_timeout_ms / 1e3)
        self._context_id = sessions.context_id
        self._policy.context_id = self._context_id
        async with self._scripts.watch():
            try:
                await self._unless_crashed(page, goto(page, url, self.config.navigation_timeout_ms))
            except ActionError:
                if self._refused:  # a redirect off the list: say that, not "cancelled"
                    raise NavigationRefused(self._refused[0].message(self.allow)) from None
                raise
            await self._settle()
        return await self.observe() if observe else None

    # -- safety ---------------------------------------------------------------------------

    def _refused_navigation(self, refusal: Refusal) -> None:
        self._refused.append(refusal)

    async def _owns_frame(self, frame_id: str) -> bool:
        """Whether a tab of this context holds the frame ``frame_id`` (asked of the browser
        process, which answers for a tab whatever its page runs)."""
        context = self._context
        if context is None:
            return False
        for page in list(context.pages):
            with contextlib.suppress(Exception):  # not in this tab (or the tab went away)
                session = await self.sessions_for(page).main()
                await session.send("Storage.getStorageKeyForFrame", {"frameId": frame_id})
                return True
        return False

    def _adopt_page(self, page: Page) -> None:
        # A popup or a new tab becomes the active tab, as in WebArena.
        self._page_announced.set()
        for watch in self.page_watchers:  # before the page loads anything: its first messages too
            watch(page)
        page.on("dialog", self._on_dialog)
        self._activity_of(page)
        if self.config.script_timeout_s > 0:
            # The session that can stop a script of the tab, opened before the tab runs one if
            # it can be (see scripts.py).
            self.sessions_for(page).open_main()

        def closed(_: Page) -> None:
            self._observed.pop(page, None)
            self._rendered.pop(page, None)

        page.on("close", closed)
        self._page = page

    async def _on_dialog(self, dialog: Dialog) -> None:
        # beforeunload is accepted so that the navigation the agent asked for goes ahead.
        if dialog.type == "beforeunload":
            await quietly(dialog.accept())
            return
        if self.config.hold_dialogs:
            self.pending_dialogs.append(dialog)
            self.dialog_opened.set()
            return
        message = f"{dialog.type}: {dialog.message}".strip()
        self._dialogs.append(message)
        await quietly(dialog.dismiss())

    async def answer_dialog(self, accept: bool, prompt_text: str | None = None) -> str:
        """Answers the oldest held dialog (accept, with ``prompt_text`` for a prompt, or
        dismiss) and says which it was; an :class:`ActionError` when none is held."""
        if not self.pending_dialogs:
            raise ActionError("no dialog is open")
        dialog = self.pending_dialogs.pop(0)
        if not self.pending_dialogs:
            self.dialog_opened.clear()
        try:
            if accept:
                await dialog.accept(prompt_text or "") if dialog.type == "prompt" else await dialog.accept()
            else:
                await dialog.dismiss()
        except PlaywrightError as e:
            raise action_failure("answer the dialog", e) from None
        return f"{dialog.type} {escape_page_text(repr(dialog.message))}"

    # -- observation ----------------------------------------------------------------------

    @property
    def page(self) -> Page:
        if self._page is None:
            raise BrowserStateError("no page: call reset(url) first")
        return self._page

    @property
    def context(self) -> BrowserContext:
        if self._context is None:
            raise BrowserStateError("no browser context: call reset(url) first")
        return self._context

    @property
    def alive(self) -> bool:
        """Whether the browser still runs and the active tab's renderer has not crashed."""
        if self._browser is None or not self._browser.is_connected():
            return False
        page = self._page
        activity = self._activity.get(page) if page is not None else None
        return activity is None or not activity.crashed.done()

    @property
    def browser_lost(self) -> bool:
        """Whether the browser this environment leased died (crashed, killed) under it: its
        pages are gone; the next :meth:`reset` leases another."""
        return self._shared is not None and self._shared.lost.is_set()

    async def browser_died(self) -> bool:
        """Whether the leased browser is gone, asking it when that is not known yet (a call
        that failed may be the first to meet its death)."""
        return self._shared is not None and await self._shared.died()

    @property
    def last_observation(self) -> PageObservation | None:
        return self._resolver.last_observation

    def sessions_for(self, page: Page) -> FrameSessions:
        if page not in self._sessions:
            self._sessions[page] = FrameSessions(page)
        return self._sessions[page]

    def _activity_of(self, page: Page) -> TabActivity:
        """The tab's activity, kept from its events from the first time it is asked for (as the
        tab is adopted)."""
        if page not in self._activity:
            self._activity[page] = TabActivity(page)
        return self._activity[page]

    async def _unless_crashed(self, page: Page, awaitable: Awaitable[T]) -> T:
        """``awaitable``'s result, or :class:`PageCrashed` as soon as the tab's renderer dies
        (also when the call failed because of the crash)."""
        # Kept from here if the tab's adoption has not run yet (Playwright may announce a new
        # tab after `new_page()` returns): else a crash in the first navigation was not raced,
        # and the step waited out the navigation's timeout.
        crashed = self._activity_of(page).crashed
        work = asyncio.ensure_future(awaitable)
        if not crashed.done():
            racing: set[asyncio.Future[Any]] = {work, crashed}
            try:
                await asyncio.wait(racing, return_when=asyncio.FIRST_COMPLETED)
            except BaseException:  # the caller was cancelled: the capture goes with it
                work.cancel()
                raise
        if crashed.done() and not work.done():
            work.cancel()
            raise self._crash(page)
        try:
            return await work
        except Exception:
            if crashed.done():
                raise self._crash(page) from None
            raise

    def _active_open_page(self) -> Page | None:
        """The active tab; when it closed (by itself, or a tab pagelens closed), the last one
        still open becomes active."""
        page = self._page
        if page is not None and page.is_closed() and self._context is not None:
            pages = self._context.pages
            if pages:
                self.set_active_page(pages[-1])
        return self._page

    @staticmethod
    def _crash(page: Page) -> PageCrashed:
        return PageCrashed(
            f"the tab crashed: Chromium's renderer for {page.url} died (a page can do this, e.g. with a DOM "
            "thousands of levels deep); nothing more can be read from it or done in it until a page is opened again"
        )

    async def observe(self) -> PageObservation:
        """The active tab's AX tree (all frames) rendered in the configured mode."""
        self._active_open_page()
        async with self._scripts.watch():
            return await self._observe()

    async def _observe(self) -> PageObservation:
        page = self.page
        cfg = self.config
        t0 = time.perf_counter()
        # The tabs' titles alongside the tree; pagelens' capture reads the active one's itself.
        tabs_task = asyncio.ensure_future(self._tabs(active_title="" if cfg.source == "dom" else None))
        # Which document is read: pagelens' capture says so itself; Chromium's tree is asked
        # alongside.
        document_task = asyncio.ensure_future(self._document_of(page)) if cfg.source == "ax" else None
        try:
            capture = await self._unless_crashed(page, self._capture_tree(page))
        except BaseException:
            tabs_task.cancel()
            if document_task is not None:
                document_task.cancel()
            raise
        tree, frames = capture.tree, capture.frames
        document: float | None
        if capture.document is not None:
            if document_task is not None:
                document_task.cancel()
            document = capture.document
        else:
            document = await (document_task or self._document_of(page))
        if cfg.source == "dom" and document is not None and await self._keep_ids(page, document, capture):
            capture = await self._unless_crashed(page, self._capture_tree(page))  # read with the ids kept
            tree, frames = capture.tree, capture.frames
            document = capture.document if capture.document is not None else document
        seen_from = self._seen_from(page, document, tree) if cfg.mark_new else None
        t1 = time.perf_counter()
        rendered = await self._render(page, tree, seen_from)
        t2 = time.perf_counter()
        tabs = await tabs_task
        title = capture.title
        if title is None:  # read from Chromium's tree: the title as the tab gives it
            title = next((t.title for t in tabs if t.active), "") if cfg.source == "ax" else await self._title(page)
        tabs = [dataclasses.replace(t, title=title) if t.active else t for t in tabs]
        screenshot = None
        if cfg.screenshots:
            screenshot = await page.screenshot(timeout=cfg.action_timeout_ms)
        dialogs, self._dialogs = self._dialogs, []
        obs = PageObservation(
            url=page.url,
            title=title,
            tabs=tabs,
            text=rendered.text + _left_out(capture.frame_errors),
            mode=cfg.mode,
            tree=tree,
            rendered=rendered,
            dialogs=dialogs,
            frame_count=len({r.frame_id for r in frames.values()}),
            frame_errors=capture.frame_errors,
            notes=[*capture.notes, *self._scripts.take_notes()],
            timings_ms={
                "ax_tree": (t1 - t0) * 1e3,  # the whole capture: the stages below overlap in it
                **capture.timings_ms,
                "render": (t2 - t1) * 1e3,
                "total": (time.perf_counter() - t0) * 1e3,
            },
            screenshot=screenshot,
            document=document,
            reused_rows=capture.reused_rows,
        )
        self._resolver.observed(obs, frames, document)
        if screenshot is not None:  # what of the picture is the page's content (the registry's boxes)
            size = page.viewport_size
            if size:
                obs.content_box = picture_region(
                    await self._resolver.content_box(), None, (float(size["width"]), float(size["height"]))
                )
        return obs

    async def _main_frame(self, page: Page) -> tuple[CDPSession, str]:
        """The CDP session of ``page`` and its main frame's id (the page target's)."""
        main = await self.sessions_for(page).main_record(self.config.cdp_timeout_s)
        return main.session, main.frame_id

    async def _document_of(self, page: Page) -> float | None:
        """The document ``page`` shows now (see :func:`world_document`)."""
        try:
            session, frame_id = await self._main_frame(page)
        except (PlaywrightError, asyncio.TimeoutError, KeyError):
            return None
        return await world_document(self._capture, session, frame_id, self.config.cdp_timeout_s)

    async def _capture_tree(self, page: Page) -> Capture:
        """The page's tree from the configured source; a page pagelens' own capture cannot
        read (an error, a closed shadow root it cannot see into) is read from Chromium's
        accessibility tree, and the observation notes why."""
        cfg = self.config
        sessions = self.sessions_for(page)
        reason = None
        if cfg.source == "dom":
            try:
                capture = await capture_page(
                    self._capture,
                    sessions,
                    include_frames=cfg.include_frames,
                    timeout=cfg.cdp_timeout_s,
                    devtools=await self._raw_socket(),
                    max_frames=cfg.max_frames,
                    clickables=cfg.clickables,
                    # Links' addresses only where the text shows them.
                    urls=cfg.mode == "webarena" or cfg.show_urls,
                    incremental=cfg.incremental,
                    check=cfg.check_incremental,
                )
            except CaptureCheckFailed:
                raise
            except (PagelensError, PlaywrightError, asyncio.TimeoutError, ValueError) as e:
                reason = f"pagelens' capture failed ({type(e).__name__}: {str(e)[:200]})"
            else:
                if not capture.tree.closed_shadow_hosts:
                    return capture
                reason = f"{len(capture.tree.closed_shadow_hosts)} closed shadow roots a page script cannot read"
            # The settle after an action waited for no rendering update (the capture needs none).
            await self._next_rendering_update(page)
        capture = await fetch_tree(
            sessions,
            include_frames=cfg.include_frames,
            timeout=cfg.cdp_timeout_s,
            devtools=await self._raw_socket(),
            clickables=cfg.clickables,
            snapshot_timeout=cfg.snapshot_timeout_s,
            max_frames=cfg.max_frames,
            # Standing in for the capture: Chromium's accessibility is not left on to lengthen
            # the page's every rendering frame (and so every settle) after it.
            keep_accessibility=cfg.source == "ax",
        )
        if reason is not None:
            capture.notes.append(f"read from Chromium's accessibility tree: {reason}")
        return capture

    def _seen_from(self, page: Page, document: float | None, tree: AXTree) -> AXTree | None:
        """The tree of this tab's previous observation when it was of the same document, whose
        shown ids are not marked new (None: the first observation of a document marks nothing),
        and this tree kept for the next."""
        previous = self._observed.get(page)
        self._observed[page] = (document, page.url, tree)
        if previous is None or document is None or previous[0] != document:
            return None
        return previous[2]

    async def _render(self, page: Page, tree: AXTree, seen_from: AXTree | None) -> Observation:
        """``tree`` as the agent reads it, the ids of ``seen_from`` unmarked. Rendering is a
        function of the tree, the settings and those ids alone, and a tree is never changed: a
        capture that answers with the tab's last tree (a page that did not change) under the
        same settings and marks gets that reading's text, not the same text made again (~7 ms
        of a settled reading of 15,000 rows)."""
        cfg = self.config
        settings = (cfg.mode, cfg.max_tokens, cfg.tokenizer, cfg.show_urls)
        last = self._rendered.get(page)
        if last is not None and last[0] is tree and last[1] is seen_from and last[2] == settings:
            return last[3]
        # What could be shown, not every node: a menu kept hidden in the page (an ignored node)
        # is new to the agent when a click shows it.
        seen = seen_from.rendered_ids() if seen_from is not None else None
        render = functools.partial(
            tree.render,
            cfg.mode,
            max_tokens=cfg.max_tokens,
            tokenizer=cfg.tokenizer,
            show_urls=cfg.show_urls,
            seen_ids=seen,
        )
        rendered = render() if len(tree) <= INLINE_RENDER_NODES else await asyncio.to_thread(render)
        self._rendered[page] = (tree, seen_from, settings, rendered)
        return rendered

    async def _keep_ids(self, page: Page, document: float, capture: Capture) -> bool:
        """Whether a new document that reads exactly as the tab's last observed one, at the
        same address, now names its elements by that one's ids (a failed navigation that went
        back to it, a reload that gave the same page): an id the agent read names the element
        in the same place with the same role and name, and the ids the new document had are
        never shown. Pagelens' own capture only (its registries give the ids)."""
        previous = self._observed.get(page)
        if previous is None or previous[0] in (None, document) or previous[1] != page.url:
            return False
        pairs = ids_read_alike(previous[2], capture.tree, self.config.mode)
        if not pairs:
            return False
        by_frame: dict[str, list[tuple[int, int]]] = {}
        for now, was in pairs:
            if now.frame_id != was.frame_id and (now.frame_id is None or was.frame_id is None):
                return False
            if now.backend_dom_node_id != now.id or was.backend_dom_node_id != was.id:
                return False  # ids that are not a registry's (read from Chromium's tree)
            if now.id != was.id:
                by_frame.setdefault(now.frame_id or "", []).append((now.id, was.id))
        records = [(capture.frames.get(f), moves) for f, moves in by_frame.items()]
        if not by_frame or any(r is None or r.source != "dom" for r, _ in records):
            return False
        kept = False
        for record, moves in records:
            assert record is not None
            try:
                kept |= await registry_adopt(self._capture, record, moves, self.config.cdp_timeout_s)
            except (PlaywrightError, asyncio.TimeoutError, KeyError):
                pass  # the document went away meanwhile: the next reading says what is there
        return kept

    async def ids_in_view(self) -> tuple[list[int], list[int]]:
        """The last observation's ids whose element (in the main frame, read by pagelens' own
        capture) starts in the viewport now (its top edge within it), and those that only reach
        into it (a container begun above); ([], []) when that cannot be told."""
        obs = self._resolver.last_observation
        viewport = self.page.viewport_size
        if obs is None or viewport is None:
            return [], []
        height, width = viewport["height"], viewport["width"]
        boxes = await self._resolver.boxes(limit=len(obs.ids))
        across = [(i, y) for i, x, y, w, h in boxes if y + h > 0 and y < height and x + w > 0 and x < width]
        return [i for i, y in across if y >= 0], [i for i, y in across if y < 0]

    async def screenshot(self, with_ids: bool = False) -> bytes:
        """A PNG of the active tab's viewport; ``with_ids`` outlines the last observation's
        elements (those of the main frame) and writes each one's id on it, on the picture's
        pixels (the page never holds any of it)."""
        page = self.page
        timeout = self.config.action_timeout_ms
        if not with_ids:
            return await page.screenshot(timeout=timeout)
        boxes = await self._resolver.boxes()
        image = await page.screenshot(timeout=timeout)
        # Drawn on the picture's pixels: nothing is put into the page, whose scripts could
        # read or rewrite an overlay (and keep it, to be read as page text later).
        viewport = page.viewport_size
        scale = _png_width(image) / viewport["width"] if viewport and viewport["width"] else 1.0
        return await asyncio.to_thread(draw_ids, image, boxes, scale)

    async def observe_html(self) -> HtmlObservation:
        """The active tab as HTML: every frame's document, read by pagelens' capture (or by
        DevTools where it cannot read the page whole, said in ``notes``), built into a
        :class:`pagelens.Dom`. Actions then name its ids."""
        async with self._scripts.watch():
            return await self._observe_html()

    async def _observe_html(self) -> HtmlObservation:
        page = self.page
        cfg = self.config
        t0 = time.perf_counter()
        tabs_task = asyncio.ensure_future(self._tabs())
        try:
            capture = await self._unless_crashed(
                page,
                capture_html(
                    self._capture,
                    self.sessions_for(page),
                    include_frames=cfg.include_frames,
                    timeout=cfg.cdp_timeout_s,
                    devtools=await self._raw_socket(),
                    max_frames=cfg.max_frames,
                ),
            )
        except BaseException:
            tabs_task.cancel()
            raise
        tabs = await tabs_task
        dialogs, self._dialogs = self._dialogs, []
        obs = HtmlObservation(
            url=page.url,
            title=next((t.title for t in tabs if t.active), ""),
            tabs=tabs,
            dom=capture.dom,
            targets=capture.targets,
            dialogs=dialogs,
            frame_count=len({r.frame_id for r in capture.frames.values()}),
            frame_errors=capture.frame_errors,
            notes=[*capture.notes, *self._scripts.take_notes()],
            timings_ms={
                "read": capture.read_ms,
                "parse": capture.parse_ms,
                "total": (time.perf_counter() - t0) * 1e3,
            },
        )
        self._resolver.observed(obs, capture.frames, capture.document)
        return obs

    async def _tabs(self, active_title: str | None = None) -> list[Tab]:
        """Every tab; ``active_title``: the active tab's title, when the caller reads it itself."""
        tabs = []
        for i, p in enumerate(self.context.pages):
            active = p is self._page
            title = active_title if active and active_title is not None else await self._title(p)
            tabs.append(Tab(i, title, p.url, active))
        return tabs

    async def _title(self, page: Page) -> str:
        try:
            return await asyncio.wait_for(page.title(), self.config.action_timeout_ms / 1e3)
        except Exception:  # a busy or closing tab has no title to give
            return ""

    # -- acting ---------------------------------------------------------------------------

    async def step(self, action: Action | str, observe: bool = True) -> StepResult:
        """Carry out one action. A failure is reported in the result, never raised, so that
        the agent can show it to the model; the observation is taken either way."""
        t0 = time.perf_counter()
        try:
            parsed = action if isinstance(action, Action) else parse_action(action, self._space())
        except ActionError as e:
            result = StepResult(action=Action("noop"), ok=False, error=str(e))
        else:
            self._refused = []
            result = StepResult(action=parsed, ok=True)
            internal = internal_outcome(parsed)  # the browser alone: no agent to change
            if internal is not None:
                result.ok, result.error = internal.ok, internal.error
                result.done, result.answer, result.note = internal.done, internal.answer, internal.note
            else:
                await self._carry_out(result, lambda: self._executor.run(parsed), str(parsed))
        return await self._finish(result, observe, t0)

    async def perform(
        self, description: str, operation: Callable[[], Awaitable[Any]], observe: bool = True
    ) -> StepResult:
        """Carries out ``operation`` (page work beyond the action space: a double click, a
        drag, files for a chooser) as :meth:`step` carries out an action: tabs it opened
        adopted, the page settled, a failure (named by ``description``) reported in the result,
        the page observed after."""
        t0 = time.perf_counter()
        result = StepResult(action=Action("noop"), ok=True)
        self._refused = []
        await self._carry_out(result, operation, description)
        return await self._finish(result, observe, t0)

    @contextlib.asynccontextmanager
    async def element(self, element_id: int) -> AsyncIterator[ElementHandle]:
        """The live element an id of the last observation names (an :class:`ActionError`
        says why there is none), released after use."""
        handle = await self._resolver.element(self.page, element_id)
        try:
            yield handle
        finally:
            await release(handle)

    async def _carry_out(self, result: StepResult, operation: Callable[[], Awaitable[Any]], description: str) -> None:
        try:
            async with self._scripts.watch():
                acted = await operation()
                if isinstance(acted, Acted):
                    result.target_box, result.picture, result.picture_box = acted.box, acted.picture, acted.picture_box
                await self._adopt_opened_pages()
                await self._settle()
        except (ActionError, PlaywrightError, asyncio.TimeoutError) as e:
            failure = action_failure(description, e)
            result.ok, result.error, result.error_kind = False, str(failure), failure.kind
        refused = await self._tab_refusals()
        if refused and self.allow is not None:
            result.ok, result.error = False, refused[0].message(self.allow)
            result.error_kind = NavigationRefused.kind

    async def _tab_refusals(self) -> list[Refusal]:
        """The refused navigations of tabs (a frame's, e.g. an ad's, leaves the action done: the
        frame stays empty). A tab's main frame has the tab's target id."""
        if not self._refused:
            return []
        tabs: set[str] = set()
        if self._browser_cdp is not None:
            with contextlib.suppress(Exception):
                targets = (await self._browser_cdp.send("Target.getTargets"))["targetInfos"]
                tabs = {t["targetId"] for t in targets if t["type"] == "page"}
        return [r for r in self._refused if r.frame_id is None or not tabs or r.frame_id in tabs]

    async def _finish(self, result: StepResult, observe: bool, t0: float) -> StepResult:
        page = self._active_open_page()
        if observe and page is not None and not page.is_closed():
            result.observation = await self.observe()
        result.elapsed_ms = (time.perf_counter() - t0) * 1e3
        return result

    async def _adopt_opened_pages(self) -> None:
        """Returns once Playwright has announced every tab Chromium has open in this context.
        An action's input is acknowledged after the page ran its handlers, so a tab the action
        opened (a `target=_blank` link, `window.open`) already exists in Chromium; Playwright's
        `page` event for it can come later, and the step must observe the new tab."""
        if self._browser is None or self._context is None or self._context_id is None:
            return
        if self._browser_cdp is None:
            self._browser_cdp = await self._browser.new_browser_cdp_session()
        deadline = time.monotonic() + self.config.action_timeout_ms / 1e3
        while time.monotonic() < deadline:
            self._page_announced.clear()  # before counting, so that no announcement is missed
            targets = (await self._browser_cdp.send("Target.getTargets"))["targetInfos"]
            opened = sum(1 for t in targets if t["type"] == "page" and t.get("browserContextId") == self._context_id)
            if len(self._context.pages) >= opened:
                return
            # A closing tab can stay listed a moment after Playwright dropped it: count again.
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._page_announced.wait(), 1.0)

    def _space(self) -> frozenset[str]:
        space = self.config.action_space
        return ACTION_SPACES[space] if isinstance(space, str) else space

    async def _settle(self) -> None:
        page = self._page
        if page is None or page.is_closed():
            return
        # A renderer that dies meanwhile ends the wait at once: the load of a crashed tab never
        # comes, and the wait for it was the navigation's whole timeout (60 s).
        await self._unless_crashed(page, self._settle_page(page))

    async def _settle_page(self, page: Page) -> None:
        timeout_ms = self.config.navigation_timeout_ms
        deadline = time.monotonic() + timeout_ms / 1e3
        await self._wait_loaded(page, timeout_ms)
        if self.config.settle_ms:
            await self._until_quiet(page, self.config.settle_ms)
        # A navigation the action started may not have committed (or even been requested: a
        # form submitted by Enter starts its request a little later). Wait for its document,
        # then for that document's load — and, for Chromium's tree, its next rendering update;
        # pagelens' capture reads the DOM itself and waits for no frame (~16 ms of every
        # action). If another document commits meanwhile, wait for that one too.
        activity = self._activity_of(page)
        pending = activity.navigations
        for _ in range(5):
            if pending and not page.is_closed():  # a closed page has none (see _adopt_page)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(pending.none.wait(), max(0.0, deadline - time.monotonic()))
            await self._wait_loaded(page, max(0.0, deadline - time.monotonic()) * 1e3)
            commits = activity.commits
            if self.config.source == "ax":
                await self._next_rendering_update(page)
            if page.is_closed() or (not pending and activity.commits == commits):
                break

    async def _until_quiet(self, page: Page, most_ms: float) -> None:
        """Returns once the page has been quiet for ``settle.QUIET_MS`` — no request of it in
        flight, no change to its DOM — or after ``most_ms`` (a page that polls or animates
        forever). A page quiet from the start costs one quiet window, not the whole wait; the
        DOM is watched from pagelens' own world (nothing the page patches is used)."""
        deadline = time.monotonic() + most_ms / 1e3
        quiet_ms = min(settle.QUIET_MS, most_ms)
        activity = self._activity_of(page)
        in_flight, idle = activity.in_flight, activity.idle
        while not page.is_closed():
            left_ms = (deadline - time.monotonic()) * 1e3
            if left_ms <= 0:
                return
            started = time.monotonic()
            try:
                session, frame_id = await self._main_frame(page)
                await self._capture.quiet_dom(session, frame_id, quiet_ms, left_ms, self.config.cdp_timeout_s)
            except (PlaywrightError, asyncio.TimeoutError, KeyError, ValueError):
                # The document went away meanwhile (a navigation): wait the window out here;
                # the caller waits for the new document.
                await asyncio.sleep(max(0.0, quiet_ms / 1e3 - (time.monotonic() - started)))
            if not in_flight:
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(idle.wait(), max(0.0, deadline - time.monotonic()))

    async def _next_rendering_update(self, page: Page) -> None:
        """Waits for the page's load and its next rendering update: Chromium builds a new
        document's accessibility tree then (asked before, getFullAXTree answers an empty root)."""
        await quietly(asyncio.wait_for(page.evaluate(_LOADED_NEXT_FRAME), self.config.action_timeout_ms / 1e3))

    @staticmethod
    async def _wait_loaded(page: Page, timeout_ms: float) -> None:
        try:
            await page.wait_for_load_state("load", timeout=timeout_ms)
        except Exception:
            pass  # a page that never finishes loading is still observed

    async def navigate(self, url: str, settle: bool = True) -> None:
        """Open ``url`` in the active tab, on the allow-list's terms (for agents returning to
        a page they were on, e.g. after pruning a plan); ``settle=False`` inside :meth:`perform`,
        which settles the page itself."""
        await self._executor.navigate(url)
        if settle:
            await self._settle()

    def set_allow_list(self, hosts: tuple[str, ...]) -> None:
        """From now on, navigations and requests are held to ``hosts`` (see HostAllowList)."""
        self.allow = HostAllowList(hosts)
        self._policy.allow = self.allow

    def set_active_page(self, page: Page) -> None:
        self._page = page
