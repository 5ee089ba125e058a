"""``pagelens mcp``: the live browser as an MCP server (the ``mcp`` extra's adapter), on the
official SDK, over stdio or streamable HTTP.

The tools are Playwright MCP's, by its names and argument names (a prompt or client written
for it works unchanged): ``browser_snapshot`` answers pagelens' text, ``ref`` is an id as the
text prints it (``"12"`` for ``[12]``; Playwright MCP's newer ``target`` is read the same way),
``element`` a description used in errors. pagelens' own tools keep their own names
(``browser_observe`` with a budget or a subtree, ``browser_find``, ``browser_html``,
``browser_scroll``); ``browser_evaluate`` exists only with ``--caps evaluate``.

An action is answered with what it did and, by default, only what changed on the page
(``--snapshot-mode incremental``; ``full`` answers the whole text, ``none`` no page text), one
text item per answer. Each MCP session has its own browser (pages, cookies and storage
apart), closed when the session ends or idles out. Errors an agent can act on come back as
tool errors saying why; nothing but one line per failure reaches stderr.

Register it in a client (e.g. a ``mcpServers`` entry)::

    {"mcpServers": {"pagelens": {"command": "pagelens", "args": ["mcp", "--allow-host", "example.com"]}}}

See docs/mcp.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import inspect
import ipaddress
import json
import logging
import re
import sys
import tempfile
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_type_hints
from urllib.parse import unquote, urlsplit

from pagelens import __version__
from pagelens._core import chunk as chunk_text
from pagelens._core import escape_page_text, find_lines
from pagelens.actions import Action, ActionError
from pagelens.browser.allowlist import HostAllowList
from pagelens.browser.changes import describe_changes
from pagelens.browser.config import BrowserConfig
from pagelens.browser.env import AsyncBrowserEnv
from pagelens.browser.execute import choose_options, normalize_keys
from pagelens.browser.launch import LaunchOptions
from pagelens.browser.records import PageObservation, StepResult
from pagelens.errors import PagelensError
from pagelens.extras import require
from pagelens.serving import SnapshotMode
from pagelens.settle import AFTER_ACTION_MS

mcp_server: Any = require("mcp.server.mcpserver", "`pagelens mcp`")
mcp_exceptions: Any = require("mcp.server.mcpserver.exceptions", "`pagelens mcp`")
mcp_security: Any = require("mcp.server.transport_security", "`pagelens mcp`")
mcp_types: Any = require("mcp_types", "`pagelens mcp`")
ToolError = mcp_exceptions.ToolError
Context = mcp_server.Context

# An observation answered inline up to this many tokens (GPT-2's); beyond, it goes to a file.
MAX_TOKENS = 6000
# A session with no tool call for this long has its browser closed (the SDK ends an idle HTTP
# session after the same time).
IDLE_TIMEOUT_S = 30 * 60.0
# Browsers (sessions) served at once over HTTP.
MAX_SESSIONS = 8


_LOOPBACK = ("127.0.0.1", "localhost", "::1")
# "12", "[12]", "*[12]", and the forms a prompt written for Playwright MCP may use: "e12", "[ref=e12]".
_REF = re.compile(r"^\s*\*?\[?\s*(?:ref\s*=\s*)?e?(\d+)\s*\]?\s*$")
_WAIT_CAP_S = 30.0  # browser_wait_for's `time` is capped as Playwright MCP caps it
_LOG_LIMIT = 1000  # console messages and requests kept per session

log = logging.getLogger("pagelens.mcp")


@dataclass(frozen=True)
class ServerOptions:
    """What every session of the server is held to."""

    allowed: tuple[str, ...] = ()  # --allow-host; empty: browser_navigate allows what it is asked to open
    allow_file: tuple[Path, ...] = ()  # directories file: URLs may open
    output_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="pagelens-mcp-")))
    max_tokens: int = MAX_TOKENS
    snapshot_mode: SnapshotMode = "incremental"
    caps: frozenset[str] = frozenset()
    headed: bool = False
    idle_timeout_s: float = IDLE_TIMEOUT_S
    settle_ms: float = AFTER_ACTION_MS  # quiet time after an action before the page is read


def parse_ref(ref: str | int | None, what: str = "ref") -> int:
    """The id a ``ref`` names: ``"12"``, ``"[12]"``, ``"*[12]"``, ``12``, or Playwright MCP's
    spelling ``"e12"``; else a tool error saying what a ref is."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        return ref
    found = _REF.match(ref) if isinstance(ref, str) else None
    if found is None:
        raise ToolError(
            f"{what} {ref!r} is not an element id: give the number in brackets from the last snapshot, "
            'e.g. "12" for [12]'
        )
    return int(found.group(1))


def _one_ref(ref: str | None, target: str | None, what: str = "ref") -> int:
    given = ref if ref is not None else target
    if given is None:
        raise ToolError(f'{what} is required: the id of the element in the last snapshot, e.g. "12" for [12]')
    return parse_ref(given, what)


def _inside(path: Path, roots: tuple[Path, ...]) -> bool:
    resolved = path.resolve()
    return any(resolved == r or r in resolved.parents for r in (root.resolve() for root in roots))


class BrowserSession:
    """One MCP session's browser, its last observation and what it logged."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.allowed: tuple[str, ...] = options.allowed
        self.env: AsyncBrowserEnv | None = None
        self.last: PageObservation | None = None
        self.last_used = time.monotonic()
        self.lock = asyncio.Lock()
        # An action left waiting on a dialog: finished once the dialog is answered.
        self.pending: asyncio.Task[StepResult] | None = None
        self.choosers: list[Any] = []  # file choosers waiting for browser_file_upload
        self.console: deque[tuple[int, str, str]] = deque(maxlen=_LOG_LIMIT)  # (navigation, level, text)
        self.requests: deque[tuple[int, Any]] = deque(maxlen=_LOG_LIMIT)
        self.navigations = 0
        self._watched: weakref.WeakSet[Any] = weakref.WeakSet()

    # -- the browser ------------------------------------------------------------------------

    def _config(self) -> BrowserConfig:
        return BrowserConfig(
            hold_dialogs=True,
            settle_ms=self.options.settle_ms,
            allowed_hosts=self._allow_list() or None,
            launch=LaunchOptions(headless=not self.options.headed),
        )

    def _allow_list(self) -> tuple[str, ...]:
        hosts = self.allowed
        if self.options.allow_file:
            hosts = (*hosts, *(f"file:{d.resolve()}" for d in self.options.allow_file))
        return hosts

    def opening(self, url: str) -> Callable[[], Awaitable[StepResult]]:
        """The work of opening ``url`` in the current tab (the first one: a fresh browser),
        once the URL is checked."""
        self._check_url(url)
        if self.env is None:
            self.env = AsyncBrowserEnv(self._config())
        env = self.env
        if self.last is None:

            async def first() -> StepResult:
                env.config.allowed_hosts = self._allow_list() or None
                obs = await env.reset(url)
                self._watch()
                return StepResult(Action("goto", text=url), ok=True, observation=obs)

            return first
        env.set_allow_list(self._allow_list())
        return lambda: env.perform(f"open {url}", lambda: env.navigate(url))

    def _check_url(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme == "file":
            path = Path(unquote(parts.path))
            if not self.options.allow_file:
                raise ToolError(
                    f"file: URLs are refused ({url}): start the server with --allow-file DIR to open the files "
                    "of a directory"
                )
            if not _inside(path, self.options.allow_file):
                dirs = ", ".join(str(d) for d in self.options.allow_file)
                raise ToolError(f"{url} is outside the directories opened with --allow-file ({dirs})")
            return
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ToolError(f"not a web address to open: {url!r} (give an http:// or https:// URL)")
        if self.options.allowed:
            allow = HostAllowList(self.options.allowed)
            if not allow.allows(url):
                raise ToolError(allow.refusal(url))
        else:  # no list given: the user's own navigations are allowed, the page's stay held to them
            self.allowed = tuple(dict.fromkeys((*self.allowed, parts.hostname)))

    def _watch(self) -> None:
        """Console messages, requests and file choosers of every tab, from now on."""
        env = self.env
        assert env is not None
        if env.context in self._watched:
            return
        self._watched.add(env.context)
        self.console.clear()
        self.requests.clear()
        self.choosers.clear()
        env.context.on("page", self._watch_page)
        for page in env.context.pages:
            self._watch_page(page)

    def _watch_page(self, page: Any) -> None:
        def navigated(frame: Any) -> None:
            if frame == page.main_frame:
                self.navigations += 1

        page.on("framenavigated", navigated)
        page.on("console", lambda m: self.console.append((self.navigations, m.type, m.text)))
        page.on("pageerror", lambda e: self.console.append((self.navigations, "error", str(e))))
        page.on("requestfinished", lambda r: self.requests.append((self.navigations, r)))
        page.on("requestfailed", lambda r: self.requests.append((self.navigations, r)))
        page.on("filechooser", lambda chooser: self.choosers.append(chooser))

    def page_env(self) -> AsyncBrowserEnv:
        if self.env is None or self.last is None:
            raise ToolError("no page yet: call browser_navigate with a URL first")
        return self.env

    async def close(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
        if self.env is not None:
            await self.env.close()
            self.env = None
        self.last = None

    # -- acting ---------------------------------------------------------------------------

    async def run(
        self, what: str, work: Callable[[], Awaitable[StepResult]], *, full: bool = False, opening: bool = False
    ) -> str:
        """Runs an action and answers it: what it did, then the page (what changed, or all of it
        with ``full``). An action a dialog interrupts is answered with the dialog; it finishes
        once browser_handle_dialog answers it."""
        env = self.env if opening else self.page_env()
        assert env is not None
        self._refuse_if_modal()
        task: asyncio.Task[StepResult] = asyncio.ensure_future(work())
        opened = asyncio.ensure_future(env.dialog_opened.wait())
        try:
            await asyncio.wait({task, opened}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            opened.cancel()
        if not task.done():
            self.pending = task
            return self.compose(f"{what}: a dialog opened", None)
        return self.finish(what, task.result(), full=full)

    def finish(self, what: str, result: StepResult, *, full: bool = False) -> str:
        if not result.ok:
            if result.observation is not None:
                self.last = result.observation
            raise ToolError(result.error or f"{what} failed")
        return self.compose(what, result.observation, full=full)

    def _refuse_if_modal(self) -> None:
        env = self.env
        if env is not None and env.pending_dialogs:
            d = env.pending_dialogs[0]
            raise ToolError(
                f"a {d.type} dialog is open ({escape_page_text(repr(d.message))}): answer it with "
                "browser_handle_dialog first"
            )

    # -- answers --------------------------------------------------------------------------

    def compose(self, what: str, obs: PageObservation | None, *, full: bool = False) -> str:
        """The answer: what happened, the page's address and title, tabs, open dialogs and file
        choosers, then the page (by the snapshot mode). The page's words are escaped as the
        tree's are."""
        parts = ["### Result", what]
        if obs is not None:
            before, self.last = self.last, obs
            parts += ["### Page", escape_page_text(f"- Page URL: {obs.url}\n- Page Title: {obs.title}")]
            if len(obs.tabs) > 1:
                parts += ["### Open tabs", *self._tab_lines(obs)]
            if obs.dialogs:
                parts += ["### Dialogs (dismissed)", *(f"- {escape_page_text(d)}" for d in obs.dialogs)]
            modal = self._modal_lines()
            if modal:
                parts += ["### Modal state", *modal]
            mode = "full" if full else self.options.snapshot_mode
            if mode == "incremental":
                changes = describe_changes(before, obs)
                if changes is not None:
                    section = [
                        f"### Snapshot changes ({changes.changed} of {changes.total} lines changed or new, "
                        f"{changes.removed} gone; browser_snapshot shows the whole page)",
                        changes.text,
                    ]
                    # A small page is answered whole when that is no longer than its changes.
                    if sum(map(len, section)) < len(obs.text) + len("### Snapshot"):
                        return "\n".join([*parts, *section])
                mode = "full"
            if mode == "full":
                parts += self._snapshot(obs)
        else:
            modal = self._modal_lines()
            if modal:
                parts += ["### Modal state", *modal]
        return "\n".join(parts)

    def _tab_lines(self, obs: PageObservation) -> list[str]:
        return [
            f"- {t.index}:{' (current)' if t.active else ''} {escape_page_text(f'{t.title} <{t.url}>')}"
            for t in obs.tabs
        ]

    def _modal_lines(self) -> list[str]:
        env = self.env
        lines = []
        if env is not None:
            lines += [
                f"- [{d.type} dialog with message {escape_page_text(repr(d.message))}]: can be handled by "
                "browser_handle_dialog"
                for d in env.pending_dialogs
            ]
        lines += ["- [File chooser]: can be handled by browser_file_upload" for _ in self.choosers]
        return lines

    def _snapshot(self, obs: PageObservation, max_tokens: int | None = None) -> list[str]:
        budget = max_tokens or self.options.max_tokens
        if obs.rendered.token_count <= budget:
            return ["### Snapshot", obs.text]
        path = self.options.output_dir / f"snapshot-{time.strftime('%Y%m%d-%H%M%S')}-{len(obs.text)}.txt"
        path.write_text(obs.text)
        lines = obs.text.splitlines()
        shown: list[str] = []
        used = 0
        for line in lines:
            used += len(line) // 3 + 1  # a rough share of the budget: the file has it all
            if used > budget:
                break
            shown.append(line)
        return [
            "### Snapshot",
            f"The page is {obs.rendered.token_count:,} tokens, over the {budget:,} budget: the whole snapshot "
            f"is in {path.as_uri()} ; its first {len(shown)} of {len(lines)} lines:",
            *shown,
        ]

    def snapshot_answer(self, obs: PageObservation, max_tokens: int | None = None) -> str:
        self.last = obs
        parts = ["### Page", escape_page_text(f"- Page URL: {obs.url}\n- Page Title: {obs.title}")]
        if len(obs.tabs) > 1:
            parts += ["### Open tabs", *self._tab_lines(obs)]
        modal = self._modal_lines()
        if modal:
            parts += ["### Modal state", *modal]
        return "\n".join([*parts, *self._snapshot(obs, max_tokens)])


class Sessions:
    """The server's browser sessions, one per MCP session (per client connection over HTTP;
    the one client over stdio), closed when it ends or idles out."""

    def __init__(self, options: ServerOptions, max_sessions: int = MAX_SESSIONS) -> None:
        self.options = options
        self.max_sessions = max_sessions
        self._by_key: dict[str, BrowserSession] = {}
        self._reaper: asyncio.Task[None] | None = None

    def of(self, ctx: Any) -> BrowserSession:
        # An HTTP client's session id (the SDK's header); over stdio the one client.
        headers = ctx.headers or {}
        key = headers.get("mcp-session-id") or ""
        found = self._by_key.get(key)
        if found is None:
            if len(self._by_key) >= self.max_sessions:
                raise ToolError(f"the server already serves {self.max_sessions} sessions: close one and try again")
            found = BrowserSession(self.options)
            self._by_key[key] = found
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.ensure_future(self._reap())
        found.last_used = time.monotonic()
        return found

    async def end(self, key: str) -> None:
        """The client ended its session: its browser goes with it."""
        session = self._by_key.pop(key, None)
        if session is not None:
            async with session.lock:
                await session.close()

    async def _reap(self) -> None:
        while self._by_key:
            await asyncio.sleep(min(60.0, self.options.idle_timeout_s / 4))
            now = time.monotonic()
            for key, session in list(self._by_key.items()):
                if now - session.last_used > self.options.idle_timeout_s and not session.lock.locked():
                    self._by_key.pop(key, None)
                    await session.close()

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        sessions, self._by_key = list(self._by_key.values()), {}
        for session in sessions:
            await session.close()

    @property
    def count(self) -> int:
        return len(self._by_key)


def _failure(error: BaseException) -> str:
    """A line for an error that is not the agent's (a bug or a browser that went away)."""
    first = (str(error).strip().splitlines() or [type(error).__name__])[0][:300]
    return f"{type(error).__name__}: {first}"


def build_server(options: ServerOptions, sessions: Sessions | None = None) -> Any:
    """The MCP server; each MCP session gets its own browser from ``sessions``."""
    if sessions is None:
        sessions = Sessions(options)

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await sessions.close()

    server = mcp_server.MCPServer(
        "pagelens",
        version=__version__,
        instructions=(
            "A live browser. browser_navigate opens a page; browser_snapshot shows it as text with element "
            'ids in brackets ([12]); act on an element by passing its id as ref ("12"). After an action the '
            "answer shows what changed on the page (new elements marked *[id]); browser_snapshot shows all of "
            "it, browser_find searches it."
        ),
        lifespan=lifespan,
        log_level="WARNING",
    )

    def tool(*, readonly: bool = False, cap: str | None = None) -> Callable[[Any], Any]:
        """A tool run in the caller's session, one call at a time per session, whose errors are
        tool errors saying why (never a crash, one line on stderr for what is not the agent's)."""

        def register(fn: Any) -> Any:
            if cap is not None and cap not in options.caps:
                return fn

            @functools.wraps(fn)
            async def run(*args: Any, **kwargs: Any) -> Any:
                ctx = kwargs.pop("ctx")
                session = sessions.of(ctx)
                async with session.lock:
                    try:
                        return await fn(session, *args, **kwargs)
                    except ToolError:
                        raise
                    except (PagelensError, ValueError) as e:
                        raise ToolError(str(e)) from None
                    except Exception as e:  # the browser went away, or a bug: said in one line
                        print(f"pagelens mcp: {fn.__name__}: {_failure(e)}", file=sys.stderr, flush=True)
                        raise ToolError(f"{fn.__name__} failed: {_failure(e)}") from None
                    finally:
                        session.last_used = time.monotonic()

            # The session argument is the server's, not the client's: the schema shows the rest,
            # and the SDK passes the request's context, which names the session.
            hints = get_type_hints(fn)
            params = [p.replace(annotation=hints[p.name]) for p in list(inspect.signature(fn).parameters.values())[1:]]
            ctx_param = inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
            run.__signature__ = inspect.Signature([*params, ctx_param], return_annotation=Any)  # type: ignore[attr-defined]
            run.__annotations__ = {**{p.name: p.annotation for p in params}, "ctx": Context, "return": Any}
            del run.__wrapped__
            annotations = mcp_types.ToolAnnotations(readOnlyHint=readonly) if readonly else None
            server.tool(structured_output=False, annotations=annotations)(run)
            return fn

        return register

    # -- navigation -----------------------------------------------------------------------

    @tool()
    async def browser_navigate(s: BrowserSession, url: str) -> str:
        """Navigate to a URL"""
        s._refuse_if_modal()
        return await s.run(f"Opened {escape_page_text(url)}", s.opening(url), full=True, opening=True)

    @tool()
    async def browser_navigate_back(s: BrowserSession) -> str:
        """Go back to the previous page in the history"""
        env = s.page_env()
        return await s.run("Went back", lambda: env.step(Action("go_back")))

    @tool()
    async def browser_navigate_forward(s: BrowserSession) -> str:
        """Go forward to the next page in the history"""
        env = s.page_env()
        return await s.run("Went forward", lambda: env.step(Action("go_forward")))

    # -- reading --------------------------------------------------------------------------

    @tool(readonly=True)
    async def browser_snapshot(
        s: BrowserSession,
        target: str | None = None,
        ref: str | None = None,
        filename: str | None = None,
        depth: int | None = None,
    ) -> str:
        """Capture the page as pagelens' text: every element you can act on has an id in brackets ([12]),
        to pass as ref. This is better than a screenshot. `ref`/`target`: only the part of the page
        around that element; `filename`: write the text there instead; `depth`: keep lines up to that
        depth of the tree."""
        env = s.page_env()
        s._refuse_if_modal()
        obs = await env.observe()
        s.last = obs
        text = obs.text
        given = ref if ref is not None else target
        if given is not None:
            element_id = parse_ref(given)
            if element_id not in obs.tree:
                raise ToolError(f"there is no element [{element_id}] on the page: take a new snapshot")
            text = obs.tree.subtree([element_id]).text
        if depth is not None:
            if depth < 0:
                raise ToolError(f"depth is 0 or more, not {depth}")
            text = "\n".join(line for line in text.split("\n") if len(line) - len(line.lstrip("\t")) <= depth)
        if filename is not None:
            path = _output_path(s.options, filename)
            path.write_text(text)
            return f"### Snapshot\nwritten to {path}"
        if given is None and depth is None:
            return s.snapshot_answer(obs)
        return "\n".join(["### Snapshot", text])

    @tool(readonly=True)
    async def browser_observe(s: BrowserSession, max_tokens: int | None = None, subtree_of: int | None = None) -> str:
        """pagelens' own: the page as text with element ids within `max_tokens` (over it: written to a
        file, linked), or only the part of the page around element id `subtree_of`."""
        env = s.page_env()
        s._refuse_if_modal()
        obs = await env.observe()
        s.last = obs
        if subtree_of is not None:
            if subtree_of not in obs.tree:
                raise ToolError(f"there is no element [{subtree_of}] on the page")
            return obs.tree.subtree([subtree_of]).text
        if max_tokens is not None and max_tokens < 1:
            raise ToolError(f"max_tokens is 1 or more, not {max_tokens}")
        return s.snapshot_answer(obs, max_tokens)

    @tool(readonly=True)
    async def browser_find(s: BrowserSession, pattern: str, regex: bool = False) -> str:
        """pagelens' own: the lines of the page that contain `pattern` (or match it as a regular
        expression), each with the path of its ancestors, so that ids are found without reading it all."""
        env = s.page_env()
        s._refuse_if_modal()
        obs = await env.observe()
        s.last = obs
        # A linear-time engine, off the event loop: no pattern can stall the server.
        hits = set(await asyncio.to_thread(find_lines, obs.text, pattern, regex))
        found: list[str] = []
        ancestors: list[tuple[int, str]] = []
        for i, line in enumerate(obs.text.split("\n")):
            depth = len(line) - len(line.lstrip("\t"))
            ancestors = [(d, text) for d, text in ancestors if d < depth]
            if i in hits:
                path = " > ".join(text.strip()[:60] for _, text in ancestors)
                found.append(f"{line.strip()}" + (f"    (in: {path})" if path else ""))
            ancestors.append((depth, line))
        if not found:
            return f"nothing on the page matches {pattern!r}"
        return f"{len(found)} lines match {pattern!r}:\n" + "\n".join(found[:200])

    @tool(readonly=True)
    async def browser_html(s: BrowserSession, chunk: int = 0, max_tokens: int = 4096) -> str:
        """pagelens' own: the page's HTML, cleaned as ScribeAgent reads it (ids as node="N"), one chunk
        of `max_tokens` at a time: `chunk` picks which (the answer says how many there are)."""
        env = s.page_env()
        s._refuse_if_modal()
        html = await env.observe_html()
        chunks = chunk_text(html.dom.clean("scribe").html(), max_tokens)
        s.last = await env.observe()  # actions name the text observation's ids again
        if not 0 <= chunk < len(chunks):
            raise ToolError(f"there are {len(chunks)} chunks (0 to {len(chunks) - 1}), not {chunk}")
        return f"chunk {chunk} of {len(chunks)} (0-based):\n{chunks[chunk].text}"

    # -- acting on elements ---------------------------------------------------------------

    def described(element: str | None, element_id: int) -> str:
        return f"{escape_page_text(element)} [{element_id}]" if element else f"[{element_id}]"

    @tool()
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
        element_id = _one_ref(ref, target)
        what = f"Clicked {described(element, element_id)}"
        if not doubleClick and button == "left" and not modifiers:
            return await s.run(what, lambda: env.step(Action("click", target=element_id)))

        async def click() -> None:
            async with env.element(element_id) as handle:
                await handle.scroll_into_view_if_needed()
                kwargs: dict[str, Any] = {"button": button, "modifiers": list(modifiers or [])}
                if doubleClick:
                    await handle.dblclick(**kwargs)
                else:
                    await handle.click(**kwargs)

        return await s.run(what, lambda: env.perform(f"click [{element_id}]", click))

    @tool()
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
        that react to keys; `submit`: press Enter after)"""
        env = s.page_env()
        element_id = _one_ref(ref, target)
        what = f"Typed into {described(element, element_id)}"
        if not slowly:
            return await s.run(what, lambda: env.step(Action("type", target=element_id, text=text, press_enter=submit)))

        async def type_slowly() -> None:
            async with env.element(element_id) as handle:
                await handle.fill("")
                await handle.type(text)  # key by key: the page sees every keydown
                if submit:
                    await handle.press("Enter")

        return await s.run(what, lambda: env.perform(f"type into [{element_id}]", type_slowly))

    @tool()
    async def browser_fill_form(s: BrowserSession, fields: list[dict[str, Any]]) -> str:
        """Fill multiple form fields. Each field: name (human-readable), type (textbox, checkbox, radio,
        combobox or slider), ref (its id), value (for a checkbox or radio "true" or "false", for a
        combobox the option's text)."""
        env = s.page_env()
        plan: list[tuple[str, str, int, str]] = []
        for i, f in enumerate(fields):
            if not isinstance(f, dict):
                raise ToolError(f"field {i} is not an object with name, type, ref and value")
            kind = f.get("type")
            if kind not in ("textbox", "checkbox", "radio", "combobox", "slider"):
                raise ToolError(f"field {i} ({f.get('name')!r}): type is textbox, checkbox, radio, combobox or slider")
            value = f.get("value")
            if not isinstance(value, str):
                raise ToolError(f"field {i} ({f.get('name')!r}): value is a string")
            plan.append(
                (str(f.get("name") or ""), kind, _one_ref(f.get("ref"), f.get("target"), f"field {i}'s ref"), value)
            )

        async def fill() -> None:
            for name, kind, element_id, value in plan:
                async with env.element(element_id) as handle:
                    try:
                        if kind in ("textbox", "slider"):
                            await handle.fill(value)
                        elif kind in ("checkbox", "radio"):
                            await handle.set_checked(value.strip().lower() == "true")
                        else:
                            await choose_options(handle, [value], env.config.action_timeout_ms)
                    except ActionError as e:
                        raise ActionError(f"{name or f'[{element_id}]'}: {e}") from None

        return await s.run(f"Filled {len(plan)} fields", lambda: env.perform("fill the form", fill))

    @tool()
    async def browser_select_option(
        s: BrowserSession,
        values: list[str],
        element: str | None = None,
        ref: str | None = None,
        target: str | None = None,
    ) -> str:
        """Select an option in a dropdown (each of `values` by its value or its label)"""
        env = s.page_env()
        element_id = _one_ref(ref, target)
        if not values:
            raise ToolError("values names at least one option")
        chosen: list[str] = []

        async def select() -> None:
            async with env.element(element_id) as handle:
                chosen.extend(await choose_options(handle, values, env.config.action_timeout_ms))

        answer = await s.run(
            f"Selected in {described(element, element_id)}", lambda: env.perform(f"select in [{element_id}]", select)
        )
        return answer

    @tool()
    async def browser_hover(
        s: BrowserSession, element: str | None = None, ref: str | None = None, target: str | None = None
    ) -> str:
        """Hover over element on page"""
        env = s.page_env()
        element_id = _one_ref(ref, target)
        return await s.run(
            f"Hovered over {described(element, element_id)}", lambda: env.step(Action("hover", target=element_id))
        )

    @tool()
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
        start = _one_ref(startRef, startTarget, "startRef")
        end = _one_ref(endRef, endTarget, "endRef")

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

    @tool()
    async def browser_press_key(s: BrowserSession, key: str) -> str:
        """Press a key on the keyboard, such as `ArrowLeft`, `a` or `Control+a`"""
        env = s.page_env()
        if not key.strip():
            raise ToolError("key names a key, e.g. Enter, ArrowLeft, a or Control+a")
        normalize_keys(key)
        return await s.run(f"Pressed {escape_page_text(key)}", lambda: env.step(Action("press", text=key)))

    @tool()
    async def browser_scroll(s: BrowserSession, direction: str = "down") -> str:
        """pagelens' own: scroll the page one screen up or down."""
        env = s.page_env()
        if direction not in ("up", "down"):
            raise ToolError(f"direction is up or down, not {direction!r}")
        return await s.run(f"Scrolled {direction}", lambda: env.step(Action("scroll", text=direction)))

    # -- waiting, tabs, dialogs, files --------------------------------------------------------

    @tool()
    async def browser_wait_for(
        s: BrowserSession,
        time: float | None = None,  # noqa: A002 (Playwright MCP's argument name)
        text: str | None = None,
        textGone: str | None = None,  # noqa: N803
    ) -> str:
        """Wait for text to appear or disappear or a specified time to pass (seconds, at most 30)"""
        env = s.page_env()
        s._refuse_if_modal()
        if not text and not textGone and not time:
            raise ToolError("give time, text or textGone")
        if time is not None and time < 0:
            raise ToolError(f"time is 0 or more seconds, not {time}")
        timeout = env.config.action_timeout_ms  # as Playwright MCP's wait: the action timeout

        async def wait() -> None:
            if time:
                await asyncio.sleep(min(_WAIT_CAP_S, time))
            try:
                if textGone:
                    await env.page.get_by_text(textGone).first.wait_for(state="hidden", timeout=timeout)
                if text:
                    await env.page.get_by_text(text).first.wait_for(state="visible", timeout=timeout)
            except Exception as e:
                waited = repr(text) + " to appear" if text else repr(textGone) + " to go"
                raise ActionError(f"waited {timeout / 1000:g} s for {waited}: it did not ({_failure(e)})") from None

        what = f"Waited for {escape_page_text(repr(text or textGone)) if (text or textGone) else f'{time:g} s'}"
        return await s.run(what, lambda: env.perform("wait", wait))

    @tool()
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
            s._refuse_if_modal()
            obs = await env.observe()
            s.last = obs
            return "\n".join(["### Open tabs", *s._tab_lines(obs)])
        if action == "new":
            answer = await s.run("Opened a new tab", lambda: env.step(Action("new_tab")))
            if url is None:
                return answer
            return await s.run(f"Opened {escape_page_text(url)} in a new tab", s.opening(url), full=True)
        if action == "select":
            if index is None:
                raise ToolError("select needs the tab's index (browser_tabs list shows them)")
            return await s.run(f"Selected tab {index}", lambda: env.step(Action("tab_focus", target=index)), full=True)
        if index is not None:
            pages = env.context.pages
            if not 0 <= index < len(pages):
                raise ToolError(f"there is no tab {index}; tabs are numbered 0 to {len(pages) - 1}")
            await env.step(Action("tab_focus", target=index), observe=False)
        return await s.run("Closed the tab", lambda: env.step(Action("close_tab")), full=True)

    @tool()
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
                raise ToolError(f"{what}, but the action it interrupted did not finish") from None
            return s.finish(what, result)
        return s.finish(what, await env.perform("after the dialog", _nothing))

    @tool()
    async def browser_file_upload(s: BrowserSession, paths: list[str] | None = None) -> str:
        """Upload one or multiple files to the file chooser a click opened (absolute paths, in the
        server's working directory, its output directory or an --allow-file directory); without paths,
        the chooser is cancelled"""
        env = s.page_env()
        if not s.choosers:
            raise ToolError("no file chooser is open: click the page's file input first")
        files = [Path(p) for p in paths or []]
        roots = (Path.cwd(), s.options.output_dir, *s.options.allow_file)
        for f in files:
            if not _inside(f, roots):
                raise ToolError(f"{f} is outside the directories files may come from: {', '.join(map(str, roots))}")
            if not f.is_file():
                raise ToolError(f"{f} is not a file")
        chooser = s.choosers.pop(0)

        async def upload() -> None:
            if files:
                await chooser.set_files([str(f) for f in files])

        what = f"Uploaded {len(files)} files" if files else "Cancelled the file chooser"
        return await s.run(what, lambda: env.perform("upload files", upload))

    # -- the browser ------------------------------------------------------------------------

    @tool(readonly=True)
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
        s._refuse_if_modal()
        given = ref if ref is not None else target
        timeout = env.config.action_timeout_ms
        if with_ids:
            if given is not None or fullPage or type != "png":
                raise ToolError("with_ids draws on a png of the viewport: leave out ref, fullPage and type")
            data = await env.screenshot(with_ids=True)
        elif given is not None:
            async with env.element(parse_ref(given)) as handle:
                data = await handle.screenshot(type=type, timeout=timeout)
        else:
            data = await env.page.screenshot(type=type, full_page=fullPage, timeout=timeout)
        if filename is not None:
            path = _output_path(s.options, filename)
            path.write_bytes(data)
            return f"### Result\nScreenshot written to {path}"
        return mcp_server.Image(data=data, format=type)

    @tool(readonly=True)
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

    @tool(readonly=True)
    async def browser_network_requests(s: BrowserSession, static: bool = False, filter: str | None = None) -> str:  # noqa: A002
        """Returns the network requests since loading the page (`static`: successful images, fonts,
        scripts and styles too; `filter`: a regular expression their URL must match)"""
        s.page_env()
        pattern = None
        if filter:
            try:
                pattern = re.compile(filter)
            except re.error as e:
                raise ToolError(f"filter is not a regular expression: {e}") from None
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

    @tool()
    async def browser_resize(s: BrowserSession, width: int, height: int) -> str:
        """Resize the browser window"""
        env = s.page_env()
        if not (1 <= width <= 10_000 and 1 <= height <= 10_000):
            raise ToolError(f"width and height are 1 to 10000 pixels, not {width}×{height}")
        return await s.run(
            f"Resized to {width}×{height}",
            lambda: env.perform("resize", lambda: env.page.set_viewport_size({"width": width, "height": height})),
        )

    @tool()
    async def browser_close(s: BrowserSession) -> str:
        """Close the page (the session's browser; browser_navigate opens a new one)"""
        await s.close()
        return "### Result\nClosed the browser; browser_navigate opens a new one."

    @tool(cap="evaluate")
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
        s._refuse_if_modal()
        given = ref if ref is not None else target
        code = (
            f"async (element) => {{ const f = ({function}); return typeof f === 'function' ? await f(element) : f; }}"
        )
        if given is not None:
            async with env.element(parse_ref(given)) as handle:
                value = await handle.evaluate(code)
        else:
            value = await env.page.evaluate(code, None)
        return "### Result\n" + escape_page_text(
            json.dumps(value, indent=2, default=str) if value is not None else "undefined"
        )

    return server


async def _nothing() -> None:
    return None


def _output_path(options: ServerOptions, filename: str) -> Path:
    """Where a file the client names is written: inside the output directory."""
    path = (options.output_dir / filename).resolve()
    if not _inside(path, (options.output_dir,)):
        raise ToolError(f"{filename!r} is outside the output directory {options.output_dir}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _is_loopback(host: str) -> bool:
    if host in _LOOPBACK:
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    return False


class SessionEnds:
    """ASGI middleware: a client's DELETE of its session (the SDK's way to end one) closes the
    session's browser once the SDK has answered it."""

    def __init__(self, app: Any, sessions: Sessions) -> None:
        self.app, self.sessions = app, sessions

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
        if scope["type"] == "http" and scope.get("method") == "DELETE":
            key = dict(scope.get("headers") or []).get(b"mcp-session-id", b"").decode("latin-1")
            if key:
                await self.sessions.end(key)


class BearerToken:
    """ASGI middleware: every request carries ``Authorization: Bearer <token>`` (compared in
    constant time), else 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.token = app, token.encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            scheme, _, value = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), self.token):
                await send(
                    {"type": "http.response.start", "status": 401, "headers": [(b"www-authenticate", b"Bearer")]}
                )
                await send(
                    {"type": "http.response.body", "body": b"a bearer token is required (Authorization: Bearer ...)"}
                )
                return
        await self.app(scope, receive, send)


@dataclass(frozen=True)
class HttpOptions:
    host: str
    port: int
    allow_remote: bool = False
    token: str | None = None
    allowed_hosts: tuple[str, ...] = ()  # Host names clients reach the server by ("*": any)


def http_app(server: Any, sessions: Sessions, http: HttpOptions, idle_timeout_s: float) -> Any:
    """The streamable-HTTP ASGI app: Host/Origin checked (DNS rebinding), a bearer token when
    one is set; a non-loopback address only with ``allow_remote`` and a token."""
    if not _is_loopback(http.host):
        if not http.allow_remote:
            raise PagelensError(
                f"{http.host} is not a loopback address: serving a browser to the network needs --allow-remote "
                "and a token (--token or PAGELENS_MCP_TOKEN)"
            )
        if not http.token:
            raise PagelensError("--allow-remote needs a token (--token or PAGELENS_MCP_TOKEN) clients must send")
    names = ["127.0.0.1", "localhost", "[::1]"]
    if http.host not in ("0.0.0.0", "::"):
        names.append(f"[{http.host}]" if ":" in http.host else http.host)
    names += list(http.allowed_hosts)
    if "*" in names:
        security = mcp_security.TransportSecuritySettings(enable_dns_rebinding_protection=False)
    else:
        security = mcp_security.TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[f"{n}:*" for n in names] + names,
            allowed_origins=[f"{scheme}://{n}:*" for n in names for scheme in ("http", "https")]
            + [f"{scheme}://{n}" for n in names for scheme in ("http", "https")],
        )
    app = server.streamable_http_app(transport_security=security, host=http.host, session_idle_timeout=idle_timeout_s)
    app = SessionEnds(app, sessions)
    return BearerToken(app, http.token) if http.token else app


def serve(options: ServerOptions, http: HttpOptions | None = None) -> None:
    """Runs the server over stdio, or over streamable HTTP."""
    options.output_dir.mkdir(parents=True, exist_ok=True)
    for name in ("mcp", "uvicorn", "uvicorn.error", "uvicorn.access", "httpx"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # one line per failure, ours
    sessions = Sessions(options)
    server = build_server(options, sessions)
    if http is None:
        server.run("stdio")
        return
    import uvicorn

    app = http_app(server, sessions, http, options.idle_timeout_s)
    config = uvicorn.Config(app, host=http.host.strip("[]"), port=http.port, log_level="warning", access_log=False)
    asyncio.run(uvicorn.Server(config).serve())
