"""What an agent can do in its browser session, one coroutine each, named and shaped as
Playwright MCP's tools (``browser_click(session, ref=..., element=...)``): the MCP server
registers them as its tools (their docstrings are the tools' descriptions) and ``pagelens
browser``'s daemon runs them for shell commands, so both act on the page the same way, on the
environment's one action path. Each answers text (or a picture) and raises
:class:`~pagelens.browser.session.SessionError` s whose kind says what went wrong.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict, cast

from playwright.async_api import TimeoutError as PlaywrightTimeout

from pagelens._core import chunk as chunk_text
from pagelens._core import escape_page_text, find_lines
from pagelens._io import write_atomically
from pagelens.actions import Action, ActionError
from pagelens.browser.execute import choose_options, fill_field, normalize_keys
from pagelens.browser.session import BrowserSession, SessionError, SessionOptions, inside, one_ref, parse_ref
from pagelens.browser.tools import TOOLS
from pagelens.errors import one_line
from pagelens.hosts import web_address

_FIND_MOST = 200  # lines a find answers with
_WAIT_CAP_S = 30.0  # browser_wait_for's `time` is capped as Playwright MCP caps it
_WAIT_MOST_S = 240.0  # the longest a wait for text may be asked to take (within a shell answer's 300 s)


def element_part(text: str, element_id: int) -> str | None:
    """The lines of an observation's ``text`` that show element ``element_id``: the line that
    prints its id and the deeper lines under it, ids kept (None: the text does not print it)."""
    mark = re.compile(rf"(?<!\\)\*?\[{element_id}\]")
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if mark.search(line):
            depth = len(line) - len(line.lstrip("\t"))
            end = i + 1
            while end < len(lines) and len(lines[end]) - len(lines[end].lstrip("\t")) > depth:
                end += 1
            return "\n".join(lines[i:end])
    return None


class Picture:
    """An image an operation answers (a screenshot): its bytes and format."""

    def __init__(self, data: bytes, format: str) -> None:  # noqa: A002
        self.data, self.format = data, format


# -- navigation -----------------------------------------------------------------------


async def browser_navigate(s: BrowserSession, url: str) -> str:
    """Navigate to a URL"""
    s._refuse_if_modal()
    url = web_address(url)
    return await s.run(f"Opened {escape_page_text(url)}", s.opening(url), full=True, opening=True)


async def browser_navigate_back(s: BrowserSession) -> str:
    """Go back to the previous page in the history"""
    env = s.page_env()
    return await s.run("Went back", lambda: env.step(Action("go_back")))


async def browser_navigate_forward(s: BrowserSession) -> str:
    """Go forward to the next page in the history"""
    env = s.page_env()
    return await s.run("Went forward", lambda: env.step(Action("go_forward")))


# -- reading --------------------------------------------------------------------------


async def browser_snapshot(
    s: BrowserSession,
    target: str | None = None,
    ref: str | None = None,
    filename: str | None = None,
    depth: int | None = None,
    part: int | None = None,
) -> str:
    """Capture the page as pagelens' text: every element you can act on has an id in brackets ([12]),
    to pass as ref. This is better than a screenshot. `ref`/`target`: only the part of the page
    around that element; `filename`: write the text there instead; `depth`: keep lines up to that
    depth of the tree; `part`: on a page over the budget, its Nth part (the answer says how many)."""
    env = s.page_env()
    if part is not None and part < 1:
        raise SessionError(f"part is 1 or more, not {part}")
    obs = await s.read(env.observe)
    s.last = obs
    await s.locate(obs)
    text = obs.text
    given = ref if ref is not None else target
    if given is not None:
        element_id = parse_ref(given)
        if element_id not in obs.tree:
            raise SessionError(f"there is no element [{element_id}] on the page: take a new snapshot", "unknown_id")
        text = element_part(obs.text, element_id) or obs.tree.subtree([element_id]).text
    if depth is not None:
        if depth < 0:
            raise SessionError(f"depth is 0 or more, not {depth}")
        text = "\n".join(line for line in text.split("\n") if len(line) - len(line.lstrip("\t")) <= depth)
    if filename is not None:
        path = _output_path(s.options, filename)
        write_atomically(path, text, private=True)
        return f"### Snapshot\nwritten to {path}"
    if given is None and depth is None:
        return s.snapshot_answer(obs, part=part)
    return "\n".join(["### Snapshot", text])


async def browser_observe(s: BrowserSession, max_tokens: int | None = None, subtree_of: int | None = None) -> str:
    """pagelens' own: the page as text with element ids within `max_tokens` (over it: written to a
    file, linked), or only the part of the page around element id `subtree_of`."""
    env = s.page_env()
    obs = await s.read(env.observe)
    s.last = obs
    if subtree_of is not None:
        if subtree_of not in obs.tree:
            raise SessionError(f"there is no element [{subtree_of}] on the page")
        return obs.tree.subtree([subtree_of]).text
    if max_tokens is not None and max_tokens < 1:
        raise SessionError(f"max_tokens is 1 or more, not {max_tokens}")
    await s.locate(obs)
    return s.snapshot_answer(obs, max_tokens)


async def browser_find(s: BrowserSession, pattern: str, regex: bool = False) -> str:
    """pagelens' own: the lines of the page that contain `pattern` (or match it as a regular
    expression), each with the path of its ancestors, so that ids are found without reading it all."""
    if not pattern.strip():
        raise SessionError("nothing to find: an empty pattern would match every line (give words or a regex)", "usage")
    env = s.page_env()
    obs = await s.read(env.observe)
    s.last = obs
    # A linear-time engine, off the event loop: no pattern can stall the server.
    hits = set(await asyncio.to_thread(find_lines, obs.text, pattern, regex))
    return matching_lines(obs.text, hits, pattern)


def matching_lines(text: str, hits: set[int], pattern: str, most: int = _FIND_MOST) -> str:
    """The lines ``hits`` numbers, each with the path of its ancestors, the first ``most`` of
    them; how many matched, and that the rest were left out when they were."""
    found: list[str] = []
    count = 0
    ancestors: list[tuple[int, str]] = []
    for i, line in enumerate(text.split("\n")):
        depth = len(line) - len(line.lstrip("\t"))
        while ancestors and ancestors[-1][0] >= depth:
            ancestors.pop()
        if i in hits:
            count += 1
            if len(found) < most:
                path = " > ".join(above.strip()[:60] for _, above in ancestors)
                found.append(f"{line.strip()}" + (f"    (in: {path})" if path else ""))
        ancestors.append((depth, line))
    if not found:
        return f"nothing on the page matches {pattern!r}"
    left = f" (the first {most} shown: a longer pattern narrows them)" if count > most else ""
    matched = "1 line matches" if count == 1 else f"{count} lines match"
    return f"{matched} {pattern!r}{left}:\n" + "\n".join(found)


async def browser_html(s: BrowserSession, chunk: int = 0, max_tokens: int = 4096) -> str:
    """pagelens' own: the page's HTML, cleaned as ScribeAgent reads it (ids as node="N"), one chunk
    of `max_tokens` at a time: `chunk` picks which (the answer says how many there are)."""
    env = s.page_env()
    html = await s.read(env.observe_html)
    chunks = chunk_text(html.dom.clean("scribe").html(), max_tokens)
    s.last = await s.read(env.observe)  # actions name the text observation's ids again
    if not 0 <= chunk < len(chunks):
        raise SessionError(f"there are {len(chunks)} chunks (0 to {len(chunks) - 1}), not {chunk}")
    return f"chunk {chunk} of {len(chunks)} (0-based):\n{chunks[chunk].text}"


# -- acting on elements ---------------------------------------------------------------


def described(element: str | None, element_id: int) -> str:
    """An element as an answer names it: its description, then its id."""
    return f"{escape_page_text(element)} [{element_id}]" if element else f"[{element_id}]"


def as_read(s: BrowserSession, element: str | None, element_id: int) -> str:
    """An element as the last reading shows it (its role and name, then its id), not as the caller
    described it: a description can name another element than the id does."""
    last = s.last
    if last is not None and element_id in last.tree:
        node = last.tree.node(element_id)
        name = f" '{escape_page_text(node.name)}'" if node.name else ""
        return f"{node.role}{name} [{element_id}]"
    return described(element, element_id)


async def browser_click(
    s: BrowserSession,
    element: str | None = None,
    ref: str | None = None,
    target: str | None = None,
    doubleClick: bool = False,  # noqa: N803 (Playwright MCP's argument names)
    button: Literal["left", "right", "middle"] = "left",
    modifiers: list[Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]] | None = None,
) -> str:
    """Perform click on a web page element (ref: its id from the snapshot; an option of a drop-down is
    chosen this way too)"""
    env = s.page_env()
    element_id = one_ref(ref, target)
    what = f"{'Double-clicked' if doubleClick else 'Clicked'} {described(element, element_id)}"
    action = Action(
        "click", target=element_id, button=button, clicks=2 if doubleClick else 1, modifiers=tuple(modifiers or ())
    )
    return await s.run(what, lambda: env.step(action))


async def browser_type(
    s: BrowserSession,
    text: str,
    element: str | None = None,
    ref: str | None = None,
    target: str | None = None,
    submit: bool = False,
    slowly: bool = False,
) -> str:
    """Type text into editable element (its content replaced; `slowly`: one key at a time, for pages
    that react to keys; `submit`: press Enter after; a date or time field takes 2025-03-04, 17:30)"""
    env = s.page_env()
    element_id = one_ref(ref, target)
    what = f"Typed into {as_read(s, element, element_id)}"
    if not slowly:
        return await s.run(what, lambda: env.step(Action("type", target=element_id, text=text, press_enter=submit)))

    async def type_slowly() -> None:
        async with env.element(element_id) as handle:
            await handle.fill("")
            await handle.type(text)  # key by key: the page sees every keydown
            if submit:
                await handle.press("Enter")

    return await s.run(what, lambda: env.perform(f"type into [{element_id}]", type_slowly))


class FormField(TypedDict):
    """One field of ``browser_fill_form``, as Playwright MCP declares it (the MCP server shows
    each key's words, the Annotated text, in the tool's schema)."""

    name: Annotated[str, "Human-readable field name"]
    type: Annotated[Literal["textbox", "checkbox", "radio", "combobox", "slider"], "Type of the field"]
    ref: Annotated[str, "Exact target field reference from the page snapshot"]
    value: Annotated[
        str,
        "Value to fill in the field. If the field is a checkbox, the value should be `true` or `false`. If the "
        "field is a combobox, the value should be the text of the option.",
    ]


async def browser_fill_form(s: BrowserSession, fields: Annotated[list[FormField], "Fields to fill in"]) -> str:
    """Fill multiple form fields. Each field: name (human-readable), type (textbox, checkbox, radio,
    combobox or slider), ref (its id), value (for a checkbox or radio "true" or "false", for a
    combobox the option's text)."""
    env = s.page_env()
    plan: list[tuple[str, str, int, str]] = []
    for i, f in enumerate(cast("list[Any]", fields)):  # the shell's are any JSON
        if not isinstance(f, dict):
            raise SessionError(f"field {i} is not an object with name, type, ref and value")
        kind = f.get("type")
        if kind not in ("textbox", "checkbox", "radio", "combobox", "slider"):
            raise SessionError(f"field {i} ({f.get('name')!r}): type is textbox, checkbox, radio, combobox or slider")
        value = f.get("value")
        if not isinstance(value, str):
            raise SessionError(f"field {i} ({f.get('name')!r}): value is a string")
        plan.append((str(f.get("name") or ""), kind, one_ref(f.get("ref"), f.get("target"), f"field {i}'s ref"), value))

    async def fill() -> None:
        for name, kind, element_id, value in plan:
            async with env.element(element_id) as handle:
                try:
                    if kind in ("textbox", "slider"):
                        await fill_field(handle, value, env.config.action_timeout_ms, f"[{element_id}]")
                    elif kind in ("checkbox", "radio"):
                        await handle.set_checked(value.strip().lower() == "true")
                    else:
                        await choose_options(handle, [value], env.config.action_timeout_ms)
                except ActionError as e:
                    raise ActionError(f"{name or f'[{element_id}]'}: {e}") from None

    return await s.run(f"Filled {len(plan)} fields", lambda: env.perform("fill the form", fill))


async def browser_select_option(
    s: BrowserSession,
    values: list[str],
    element: str | None = None,
    ref: str | None = None,
    target: str | None = None,
) -> str:
    """Select an option in a dropdown (each of `values` by its value or its label)"""
    env = s.page_env()
    element_id = one_ref(ref, target)
    if not values:
        raise SessionError("values names at least one option")
    chosen: list[str] = []

    async def select() -> None:
        async with env.element(element_id) as handle:
            chosen.extend(await choose_options(handle, values, env.config.action_timeout_ms))

    answer = await s.run(
        f"Selected in {described(element, element_id)}", lambda: env.perform(f"select in [{element_id}]", select)
    )
    return answer


async def browser_hover(
    s: BrowserSession, element: str | None = None, ref: str | None = None, target: str | None = None
) -> str:
    """Hover over element on page"""
    env = s.page_env()
    element_id = one_ref(ref, target)
    return await s.run(
        f"Hovered over {described(element, element_id)}", lambda: env.step(Action("hover", target=element_id))
    )


async def browser_drag(
    s: BrowserSession,
    startElement: str | None = None,  # noqa: N803 (Playwright MCP's argument names)
    startRef: str | None = None,  # noqa: N803
    endElement: str | None = None,  # noqa: N803
    endRef: str | None = None,  # noqa: N803
    startTarget: str | None = None,  # noqa: N803
    endTarget: str | None = None,  # noqa: N803
) -> str:
    """Perform drag and drop between two elements"""
    env = s.page_env()
    start = one_ref(startRef, startTarget, "startRef")
    end = one_ref(endRef, endTarget, "endRef")

    async def drag() -> None:
        async with env.element(start) as source, env.element(end) as dest:
            await source.scroll_into_view_if_needed()
            a = await source.bounding_box()
            b = await dest.bounding_box()
            if a is None or b is None:
                raise ActionError("an element of the drag has no box on the page (hidden?)")
            mouse = env.page.mouse
            await mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
            await mouse.down()
            await mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=8)
            await mouse.up()

    what = f"Dragged {described(startElement, start)} to {described(endElement, end)}"
    return await s.run(what, lambda: env.perform(f"drag [{start}] to [{end}]", drag))


async def browser_press_key(s: BrowserSession, key: str) -> str:
    """Press a key on the keyboard, such as `ArrowLeft`, `a` or `Control+a`"""
    env = s.page_env()
    if not key.strip():
        raise SessionError("key names a key, e.g. Enter, ArrowLeft, a or Control+a")
    normalize_keys(key)
    return await s.run(f"Pressed {escape_page_text(key)}", lambda: env.step(Action("press", text=key)))


async def browser_scroll(s: BrowserSession, direction: str = "down", ref: str | None = None) -> str:
    """pagelens' own: scroll the page one screen up or down; with `ref`, that scrollable element
    (a list, a panel) by its own height."""
    env = s.page_env()
    if direction not in ("up", "down"):
        raise SessionError(f"direction is up or down, not {direction!r}", "usage")
    if ref is None:
        return await s.run(f"Scrolled {direction}", lambda: env.step(Action("scroll", text=direction)))
    element_id = parse_ref(ref)
    sign = -1 if direction == "up" else 1

    async def scroll() -> None:
        async with env.element(element_id) as handle:
            await handle.evaluate("(el, s) => el.scrollBy(0, s * Math.max(el.clientHeight, 40) * 0.9)", sign)

    return await s.run(f"Scrolled [{element_id}] {direction}", lambda: env.perform(f"scroll [{element_id}]", scroll))


# -- waiting, tabs, dialogs, files --------------------------------------------------------


async def browser_wait_for(
    s: BrowserSession,
    time: float | None = None,  # noqa: A002 (Playwright MCP's argument name)
    text: str | None = None,
    textGone: str | None = None,  # noqa: N803
    timeout: float | None = None,
) -> str:
    """Wait for text to appear or disappear or a specified time to pass (seconds, at most 30).
    Text is waited for up to `timeout` seconds (default 30, at most 240)"""
    env = s.page_env()
    s._refuse_if_modal()
    if not text and not textGone and not time:
        raise SessionError("give time, text or textGone")
    if time is not None and not 0 <= time < math.inf:
        raise SessionError(f"time is 0 or more seconds, not {time}")
    if timeout is not None and not 0 < timeout <= _WAIT_MOST_S:
        raise SessionError(f"timeout is more than 0 and at most {_WAIT_MOST_S:g} seconds, not {timeout}")
    # Playwright MCP waits for text as long as its actions (5 s by default): a report that a
    # real server takes 7 s to make is missed. Text is waited for as long as `time` may be.
    limit_s = timeout or _WAIT_CAP_S
    waited: list[float] = []

    async def wait() -> None:
        if time:
            await asyncio.sleep(min(_WAIT_CAP_S, time))
        t0 = asyncio.get_running_loop().time()
        try:
            if textGone:
                await env.page.get_by_text(textGone).first.wait_for(state="hidden", timeout=limit_s * 1e3)
            if text:
                await env.page.get_by_text(text).first.wait_for(state="visible", timeout=limit_s * 1e3)
        except PlaywrightTimeout:
            what = repr(text) + " to appear" if text else repr(textGone) + " to go"
            raise ActionError(
                f"waited {limit_s:g} s for {escape_page_text(what)}: it did not (give a longer timeout, up to "
                f"{_WAIT_MOST_S:g} s, to wait longer)"
            ) from None
        except Exception as e:
            raise ActionError(f"could not wait for the text: {one_line(e)}") from None
        waited.append(asyncio.get_running_loop().time() - t0)

    def what() -> str:
        return waited_for(time, text, textGone, waited[0] if waited and (text or textGone) else None)

    return await s.run(what, lambda: env.perform("wait", wait))


def waited_for(
    time: float | None, text: str | None, gone: str | None = None, seconds_on_text: float | None = None
) -> str:  # noqa: A002 (the tool's argument)
    """What a wait says it did: the text it waited for (to go) and how long that took, else the
    time it waited — the capped time when more was asked (Playwright MCP caps it too, but says
    the time asked)."""
    took = f" ({seconds_on_text:.1f} s)" if seconds_on_text is not None else ""
    if text:
        return f"Waited for {escape_page_text(repr(text))}{took}"
    if gone:
        return f"Waited for {escape_page_text(repr(gone))} to go{took}"
    seconds = time or 0.0
    if seconds > _WAIT_CAP_S:
        return f"Waited for {_WAIT_CAP_S:g} s, the most one wait takes ({seconds:g} s were asked)"
    return f"Waited for {seconds:g} s"


async def browser_tabs(
    s: BrowserSession,
    action: Literal["list", "new", "close", "select"],
    index: int | None = None,
    url: str | None = None,
) -> str:
    """List, create, close, or select a browser tab (`index` for close/select: the current one when
    omitted for close; `url` to open in a new one)"""
    env = s.page_env()
    if action == "list":
        obs = await s.read(env.observe)
        s.last = obs
        return "\n".join(["### Open tabs", *s._tab_lines(obs)])
    if action == "new":
        if url is None:
            return await s.run("Opened a new tab", lambda: env.step(Action("new_tab")))
        url = web_address(url)
        opening = s.opening(url)  # the address checked before the tab is made: a refused one makes none
        before = env.context.pages.index(env.page) if env.page in env.context.pages else None
        await s.run("Opened a new tab", lambda: env.step(Action("new_tab")))
        try:
            return await s.run(f"Opened {escape_page_text(url)} in a new tab", opening, full=True)
        except SessionError:
            # The page could not be opened: the command failed whole, so the tab it made is
            # closed again and the one before is current, as if it had not run.
            with contextlib.suppress(Exception):
                await env.step(Action("close_tab"), observe=False)
                if before is not None:  # read again: its ids stand for the next command
                    back = await env.step(Action("tab_focus", target=before))
                    if back.observation is not None:
                        s.last = back.observation
            raise
    if action == "select":
        if index is None:
            raise SessionError("select needs the tab's index (browser_tabs list shows them)")
        return await s.run(f"Selected tab {index}", lambda: env.step(Action("tab_focus", target=index)), full=True)
    if index is not None:
        pages = env.context.pages
        if not 0 <= index < len(pages):
            raise SessionError(f"there is no tab {index}; tabs are numbered 0 to {len(pages) - 1}")
        await env.step(Action("tab_focus", target=index), observe=False)
    return await s.run("Closed the tab", lambda: env.step(Action("close_tab")), full=True)


async def browser_handle_dialog(s: BrowserSession, accept: bool, promptText: str | None = None) -> str:  # noqa: N803
    """Handle a dialog (accept, with promptText for a prompt, or dismiss)"""
    env = s.page_env()
    which = await env.answer_dialog(accept, promptText)
    what = f"{'Accepted' if accept else 'Dismissed'} the {which}"
    pending, s.pending = s.pending, None
    if env.pending_dialogs and pending is not None:
        s.pending = pending
        return s.compose(f"{what}; another dialog is open", None)
    if pending is not None:
        try:
            result = await asyncio.wait_for(pending, env.config.navigation_timeout_ms / 1000)
        except asyncio.TimeoutError:
            raise SessionError(f"{what}, but the action it interrupted did not finish") from None
        return s.finish(what, result)
    return s.finish(what, await env.perform("after the dialog", _nothing))


async def browser_file_upload(s: BrowserSession, paths: list[str] | None = None) -> str:
    """Upload one or multiple files to the file chooser a click opened (absolute paths, in the
    client's roots — else the server's working directory —, its output directory or an
    --allow-file directory); without paths, the chooser is cancelled"""
    env = s.page_env()
    if not s.choosers:
        raise SessionError("no file chooser is open: click the page's file input first")
    files = [Path(p) for p in paths or []]
    # As Playwright MCP: the folders the client named as its roots, when it names any.
    roots = (*(s.file_roots if s.file_roots else (Path.cwd(),)), s.options.output_dir, *s.options.allow_file)
    for f in files:
        if not inside(f, roots):
            raise SessionError(f"{f} is outside the directories files may come from: {', '.join(map(str, roots))}")
        if not f.is_file():
            raise SessionError(f"{f} is not a file")
    chooser = s.choosers.pop(0)

    async def upload() -> None:
        if files:
            await chooser.set_files([str(f) for f in files])

    what = f"Uploaded {len(files)} files" if files else "Cancelled the file chooser"
    return await s.run(what, lambda: env.perform("upload files", upload))


# -- the browser ------------------------------------------------------------------------


async def browser_take_screenshot(
    s: BrowserSession,
    type: Literal["png", "jpeg"] = "png",  # noqa: A002 (Playwright MCP's argument name)
    filename: str | None = None,
    fullPage: bool = False,  # noqa: N803
    element: str | None = None,
    ref: str | None = None,
    target: str | None = None,
    with_ids: bool = False,
) -> Any:
    """Take a screenshot of the current page (you can't act on a screenshot: use browser_snapshot
    for that). `ref`: that element only; `fullPage`: the whole scrollable page; `with_ids` (pagelens'
    own): the ids of the last snapshot outlined and written on it."""
    env = s.page_env()
    given = ref if ref is not None else target
    timeout = env.config.action_timeout_ms
    if with_ids and (given is not None or fullPage or type != "png"):
        raise SessionError("with_ids draws on a png of the viewport: leave out ref, fullPage and type")

    async def shoot() -> bytes:
        if with_ids:
            return await env.screenshot(with_ids=True)
        if given is not None:
            async with env.element(parse_ref(given)) as handle:
                return await handle.screenshot(type=type, timeout=timeout)
        return await env.page.screenshot(type=type, full_page=fullPage, timeout=timeout)

    data = await s.read(shoot)
    if filename is not None:
        path = _output_path(s.options, filename)
        write_atomically(path, data, private=True)
        return f"### Result\nScreenshot written to {path}"
    return Picture(data, type)


async def browser_console_messages(
    s: BrowserSession,
    level: Literal["error", "warning", "info", "debug"] = "info",
    all: bool = False,  # noqa: A002 (Playwright MCP's argument name)
) -> str:
    """Returns the console messages (of `level` and more severe ones), since the last navigation
    unless `all`"""
    s.page_env()
    rank = {"error": 0, "warning": 1, "info": 2, "log": 2, "debug": 3}
    wanted = rank[level]
    messages = [
        (lvl, text) for nav, lvl, text in s.console if (all or nav == s.navigations) and rank.get(lvl, 2) <= wanted
    ]
    counted = [m for m in s.console if all or m[0] == s.navigations]
    errors = sum(1 for _, lvl, _ in counted if lvl == "error")
    warnings = sum(1 for _, lvl, _ in counted if lvl == "warning")
    head = f"Total messages: {len(counted)} (Errors: {errors}, Warnings: {warnings})"
    return "\n".join([head, *(f"[{lvl.upper()}] {escape_page_text(text)}" for lvl, text in messages)])


async def browser_network_requests(s: BrowserSession, static: bool = False, filter: str | None = None) -> str:  # noqa: A002
    """Returns the network requests since loading the page (`static`: successful images, fonts,
    scripts and styles too; `filter`: a regular expression their URL must match)"""
    s.page_env()
    pattern = None
    if filter:
        try:
            pattern = re.compile(filter)
        except re.error as e:
            raise SessionError(f"filter is not a regular expression: {e}") from None
    lines: list[str] = []
    hidden = 0
    for i, (nav, request) in enumerate(s.requests, 1):
        if nav != s.navigations:
            continue
        failure = request.failure
        response = None if failure else await request.response()
        status = f"[FAILED] {failure}" if failure else (f"[{response.status}]" if response else "")
        ok = failure is None and response is not None and response.status < 400
        if not static and ok and request.resource_type not in ("document", "xhr", "fetch", "websocket", "other"):
            hidden += 1
            continue
        if pattern is not None and not pattern.search(request.url):
            continue
        lines.append(f"{i}. [{request.method}] {escape_page_text(request.url)} => {status}")
    if hidden:
        lines.append(f"Note: {hidden} static requests not shown, pass static=true to see them.")
    return "\n".join(lines) if lines else "no requests since the page loaded"


async def browser_resize(s: BrowserSession, width: int, height: int) -> str:
    """Resize the browser window"""
    env = s.page_env()
    if not (1 <= width <= 10_000 and 1 <= height <= 10_000):
        raise SessionError(f"width and height are 1 to 10000 pixels, not {width}×{height}")
    return await s.run(
        f"Resized to {width}×{height}",
        lambda: env.perform("resize", lambda: env.page.set_viewport_size({"width": width, "height": height})),
    )


async def browser_close(s: BrowserSession) -> str:
    """Close the page (the session's browser; browser_navigate opens a new one)"""
    await s.close()
    return "### Result\nClosed the browser; browser_navigate opens a new one."


async def browser_evaluate(
    s: BrowserSession,
    function: str,
    element: str | None = None,
    ref: str | None = None,
    target: str | None = None,
) -> str:
    """Evaluate a JavaScript function in the page, `() => { ... }` or, with ref, `(element) => { ... }`
    (enabled by --caps evaluate)"""
    env = s.page_env()
    given = ref if ref is not None else target
    code = f"async (element) => {{ const f = ({function}); return typeof f === 'function' ? await f(element) : f; }}"

    async def evaluate() -> Any:
        if given is not None:
            async with env.element(parse_ref(given)) as handle:
                return await handle.evaluate(code)
        return await env.page.evaluate(code, None)

    value = await s.read(evaluate)
    return "### Result\n" + escape_page_text(
        json.dumps(value, indent=2, default=str) if value is not None else "undefined"
    )


async def _nothing() -> None:
    return None


def _output_path(options: SessionOptions, filename: str) -> Path:
    """Where a file the client names is written: inside the output directory."""
    path = (options.output_dir / filename).resolve()
    if not inside(path, (options.output_dir,)):
        raise SessionError(f"{filename!r} is outside the output directory {options.output_dir}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _operations() -> tuple[Callable[..., Any], ...]:
    """The coroutine of every tool in the table, in its order: a tool without one, or one
    without its tool, is a mistake that stops the import."""
    here = {name: fn for name, fn in globals().items() if name.startswith("browser_") and callable(fn)}
    missing = [t.name for t in TOOLS if t.name not in here]
    untabled = sorted(set(here) - {t.name for t in TOOLS})
    if missing or untabled:
        raise ImportError(f"tools without an operation: {missing}; operations not in the tools' table: {untabled}")
    return tuple(here[t.name] for t in TOOLS)


OPERATIONS: tuple[Callable[..., Any], ...] = _operations()
"""Every tool's coroutine, in the order of :data:`~pagelens.browser.tools.TOOLS`."""
