"""``pagelens mcp``: the live browser as an MCP server (the ``mcp`` extra's adapter), on the
official SDK, over stdio or streamable HTTP.

One browser per server, its tabs shared by every call. Each tool that acts answers with what
happened and the page's new observation (AgentOccam's form, ids to act on) within the token
budget; an observation over the budget is written whole to a file in ``--output-dir`` and
the answer links it. Errors an agent can act on — an id that is not on the page, an id of a
page that is gone, an element that is not visible, a navigation off the allow-list, a bad
pattern — come back as MCP tool errors, and the server keeps serving.

Register it in a client (e.g. a ``mcpServers`` entry)::

    {"mcpServers": {"pagelens": {"command": "pagelens", "args": ["mcp", "--allow-host", "example.com"]}}}
"""

from __future__ import annotations

import asyncio
import functools
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pagelens._core import chunk as chunk_text
from pagelens._core import escape_page_text, find_lines
from pagelens.actions import Action
from pagelens.browser.allowlist import HostAllowList
from pagelens.browser.config import BrowserConfig
from pagelens.browser.env import AsyncBrowserEnv
from pagelens.browser.records import PageObservation
from pagelens.errors import PagelensError
from pagelens.extras import require

mcp_server: Any = require("mcp.server.mcpserver", "`pagelens mcp`")
mcp_exceptions: Any = require("mcp.server.mcpserver.exceptions", "`pagelens mcp`")
ToolError = mcp_exceptions.ToolError

# An observation answered inline up to this many tokens (GPT-2's); beyond, it goes to a file.
MAX_TOKENS = 6000


@dataclass
class Session:
    """The server's browser and where over-budget observations go."""

    allowed: tuple[str, ...] = ()  # hosts given with --allow-host; navigate adds the hosts it is asked for
    output_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="pagelens-mcp-")))
    max_tokens: int = MAX_TOKENS
    env: AsyncBrowserEnv | None = None
    last: PageObservation | None = None

    async def browser(self) -> AsyncBrowserEnv:
        if self.env is None:
            self.env = AsyncBrowserEnv(BrowserConfig())
            await self.env.start()
        return self.env

    async def close(self) -> None:
        if self.env is not None:
            await self.env.close()
            self.env = None

    def page_env(self) -> AsyncBrowserEnv:
        if self.env is None or self.last is None:
            raise ToolError("no page yet: call browser_navigate with a URL first")
        return self.env

    # -- answers -------------------------------------------------------------------------------

    def answer(self, what: str, obs: PageObservation) -> str:
        """``what`` happened, then the page: inline within the budget, else written to a file."""
        self.last = obs
        # The page's words (title, URL, tab titles, dialogs) escaped as the tree's are.
        head = [what, escape_page_text(f"Page: {obs.title} <{obs.url}>")]
        if len(obs.tabs) > 1:
            head.append(
                "Tabs: "
                + "; ".join(f"[{t.index}]{'*' if t.active else ''} {escape_page_text(t.title)}" for t in obs.tabs)
            )
        head += [f"Dialog: {escape_page_text(d)}" for d in obs.dialogs]
        if obs.rendered.token_count <= self.max_tokens:
            return "\n".join([*head, "", obs.text])
        path = self.output_dir / f"observation-{time.strftime('%Y%m%d-%H%M%S')}-{len(obs.text)}.txt"
        path.write_text(obs.text)
        lines = obs.text.splitlines()
        shown: list[str] = []
        used = 0
        for line in lines:
            used += len(line) // 3 + 1  # a rough share of the budget: the file has it all
            if used > self.max_tokens:
                break
            shown.append(line)
        return "\n".join(
            [
                *head,
                f"The page is {obs.rendered.token_count:,} tokens, over the {self.max_tokens:,} budget: "
                f"the whole observation is in {path.as_uri()} ; its first {len(shown)} of {len(lines)} lines:",
                "",
                *shown,
            ]
        )

    async def act(self, action: Action) -> str:
        env = self.page_env()
        result = await env.step(action)
        if not result.ok:
            raise ToolError(result.error or f"`{action}` failed")
        assert result.observation is not None
        return self.answer(f"Done: {action}", result.observation)


def build_server(session: Session) -> Any:
    """The MCP server over ``session``'s browser."""

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await session.close()

    server = mcp_server.MCPServer(
        "pagelens",
        instructions=(
            "A live browser. browser_navigate opens a page; every answer shows the page as text with "
            "element ids in brackets ([12]); act on an element by its id. Ids belong to the page shown: "
            "after a navigation use the new answer's ids."
        ),
        lifespan=lifespan,
        log_level="WARNING",
    )

    def guarded(tool: Any) -> Any:
        """A tool whose pagelens errors are tool errors with their message (never a crash)."""

        @functools.wraps(tool)
        async def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return await tool(*args, **kwargs)
            except ToolError:
                raise
            except (PagelensError, ValueError) as e:
                raise ToolError(str(e)) from None

        return server.tool()(run)

    @guarded
    async def browser_navigate(url: str) -> str:
        """Open a URL in the current tab (its host is allowed from then on)."""
        env = await session.browser()
        host = urlsplit(url).hostname or ("file" if url.startswith("file:") else "")
        if not host:
            raise ToolError(f"not a URL to open: {url!r}")
        session.allowed = tuple(dict.fromkeys((*session.allowed, host)))
        if session.last is None:
            env.config.allowed_hosts = session.allowed
            obs = await env.reset(url)
            assert obs is not None
            return session.answer(f"Opened {url}", obs)
        env.allow = HostAllowList(session.allowed)
        await env.navigate(url)
        return session.answer(f"Opened {url}", await env.observe())

    @guarded
    async def browser_navigate_back() -> str:
        """Go back in the current tab's history."""
        return await session.act(Action("go_back"))

    @guarded
    async def browser_navigate_forward() -> str:
        """Go forward in the current tab's history."""
        return await session.act(Action("go_forward"))

    @guarded
    async def browser_observe(max_tokens: int | None = None, subtree_of: int | None = None) -> str:
        """The page as text with element ids (over the budget: written to a file, linked).
        ``subtree_of``: only the part of the page around that element id."""
        env = session.page_env()
        obs = await env.observe()
        if subtree_of is not None:
            if subtree_of not in obs.tree:
                raise ToolError(f"there is no element [{subtree_of}] on the page")
            session.last = obs
            return obs.tree.subtree([subtree_of]).text
        if max_tokens is not None:
            before, session.max_tokens = session.max_tokens, max_tokens
            try:
                return session.answer("The page:", obs)
            finally:
                session.max_tokens = before
        return session.answer("The page:", obs)

    @guarded
    async def browser_find(pattern: str, regex: bool = False) -> str:
        """Lines of the page that contain ``pattern`` (or match it as a regular expression),
        each with the path of its ancestors, so that ids are found without reading it all."""
        env = session.page_env()
        obs = await env.observe()
        session.last = obs
        # A linear-time engine, off the event loop: no pattern can stall the server.
        try:
            hits = set(await asyncio.to_thread(find_lines, obs.text, pattern, regex))
        except PagelensError as e:
            raise ToolError(str(e)) from None
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

    @guarded
    async def browser_click(element_id: int) -> str:
        """Click the element with this id (an option of a drop-down is chosen this way too)."""
        return await session.act(Action("click", target=element_id))

    @guarded
    async def browser_type(element_id: int, text: str, submit: bool = False) -> str:
        """Replace the content of a field with ``text``; with ``submit``, press Enter after."""
        return await session.act(Action("type", target=element_id, text=text, press_enter=submit))

    @guarded
    async def browser_select_option(element_id: int, option: str) -> str:
        """Choose the option with this label (or value) of a drop-down."""
        return await session.act(Action("type", target=element_id, text=option, press_enter=False))

    @guarded
    async def browser_hover(element_id: int) -> str:
        """Move the mouse over the element."""
        return await session.act(Action("hover", target=element_id))

    @guarded
    async def browser_press_key(keys: str) -> str:
        """Press a key or a combination on the focused element, e.g. Enter or Control+a."""
        return await session.act(Action("press", text=keys))

    @guarded
    async def browser_scroll(direction: str = "down") -> str:
        """Scroll the page one screen up or down."""
        if direction not in ("up", "down"):
            raise ToolError(f"direction is up or down, not {direction!r}")
        return await session.act(Action("scroll", text=direction))

    @guarded
    async def browser_tabs(action: str = "list", index: int | None = None) -> str:
        """Tabs: ``list`` them, ``new`` (opens one), ``select`` or ``close`` the one at ``index``."""
        env = session.page_env()
        if action == "list":
            obs = await env.observe()
            session.last = obs
            return "\n".join(
                f"[{t.index}]{' (current)' if t.active else ''} {escape_page_text(f'{t.title} <{t.url}>')}"
                for t in obs.tabs
            )
        if action == "new":
            return await session.act(Action("new_tab"))
        if action in ("select", "close"):
            if action == "close":
                if index is not None:
                    await session.act(Action("tab_focus", target=index))
                return await session.act(Action("close_tab"))
            if index is None:
                raise ToolError("select needs the tab's index")
            return await session.act(Action("tab_focus", target=index))
        raise ToolError(f"action is list, new, select or close, not {action!r}")

    @guarded
    async def browser_wait_for(text: str, timeout_s: float = 10.0) -> str:
        """Wait until ``text`` is on the page (at most ``timeout_s`` seconds), then show it."""
        env = session.page_env()
        try:
            await env.page.get_by_text(text).first.wait_for(state="visible", timeout=timeout_s * 1000)
        except Exception as e:
            raise ToolError(
                f"{text!r} did not appear within {timeout_s:g} s ({str(e).splitlines()[0][:200]})"
            ) from None
        return session.answer(f"{text!r} is on the page", await env.observe())

    @guarded
    async def browser_take_screenshot(with_ids: bool = False) -> Any:
        """A PNG of the current tab's viewport; ``with_ids`` outlines the elements of the last
        observation and writes their ids on them."""
        env = session.page_env()
        data = await env.screenshot(with_ids=with_ids)
        return mcp_server.Image(data=data, format="png")

    @guarded
    async def browser_html(chunk: int = 0, max_tokens: int = 4096) -> str:
        """The page's HTML, cleaned as ScribeAgent reads it (ids as node="N"), one chunk of
        ``max_tokens`` at a time: ``chunk`` picks which (the answer says how many there are)."""
        env = session.page_env()
        html = await env.observe_html()
        chunks = chunk_text(html.dom.clean("scribe").html(), max_tokens)
        session.last = await env.observe()  # actions name the AX observation's ids again
        if not 0 <= chunk < len(chunks):
            raise ToolError(f"there are {len(chunks)} chunks (0 to {len(chunks) - 1}), not {chunk}")
        return f"chunk {chunk} of {len(chunks)} (0-based):\n{chunks[chunk].text}"

    return server


def serve(
    http: tuple[str, int] | None, allow_hosts: tuple[str, ...], output_dir: str | None, max_tokens: int | None
) -> None:
    """Runs the server over stdio, or over streamable HTTP at ``(host, port)``."""
    session = Session(allowed=allow_hosts, max_tokens=max_tokens or MAX_TOKENS)
    if output_dir:
        session.output_dir = Path(output_dir)
        session.output_dir.mkdir(parents=True, exist_ok=True)
    server = build_server(session)
    if http is None:
        server.run("stdio")
        return
    host, port = http
    server.run("streamable-http", host=host, port=port)
