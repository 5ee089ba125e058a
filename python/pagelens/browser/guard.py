"""The allow-list, enforced where Chromium decides to load: every request of every frame,
tab and worker, and every hop of a redirect chain, each by the list of the browser context
it belongs to.

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

One guard serves one browser; each browser context in it (a session's, an episode's) has its
:class:`Policy`. A paused request names its frame (a worker's, its owner frame), not its
context, so the frame is attributed: a tab's or an out-of-process frame's id is a target
Chromium places in its context; any other frame is asked of each context (does one of its tabs
hold it; answered by the browser process, not the page). A request nobody owns (a frame gone
meanwhile, a context still being made) is held to every policy of the browser at once: it
loads only what all of them allow, so sharing a browser never widens a list.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.async_api import CDPSession

    from pagelens.browser.allowlist import HostAllowList

# Requests whose chain may still go on: the URL each continued request asked for, so that a hop
# can name where it was redirected from. An entry leaves when its hop is paused; the map is
# emptied when it reaches this size (a request that is not redirected leaves none). The frames
# attributed to a context are kept likewise.
_MAX_OPEN = 4096
# How long a context is given to say whether a frame is its own (one browser-side call per tab).
_OWNER_TIMEOUT_S = 5.0


@dataclass(eq=False)
class Policy:
    """One browser context's terms: its allow-list (None: anything), whether what is off it
    fails (sealed) or only documents are refused, who is told of a refusal, and how to ask
    whether a frame is one of its own."""

    on_refused: Callable[[Refusal], None]
    allow: HostAllowList | None = None
    sealed: bool = False
    context_id: str | None = None  # Chromium's id of the context, once it exists
    owns_frame: Callable[[str], Awaitable[bool]] | None = None
    frames: set[str] = field(default_factory=set)  # frame ids attributed to it


@dataclass(frozen=True)
class Refusal:
    """A navigation the guard cancelled."""

    url: str
    redirected_from: str | None = None
    frame_id: str | None = None  # Chromium's id of the frame whose navigation it was

    def message(self, allow: HostAllowList) -> str:
        return allow.refusal(self.url, self.redirected_from)


def verdict(policies: list[Policy], url: str, resource_type: str) -> str:
    """``continue``, ``refuse`` (a document off a list) or ``fail`` (anything else off a list
    of a sealed policy), by every one of ``policies``: the strictest answer wins."""
    refused = [p for p in policies if p.allow is not None and not p.allow.allows(url)]
    if not refused:
        return "continue"
    if resource_type == "Document":
        return "refuse"
    return "fail" if any(p.sealed for p in refused) else "continue"


class RequestGuard:
    """Answers every paused request of one browser by the policy of the context it belongs to."""

    def __init__(self) -> None:
        self._policies: list[Policy] = []
        self._session: CDPSession | None = None
        self._urls: dict[str, str] = {}
        self._owners: dict[str, Policy] = {}  # frame id -> the policy whose context holds it
        self._tasks: set[asyncio.Task[None]] = set()

    def add(self, policy: Policy) -> None:
        """``policy`` rules its context's requests from now on (registered before the context
        is made: until its id is known, its requests are held to every policy)."""
        self._policies.append(policy)

    def remove(self, policy: Policy) -> None:
        if policy in self._policies:
            self._policies.remove(policy)
        for frame in policy.frames:
            self._owners.pop(frame, None)
        policy.frames.clear()

    @property
    def policies(self) -> int:
        return len(self._policies)

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

    async def owner(self, frame_id: str) -> Policy | None:
        """The policy of the context that holds ``frame_id``; None when none is known to."""
        policies = self._policies
        if len(policies) == 1 and policies[0].context_id is not None:
            return policies[0]  # a browser of its own: nothing to attribute
        if not frame_id:
            return None
        found = self._owners.get(frame_id)
        if found is not None:
            return found
        session = self._session
        context = None
        if session is not None:
            try:  # a tab's main frame, an out-of-process frame: a target in its context
                context = (await session.send("Target.getTargetInfo", {"targetId": frame_id}))["targetInfo"].get(
                    "browserContextId"
                )
            except Exception:  # no target of that id: a frame inside a tab
                context = None
        found = next((p for p in policies if context is not None and p.context_id == context), None)
        if found is None and context is None:
            found = await self._asked(frame_id)
        if found is not None:
            if len(self._owners) >= _MAX_OPEN:
                for policy in self._policies:
                    policy.frames.clear()
                self._owners.clear()
            self._owners[frame_id] = found
            found.frames.add(frame_id)
        return found

    async def _asked(self, frame_id: str) -> Policy | None:
        """The policy whose context says it holds ``frame_id``, each asked at once."""
        asking = [p for p in self._policies if p.owns_frame is not None and p.context_id is not None]
        if not asking:
            return None
        answers = await asyncio.gather(
            *(asyncio.wait_for(p.owns_frame(frame_id), _OWNER_TIMEOUT_S) for p in asking if p.owns_frame),
            return_exceptions=True,
        )
        return next((p for p, yes in zip(asking, answers, strict=True) if yes is True), None)

    async def _answer(self, event: dict[str, Any]) -> None:
        session = self._session
        if session is None:
            return
        request_id = str(event.get("requestId", ""))
        url = str(event.get("request", {}).get("url", ""))
        previous = self._urls.pop(str(event.get("redirectedRequestId") or ""), None)
        frame = str(event.get("frameId") or "")
        try:
            owner = await self.owner(frame)
            judged = [owner] if owner is not None else list(self._policies)
            decided = verdict(judged, url, str(event.get("resourceType", "")))
            if decided == "continue":
                if len(self._urls) >= _MAX_OPEN:  # a chain's last hop is never paused again
                    self._urls.clear()
                self._urls[request_id] = url
                await session.send("Fetch.continueRequest", {"requestId": request_id})
            elif decided == "refuse":
                if owner is not None:  # told to its own context only, never to another
                    owner.on_refused(Refusal(url, previous, frame or None))
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
        self._owners.clear()
        self._session = None
