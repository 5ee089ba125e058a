"""Carrying out an :class:`Action` on the page, through the element itself.

An id names an AX node; its ``backendDOMNodeId`` is resolved in the CDP session that owns its
frame and handed to Playwright as an ``ElementHandle`` (parked for a moment on the frame's
``window`` under a random key: no attribute is written into the page). From there Playwright's
own actionability checks, scrolling and input events apply, in any frame. No coordinates
are remembered between steps.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from playwright.async_api import ElementHandle, Frame
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from pagelens.actions import ACTIONS, Action, ActionError
from pagelens.browser._util import quietly
from pagelens.browser.frames import FrameRecord, cdp

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page

    from pagelens.browser.allowlist import HostAllowList
    from pagelens.browser.env import BrowserConfig
    from pagelens.browser.frames import FrameSessions
    from pagelens.browser.records import PageObservation, StepResult


class ActionTarget(Protocol):
    """What the executor needs of the environment it acts in (``AsyncBrowserEnv`` is one):
    the active tab and its context, the last observation's frames, the allow-list."""

    config: BrowserConfig
    allow: HostAllowList | None
    start_url: str | None

    @property
    def page(self) -> Page: ...
    @property
    def context(self) -> BrowserContext: ...
    @property
    def last_observation(self) -> PageObservation | None: ...
    def frame_record(self, frame_id: str | None) -> FrameRecord: ...
    def element_ref(self, element_id: int | None) -> tuple[int, str | None, str]: ...
    def sessions_for(self, page: Page) -> FrameSessions: ...
    def set_active_page(self, page: Page) -> None: ...


# Model-written key names to Playwright's.
_KEY_NAMES = {
    "ctrl": "Control",
    "control": "Control",
    "cmd": "Meta",
    "command": "Meta",
    "meta": "Meta",
    "win": "Meta",
    "alt": "Alt",
    "option": "Alt",
    "shift": "Shift",
    "enter": "Enter",
    "return": "Enter",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "space": "Space",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "home": "Home",
    "end": "End",
}

_PARK = """function(key) {
  const el = this.nodeType === 1 ? this : this.parentElement;
  (this.ownerDocument || document).defaultView[key] = el;
}"""
# A removed element can still be resolved while something holds it; it is gone all the same.
_UNPARK = "key => { const el = window[key]; delete window[key]; return el && el.isConnected ? el : null; }"

# What kind of element a type action meets.
_KIND = """el => {
  const tag = el.tagName.toLowerCase();
  if (tag === 'select') return 'select';
  if (tag === 'textarea' || el.isContentEditable) return 'fill';
  if (tag === 'input') {
    const t = (el.getAttribute('type') || 'text').toLowerCase();
    return ['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color'].includes(t)
      ? 'other' : 'fill';
  }
  return 'other';
}"""


def normalize_keys(keys: str) -> str:
    """``ctrl+a`` -> ``Control+a``, ``Meta+Shift+K`` kept, ``enter`` -> ``Enter``."""
    parts = [p.strip() for p in keys.replace(" + ", "+").split("+")]
    if not all(parts):
        raise ActionError(f"`press` needs keys such as `Control+a` or `Enter`, got [{keys}]")
    return "+".join(_KEY_NAMES.get(p.lower(), p) for p in parts)


class Executor:
    def __init__(self, env: ActionTarget):
        self.env = env
        self._key = "__pagelens_" + secrets.token_hex(8)

    @property
    def timeout(self) -> float:
        return self.env.config.action_timeout_ms

    def handler(self, kind: str) -> Callable[..., Awaitable[None]]:
        """The method carrying out ``kind``: ``_<kind>(element, action)`` for actions on an
        element, ``_<kind>(action, result)`` for the others (internal ones only record)."""
        return getattr(self, "_" + ACTIONS[kind].name)  # type: ignore[no-any-return]

    async def run(self, action: Action, result: StepResult) -> None:
        try:
            if action.acts_on_element:
                element = await self.element(action.target)
                try:
                    await self.handler(action.kind)(element, action)
                finally:
                    await _release(element)
            else:
                await self.handler(action.kind)(action, result)
        except ActionError:
            raise
        except PlaywrightTimeout as e:
            raise ActionError(f"`{action}` timed out: {_first_line(e)}") from None
        except PlaywrightError as e:
            raise ActionError(f"`{action}` failed: {_first_line(e)}") from None
        except asyncio.TimeoutError:
            raise ActionError(f"`{action}` timed out: the browser did not answer") from None

    # -- resolving an id to an element ------------------------------------------------------

    async def element(self, element_id: int | None) -> ElementHandle:
        backend_id, frame_id, described = self.env.element_ref(element_id)
        record = self.env.frame_record(frame_id)
        frame = await self._playwright_frame(record)
        handle = await self._handle(record.session, backend_id, frame)
        if handle is None:
            raise ActionError(f"element [{element_id}] ({described}) is no longer on the page")
        return handle

    async def _handle(self, session: Any, backend_id: int, frame: Frame) -> ElementHandle | None:
        t = self.env.config.cdp_timeout_s
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
                {
                    "objectId": object_id,
                    "functionDeclaration": _PARK,
                    "arguments": [{"value": self._key}],
                },
                t,
            )
        finally:
            await quietly(cdp(session, "Runtime.releaseObject", {"objectId": object_id}, t))
        handle = await frame.evaluate_handle(_UNPARK, self._key)
        element = handle.as_element()
        if element is None:
            await handle.dispose()
        return element

    async def _playwright_frame(self, record: FrameRecord) -> Frame:
        """The Playwright frame of a CDP frame: the main frame, or the content frame of its
        owner <iframe>, found the same way from the parent down."""
        page = self.env.page
        if record.parent_id is None:
            return page.main_frame
        parent = self.env.frame_record(record.parent_id)
        if parent.frame_id != record.parent_id or record.owner_backend_id is None or record.owner_session is None:
            raise ActionError("the element's frame is no longer on the page")
        parent_frame = await self._playwright_frame(parent)
        owner = await self._handle(record.owner_session, record.owner_backend_id, parent_frame)
        if owner is None:
            raise ActionError("the element's frame is no longer on the page")
        try:
            frame = await owner.content_frame()
        finally:
            await _release(owner)
        if frame is None:
            raise ActionError("the element's frame has no document")
        return frame

    # -- element actions ----------------------------------------------------------------------

    async def _click(self, element: ElementHandle, action: Action) -> None:
        select = await self._owning_select(element)
        if select is not None:
            try:
                await select.select_option(element=element, timeout=self.timeout)
            finally:
                await _release(select)
            return
        await element.scroll_into_view_if_needed(timeout=self.timeout)
        # The pointer arrives first, as a person's does: a page that restyles an element on
        # :hover (an icon swapping its image) settles before the click, which Playwright only
        # sends once the element is visible and stable again.
        await element.hover(timeout=self.timeout)
        await element.click(timeout=self.timeout)

    async def _hover(self, element: ElementHandle, action: Action) -> None:
        await element.scroll_into_view_if_needed(timeout=self.timeout)
        await element.hover(timeout=self.timeout)

    async def _type(self, element: ElementHandle, action: Action) -> None:
        text = action.text or ""
        kind = await element.evaluate(_KIND)
        if kind == "select":
            # Typing into a native <select> chooses the option with that label (or value).
            try:
                await element.select_option(label=text, timeout=self.timeout)
            except PlaywrightError:
                await element.select_option(value=text, timeout=self.timeout)
        elif kind == "fill":
            await element.scroll_into_view_if_needed(timeout=self.timeout)
            await element.fill(text, timeout=self.timeout)
        else:
            # A custom widget (a div-based combobox...): focus it by clicking, then type keys.
            await element.scroll_into_view_if_needed(timeout=self.timeout)
            await element.click(timeout=self.timeout)
            await self.env.page.keyboard.type(text)
        if action.press_enter:
            await self.env.page.keyboard.press("Enter")

    async def _owning_select(self, element: ElementHandle) -> ElementHandle | None:
        """The native <select> an <option> belongs to (AgentOccam's gap: clicking a native
        option does nothing; selecting it through its <select> does)."""
        handle = await element.evaluate_handle(
            "el => (el.tagName === 'OPTION' || el.tagName === 'OPTGROUP') ? el.closest('select') : null"
        )
        select = handle.as_element()
        if select is None:
            await handle.dispose()
        return select

    # -- page actions ------------------------------------------------------------------------

    async def _press(self, action: Action, result: StepResult) -> None:
        await self.env.page.keyboard.press(normalize_keys(action.text or ""))

    async def _scroll(self, action: Action, result: StepResult) -> None:
        sign = -1 if action.text == "up" else 1
        await self.env.page.evaluate("s => window.scrollBy(0, s * window.innerHeight * 0.9)", sign)

    async def _goto(self, action: Action, result: StepResult) -> None:
        url = (action.text or "").strip()
        if "://" not in url and not url.startswith("about:"):
            url = "http://" + url
        await self.navigate(url)

    async def navigate(self, url: str) -> None:
        allow = self.env.allow
        if allow is not None and not allow.allows(url):
            raise ActionError(
                f"navigation to {url} was refused: its host is not allowed in this run "
                f"(allowed: {', '.join(allow.hosts)})"
            )
        await self.env.page.goto(url, wait_until="load", timeout=self.env.config.navigation_timeout_ms)

    async def _go_home(self, action: Action, result: StepResult) -> None:
        home = self.env.config.home_url or self.env.start_url
        if not home:
            raise ActionError("no home page is configured for this run")
        await self.navigate(home)

    async def _go_back(self, action: Action, result: StepResult) -> None:
        entries, current = await self._history()
        # The tab's first entry is the blank page it opened with: not a page to go back to.
        if current == 0 or (current == 1 and entries[0]["url"] == "about:blank"):
            raise ActionError("there is no previous page in this tab")
        await self.env.page.go_back(timeout=self.env.config.navigation_timeout_ms)

    async def _go_forward(self, action: Action, result: StepResult) -> None:
        entries, current = await self._history()
        if current >= len(entries) - 1:
            raise ActionError("there is no next page in this tab")
        await self.env.page.go_forward(timeout=self.env.config.navigation_timeout_ms)

    async def _history(self) -> tuple[list[dict[str, Any]], int]:
        session = await self.env.sessions_for(self.env.page).main()
        history = await cdp(session, "Page.getNavigationHistory", timeout=self.env.config.cdp_timeout_s)
        return history["entries"], history["currentIndex"]

    async def _new_tab(self, action: Action, result: StepResult) -> None:
        page = await self.env.context.new_page()
        self.env.set_active_page(page)

    async def _tab_focus(self, action: Action, result: StepResult) -> None:
        pages = self.env.context.pages
        index = action.target if action.target is not None else -1
        if not 0 <= index < len(pages):
            raise ActionError(f"there is no tab {index}; tabs are numbered 0 to {len(pages) - 1}")
        self.env.set_active_page(pages[index])
        await pages[index].bring_to_front()

    async def _close_tab(self, action: Action, result: StepResult) -> None:
        page = self.env.page
        await page.close()
        pages = self.env.context.pages
        if pages:
            self.env.set_active_page(pages[-1])
            await pages[-1].bring_to_front()
        else:
            self.env.set_active_page(await self.env.context.new_page())

    async def _note(self, action: Action, result: StepResult) -> None:
        result.note = action.text

    async def _stop(self, action: Action, result: StepResult) -> None:
        result.done = True
        result.answer = action.text

    async def _branch(self, action: Action, result: StepResult) -> None:
        pass  # planning actions change the agent's plan tree, not the page

    _prune = _branch

    async def _noop(self, action: Action, result: StepResult) -> None:
        pass


# Call-log lines that say why Playwright kept waiting.
_REASONS = (
    "intercepts pointer events",
    "not visible",
    "not enabled",
    "not stable",
    "not editable",
    "outside of the viewport",
    "detached",
)


def _first_line(error: Exception) -> str:
    """Playwright's message without its call log, plus the log's last reason for waiting."""
    text = str(error).strip()
    if not text:
        return type(error).__name__
    head, _, log = text.partition("\nCall log:")
    message = head.strip().splitlines()[0]
    reasons = [line.strip(" -") for line in log.splitlines() if any(r in line for r in _REASONS)]
    if reasons:
        message += f" ({reasons[-1]})"
    return message


async def _release(handle: ElementHandle) -> None:
    await quietly(handle.dispose())
