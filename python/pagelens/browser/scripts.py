"""The watchdog over page scripts: while a call to the active tab lasts past a second, the tab
is asked for ``0`` once a second; a script that holds its main thread past the limit (an endless
loop, a handler that never returns) is stopped, or its tab closed when nothing can reach it, and
the next observation's notes say so. Every DevTools call to such a tab (a click's input, the
capture, a probe) waits behind the script: without this, a step waited out each call's own
timeout in turn and then failed, and so did every later one."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from playwright.async_api import Page

if TYPE_CHECKING:
    from pagelens.browser.config import BrowserConfig
    from pagelens.browser.frames import FrameSessions
    from pagelens.browser.tabs import ActiveTab, TabActivity

T = TypeVar("T")


async def done_within(task: asyncio.Future[Any], timeout: float) -> bool:
    """Whether ``task`` ends within ``timeout`` (left running if not; its failure is read).
    Unlike ``asyncio.wait_for``, nothing waits for a call that is not done to end."""
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if done and not task.cancelled():
        task.exception()  # read: a failed probe is an answer too (the document went away)
    return bool(done)


async def within(awaitable: Awaitable[T], timeout: float) -> tuple[bool, T | None]:
    """(whether it ended in time, its result; None when it failed or was not done); a call
    not done in time is cancelled and left (see :func:`done_within`)."""
    task = asyncio.ensure_future(awaitable)
    try:
        done = await done_within(task, timeout)
    finally:
        if not task.done():
            task.cancel()
    if not done or task.cancelled() or task.exception() is not None:
        return done, None
    return True, task.result()


class ScriptWatchdog:
    """Watches the active tab while a call runs (:meth:`watch`). It reads what the environment
    keeps — its configuration (the limit as it is when a watch starts), the active tab and its
    context (``active``: a held tab is closed only when another is open), each tab's CDP sessions
    (opened as the tab is adopted) and what it is doing (a tab whose document is still on its way
    is left alone) — and calls nothing of the environment's."""

    def __init__(
        self,
        config: BrowserConfig,
        active: ActiveTab,
        sessions: dict[Page, FrameSessions],
        activity: dict[Page, TabActivity],
    ) -> None:
        self._config = config  # the environment's own: its limit is read at each watch
        self._active = active
        self._sessions = sessions
        self._activity = activity
        self._notes: list[str] = []
        self._depth = 0  # how many calls the watch is under (the outermost runs it)

    def take_notes(self) -> list[str]:
        """What the watch did since it was last asked (each said once)."""
        notes, self._notes = self._notes, []
        return notes

    @contextlib.asynccontextmanager
    async def watch(self) -> AsyncIterator[None]:
        """While the body runs, a script holding the active tab past the limit is stopped."""
        limit = self._config.script_timeout_s
        if self._depth or limit <= 0 or self._active.page is None:
            yield
            return
        self._depth += 1
        watcher = asyncio.ensure_future(self._stop_held_scripts(limit))
        try:
            yield
        finally:
            self._depth -= 1
            watcher.cancel()
            await asyncio.wait([watcher])  # gone before the caller goes on; its end raises nothing

    async def _stop_held_scripts(self, limit: float) -> None:
        pause = min(1.0, limit)
        while True:
            await asyncio.sleep(pause)
            page = self._active.page  # the active tab: an action may have opened another
            sessions = self._sessions.get(page) if page is not None else None
            if page is None or sessions is None or page.is_closed():
                continue
            # Each wait below gives up without waiting for the call's own end: a Playwright call
            # to a held tab may not even end when cancelled.
            opened, session = await within(sessions.main(), limit)
            if not opened:
                # A tab a script held before pagelens could attach to it (a tab opened by the
                # page, looping as it loads): nothing can stop that script, nothing can be read
                # or done there; the tab is closed (by the browser: its renderer need not answer).
                await self._close_held_tab(page, limit)
                continue
            if session is None:
                continue  # closing
            t0 = time.monotonic()
            probe = asyncio.ensure_future(session.send("Runtime.evaluate", {"expression": "0"}))
            try:
                if await done_within(probe, limit):
                    pause = max(0.1, 1.0 - (time.monotonic() - t0))
                    continue
                activity = self._activity.get(page)
                if activity is not None and activity.navigations:
                    continue  # a document still on its way (a slow server), no script of the page
                # Chromium runs this one at once, between two instructions of the script; its
                # own answer may not come, the probe's then does.
                stop = asyncio.ensure_future(session.send("Runtime.terminateExecution"))
                stopped = await done_within(probe, 5)
                stop.cancel()
            finally:
                probe.cancel()
            if stopped:
                self._notes.append(
                    f"a script held the tab for more than {limit:g} s without letting the page respond "
                    f"(an endless loop?): pagelens stopped it ({page.url})"
                )
            else:
                await self._close_held_tab(page, limit)

    async def _close_held_tab(self, page: Page, limit: float) -> None:
        url = page.url
        context = self._active.context
        if context is None or len(context.pages) < 2:
            # The last tab is left (the run would have none): its calls end at their timeouts.
            note = f"a script holds the tab and pagelens cannot reach it to stop it ({url})"
            if note not in self._notes:
                self._notes.append(note)
            return
        # Said first: the caller's wait may end, and this watch with it, as soon as the tab goes.
        self._notes.append(
            f"a script held a tab for more than {limit:g} s from its start, before pagelens could reach it (an "
            f"endless loop?): pagelens closed the tab ({url})"
        )
        await within(page.close(), 10)
