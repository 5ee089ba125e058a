"""Chromiums shared by many browser contexts: a pool of browsers, each holding up to
``contexts_per_browser`` contexts (a session's, an episode's), started ahead of need.

A context has its own cookies, storage, cache and permissions (Chromium keeps contexts apart
as it keeps profiles apart) and costs a renderer per site it opens; a browser of its own costs
~300 MB more. Every :class:`~pagelens.browser.env.AsyncBrowserEnv` leases its browser from a
pool: a private one of one browser by default, a shared one when given (the MCP server's
sessions, a study's workers). Each browser has one request guard, whose policies say what each
context may load (see guard.py), one raw DevTools socket, and one browser-level CDP session.

A browser that dies (killed, crashed) leaves the pool at once: its contexts' environments see
it as not alive, and the next lease gets a browser that works. So does one that stops answering
(a context not made in time: see ``AsyncBrowserEnv._opened``), closed in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from playwright.async_api import Error as PlaywrightError

from pagelens.browser._util import quietly
from pagelens.browser.devtools import DevToolsSocket, free_port
from pagelens.browser.guard import RequestGuard
from pagelens.browser.launch import LaunchOptions, start_driver
from pagelens.errors import PagelensError

if TYPE_CHECKING:
    from playwright.async_api import Browser, CDPSession, Playwright

__all__ = ["CONTEXTS_PER_BROWSER", "BrowserPool", "PoolClosed", "SharedBrowser"]

# Contexts one shared browser holds: more saves the browser's own ~100 MB per that many sessions;
# fewer loses fewer sessions to one browser's crash.
CONTEXTS_PER_BROWSER = 16
# How long a browser set aside is given to close.
_CLOSE_S = 30.0
# Playwright's words for a browser process that ended before it was ready.
_EXITED_AT_START = "Failed to launch the browser process"
# The pauses before each launch tried again after such an end; one more is the lease's failure.
_RELAUNCH_PAUSES_S = (0.5, 2.0)


class PoolClosed(PagelensError, RuntimeError):
    """A lease asked of a pool that was closed."""


@dataclass(eq=False)
class SharedBrowser:
    """One Chromium of a pool, with what its contexts share: the browser-level CDP session,
    the request guard, the raw DevTools socket (while it connects: ``connecting``)."""

    browser: Browser
    cdp: CDPSession
    guard: RequestGuard
    connecting: asyncio.Future[DevToolsSocket] | None
    devtools: DevToolsSocket | None = None
    leases: int = 0
    lost: asyncio.Event = field(default_factory=asyncio.Event)  # set when the browser died
    on_lost: Callable[[SharedBrowser], None] | None = None  # the pool's, told once it is found dead

    async def raw_socket(self) -> DevToolsSocket | None:
        """The raw DevTools socket for large answers, once connected; None without one."""
        connecting = self.connecting
        if connecting is not None:
            try:
                # Shielded: a caller cancelled while it waits leaves the connection to the next.
                socket: DevToolsSocket | None = await asyncio.shield(connecting)
            except Exception as e:  # everything still works through Playwright, only slower
                socket = None
                if self.connecting is connecting:  # said once, by the first to know
                    warnings.warn(f"no raw DevTools socket ({e}); AX trees go through Playwright", stacklevel=2)
            if self.connecting is connecting:
                self.devtools, self.connecting = socket, None
        return self.devtools

    async def died(self) -> bool:
        """Whether the browser is gone: known (``lost``), or found now by asking it for its
        version (a call that fails when its process is dead, however the death was told)."""
        if not self.lost.is_set():
            try:
                await asyncio.wait_for(self.cdp.send("Browser.getVersion"), 10)
            except Exception:  # noqa: BLE001 (no answer of any kind: the browser is gone)
                self.lost.set()
                if self.on_lost is not None:
                    self.on_lost(self)
        return self.lost.is_set()

    async def close(self) -> None:
        await self.guard.close()
        connecting, self.connecting = self.connecting, None
        if connecting is not None:
            if connecting.done() and not connecting.cancelled() and connecting.exception() is None:
                self.devtools = connecting.result()
            else:
                connecting.cancel()
        if self.devtools is not None:
            await quietly(self.devtools.close())
            self.devtools = None
        await quietly(self.browser.close())


class BrowserPool:
    """Browsers that hold up to ``contexts_per_browser`` leases each. Room for ``ready`` more
    contexts is kept started (a browser launched in the background when there is less, so a new
    session waits for no launch); a browser left without leases is closed when the others keep
    that room without it (its memory given back). ``ready`` defaults to a quarter of a browser."""

    def __init__(
        self,
        launch: LaunchOptions | None = None,
        contexts_per_browser: int = CONTEXTS_PER_BROWSER,
        ready: int | None = None,
    ) -> None:
        ready = max(1, contexts_per_browser // 4) if ready is None else ready
        if contexts_per_browser < 1 or ready < 0:
            raise ValueError("a pool holds at least one context per browser, and keeps no negative room ready")
        self.launch = launch or LaunchOptions()
        self.contexts_per_browser = contexts_per_browser
        self.ready = ready
        self._playwright: Playwright | None = None
        self._browsers: list[SharedBrowser] = []
        self._starting: asyncio.Task[SharedBrowser] | None = None
        self._lock = asyncio.Lock()
        self._closed = False
        self._closing: set[asyncio.Future[None]] = set()
        self.launches = 0  # browsers started over the pool's life
        self.crashes = 0  # browsers that died under it

    @property
    def browsers(self) -> int:
        return len(self._browsers)

    @property
    def leases(self) -> int:
        return sum(b.leases for b in self._browsers)

    async def lease(self) -> tuple[SharedBrowser, float]:
        """A browser with room for one more context, and the seconds this waited for it (a
        launch, when none had room); give it back with :meth:`release`."""
        started = time.perf_counter()
        while True:
            async with self._lock:
                if self._closed:
                    raise PoolClosed("the browser pool was closed")
                found = next((b for b in self._browsers if b.leases < self.contexts_per_browser), None)
                if found is not None:
                    found.leases += 1
                    self._keep_ready()
                    return found, time.perf_counter() - started
                starting = self._start_one()
            # Waited outside the lock: leases of a browser with room go on meanwhile. A launch
            # that failed fails the lease that waited for it (said as it is).
            await asyncio.shield(starting)

    def release(self, shared: SharedBrowser) -> None:
        """A context of ``shared`` closed; a browser left empty beyond the spares is closed."""
        shared.leases = max(0, shared.leases - 1)
        if shared.leases or shared not in self._browsers:
            return
        if self._free() - self.contexts_per_browser >= self.ready:
            self._browsers.remove(shared)
            self._close_in_background(shared.close())

    def discard(self, shared: SharedBrowser) -> None:
        """A browser that stopped answering (a context it did not make in time): out of the
        pool as a dead one is, its contexts told by ``lost``, and closed in the background,
        in bounded time (its process may be past answering even that)."""
        self._lost(shared)
        self._close_in_background(quietly(asyncio.wait_for(shared.close(), _CLOSE_S)))

    def _close_in_background(self, closing: Awaitable[None]) -> None:
        """A browser's close run on its own, waited for by :meth:`close`."""
        task = asyncio.ensure_future(closing)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    def warm(self) -> None:
        """Starts the room kept ready now (a server's first session then waits for no launch)."""
        self._keep_ready()

    def _free(self) -> int:
        return sum(self.contexts_per_browser - b.leases for b in self._browsers)

    def _keep_ready(self) -> None:
        """A browser launched in the background when fewer than ``ready`` contexts could be
        leased without one."""
        if self._free() < self.ready and not self._closed:
            self._start_one()

    def _start_one(self) -> asyncio.Task[SharedBrowser]:
        """The launch under way, or a new one (one at a time)."""
        if self._starting is None or self._starting.done():
            self._starting = asyncio.ensure_future(self._launch())
            # A failed spare launch is read here; a lease waiting for it gets the failure too.
            self._starting.add_done_callback(lambda f: f.cancelled() or f.exception())
        return self._starting

    async def _launch(self) -> SharedBrowser:
        if self._playwright is None:
            self._playwright = await start_driver()
        kwargs = self.launch.playwright_kwargs()
        args = kwargs["args"]
        for pause in (*_RELAUNCH_PAUSES_S, None):
            port = free_port() if self.launch.devtools_socket else None
            if port is not None:
                kwargs["args"] = [*args, f"--remote-debugging-port={port}"]
            try:
                browser = await self._playwright.chromium.launch(**kwargs)
                break
            except PlaywrightError as e:
                if pause is None or _EXITED_AT_START not in str(e):
                    raise
                # Chromium ended before it was ready (SIGTRAP just after its zygotes started; seen
                # in CI with three shell sessions opened at once on a loaded machine, and here in
                # 3 of 82 such runs beside two CPU burners): started again after a pause, on a port
                # picked again, the failure told in full where the process' errors go (a server's
                # or a daemon's log). Every launch from the same driver failed as well (five in a
                # row, over 17 s, in each of the three); from a new driver, the next launch went on
                # in each of the 4 of 68 runs that met it. So a driver no browser uses is started
                # anew for the next one; one that serves browsers is kept (stopping it ends them).
                warnings.warn(f"Chromium ended as it started; starting it again in {pause:g} s. {e}", stacklevel=2)
                await asyncio.sleep(pause)
                if not self._browsers:
                    # (None first: a driver that fails to start is started at the next launch,
                    # not a stopped one used)
                    stopped, self._playwright = self._playwright, None
                    await quietly(stopped.stop())
                    self._playwright = await start_driver()
        try:
            cdp = await browser.new_browser_cdp_session()
            guard = RequestGuard()
            await guard.attach(cdp)
        except Exception:
            await quietly(browser.close())
            raise
        connecting = asyncio.ensure_future(DevToolsSocket.connect(port)) if port is not None else None
        shared = SharedBrowser(browser, cdp, guard, connecting, on_lost=self._lost)
        browser.on("disconnected", lambda _: self._lost(shared))
        async with self._lock:
            if self._closed:
                await shared.close()
                raise PoolClosed("the browser pool was closed")
            self._browsers.append(shared)
            self.launches += 1
        return shared

    def _lost(self, shared: SharedBrowser) -> None:
        """The browser died or was closed: out of the pool, its contexts told by ``lost``."""
        shared.lost.set()
        if shared in self._browsers:
            self._browsers.remove(shared)
            if not self._closed:
                self.crashes += 1

    async def close(self) -> None:
        """Every browser closed, and the driver stopped."""
        async with self._lock:
            self._closed = True
            browsers, self._browsers = list(self._browsers), []
        starting = self._starting
        if starting is not None and not starting.done():
            starting.cancel()
            with contextlib.suppress(BaseException):
                await starting
        for shared in browsers:
            await shared.close()
        if self._closing:
            await asyncio.wait(set(self._closing))
        if self._playwright is not None:
            await quietly(self._playwright.stop())
            self._playwright = None
