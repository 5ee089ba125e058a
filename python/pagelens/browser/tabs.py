"""What each tab of a context is doing, as its own events say, kept from the moment the tab is
adopted: main-frame navigations asked and not yet answered, documents committed, requests in
flight, and whether its renderer crashed; and which tab is the active one. Waits (the settle
after an action, a call raced against a crash, the script watchdog) read it; nothing here acts
on the tab."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from playwright.async_api import BrowserContext, Frame, Page, Request


@dataclass
class ActiveTab:
    """The context an environment holds now and its active tab: the environment sets them as
    they change (its own ``_context`` and ``_page`` are these), a watch reads them."""

    context: BrowserContext | None = None
    page: Page | None = None


class Navigations:
    """A tab's main-frame navigations requested and neither committed nor ended; ``none`` is
    set while there are none, for a wait to wait on (not to poll)."""

    def __init__(self) -> None:
        self.requests: set[Request] = set()
        self.none = asyncio.Event()
        self.none.set()

    def add(self, request: Request) -> None:
        self.requests.add(request)
        self.none.clear()

    def discard(self, request: Request) -> None:
        self.requests.discard(request)
        if not self.requests:
            self.none.set()

    def clear(self) -> None:
        self.requests.clear()
        self.none.set()

    def __bool__(self) -> bool:
        return bool(self.requests)


class TabActivity:
    """One tab's activity, from its events: an action that submits a form returns before the new
    document exists (``navigations``), a wait learns that a new document came (``commits``), the
    settle waits for the tab to go quiet (``in_flight``, ``idle``: every request of the tab, its
    frames' too), and a crashed renderer answers no call (``crashed``)."""

    def __init__(self, page: Page) -> None:
        loop = asyncio.get_running_loop()
        self.navigations = Navigations()
        self.commits = 0
        self.in_flight: set[Request] = set()
        self.idle = asyncio.Event()
        self.idle.set()
        self.crashed: asyncio.Future[None] = loop.create_future()
        self._page = page
        page.on("crash", self._on_crash)
        page.on("request", self._requested)
        page.on("requestfinished", self._answered)
        page.on("requestfailed", self._failed)
        page.on("framenavigated", self._committed)
        page.on("close", self._closed)

    def _on_crash(self, _: Page) -> None:
        if not self.crashed.done():
            self.crashed.set_result(None)

    def _requested(self, request: Request) -> None:
        if request.is_navigation_request() and request.frame == self._page.main_frame:
            self.navigations.add(request)
        self.in_flight.add(request)
        self.idle.clear()

    def _ended(self, request: Request) -> None:
        self.in_flight.discard(request)
        if not self.in_flight:
            self.idle.set()

    def _answered(self, request: Request) -> None:
        # An answer that does not commit (a 204, a download) leaves no document to wait for; a
        # document's commit can trail its last byte, hence the grace period.
        asyncio.get_running_loop().call_later(0.5, self.navigations.discard, request)
        self._ended(request)

    def _failed(self, request: Request) -> None:
        self.navigations.discard(request)
        self._ended(request)

    def _committed(self, frame: Frame) -> None:
        if frame == self._page.main_frame:
            self.navigations.clear()
            self.commits += 1

    def _closed(self, _: Page) -> None:
        self.navigations.clear()
        self.in_flight.clear()
        self.idle.set()
