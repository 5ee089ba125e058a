"""`pagelens mcp` driven by the official MCP SDK's own client, over stdio and streamable HTTP,
with real Chromium and real pages (issue 25, part 1)."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from miniwob_policy import next_action  # noqa: E402
from pagelens.actions import parse_action  # noqa: E402

TOOLS = {
    "browser_navigate",
    "browser_navigate_back",
    "browser_navigate_forward",
    "browser_observe",
    "browser_find",
    "browser_click",
    "browser_type",
    "browser_select_option",
    "browser_hover",
    "browser_press_key",
    "browser_scroll",
    "browser_tabs",
    "browser_wait_for",
    "browser_take_screenshot",
    "browser_html",
}


@asynccontextmanager
async def stdio_session(*args: str):
    params = StdioServerParameters(command=sys.executable, args=["-m", "pagelens", "mcp", *args])
    async with stdio_client(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments) -> tuple[bool, str]:
    """(is an error, the answer's text)."""
    result = await session.call_tool(tool, arguments)
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), text


def find_id(text: str, role: str, name: str) -> int:
    found = re.search(rf"{role} \[(\d+)\] '[^'\n]*{re.escape(name)}", text)
    assert found, f"no {role} named {name!r} in:\n{text}"
    return int(found.group(1))


def red_pixels(png_base64: str) -> int:
    """Pixels of the ids' overlay colour (#e00) in a screenshot."""
    import base64
    import io

    from PIL import Image

    data = Image.open(io.BytesIO(base64.b64decode(png_base64))).convert("RGB").tobytes()
    return sum(1 for i in range(0, len(data), 3) if data[i] > 200 and data[i + 1] < 40 and data[i + 2] < 40)


def test_the_tools_over_stdio(site, tmp_path):
    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path)) as s:
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            error, text = await call(s, "browser_click", element_id=1)
            assert error and "browser_navigate" in text  # nothing open yet: said what to do
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error and "Page: Action test page" in page and "textbox [" in page
            error, found = await call(s, "browser_find", pattern="colour is")
            assert not error and "1 lines match" in found and "text 'colour is red'" in found
            notes = find_id(page, "textbox", "Notes")
            error, typed = await call(s, "browser_type", element_id=notes, text="from MCP")
            assert not error and "Done: type" in typed and "notes: from MCP" in typed
            error, chosen = await call(
                s, "browser_select_option", element_id=find_id(page, "combobox", "Colour"), option="Blue"
            )
            assert not error and "colour is blue" in chosen
            # Errors an agent can act on, and the server keeps serving.
            error, text = await call(s, "browser_click", element_id=99_999_999)
            assert error and "no element [99999999]" in text
            error, text = await call(s, "browser_find", pattern="(", regex=True)
            assert error and "not a regular expression" in text
            # A pattern that backtracks for ages on any line of 30 characters (2^30 ways to
            # split it) runs on a linear-time engine: answered, and so is the next call.
            error, text = await call(s, "browser_find", pattern="(.+)+QQQ$", regex=True)
            assert not error and "nothing on the page matches" in text
            error, text = await call(s, "browser_find", pattern="(?<=a)b", regex=True)
            assert error and "not a regular expression" in text
            error, text = await call(s, "browser_scroll", direction="sideways")
            assert error and "up or down" in text
            error, shot = await call(s, "browser_observe")
            assert not error and "colour is blue" in shot
            image = await s.call_tool("browser_take_screenshot", {})
            assert not image.is_error and image.content[0].type == "image" and image.content[0].mime_type == "image/png"
            labelled = await s.call_tool("browser_take_screenshot", {"with_ids": True})
            assert not labelled.is_error
            # The ids' outlines are drawn (pure red pixels the page has none of), then gone.
            assert red_pixels(labelled.content[0].data) > 20 * red_pixels(image.content[0].data) + 500
            error, again = await call(s, "browser_observe")
            assert not error and again == shot
            from pagelens.browser.devtools import free_port  # a port nothing listens on

            error, text = await call(s, "browser_navigate", url=f"http://127.0.0.1:{free_port()}/")
            assert error and "the connection was refused" in text and "(net::ERR_CONNECTION_REFUSED)" in text
            error, back = await call(s, "browser_observe")
            assert not error and "/site/form.html" in back  # still on the page it was on
            error, html = await call(s, "browser_html")
            assert not error and html.startswith("chunk 0 of ") and 'node="' in html
            # A link to a host that is not allowed: refused, named.
            error, page = await call(s, "browser_navigate", url=site.url("site/offsite.html"))
            assert not error
            offsite = find_id(page, "link", "another host name")
            error, text = await call(s, "browser_click", element_id=offsite)
            assert error and "was refused" in text and "localhost" in text
            # An id of a page that is gone: refused, never sent to the new page.
            stale = find_id(page, "link", "A page on this host")
            error, moved = await call(s, "browser_click", element_id=stale)
            assert not error and "second.html" in moved
            error, text = await call(s, "browser_click", element_id=offsite)
            assert error and f"[{offsite}]" in text
            error, back = await call(s, "browser_navigate_back")
            assert not error and "offsite.html" in back
            error, tabs = await call(s, "browser_tabs", action="list")
            assert not error and tabs.startswith("[0] (current) Offsite")
            # After an action, what it opened is marked new, and a marked id is used as any other.
            error, page = await call(s, "browser_navigate", url=site.url("site/menu.html"))
            assert not error and "*[" not in page
            error, menu = await call(s, "browser_click", element_id=find_id(page, "button", "Open menu"))
            rename = re.search(r"options: \*\[(\d+)\] 'Rename'", menu)
            assert not error and rename and "button [" in menu, menu
            error, hovered = await call(s, "browser_hover", element_id=int(rename.group(1)))
            assert not error and "*[" not in hovered

    asyncio.run(session_run())


def test_an_observation_over_the_budget_is_written_to_a_file_and_linked(site, tmp_path):
    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path), "--max-tokens", "40") as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error and "over the 40 budget" in page
            link = re.search(r"file://\S+", page).group(0)
            whole = Path(link[len("file://") :]).read_text()
            assert "colour is red" in whole and whole.count("\n") > page.count("\n") - 4
            error, small = await call(s, "browser_observe", max_tokens=100_000)
            assert not error and "over the" not in small and "colour is red" in small

    asyncio.run(session_run())


MINIWOB = Path(__import__("miniwob").__file__).parent / "html" / "miniwob"


def policy(answer: str) -> dict | None:
    """The shared scripted MiniWoB++ policy (tests/miniwob_policy.py) as a client of the tools,
    reading only their answers: the next tool call, or None once the episode has a reward."""
    reward = re.search(r"text 'Last reward:'\n\t+text '([^']+)'", answer)
    if reward and reward.group(1) not in ("-",):
        return None
    start = re.search(r"\[(\d+)\] 'START'", answer)
    if start:
        return {"tool": "browser_click", "element_id": int(start.group(1))}
    # The task's goal is the page's query line, under the START area.
    query = re.search(r"clickable \*?\[\d+\]\n\t+text '([^']+)'", answer)
    action = parse_action(next_action(query.group(1) if query else "", answer))
    if action.kind == "type":
        return {"tool": "browser_type", "element_id": action.target, "text": action.text, "submit": action.press_enter}
    assert action.kind == "click", action
    return {"tool": "browser_click", "element_id": action.target}


@pytest.mark.parametrize(
    "task", ["click-test", "click-button", "click-link", "focus-text", "enter-text", "choose-list", "click-checkboxes"]
)
def test_a_client_side_policy_solves_miniwob_through_the_tools(task):
    async def episode():
        async with stdio_session("--allow-host", "file") as s:
            error, answer = await call(s, "browser_navigate", url=(MINIWOB / f"{task}.html").as_uri())
            assert not error, answer
            for _ in range(8):
                step = policy(answer)
                if step is None:
                    return answer
                error, answer = await call(s, step.pop("tool"), **step)
                assert not error, answer
            raise AssertionError(f"no reward after 8 calls:\n{answer}")

    final = asyncio.run(episode())
    reward = re.search(r"text 'Last reward:'\n\t+text '([^']+)'", final).group(1)
    assert float(reward) > 0, final


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_tools_over_streamable_http(site):
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "pagelens", "mcp", "--http", f"127.0.0.1:{port}"], stderr=subprocess.PIPE, text=True
    )
    try:
        # Ready once its port accepts a connection (or the server ended: then say why).
        while True:
            if server.poll() is not None:
                raise AssertionError(f"the server ended: {server.stderr.read()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                time.sleep(0.05)

        async def session_run():
            async with (
                streamable_http_client(f"http://127.0.0.1:{port}/mcp") as streams,
                ClientSession(*streams[:2]) as s,
            ):
                await s.initialize()
                assert {t.name for t in (await s.list_tools()).tools} == TOOLS
                error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
                assert not error and "Page: Action test page" in page
                error, typed = await call(
                    s, "browser_type", element_id=find_id(page, "textbox", "Notes"), text="over HTTP"
                )
                assert not error and "notes: over HTTP" in typed

        asyncio.run(session_run())
    finally:
        server.terminate()
        server.wait(30)


def test_the_other_tools_over_stdio(site, tmp_path):
    """The tools the first test does not reach: wait for text, hover, press, scroll, forward,
    tabs (new, select, close), and observe of one element's subtree."""

    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path)) as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error
            error, made = await call(s, "browser_click", element_id=find_id(page, "button", "Make late button"))
            assert not error
            error, waited = await call(s, "browser_wait_for", text="Late button")
            assert not error and "button [" in waited and "Late button" in waited
            error, text = await call(s, "browser_wait_for", text="Never there", timeout_s=0.5)
            assert error and "did not appear" in text
            error, hovered = await call(s, "browser_hover", element_id=find_id(page, "button", "Vanish"))
            assert not error and "Done: hover" in hovered
            search = find_id(page, "textbox", "Search")
            assert not (await call(s, "browser_type", element_id=search, text="abc"))[0]
            error, pressed = await call(s, "browser_press_key", keys="Enter")
            assert not error and "You searched for: abc" in pressed
            error, scrolled = await call(s, "browser_scroll", direction="down")
            assert not error and "Done: scroll [down]" in scrolled
            assert not (await call(s, "browser_navigate_back"))[0]
            error, forward = await call(s, "browser_navigate_forward")
            assert not error and "result.html" in forward
            error, opened = await call(s, "browser_tabs", action="new")
            assert not error
            error, tabs = await call(s, "browser_tabs", action="list")
            assert not error and tabs.count("\n") == 1 and "[1] (current)" in tabs
            error, back = await call(s, "browser_tabs", action="select", index=0)
            assert not error and "result.html" in back
            error, closed = await call(s, "browser_tabs", action="close", index=1)
            assert not error
            error, tabs = await call(s, "browser_tabs", action="list")
            assert not error and tabs.count("\n") == 0
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            colour = find_id(page, "combobox", "Colour")
            error, part = await call(s, "browser_observe", subtree_of=colour)
            assert not error and "Red" in part and "Search" not in part
            error, text = await call(s, "browser_observe", subtree_of=99_999_999)
            assert error and "no element [99999999]" in text

    asyncio.run(session_run())


# -- hypothesis over the tools' arguments -----------------------------------------------------------


class _Session:
    """One stdio session on a loop of its own, so that each hypothesis example is one call."""

    def __init__(self, site) -> None:
        import threading

        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.stop: asyncio.Future[None] | None = None
        self.session: ClientSession | None = None
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.task = asyncio.run_coroutine_threadsafe(self._hold(site), self.loop)
        if not self.ready.wait(60):
            raise AssertionError(f"the server did not start: {self.task}")

    async def _hold(self, site) -> None:
        self.stop = self.loop.create_future()
        async with stdio_session() as s:
            await call(s, "browser_navigate", url=site.url("site/form.html"))
            self.session = s
            self.ready.set()
            await self.stop

    def call(self, tool: str, arguments: dict, timeout: float = 60) -> tuple[bool, str]:
        async def one() -> tuple[bool, str]:
            assert self.session is not None
            result = await self.session.call_tool(tool, arguments)
            return bool(result.is_error), "\n".join(getattr(c, "text", "") for c in result.content)

        return asyncio.run_coroutine_threadsafe(one(), self.loop).result(timeout)

    def close(self) -> None:
        if self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set_result, None)
        try:
            self.task.result(30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)


@pytest.fixture(scope="module")
def held_session(site):
    s = _Session(site)
    yield s
    s.close()


def _odd_arguments():
    from hypothesis import strategies as st

    value = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=30),
        st.sampled_from(["(a+)+$", "[", "*[4]", "\x00", "..", "file:///etc/hostname", "javascript:alert(1)", "1e400"]),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    )
    names = st.sampled_from(
        [
            "element_id",
            "text",
            "submit",
            "option",
            "keys",
            "direction",
            "pattern",
            "regex",
            "action",
            "index",
            "max_tokens",
            "subtree_of",
            "with_ids",
            "url",
            "seconds",
            "bogus",
        ]
    )
    return st.dictionaries(names, value, max_size=4)


def test_odd_tool_arguments_are_answered_and_the_server_stays(held_session):
    """Any arguments to any tool (wrong types, huge numbers, odd text, unknown names): an
    answer or a tool error, within a bound, and the server answers the next call."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    tools = sorted(TOOLS - {"browser_navigate", "browser_wait_for"})  # (they wait on the network or time)

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(tools), _odd_arguments())
    def one(tool, arguments):
        error, text = held_session.call(tool, arguments)
        assert isinstance(error, bool) and (text or not error)
        assert "Traceback" not in text

    one()
    error, page = held_session.call("browser_observe", {})
    assert not error and "RootWebArea" in page
