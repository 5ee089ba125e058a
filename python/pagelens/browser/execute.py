"""Carrying out a page :class:`Action` (the table's actions that are not internal) on the page,
through the element itself.

The element an id names comes from the :class:`~pagelens.browser.resolve.ElementResolver`;
from there Playwright's own actionability checks, scrolling and input events apply, in any
frame — except the short ways of a plain click, a hover and a type into a text field of the
main frame, whose checks pagelens' world makes in one call before the browser's own input
(each falls back to Playwright's way when a check fails). No coordinates are remembered
between steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from playwright.async_api import ElementHandle
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from pagelens._core import escape_page_text
from pagelens.actions import ACTIONS, Action, ActionError, NavigationFailed, NavigationRefused
from pagelens.browser.devtools import cdp
from pagelens.browser.records import Box
from pagelens.browser.resolve import release
from pagelens.hosts import web_address

if TYPE_CHECKING:
    from playwright.async_api import BrowserContext, Page

    from pagelens.browser.allowlist import HostAllowList
    from pagelens.browser.config import BrowserConfig
    from pagelens.browser.frames import FrameSessions
    from pagelens.browser.resolve import ElementResolver


class Tabs(Protocol):
    """The tabs the executor acts in (``AsyncBrowserEnv`` keeps them): the active one, their
    context, and the run's bounds (its allow-list and start page)."""

    allow: HostAllowList | None
    start_url: str | None

    @property
    def page(self) -> Page: ...
    @property
    def context(self) -> BrowserContext: ...
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

# What kind of element a type action meets. A range, a colour, a date or a time input takes its
# value whole (Playwright's fill sets it and fires input and change): keys do nothing there, and a
# click moves a slider to where it lands or opens a picker.
# How a `type` reaches the element, and an input's type: [select | fill | other, type].
# What typing into an element does: ['select' | 'fill' | 'other', the input's type], or, for an
# element a click presses, follows or ticks (which typing must never do), ['press', what it is,
# the nearest text field's words ('' if none)].
_KIND = r"""el => {
  const tag = el.tagName.toLowerCase();
  if (tag === 'select') return ['select', ''];
  if (tag === 'textarea' || el.isContentEditable) return ['fill', ''];
  const t = tag === 'input' ? (el.getAttribute('type') || 'text').toLowerCase() : '';
  const NO_TEXT = ['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file'];
  if (tag === 'input' && !NO_TEXT.includes(t)) return ['fill', t];
  const role = (el.getAttribute('role') || '').trim().split(/\s+/)[0].toLowerCase();
  const PRESSED = ['button', 'link', 'checkbox', 'radio', 'switch', 'tab', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'treeitem'];
  const ticked = tag === 'label' && el.control && ['checkbox', 'radio'].includes(el.control.type);
  const what = PRESSED.includes(role) ? role
    : tag === 'input' ? (t === 'checkbox' || t === 'radio' ? t : t === 'file' ? 'file chooser' : 'button')
    : tag === 'button' ? 'button' : tag === 'a' && el.hasAttribute('href') ? 'link'
    : tag === 'summary' ? 'disclosure' : tag === 'option' ? 'option'
    : ticked ? 'label of a ' + el.control.type : '';
  if (!what) return ['other', ''];
  const FIELDS = 'input:not([type=checkbox]):not([type=radio]):not([type=button]):not([type=submit])'
    + ':not([type=reset]):not([type=image]):not([type=file]):not([type=hidden]), textarea,'
    + ' [contenteditable=""], [contenteditable=true]';
  const scope = el.closest('form') || el.ownerDocument;
  const fields = [...scope.querySelectorAll(FIELDS)].filter((f) => !f.disabled && f.checkVisibility());
  let near = null;
  for (const f of fields) if (f.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) near = f;
  near = near || fields[0] || null;
  const words = (f) => (f.labels && f.labels[0] ? f.labels[0].innerText : '')
    || f.getAttribute('aria-label') || f.placeholder || f.name || f.id || '';
  return ['press', what, near ? words(near).trim().slice(0, 80) : ''];
}"""


# Fields whose value has one written form: a text in any other form is not taken (the field
# stays as it was, and Playwright's fill says nothing), so the action says what the field takes.
_FIELD_FORMS = {
    "date": "a date as YYYY-MM-DD (2025-03-04)",
    "datetime-local": "a date and time as YYYY-MM-DDTHH:MM (2025-03-04T17:30)",
    "month": "a month as YYYY-MM (2025-03)",
    "week": "a week as YYYY-Www (2025-W09)",
    "time": "a time as HH:MM, 24-hour (17:30)",
    "number": "a number (12.5)",
    "range": "a number within its range",
    "color": "a colour as #rrggbb (#1a2b3c)",
}


async def fill_field(
    element: ElementHandle, text: str, timeout: float, what: str, input_type: str | None = None
) -> None:
    """Playwright's fill, and for a field whose value has one written form (a date, a time, a
    number) the check that it took ``text``: an ActionError naming the form when it did not.
    ``input_type``: the input's type when the caller read it already."""
    if input_type is None:
        input_type = (await element.evaluate(_KIND))[1]
    form = _FIELD_FORMS.get(input_type)
    refused = False
    try:
        await element.fill(text, timeout=timeout)
    except PlaywrightError as e:
        if form is None or "Cannot type text" not in str(e):
            raise
        refused = True  # Playwright refuses a number field's non-number before filling it
    if form is None or (not text.strip() and not refused):
        return
    now = await element.evaluate("el => el.value")  # read once: whether it took, what it holds
    if now and not refused:
        return
    raise ActionError(
        f"{what} is a {input_type} field and takes {form}: {text!r} was not "
        + (f"taken, the field holds '{escape_page_text(now)}'" if now else "taken, the field is empty")
    )


def normalize_keys(keys: str) -> str:
    """``ctrl+a`` -> ``Control+a``, ``Meta+Shift+K`` kept, ``enter`` -> ``Enter``."""
    parts = [p.strip() for p in keys.replace(" + ", "+").split("+")]
    if not all(parts):
        raise ActionError(f"`press` needs keys such as `Control+a` or `Enter`, got [{keys}]")
    return "+".join(_KEY_NAMES.get(p.lower(), p) for p in parts)


# Chromium's network errors, as a person would say why a page did not open.
_CAUSES = (
    ("ERR_CONNECTION_REFUSED", "the connection was refused (nothing listens at that host and port)"),
    ("ERR_NAME_NOT_RESOLVED", "the host name does not resolve"),
    ("ERR_NAME_RESOLUTION_FAILED", "the host name does not resolve"),
    ("ERR_ADDRESS_UNREACHABLE", "the address is unreachable"),
    ("ERR_CONNECTION_TIMED_OUT", "the connection timed out"),
    ("ERR_CONNECTION_RESET", "the connection was reset"),
    ("ERR_CONNECTION_CLOSED", "the server closed the connection"),
    ("ERR_EMPTY_RESPONSE", "the server answered nothing"),
    ("ERR_CERT_", "the server's TLS certificate is not trusted"),
    ("ERR_SSL_", "the TLS handshake failed"),
    ("ERR_INTERNET_DISCONNECTED", "there is no network"),
    ("ERR_TOO_MANY_REDIRECTS", "it redirects in a loop"),
    ("ERR_ABORTED", "the navigation was cancelled (a download, an empty answer, or another navigation)"),
    ("ERR_BLOCKED_BY_CLIENT", "it was blocked (a host off the allow-list)"),
    ("ERR_FILE_NOT_FOUND", "there is no such file"),
    ("ERR_INVALID_URL", "it is not a valid URL"),
    ("ERR_UNSAFE_PORT", "browsers refuse that port (it belongs to another protocol)"),
    ("ERR_HTTP_RESPONSE_CODE_FAILURE", "the server answered with an error status and no page"),
    ("ERR_TIMED_OUT", "the server did not answer in time"),
)


def navigation_failure(url: str, error: Exception, timeout_ms: float) -> NavigationFailed:
    """Why opening ``url`` failed, said plainly, with Chromium's own code (the URL, which a
    page may have written, escaped as the tree's text is)."""
    url = escape_page_text(url)
    if isinstance(error, PlaywrightTimeout):
        return NavigationFailed(f"{url} did not finish loading within {timeout_ms / 1000:g} s")
    message = str(error)
    for code, cause in _CAUSES:
        if code in message:
            at = message.find("net::")
            name = message[at:].split()[0] if at >= 0 else code
            return NavigationFailed(f"{url} cannot be opened: {cause} ({name})")
    first = message.strip().splitlines()[0] if message.strip() else type(error).__name__
    return NavigationFailed(f"{url} cannot be opened: {first}")


async def goto(page: Page, url: str, timeout_ms: float) -> None:
    """``page.goto`` whose failure is an ActionError saying why, leaving the tab on the page it
    was on."""
    loop = asyncio.get_running_loop()
    error_page: asyncio.Future[None] = loop.create_future()

    def committed(frame: Any) -> None:
        if frame == page.main_frame and frame.url.startswith("chrome-error://") and not error_page.done():
            error_page.set_result(None)

    page.on("framenavigated", committed)
    try:
        await page.goto(url, wait_until="load", timeout=timeout_ms)
    except PlaywrightError as e:
        if isinstance(e, PlaywrightTimeout):
            # The request is still pending: stop it, so that the tab shows (and an observation
            # reads) the document it had, not one that never arrives.
            try:
                session = await page.context.new_cdp_session(page)
                try:
                    await asyncio.wait_for(session.send("Page.stopLoading"), 5)
                finally:
                    await session.detach()
            except (PlaywrightError, asyncio.TimeoutError):
                pass
        elif "net::" in str(e) and "ERR_ABORTED" not in str(e):
            # Chromium commits its error page into the tab's history right after: back to the
            # page the agent was on.
            try:
                await asyncio.wait_for(asyncio.shield(error_page), 10)
                # (Asked before the error page has loaded, Chromium answers "not attached".)
                await page.wait_for_load_state("load", timeout=timeout_ms)
                await page.go_back(wait_until="load", timeout=timeout_ms)
            except (PlaywrightError, asyncio.TimeoutError):
                pass
        raise navigation_failure(url, e, timeout_ms) from None
    finally:
        page.remove_listener("framenavigated", committed)


# Past this share of the viewport, a crop shows no more than the viewport does.
_CROP_MAX_SHARE = 0.6
_CROP_MARGIN = 8.0


@dataclass
class Acted:
    """What an action's start looked like: the acted element's box, and (with screenshots on)
    the page at that moment with the viewport region it shows — the box is measured on that
    same picture."""

    box: Box | None = None
    picture: bytes | None = None
    picture_box: Box | None = None


def picture_region(content: Box | None, target: Box | None, viewport: tuple[float, float]) -> Box | None:
    """The region of the viewport a step's picture shows: the page's content and the acted
    element, with a margin, inside the viewport; None (the whole viewport) when that is most of
    it or nothing is known of the content. A small page (MiniWoB++'s 160×210 task) is cut to
    its size, so the viewer can show it at 1× or larger."""
    width, height = viewport
    if content is None or width <= 0 or height <= 0:
        return None
    x0, y0, x1, y1 = content[0], content[1], content[0] + content[2], content[1] + content[3]
    if target is not None:
        x0, y0 = min(x0, target[0]), min(y0, target[1])
        x1, y1 = max(x1, target[0] + target[2]), max(y1, target[1] + target[3])
    x0, y0 = max(0.0, x0 - _CROP_MARGIN), max(0.0, y0 - _CROP_MARGIN)
    x1, y1 = min(width, x1 + _CROP_MARGIN), min(height, y1 + _CROP_MARGIN)
    if x1 - x0 < 1 or y1 - y0 < 1 or (x1 - x0) * (y1 - y0) >= _CROP_MAX_SHARE * width * height:
        return None
    # Whole pixels that hold the region (its far edges rounded outwards).
    left, top = math.floor(x0), math.floor(y0)
    return (left, top, math.ceil(x1) - left, math.ceil(y1) - top)


class Executor:
    """Carries out page actions; internal ones (the table's ``internal``) never reach it."""

    def __init__(self, tabs: Tabs, resolver: ElementResolver, config: BrowserConfig):
        self.tabs = tabs
        self.resolver = resolver
        self.config = config

    @property
    def timeout(self) -> float:
        return self.config.action_timeout_ms

    def handler(self, kind: str) -> Callable[..., Awaitable[None]]:
        """The method carrying out ``kind``: ``_<kind>(element, action)`` for actions on an
        element, ``_<kind>(action)`` for the others."""
        return getattr(self, "_" + ACTIONS[kind].name)  # type: ignore[no-any-return]

    async def run(self, action: Action) -> Acted:
        """Carries ``action`` out; says where the acted element was in the viewport as it
        began and, with ``config.screenshots``, the picture of that moment."""
        if action.internal:
            raise ActionError(f"`{action.kind}` changes the agent, not the page: the browser does not carry it out")
        acted = Acted()
        try:
            if (action.plain_click or action.kind == "hover") and not self.config.screenshots:
                acted.box = await self._pointer(action.target, press=action.kind == "click")
                if acted.box is not None:
                    return acted
            if action.kind == "type" and action.text and not self.config.screenshots:
                acted.box = await self._typed(action)
                if acted.box is not None:
                    return acted
            if action.acts_on_element:
                resolved = await self.resolver.resolve(self.tabs.page, action.target)
                element = resolved.handle
                try:
                    if self.config.screenshots:
                        # In view first, so that the picture shows the element it outlines.
                        await self.resolver.scroll_into_view(resolved)
                        async with self._still():
                            await self._measure(element, acted)
                            await self._picture(acted)
                    else:
                        await self._measure(element, acted)
                    await self.handler(action.kind)(element, action)
                finally:
                    await release(element)
            else:
                if self.config.screenshots:
                    await self._picture(acted)
                await self.handler(action.kind)(action)
        except (ActionError, PlaywrightError, asyncio.TimeoutError) as e:
            raise action_failure(str(action), e) from None
        return acted

    @staticmethod
    async def _measure(element: ElementHandle, acted: Acted) -> None:
        found = await element.bounding_box()
        if found is not None:
            acted.box = (found["x"], found["y"], found["width"], found["height"])

    @contextlib.asynccontextmanager
    async def _still(self) -> AsyncIterator[None]:
        """The page's animations paused (its document timeline at rate 0) while the acted
        element is measured and pictured, so that the outline is where the picture shows it;
        they run on before the action."""
        session = await self.tabs.sessions_for(self.tabs.page).main()
        paused = False
        try:
            await cdp(session, "Animation.setPlaybackRate", {"playbackRate": 0}, self.config.cdp_timeout_s)
            paused = True
        except (PlaywrightError, asyncio.TimeoutError):
            pass  # measured and pictured as it moves
        try:
            yield
        finally:
            if paused:
                await cdp(session, "Animation.setPlaybackRate", {"playbackRate": 1}, self.config.cdp_timeout_s)

    async def _picture(self, acted: Acted) -> None:
        """The page as the action begins, cut to its content and the acted element."""
        page = self.tabs.page
        size = page.viewport_size
        viewport = (float(size["width"]), float(size["height"])) if size else (0.0, 0.0)
        region = picture_region(await self.resolver.content_box(), acted.box, viewport)
        clip = None if region is None else {"x": region[0], "y": region[1], "width": region[2], "height": region[3]}
        acted.picture = await page.screenshot(timeout=self.timeout, clip=clip)  # type: ignore[arg-type]
        acted.picture_box = region if region is not None else (0.0, 0.0, *viewport)

    # -- element actions ----------------------------------------------------------------------

    async def _pointer(self, element_id: int | None, press: bool) -> Box | None:
        """The short way of a hover and a click, with the browser's own input: where it lands
        read by pagelens' world in one call (in view, enabled, not covered), the pointer moved
        there and, a rendering frame later (what :hover restyles is laid out), checked again
        (still there, still hit), then (``press``) pressed and released — about a tenth of
        Playwright's hover and click, which wait on several round trips each. The element's
        box as the action began, or None with no button pressed when any check fails: the
        caller then takes the long way (Playwright's waits and its words for what is wrong)."""
        first = await self.resolver.point(element_id)
        if first is None:
            return None
        session, x, y, _ = first
        t = self.config.cdp_timeout_s
        await cdp(session, "Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y}, t)
        again = await self.resolver.point(element_id, settle=True)
        if again is None or (again[1], again[2]) != (x, y):
            return None
        for kind, buttons in (("mousePressed", 1), ("mouseReleased", 0)) if press else ():
            event = {"type": kind, "x": x, "y": y, "button": "left", "buttons": buttons, "clickCount": 1}
            await cdp(session, "Input.dispatchMouseEvent", event, t)
        return again[3]

    async def _typed(self, action: Action) -> Box | None:
        """The short way of typing into a text field: the field made ready by pagelens' world in
        one call (in view, enabled, editable, not inert, its text selected, focused), then the
        text inserted as one edit by the browser — what Playwright's fill does, without its
        waits and round trips (~a fifth of its CPU). The field's box, or None with no text
        typed when it is not such a field now: the caller then takes the long way (Playwright's
        waits, and the checks of a date's or a number's written form)."""
        found = await self.resolver.field(action.target)
        if found is None:
            return None
        session, box = found
        await cdp(session, "Input.insertText", {"text": action.text or ""}, self.config.cdp_timeout_s)
        if action.press_enter:
            await self.tabs.page.keyboard.press("Enter")
        return box

    async def _click(self, element: ElementHandle, action: Action) -> None:
        select = await self._owning_select(element)
        if select is not None:
            try:
                await select.select_option(element=element, timeout=self.timeout)
            finally:
                await release(select)
            return
        # The pointer arrives first, as a person's does: a page that restyles an element on
        # :hover (an icon swapping its image) settles before the click, which Playwright only
        # sends once the element is visible and stable again. Both scroll the element into
        # view themselves (a scroll of our own first only cost another wait for stability).
        await element.hover(timeout=self.timeout)
        if action.plain_click:
            await element.click(timeout=self.timeout)
        else:  # a front's double or right click, keys held (Playwright MCP's browser_click)
            modifiers: Any = list(action.modifiers)
            await element.click(
                timeout=self.timeout, button=action.button, click_count=action.clicks, modifiers=modifiers
            )

    async def _hover(self, element: ElementHandle, action: Action) -> None:
        await element.scroll_into_view_if_needed(timeout=self.timeout)
        await element.hover(timeout=self.timeout)

    async def _type(self, element: ElementHandle, action: Action) -> None:
        text = action.text or ""
        kind, field, *near = await element.evaluate(_KIND)
        if kind == "press":
            # Typing never presses: a click to focus it would press the button, follow the link,
            # tick the box (and Space or Enter would press it again).
            nearest = f"; the nearest text field is '{escape_page_text(near[0])}'" if near and near[0] else ""
            raise ActionError(
                f"element [{action.target}] is a {field} and takes no text: nothing was typed and it was "
                f"not pressed; type into a text field's id{nearest}"
            )
        if kind == "select":
            # Typing into a native <select> chooses the option with that label (or value).
            await choose_options(element, [text], self.timeout)
        elif kind == "fill":
            await element.scroll_into_view_if_needed(timeout=self.timeout)
            await fill_field(element, text, self.timeout, f"element [{action.target}]", field)
        else:
            # A custom widget (a div-based combobox...): focus it by clicking, then type keys —
            # unless the click left the focus where keys fill nothing (a link, a button, the page
            # itself): typed there they are lost, or Space and Enter press it again.
            await element.scroll_into_view_if_needed(timeout=self.timeout)
            await element.click(timeout=self.timeout)
            focus = await self.resolver.focus()
            if focus in ("control", "nowhere"):
                where = "a link, a button or a box to tick" if focus == "control" else "no element"
                raise ActionError(
                    f"element [{action.target}] takes no text: clicking it left the focus on {where}, "
                    "so nothing was typed (the click was made); type into a text field's id"
                )
            await self.tabs.page.keyboard.type(text)
        if action.press_enter:
            await self.tabs.page.keyboard.press("Enter")

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

    async def _press(self, action: Action) -> None:
        await self.tabs.page.keyboard.press(normalize_keys(action.text or ""))

    async def _scroll(self, action: Action) -> None:
        sign = -1 if action.text == "up" else 1
        await self.tabs.page.evaluate("s => window.scrollBy(0, s * window.innerHeight * 0.9)", sign)

    async def _goto(self, action: Action) -> None:
        await self.navigate(web_address(action.text or ""))

    async def navigate(self, url: str) -> None:
        allow = self.tabs.allow
        if allow is not None and not allow.allows(url):
            raise NavigationRefused(allow.refusal(url))
        await goto(self.tabs.page, url, self.config.navigation_timeout_ms)

    async def _go_home(self, action: Action) -> None:
        home = self.config.home_url or self.tabs.start_url
        if not home:
            raise ActionError("no home page is configured for this run")
        await self.navigate(home)

    async def _go_back(self, action: Action) -> None:
        entries, current = await self._history()
        # The tab's first entry is the blank page it opened with: not a page to go back to.
        if current == 0 or (current == 1 and entries[0]["url"] == "about:blank"):
            raise ActionError("there is no previous page in this tab")
        await self.tabs.page.go_back(timeout=self.config.navigation_timeout_ms)

    async def _go_forward(self, action: Action) -> None:
        entries, current = await self._history()
        if current >= len(entries) - 1:
            raise ActionError("there is no next page in this tab")
        await self.tabs.page.go_forward(timeout=self.config.navigation_timeout_ms)

    async def _history(self) -> tuple[list[dict[str, Any]], int]:
        session = await self.tabs.sessions_for(self.tabs.page).main()
        history = await cdp(session, "Page.getNavigationHistory", timeout=self.config.cdp_timeout_s)
        return history["entries"], history["currentIndex"]

    async def _new_tab(self, action: Action) -> None:
        page = await self.tabs.context.new_page()
        self.tabs.set_active_page(page)

    async def _tab_focus(self, action: Action) -> None:
        pages = self.tabs.context.pages
        index = action.target if action.target is not None else -1
        if not 0 <= index < len(pages):
            raise ActionError(f"there is no tab {index}; tabs are numbered 0 to {len(pages) - 1}")
        self.tabs.set_active_page(pages[index])
        await pages[index].bring_to_front()

    async def _close_tab(self, action: Action) -> None:
        page = self.tabs.page
        await page.close()
        pages = self.tabs.context.pages
        if pages:
            self.tabs.set_active_page(pages[-1])
            await pages[-1].bring_to_front()
        else:
            self.tabs.set_active_page(await self.tabs.context.new_page())

    async def _noop(self, action: Action) -> None:
        pass


def action_failure(description: str, error: Exception) -> ActionError:
    """The :class:`ActionError` an action that raised ``error`` is reported as (the error
    itself when it is one): what was tried and why it failed, in a line."""
    if isinstance(error, ActionError):
        return error
    if isinstance(error, PlaywrightTimeout):
        return ActionError(f"`{description}` timed out: {_first_line(error)}")
    if isinstance(error, asyncio.TimeoutError):
        return ActionError(f"`{description}` timed out: the browser did not answer")
    return ActionError(f"`{description}` failed: {_first_line(error)}")


# A <select>'s options as (value, label, disabled), read at once: Playwright's own
# select_option(label=...) waits its whole timeout for an option that is not there.
_OPTIONS = "el => el.tagName === 'SELECT' ? [...el.options].map(o => [o.value, o.label, o.disabled]) : null"


async def choose_options(element: ElementHandle, wanted: list[str], timeout_ms: float) -> list[str]:
    """Selects the options of the ``<select>`` ``element`` that ``wanted`` names, each by its
    label or its value (exactly, else ignoring case and surrounding spaces); returns their
    labels. An option that is not there is an :class:`ActionError` listing the options."""
    options = await element.evaluate(_OPTIONS)
    if options is None:
        raise ActionError("the element is not a drop-down (<select>): click it, then click the option")
    chosen: list[str] = []
    labels: list[str] = []
    for want in wanted:
        match = next((o for o in options if want in (o[1], o[0])), None)
        if match is None:
            folded = want.strip().casefold()
            match = next((o for o in options if folded in (o[1].strip().casefold(), o[0].strip().casefold())), None)
        if match is None:
            shown = ", ".join(repr(o[1]) for o in options[:50]) + (" ..." if len(options) > 50 else "")
            raise ActionError(
                f"the drop-down has no option {escape_page_text(repr(want))}; its options are {escape_page_text(shown)}"
            )
        if match[2]:
            raise ActionError(f"the option {escape_page_text(repr(match[1]))} is disabled")
        chosen.append(match[0])
        labels.append(match[1])
    await element.select_option(value=chosen, timeout=timeout_ms)
    return labels


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
