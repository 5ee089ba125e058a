"""The allow-list, enforced where Chromium decides to load: every request of every frame,
tab and worker, and every hop of a redirect chain.

A Playwright route handler sees only the first request of a chain (Playwright continues the
hops itself), so a 302 from an allowed host could take a tab, a frame or an image off the
list. Chromium's ``Fetch`` domain, enabled on the *browser* target, pauses every request the
browser makes, in any context, at the request stage, and pauses each redirect hop again
(``redirectedRequestId``) before it is sent. Each one is answered here:

- on the list: continued;
- a document off the list (a tab's or a frame's navigation, whichever hop): answered with an
  empty 204, which cancels the navigation and leaves the current document in place (an
  abort would show Chromium's error page instead); the refusal is recorded, naming the host
  and, for a hop, the URL that redirected there;
- anything else off the list: failed (``BlockedByClient``) in a sealed run, else continued.

One guard serves one browser (an environment launches its own); its list is the one the
current run set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import CDPSession

    from pagelens.browser.allowlist import HostAllowList

# Requests whose chain may still go on: the URL each continued request asked for, so that a hop
# can name where it was redirected from. An entry leaves when its hop is paused; the map is
# emptied when it reaches this size (a request that is not redirected leaves none).
_MAX_OPEN = 4096


@dataclass(frozen=True)
class Refusal:
    """A navigation the guard cancelled."""

    url: str
    redirected_from: str | None = None
    frame_id: str | None = None  # Chromium's id of the frame whose navigation it was

    def message(self, allow: HostAllowList) -> str:
        return allow.refusal(self.url, self.redirected_from)


class RequestGuard:
    """Answers every paused request of one browser by the current allow-list."""

    def __init__(self, on_refused: Callable[[Refusal], None]):
        self.allow: HostAllowList | None = None
        self.sealed = False
        self._on_refused = on_refused
        self._session: CDPSession | None = None
        self._urls: dict[str, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    async def attach(self, session: CDPSession) -> None:
        """Starts answering the browser's requests (before any page of a run exists)."""
        self._session = session
        session.on("Fetch.requestPaused", self._paused)
        await session.send("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]})

    def _paused(self, event: dict[str, Any]) -> None:
        # Playwright calls this synchronously; the answer is one CDP call, so one task each.
        task = asyncio.get_running_loop().create_task(self._answer(event))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def decide(self, url: str, resource_type: str) -> str:
        """``continue``, ``refuse`` (a document off the list) or ``fail`` (anything else off
        the list in a sealed run)."""
        allow = self.allow
        if allow is None or allow.allows(url):
            return "continue"
        if resource_type == "Document":
            return "refuse"
        return "fail" if self.sealed else "continue"

    async def _answer(self, event: dict[str, Any]) -> None:
        session = self._session
        if session is None:
            return
        request_id = str(event.get("requestId", ""))
        url = str(event.get("request", {}).get("url", ""))
        previous = self._urls.pop(str(event.get("redirectedRequestId") or ""), None)
        verdict = self.decide(url, str(event.get("resourceType", "")))
        try:
            if verdict == "continue":
                if len(self._urls) >= _MAX_OPEN:  # a chain's last hop is never paused again
                    self._urls.clear()
                self._urls[request_id] = url
                await session.send("Fetch.continueRequest", {"requestId": request_id})
            elif verdict == "refuse":
                frame = event.get("frameId")
                self._on_refused(Refusal(url, previous, str(frame) if frame else None))
                await session.send(
                    "Fetch.fulfillRequest",
                    {"requestId": request_id, "responseCode": 204, "responseHeaders": [], "body": ""},
                )
            else:
                await session.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
        except Exception:
            pass  # the request's frame or tab went away meanwhile: nothing is left to answer

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._tasks.clear()
        self._urls.clear()
        self._session = None
