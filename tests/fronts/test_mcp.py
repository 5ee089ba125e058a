"""`pagelens mcp` driven by the official MCP SDK's own client, over stdio and streamable HTTP,
with real Chromium and real pages: Playwright MCP's tools by their own argument names, answers
that carry what changed, a browser per session, errors that say why (issues 25 and 41)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

from pagelens.actions import parse_action  # noqa: E402
from support.miniwob_policy import next_action  # noqa: E402
from support.processes import descendants  # noqa: E402

# Playwright MCP's core tools, by its names (microsoft/playwright, packages/playwright-core/src/
# tools/backend/*.ts: defineTool/defineTabTool with capability core*), and pagelens' own.
PLAYWRIGHT_MCP_TOOLS = {
    "browser_navigate",
    "browser_navigate_back",
    "browser_navigate_forward",
    "browser_snapshot",
    "browser_click",
    "browser_type",
    "browser_fill_form",
    "browser_select_option",
    "browser_press_key",
    "browser_hover",
    "browser_drag",
    "browser_wait_for",
    "browser_tabs",
    "browser_take_screenshot",
    "browser_handle_dialog",
    "browser_file_upload",
    "browser_console_messages",
    "browser_network_requests",
    "browser_resize",
    "browser_close",
}
OWN_TOOLS = {"browser_observe", "browser_find", "browser_scroll", "browser_html"}
TOOLS = PLAYWRIGHT_MCP_TOOLS | OWN_TOOLS
# Playwright MCP's argument names per tool (its zod schemas): a prompt written against them works.
ARGUMENTS = {
    "browser_navigate": {"url"},
    "browser_snapshot": {"target", "filename", "depth"},
    "browser_click": {"element", "target", "doubleClick", "button", "modifiers"},
    "browser_type": {"element", "target", "text", "submit", "slowly"},
    "browser_fill_form": {"fields"},
    "browser_select_option": {"element", "target", "values"},
    "browser_press_key": {"key"},
    "browser_hover": {"element", "target"},
    "browser_drag": {"startElement", "startTarget", "endElement", "endTarget"},
    "browser_wait_for": {"time", "text", "textGone"},
    "browser_tabs": {"action", "index", "url"},
    "browser_take_screenshot": {"type", "filename", "fullPage", "element", "target"},
    "browser_handle_dialog": {"accept", "promptText"},
    "browser_file_upload": {"paths"},
    "browser_console_messages": {"level", "all"},
    "browser_network_requests": {"static", "filter"},
    "browser_resize": {"width", "height"},
}


@asynccontextmanager
async def stdio_session(*args: str, cwd: str | None = None):
    params = StdioServerParameters(command=sys.executable, args=["-m", "pagelens", "mcp", *args], cwd=cwd)
    async with stdio_client(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments) -> tuple[bool, str]:
    """(is an error, the answer's text)."""
    result = await session.call_tool(tool, arguments)
    assert len(result.content) == 1, result.content  # one item: never the same text twice
    assert not result.structured_content, result.structured_content
    text = "\n".join(getattr(c, "text", "") for c in result.content)
    return bool(result.is_error), text


def find_id(text: str, role: str, name: str) -> str:
    """The ref (as a string, as a client passes it) of the element ``role`` named ``name``."""
    found = re.search(rf"{role} \*?\[(\d+)\] '[^'\n]*{re.escape(name)}", text)
    assert found, f"no {role} named {name!r} in:\n{text}"
    return found.group(1)


def red_pixels(png_base64: str) -> int:
    """Pixels of the ids' overlay colour (#e00) in a screenshot."""
    import base64
    import io

    from PIL import Image

    data = Image.open(io.BytesIO(base64.b64decode(png_base64))).convert("RGB").tobytes()
    return sum(1 for i in range(0, len(data), 3) if data[i] > 200 and data[i + 1] < 40 and data[i + 2] < 40)


def test_the_tool_surface_is_playwright_mcps(tmp_path):
    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path)) as s:
            listed = {t.name: t for t in (await s.list_tools()).tools}
            assert set(listed) == TOOLS
            for tool, names in ARGUMENTS.items():
                assert names <= set(listed[tool].input_schema["properties"]), tool
            # ref is a string, as Playwright MCP's snapshots print refs; the description is optional.
            click = listed["browser_click"].input_schema
            assert click["properties"]["ref"]["anyOf"][0]["type"] == "string"
            assert "element" not in click.get("required", [])
            assert listed["browser_snapshot"].annotations.read_only_hint
            # A form's fields as Playwright MCP declares them, written out (no $ref to follow).
            item = listed["browser_fill_form"].input_schema["properties"]["fields"]["items"]
            assert set(item["properties"]) == set(item["required"]) == {"name", "type", "ref", "value"}
            assert item["properties"]["type"]["enum"] == ["textbox", "checkbox", "radio", "combobox", "slider"]
            assert all(p["description"] for p in item["properties"].values())
            assert "$ref" not in json.dumps(listed["browser_fill_form"].input_schema)
            assert not any(t.output_schema for t in listed.values())  # one text item, no copy

    asyncio.run(session_run())


def test_the_server_reports_its_version():
    import pagelens

    async def session_run():
        params = StdioServerParameters(command=sys.executable, args=["-m", "pagelens", "mcp"])
        async with stdio_client(params) as streams, ClientSession(*streams) as session:
            init = await session.initialize()
            return init.server_info

    info = asyncio.run(session_run())
    assert info.name == "pagelens" and info.version == pagelens.__version__ and info.version


def test_the_tools_over_stdio(site, tmp_path):
    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path)) as s:
            assert {t.name for t in (await s.list_tools()).tools} == TOOLS
            error, text = await call(s, "browser_click", ref="1")
            assert error and "browser_navigate" in text  # nothing open yet: said what to do
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error and "Page Title: Action test page" in page and "textbox [" in page
            error, found = await call(s, "browser_find", pattern="colour is")
            assert not error and "1 line matches" in found and "text 'colour is red'" in found
            notes = find_id(page, "textbox", "Notes")
            error, typed = await call(s, "browser_type", element="Notes", ref=notes, text="from MCP")
            assert not error and "Typed into textbox 'Notes'" in typed and "notes: from MCP" in typed
            error, chosen = await call(
                s, "browser_select_option", ref=find_id(page, "combobox", "Colour"), values=["Blue"]
            )
            assert not error and "colour is blue" in chosen
            # Errors an agent can act on, and the server keeps serving.
            error, text = await call(s, "browser_click", ref="99999999")
            assert error and "no element [99999999]" in text
            error, text = await call(s, "browser_find", pattern="(", regex=True)
            assert error and "not a regular expression" in text
            error, text = await call(s, "browser_find", pattern="  ")
            assert error and "empty pattern" in text
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
            error, text = await call(s, "browser_click", ref=offsite)
            assert error and "was refused" in text and "localhost" in text
            # An id of a page that is gone: refused, never sent to the new page.
            stale = find_id(page, "link", "A page on this host")
            error, moved = await call(s, "browser_click", ref=stale)
            assert not error and "second.html" in moved
            error, text = await call(s, "browser_click", ref=offsite)
            assert error and f"[{offsite}]" in text
            error, back = await call(s, "browser_navigate_back")
            assert not error and "offsite.html" in back
            error, tabs = await call(s, "browser_tabs", action="list")
            assert not error and "- 0: (current) Offsite" in tabs
            # After an action, what it opened is marked new, and a marked id is used as any other.
            error, page = await call(s, "browser_navigate", url=site.url("site/menu.html"))
            assert not error and "*[" not in page
            error, menu = await call(s, "browser_click", ref=find_id(page, "button", "Open menu"))
            rename = re.search(r"options: \*\[(\d+)\] 'Rename'", menu)
            assert not error and rename and "menu *[" in menu, menu
            error, hovered = await call(s, "browser_hover", ref=rename.group(1))
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
    """The shared scripted MiniWoB++ policy (tests/support/miniwob_policy.py) as a client of the tools,
    reading only their answers: the next tool call, or None once the episode has a reward."""
    reward = re.search(r"text 'Last reward:'\n\t+text '([^']+)'", answer)
    if reward and reward.group(1) not in ("-",):
        return None
    start = re.search(r"\[(\d+)\] 'START'", answer)
    if start:
        return {"tool": "browser_click", "ref": start.group(1)}
    # The task's goal is the page's query line, under the START area.
    query = re.search(r"clickable \*?\[\d+\]\n\t+text '([^']+)'", answer)
    action = parse_action(next_action(query.group(1) if query else "", answer))
    if action.kind == "type":
        return {"tool": "browser_type", "ref": str(action.target), "text": action.text, "submit": action.press_enter}
    assert action.kind == "click", action
    return {"tool": "browser_click", "ref": str(action.target)}


@pytest.mark.parametrize(
    "task", ["click-test", "click-button", "click-link", "focus-text", "enter-text", "choose-list", "click-checkboxes"]
)
def test_a_client_side_policy_solves_miniwob_through_the_tools(task):
    async def episode():
        async with stdio_session("--allow-file", str(MINIWOB)) as s:
            error, answer = await call(s, "browser_navigate", url=(MINIWOB / f"{task}.html").as_uri())
            assert not error, answer
            for _ in range(8):
                step = policy(answer)
                if step is None:
                    return answer
                error, answer = await call(s, step.pop("tool"), **step)
                assert not error, answer
                if "### Snapshot changes" in answer:  # this policy reads the whole page each turn
                    error, answer = await call(s, "browser_snapshot")
                    assert not error, answer
            raise AssertionError(f"no reward after 8 calls:\n{answer}")

    final = asyncio.run(episode())
    reward = re.search(r"text 'Last reward:'\n\t+text '([^']+)'", final).group(1)
    assert float(reward) > 0, final


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(*args: str, env: dict | None = None):
    """`pagelens mcp --http` on a free loopback port: yields its URL once it accepts connections."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "pagelens", "mcp", "--http", f"127.0.0.1:{port}", *args],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
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
        yield f"http://127.0.0.1:{port}/mcp", server.pid
    finally:
        server.terminate()
        server.wait(30)


def _argv(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def chromium_of(pid: int) -> tuple[int, int]:
    """Chromium's browser processes and its renderers below process ``pid``."""
    argvs = [_argv(child) for child in descendants(pid)]
    browsers = sum(1 for a in argvs if b"chrom" in a and b"--type=" not in a)
    renderers = sum(1 for a in argvs if b"chrom" in a and b"--type=renderer" in a)
    return browsers, renderers


def browsers_of(pid: int) -> int:
    return chromium_of(pid)[0]


def renderers_of(pid: int) -> int:
    return chromium_of(pid)[1]


def chromium_pids(pid: int) -> set[int]:
    """The Chromium processes (browsers, renderers, helpers) below process ``pid``."""
    return {child for child in descendants(pid) if b"chrom" in _argv(child).split(b"\0")[0]}


def still_running(pids: set[int]) -> set[int]:
    """Those of ``pids`` that are still Chromium processes (other tests' run beside: only a
    server's own are counted, never the machine's)."""
    alive = set()
    for p in pids:
        with contextlib.suppress(OSError):
            if b"chrom" in Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0]:
                alive.add(p)
    return alive


async def until(check, what: str, timeout: float = 60) -> None:
    """Waits for ``check()`` (a state the server reaches by itself, e.g. processes gone)."""
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.1)


@asynccontextmanager
async def http_session(url: str, headers: dict | None = None):
    import httpx2 as httpx

    async with (
        httpx.AsyncClient(headers=headers or {}, timeout=120) as client,
        streamable_http_client(url, http_client=client) as streams,
        ClientSession(*streams[:2]) as s,
    ):
        await s.initialize()
        yield s


# What one session leaves in its context, in every store a page can write: read back by the other
# session on the same site, where none of it may be found.
_LEAVE = """async () => {
  document.cookie = 'who=one';
  localStorage.setItem('who', 'one');
  await new Promise((done, failed) => {
    const open = indexedDB.open('who-db', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('who');
    open.onsuccess = () => { const tx = open.result.transaction('who', 'readwrite');
      tx.objectStore('who').put('one', 'who'); tx.oncomplete = done; tx.onerror = failed; };
    open.onerror = failed;
  });
  await (await caches.open('who-cache')).put('/who', new Response('one'));
  for (let i = 0; i < 2; i++) await (await fetch('/cached?k=isolation')).text();
  return 'left';
}"""
_FIND = """async () => JSON.stringify({
  cookie: document.cookie,
  local: localStorage.getItem('who'),
  idb: (await indexedDB.databases()).map(d => d.name),
  caches: await caches.keys(),
  cached: await (await fetch('/cached?k=isolation')).text(),
})"""


def test_each_http_session_is_a_context_of_its_own_in_a_shared_browser(site):
    """Two MCP sessions over HTTP share one browser and nothing else: cookies, localStorage,
    IndexedDB, the Cache API and the HTTP cache, downloads, dialogs and tabs are each session's;
    when both end their pages go, and when the server stops no Chromium is left."""

    def cached_requests() -> int:
        return sum(1 for r in site.requests if r[2].startswith("/cached?k=isolation"))

    async def session_run(url: str, pid: int):
        async with http_session(url) as one, http_session(url) as two:
            assert {t.name for t in (await one.list_tools()).tools} == TOOLS | {"browser_evaluate"}
            error, page = await call(one, "browser_navigate", url=site.url("site/form.html"))
            assert not error and "Page Title: Action test page" in page
            error, typed = await call(one, "browser_type", ref=find_id(page, "textbox", "Notes"), text="over HTTP")
            assert not error and "notes: over HTTP" in typed
            before = cached_requests()
            error, left = await call(one, "browser_evaluate", function=_LEAVE)
            assert not error and "left" in left, left
            assert cached_requests() == before + 1  # one's second fetch came from its cache
            # The second client: no page yet, then none of what the first left, on the same site.
            error, text = await call(two, "browser_snapshot")
            assert error and "browser_navigate" in text
            error, page2 = await call(two, "browser_navigate", url=site.url("site/form.html"))
            assert not error and "notes: over HTTP" not in page2
            error, found = await call(two, "browser_evaluate", function=_FIND)
            assert not error, found
            seen = json.loads(json.loads(found[found.index('"{') : found.rindex('}"') + 2]))
            assert seen["cookie"] == "" and seen["local"] is None, seen
            assert "who-db" not in seen["idb"] and seen["caches"] == [], seen
            assert cached_requests() == before + 2  # not from one's HTTP cache
            error, mine = await call(one, "browser_evaluate", function=_FIND)
            assert not error and "who=one" in mine and "who-db" in mine and "who-cache" in mine, mine
            # Downloads: each session's own folder, whatever names the pages give.
            paths = []
            for s in (one, two):
                error, files = await call(s, "browser_navigate", url=site.url("site/downloads.html"))
                assert not error
                error, saved = await call(s, "browser_click", ref=find_id(files, "link", "Report"))
                assert not error and "Downloaded file report.csv" in saved, saved
                paths.append(Path(re.search(r'Downloaded file report\.csv to "([^"]+)"', saved).group(1)))
            assert paths[0].parent != paths[1].parent and all(p.is_file() for p in paths)
            # A dialog in one is one's alone; a tab one opens is not two's.
            error, asked = await call(
                one, "browser_evaluate", function="() => { setTimeout(() => alert('only one'), 0); }"
            )
            error, text = await call(one, "browser_snapshot")
            assert "only one" in asked + text
            error, text = await call(two, "browser_snapshot")
            assert not error and "only one" not in text and "Modal state" not in text
            error, opened = await call(one, "browser_tabs", action="new", url=site.url("site/second.html"))
            error, tabs = await call(two, "browser_tabs", action="list")
            assert not error and "second.html" not in tabs, tabs
            assert browsers_of(pid) == 1  # one browser holds both sessions
        # Both sessions ended (the client's DELETE): their contexts, and their renderers, are gone.
        await until(lambda: renderers_of(pid) == 0, "the sessions' renderers outlived their sessions")
        started.update(chromium_pids(pid))

    started: set[int] = set()
    with http_server("--caps", "evaluate") as (url, pid):
        asyncio.run(session_run(url, pid))
    assert started and not still_running(started)  # the server took every browser it started with it


def _browser_pids(pid: int) -> list[int]:
    """The Chromium browser processes below ``pid``."""
    return [c for c in descendants(pid) if b"chrom" in _argv(c) and b"--type=" not in _argv(c)]


def test_one_sessions_crash_touches_no_other_and_a_dead_browser_is_replaced(site):
    """Sessions sharing a browser: one's renderer crashing, its endless script, its window
    closing leave the other's page and calls as they were; the browser killed, every session
    is told once and its next navigation works in a new browser."""

    async def session_run(url: str, pid: int):
        async with http_session(url) as one, http_session(url) as two:
            error, page2 = await call(two, "browser_navigate", url=site.url("site/form.html"))
            assert not error
            # A page that takes its renderer down (a DOM 5,000 levels deep): one's alone.
            error, text = await call(one, "browser_navigate", url=site.url("site/deep.html"))
            assert error and "crashed" in text, text
            error, again = await call(two, "browser_snapshot")
            assert not error and "Action test page" in again
            # An endless script in one: two is answered while one's tab is held.
            error, page = await call(one, "browser_navigate", url=site.url("site/endless.html"))
            assert not error, page
            held = asyncio.ensure_future(call(one, "browser_click", ref=find_id(page, "button", "Loop forever")))
            error, again = await call(two, "browser_snapshot")
            assert not error and "Action test page" in again and not held.done()
            error, text = await held
            assert "pagelens stopped it" in text, text  # by the script watch
            # The browser killed: each session is told once, then opens a page in a new browser.
            (browser,) = _browser_pids(pid)
            os.kill(browser, 9)
            for s in (one, two):
                error, text = await call(s, "browser_snapshot")
                assert error and "stopped (it crashed or was killed)" in text, text
                error, text = await call(s, "browser_snapshot")
                assert error and "no page yet" in text, text
                error, page = await call(s, "browser_navigate", url=site.url("site/second.html"))
                assert not error and "second" in page.lower(), page
            assert browser not in _browser_pids(pid) and len(_browser_pids(pid)) == 1

    with http_server() as (url, pid):
        asyncio.run(session_run(url, pid))


def test_a_session_over_the_limit_is_refused_with_a_status_and_a_reason(site, tmp_path):
    import httpx2 as httpx

    async def session_run(url: str, pid: int):
        async with http_session(url) as one, http_session(url) as two:
            for s in (one, two):
                assert not (await call(s, "browser_navigate", url=site.url("site/second.html")))[0]
            async with httpx.AsyncClient(timeout=60) as client:
                refused = await client.post(
                    url,
                    json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                    headers={"Accept": "application/json, text/event-stream"},
                )
            assert refused.status_code == 503 and refused.headers.get("retry-after")
            line = refused.json()["error"]["message"]
            assert "already serves 2 sessions (--max-sessions)" in line and "\n" not in line
            # The two served go on.
            assert not (await call(one, "browser_snapshot"))[0]
        # One ended: a new session is served.
        async with http_session(url) as three:
            assert not (await call(three, "browser_navigate", url=site.url("site/second.html")))[0]

    timings = tmp_path / "timings.jsonl"
    with http_server("--max-sessions", "2", "--timings", str(timings)) as (url, pid):
        asyncio.run(session_run(url, pid))
    # A line per call: its session, the tool, the time it waited and worked.
    lines = [json.loads(line) for line in timings.read_text().splitlines()]
    assert [(t["session"], t["tool"]) for t in lines] == [
        (1, "browser_navigate"),
        (2, "browser_navigate"),
        (1, "browser_snapshot"),
        (3, "browser_navigate"),
    ]
    assert all(t["queued_s"] >= 0 and t["pool_s"] >= 0 and t["worked_s"] > 0 for t in lines), lines


def _documented_haproxy(front: int, one: int, two: int) -> str:
    """docs/mcp.md's HAProxy configuration, with the test's ports for the documented ones."""
    docs = (Path(__file__).parents[2] / "docs" / "mcp.md").read_text()
    config = docs.split("```haproxy\n", 1)[1].split("```", 1)[0]
    assert "127.0.0.1:8930" in config and "127.0.0.1:8931" in config and "127.0.0.1:8932" in config
    return config.replace("8930", str(front)).replace("8931", str(one)).replace("8932", str(two))


def test_replicas_behind_haproxy_keep_each_session_and_survive_one_stopping(site, tmp_path):
    """Two `pagelens mcp --http` behind HAProxy configured as docs/mcp.md says: 16 sessions go
    through it, each kept on its replica by Mcp-Session-Id; one replica is killed: its sessions
    get a clear error, the other replica's go on, and new sessions work."""
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    assert os.access(haproxy, os.X_OK), "HAProxy is missing: `make setup` installs Debian's package"
    front = _free_port()

    @asynccontextmanager
    async def session_that_may_be_lost(url: str):
        """A session whose server may be killed under it: its client's own teardown (ending a
        session nobody holds, a stream cut) may fail after the test is done with it."""
        done = False
        try:
            async with http_session(url) as s:
                yield s
                done = True
        except BaseException:
            if not done:
                raise

    async def snapshot_or_refusal(s) -> tuple[bool, str]:
        """A snapshot's answer, or the protocol error a session nobody holds gets instead."""
        try:
            return await call(s, "browser_snapshot")
        except MCPError as e:
            return True, str(e)

    async def sessions_through(url: str, count: int, stack: contextlib.AsyncExitStack) -> list:
        # Opened one after another in this task (the client's scopes must close where they opened).
        opened = [await stack.enter_async_context(session_that_may_be_lost(url)) for _ in range(count)]
        answers = await asyncio.gather(
            *(call(s, "browser_navigate", url=site.url(f"site/second.html?session={n}")) for n, s in enumerate(opened))
        )
        assert all(not error for error, _ in answers), answers
        return list(opened)

    async def session_run(url: str, first_replica: int, second_replica: int) -> None:
        async with contextlib.AsyncExitStack() as stack:
            served = await sessions_through(url, 16, stack)
            # Each session reads its own page back: every request of it reached the replica
            # that holds it (any other would answer 404).
            for n, s in enumerate(served):
                error, page = await call(s, "browser_snapshot")
                assert not error and f"session={n}" in page, page
            started.update(chromium_pids(first_replica), chromium_pids(second_replica))
            os.kill(first_replica, 9)
            os.waitpid(first_replica, 0)  # gone, its sockets with it (Popen's own wait then finds it reaped)
            answers = [await snapshot_or_refusal(s) for s in served]
            lost = [text for error, text in answers if error]
            kept = [text for error, text in answers if not error]
            assert len(lost) == 8 and len(kept) == 8, answers  # balanced: half on each replica
            assert all("holds no session" in text and "start a new one" in text for text in lost), lost
            fresh = await sessions_through(url, 4, stack)
            for s in fresh:
                assert not (await call(s, "browser_snapshot"))[0]

    started: set[int] = set()
    with http_server() as (one_url, one_pid), http_server() as (two_url, two_pid):
        config = tmp_path / "haproxy.cfg"
        ports = [int(u.rsplit(":", 1)[1].removesuffix("/mcp")) for u in (one_url, two_url)]
        config.write_text(_documented_haproxy(front, *ports))
        proxy = subprocess.Popen([haproxy, "-f", str(config), "-db"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            while True:  # ready once its port accepts a connection
                assert proxy.poll() is None, proxy.stderr.read().decode()
                with contextlib.suppress(OSError):
                    socket.create_connection(("127.0.0.1", front), timeout=5).close()
                    break
                time.sleep(0.05)
            asyncio.run(session_run(f"http://127.0.0.1:{front}/mcp", one_pid, two_pid))
        finally:
            proxy.terminate()
            proxy.wait(30)
    assert started
    asyncio.run(until(lambda: not still_running(started), "a replica's browsers outlived it"))


def test_playwright_mcps_legacy_sse_endpoint_serves_a_context_per_connection(site):
    """A client configured with Playwright MCP's older URL (``/sse``) is served: each connection
    a session with its own browser context, closed when the connection ends."""
    from mcp.client.sse import sse_client

    @asynccontextmanager
    async def sse_session(url: str):
        async with sse_client(url) as streams, ClientSession(*streams) as s:
            await s.initialize()
            yield s

    async def session_run(url: str, pid: int):
        async with http_session(url.removesuffix("/sse") + "/mcp") as streamed:
            assert not (await call(streamed, "browser_navigate", url=site.url("site/second.html")))[0]
            await sse_connections(url, pid)
            # The connections' end closed their browsers, not the other session's.
            error, page = await call(streamed, "browser_snapshot")
            assert not error and "second" in page.lower(), page

    async def sse_connections(url: str, pid: int):
        async with sse_session(url) as one, sse_session(url) as two:
            assert {t.name for t in (await one.list_tools()).tools} == TOOLS
            error, page = await call(one, "browser_navigate", url=site.url("site/form.html"))
            assert not error and "Page Title: Action test page" in page, page
            error, typed = await call(one, "browser_type", ref=find_id(page, "textbox", "Notes"), text="over SSE")
            assert not error and "notes: over SSE" in typed, typed
            error, text = await call(two, "browser_snapshot")
            assert error and "browser_navigate" in text, text  # a context of its own: no page yet
            assert browsers_of(pid) == 1
            during = renderers_of(pid)
        # The connections' pages went with them (the other session's stays: see session_run).
        await until(lambda: renderers_of(pid) < during, "a connection's page outlived it")

    with http_server() as (url, pid):
        asyncio.run(session_run(url.removesuffix("/mcp") + "/sse", pid))


def test_an_idle_session_has_its_context_closed(site):
    async def session_run(url: str, pid: int):
        async with http_session(url) as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            during = renderers_of(pid)
            assert not error and during >= 1
            # No call for over a second: the context is closed, the session's renderers with it,
            # and the session ended: a call says so in one line (a client starts a new session).
            await until(lambda: renderers_of(pid) < during, "an idle session's page stayed")
            with pytest.raises(MCPError, match="holds no session .*: start a new one"):
                await call(s, "browser_snapshot")
        async with http_session(url) as again:
            assert not (await call(again, "browser_navigate", url=site.url("site/form.html")))[0]

    with http_server("--idle-timeout", "1") as (url, pid):
        asyncio.run(session_run(url, pid))


def _silent_session(url: str, page: str) -> socket.socket:
    """A client that starts a session, has it load ``page``, asks for the page's snapshot and
    never reads the answer (a receive buffer of 1 KB, never emptied): what a stalled or
    vanished agent leaves the server."""
    import httpx2 as httpx

    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

    def message(response: httpx.Response) -> dict:
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1] if data else response.text)

    with httpx.Client(timeout=120) as client:
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "silent", "version": "0"}}
        started = client.post(
            url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
        )
        session_id = started.headers["mcp-session-id"]
        headers |= {"Mcp-Session-Id": session_id, "Mcp-Protocol-Version": message(started)["result"]["protocolVersion"]}
        client.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "browser_navigate", "arguments": {"url": page}}
        loaded = client.post(
            url, headers=headers, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}
        )
        assert not message(loaded)["result"].get("isError"), loaded.text[:500]
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "browser_snapshot", "arguments": {}}}
    )
    address = urlsplit(url)
    stalled = socket.socket()
    stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    stalled.connect((address.hostname, address.port))
    request = [
        f"POST {address.path} HTTP/1.1",
        f"Host: {address.netloc}",
        f"Content-Length: {len(body)}",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    stalled.sendall(("\r\n".join(request) + "\r\n\r\n" + body).encode())
    return stalled


def test_a_hung_or_silent_client_blocks_no_other_session(site):
    """Clients a server must serve others beside: one that sent half a request and went quiet,
    one that asked for a long page's snapshot and never reads the answer, and a session whose
    own call waits (for text that never comes). Another session is answered meanwhile: every
    one of its calls returns while the waiting call is still waiting."""
    long_page = site.url("site/paragraphs.html")

    async def sessions(url: str) -> None:
        address = urlsplit(url)
        half = socket.create_connection((address.hostname, address.port))
        half.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{"
        )
        silent = await asyncio.to_thread(_silent_session, url, long_page)
        try:
            async with http_session(url) as waiting, http_session(url) as other:
                assert not (await call(waiting, "browser_navigate", url=site.url("site/form.html")))[0]
                never = asyncio.ensure_future(call(waiting, "browser_wait_for", text="No page says this", timeout=240))
                error, page = await call(other, "browser_navigate", url=long_page)
                assert not error, page
                error, snapshot = await call(other, "browser_snapshot")
                assert not error and "Next page" in snapshot
                link = find_id(snapshot, "link", "Next page")
                assert not (await call(other, "browser_type", ref=find_id(snapshot, "textbox", "Note"), text="on"))[0]
                error, after = await call(other, "browser_click", ref=link)
                assert not error, after
                assert not never.done()  # all of the above while the other session's call waits
                never.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await never
        finally:
            half.close()
            silent.close()

    with http_server() as (url, _):
        asyncio.run(sessions(url))


def test_http_is_loopback_unless_allowed_with_a_token(site):
    # Another address: refused unless --allow-remote, which needs a token.
    for args, why in [
        ([], "not a loopback address"),
        (["--allow-remote"], "needs a token"),
    ]:
        proc = subprocess.run(
            [sys.executable, "-m", "pagelens", "mcp", "--http", f"0.0.0.0:{_free_port()}", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode != 0 and why in proc.stderr and "Traceback" not in proc.stderr, proc.stderr

    async def session_run(url: str):
        import httpx2 as httpx

        # No token, or a wrong one: 401 before any MCP.
        for headers in ({}, {"Authorization": "Bearer nope"}):
            async with httpx.AsyncClient() as client:
                answer = await client.post(url, headers=headers, json={})
                assert answer.status_code == 401
        # A Host the server is not reached by: refused (DNS rebinding), even with the token.
        async with httpx.AsyncClient() as client:
            answer = await client.post(
                url, headers={"Authorization": "Bearer s3cret", "Host": "evil.example:80"}, json={}
            )
            assert answer.status_code in (400, 421), answer.status_code
        async with http_session(url, {"Authorization": "Bearer s3cret"}) as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error and "Action test page" in page

    with http_server(env={"PAGELENS_MCP_TOKEN": "s3cret"}) as (url, _):
        asyncio.run(session_run(url))


def test_a_wait_for_text_fits_a_real_page(site):
    """A report a server takes 7 s to make is waited for (Playwright MCP gives up after its 5 s
    action timeout), and the answer says how long the wait took."""

    async def session_run():
        async with stdio_session() as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/late.html"))
            assert not error
            assert not (await call(s, "browser_click", ref=find_id(page, "button", "Make the report")))[0]
            error, waited = await call(s, "browser_wait_for", text="Report ready")
            assert not error, waited
            took = float(re.search(r"Waited for 'Report ready' \(([\d.]+) s\)", waited).group(1))
            assert 5 < took < 30, waited
            assert "Report ready" in waited.split("\n", 1)[1]  # the page after it

    asyncio.run(session_run())


def test_what_the_page_logs_and_asks_while_it_loads_is_listed(site):
    """The first page a session opens is watched from its start: the messages its scripts log
    and the requests they make while it loads are listed (and after another navigation too)."""

    async def session_run():
        async with stdio_session() as s:
            for _ in range(2):
                error, page = await call(s, "browser_navigate", url=site.url("site/console-at-load.html"))
                assert not error, page
                error, logged = await call(s, "browser_console_messages")
                assert not error and "Total messages: 2 (Errors: 1, Warnings: 1)" in logged, logged
                assert "[WARNING] a warning while the page loads" in logged, logged
                assert "[ERROR] an error while the page loads" in logged, logged
                error, requests = await call(s, "browser_network_requests")
                assert not error and "second.html?at=load => [200]" in requests, requests

    asyncio.run(session_run())


def test_files_come_from_the_clients_roots(site, tmp_path):
    """A client that names its roots (MCP roots) has files taken from those folders only, as
    Playwright MCP does: not from the server's working directory; a client that names none,
    from the working directory."""
    from mcp import types as mcp_types

    root, elsewhere = tmp_path / "project", tmp_path / "cwd"
    root.mkdir()
    elsewhere.mkdir()
    (root / "in-root.txt").write_text("from the root")
    (elsewhere / "in-cwd.txt").write_text("from the cwd")

    async def roots(_context):
        return mcp_types.ListRootsResult(roots=[mcp_types.Root(uri=root.as_uri(), name="project")])

    async def chooser(s):
        error, page = await call(s, "browser_navigate", url=site.url("site/tools.html"))
        assert not error, page
        error, chose = await call(s, "browser_click", ref=find_id(page, "button", "Attachment"))
        assert not error and "[File chooser]" in chose, chose

    async def session_run():
        params = StdioServerParameters(command=sys.executable, args=["-m", "pagelens", "mcp"], cwd=str(elsewhere))
        async with stdio_client(params) as streams, ClientSession(*streams, list_roots_callback=roots) as s:
            await s.initialize()
            await chooser(s)
            error, text = await call(s, "browser_file_upload", paths=[str(elsewhere / "in-cwd.txt")])
            assert error and "outside the directories" in text and str(root) in text, text
            error, uploaded = await call(s, "browser_file_upload", paths=[str(root / "in-root.txt")])
            assert not error and "in-root.txt" in uploaded, uploaded
        async with stdio_session(cwd=str(elsewhere)) as s:  # no roots: the working directory
            await chooser(s)
            error, text = await call(s, "browser_file_upload", paths=[str(root / "in-root.txt")])
            assert error and "outside the directories" in text, text
            error, uploaded = await call(s, "browser_file_upload", paths=[str(elsewhere / "in-cwd.txt")])
            assert not error and "in-cwd.txt" in uploaded, uploaded

    asyncio.run(session_run())


def _window(answer: str) -> str:
    """The lines an answer prints of the page itself (not the rest's contents after them)."""
    return answer.split("### The rest of the page", 1)[0]


def _last_actionable(answer: str) -> tuple[str, str]:
    """(role, name) of the last line with an id of the page whose whole text the answer links."""
    path = re.search(r"file://(\S+) ", answer).group(1)
    for line in reversed(Path(path).read_text().splitlines()):
        found = re.match(r"\t*(button|link|textbox|combobox|checkbox) \*?\[\d+\] '([^'\n]{3,40})'", line)
        if found and line.count("'" + found.group(2) + "'") == 1:
            return found.group(1), found.group(2)
    raise AssertionError("no element with an id")


@pytest.mark.parametrize("mode", ["incremental", "full", "none"])
def test_an_agent_reading_only_answers_reaches_the_bottom_of_a_long_page(site, tmp_path, mode):
    """A page of 20k-45k tokens (a generated one; a corpus page whose text is one paragraph of 20k
    tokens, cut into parts): an agent that acts only on
    refs it reads in the last answer, with Playwright MCP's tools alone (navigate, press End,
    act), reaches the page's last element within 3 calls (4 where answers carry no page: it
    asks for a snapshot), whatever the snapshot mode."""

    async def reach(s, url: str, act: str) -> int:
        error, answer = await call(s, "browser_navigate", url=url)
        assert not error, answer
        assert mode == "none" or "over the 6,000 budget" in answer, answer[:2000]
        calls = 1
        if mode == "none":
            error, answer = await call(s, "browser_snapshot")
            calls += 1
        role, name = _last_actionable(answer)
        for _ in range(3):
            found = re.search(rf"{role} \*?\[(\d+)\] '{re.escape(name)}'", answer)
            if found:
                error, acted = await call(s, act, ref=found.group(1))
                assert not error, acted
                return calls + 1
            error, answer = await call(s, "browser_press_key", key="End")
            calls += 1
            if mode == "none":
                error, answer = await call(s, "browser_snapshot")
                calls += 1
        raise AssertionError(f"{role} {name!r} was never in an answer:\n{answer[:3000]}")

    async def session_run():
        async with stdio_session("--snapshot-mode", mode, "--output-dir", str(tmp_path)) as s:
            for url, act in (
                (site.url("site/long.html"), "browser_click"),
                (site.url("corpus/clean-links/"), "browser_hover"),
            ):
                calls = await reach(s, url, act)
                assert calls <= (4 if mode == "none" else 3), (url, calls)

    asyncio.run(session_run())


def test_a_long_pages_window_follows_the_view_and_parts_are_asked_for(site, tmp_path):
    """The lines an answer prints of a long page are where the view is: the top after opening,
    the bottom after End (the button there with its id, in the window itself), a line saying the
    view moved after a PageDown within them; the rest's headings and elements follow each window;
    browser_snapshot's part=N prints the Nth part; a part past the last is the last."""

    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path)) as s:
            error, opened = await call(s, "browser_navigate", url=site.url("site/long.html"))
            assert not error and "lines 1-" in opened and "heading 'Catalogue'" in _window(opened), opened[:2000]
            head = re.search(r"lines 1-(\d+) of (\d+) are shown", opened)
            assert head, opened[:1000]
            total = int(head.group(2))
            # Below the window: the headings and elements, the checkout button among them.
            rest = opened.split("### The rest of the page", 1)[1]
            assert "heading 'Section 30'" in rest and re.search(r"button \[\d+\] 'Place the order'", rest)
            error, down = await call(s, "browser_press_key", key="PageDown")
            assert (
                not error
                and "The view moved, within the lines the last snapshot showed" in down
                and "### Snapshot\n" not in down
            ), down[:2000]
            error, end = await call(s, "browser_press_key", key="End")
            assert not error and f"of {total} are shown (where the view is" in end, end[:1500]
            assert re.search(r"button \[\d+\] 'Place the order'", _window(end)), end[:3000]
            assert "heading 'Catalogue'" in end.split("### The rest of the page", 1)[1]
            error, part = await call(s, "browser_snapshot", part=2)
            parts = int(re.search(r"part 2 of (\d+)\)", part).group(1))
            assert not error and parts >= 5 and "Section 1'" not in _window(part).split("are shown", 1)[1]
            error, last = await call(s, "browser_snapshot", part=999)
            assert not error and f"part {parts} of {parts}" in last and f"-{total} of {total}" in last
            error, text = await call(s, "browser_snapshot", part=0)
            assert error and "part is 1 or more" in text

    asyncio.run(session_run())


def test_the_other_tools_over_stdio(site, tmp_path):
    """Waits (late text, text gone, time), hover, press, scroll, forward, tabs (new with a URL,
    select, close), a snapshot of one element's part, and an observation's subtree."""

    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path)) as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error
            error, made = await call(s, "browser_click", ref=find_id(page, "button", "Make late button"))
            assert not error
            error, waited = await call(s, "browser_wait_for", text="Late button")
            assert not error and "Late button" in waited
            error, text = await call(s, "browser_wait_for", text="Never there", timeout=0.5)
            assert error and "waited 0.5 s for 'Never there' to appear" in text, text
            for wrong in (0, -1, 1e9):
                error, text = await call(s, "browser_wait_for", text="Late button", timeout=wrong)
                assert error and "timeout is more than 0 and at most 240 seconds" in text, text
            error, hovered = await call(s, "browser_hover", element="Vanish", ref=find_id(page, "button", "Vanish"))
            assert not error and "Hovered over Vanish" in hovered
            # slowly: key by key, so the page's key handlers see each key.
            error, typed = await call(
                s, "browser_type", ref=find_id(page, "textbox", "Key catcher"), text="xy", slowly=True
            )
            assert not error and "key y" in typed
            search = find_id(page, "textbox", "Search")
            assert not (await call(s, "browser_type", ref=search, text="abc"))[0]
            error, pressed = await call(s, "browser_press_key", key="Enter")
            assert not error and "You searched for: abc" in pressed
            error, scrolled = await call(s, "browser_scroll", direction="down")
            assert not error and "Scrolled down" in scrolled
            assert not (await call(s, "browser_navigate_back"))[0]
            error, forward = await call(s, "browser_navigate_forward")
            assert not error and "result.html" in forward
            error, opened = await call(s, "browser_tabs", action="new", url=site.url("site/second.html"))
            assert not error and "second.html" in opened and "### Open tabs" in opened
            error, tabs = await call(s, "browser_tabs", action="list")
            assert not error and tabs.count("\n- ") == 2 and "- 1: (current)" in tabs
            error, back = await call(s, "browser_tabs", action="select", index=0)
            assert not error and "result.html" in back
            error, closed = await call(s, "browser_tabs", action="close", index=1)
            assert not error
            error, tabs = await call(s, "browser_tabs", action="list")
            assert not error and tabs.count("\n- ") == 1
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            colour = find_id(page, "combobox", "Colour")
            error, part = await call(s, "browser_snapshot", ref=colour)
            # That element's lines, with the ids to act on (its options here).
            assert not error and f"combobox [{colour}] 'Colour'" in part and "'Red'" in part and "Search" not in part
            assert re.search(r"\[\d+\] 'Green'", part)
            error, part2 = await call(s, "browser_observe", subtree_of=int(colour))
            assert not error and "Red" in part2 and "Search" not in part2  # AgentOccam's pivotal part
            error, text = await call(s, "browser_observe", subtree_of=99_999_999)
            assert error and "no element [99999999]" in text

    asyncio.run(session_run())


def test_elements_in_frames_are_acted_on_by_their_refs(site):
    """A same-origin frame, its own frame, and another origin's frame: each element's ref acts
    on it, and the answer shows what changed there."""

    async def session_run():
        async with stdio_session("--allow-host", "127.0.0.1", "--allow-host", "localhost") as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/frames.html"))
            assert not error and "Text inside the cross-site frame" in page
            error, typed = await call(s, "browser_type", ref=find_id(page, "textbox", "Query"), text="deep")
            assert not error and "echo: deep" in typed and "### Snapshot changes" in typed
            error, clicked = await call(s, "browser_click", ref=find_id(page, "button", "Cross button"))
            assert not error and "cross clicked" in clicked
            error, clicked = await call(s, "browser_click", ref=find_id(page, "button", "Child button"))
            assert not error and "Page Title: child clicked" in clicked
            error, clicked = await call(s, "browser_click", ref=find_id(page, "link", "Grandchild link"))
            assert not error and "Page Title: grandchild clicked" in clicked

    asyncio.run(session_run())


def test_dialogs_uploads_forms_drag_console_network_resize_close(site, tmp_path):
    upload = tmp_path / "upload.txt"
    upload.write_text("twelve bytes")

    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path), cwd=str(tmp_path)) as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/tools.html"))
            assert not error
            # A prompt: the click is answered with the dialog, nothing else can be done but answer it.
            error, asked = await call(s, "browser_click", ref=find_id(page, "button", "Ask a name"))
            assert not error and "### Modal state" in asked and "prompt dialog with message 'Your name?'" in asked
            error, text = await call(s, "browser_snapshot")
            assert error and "browser_handle_dialog" in text
            error, answered = await call(s, "browser_handle_dialog", accept=True, promptText="Ada")
            assert not error and "name: Ada" in answered
            error, text = await call(s, "browser_handle_dialog", accept=True)
            assert error and "no dialog is open" in text
            # An alert whose handler goes on after it: the action finishes once it is dismissed.
            error, asked = await call(s, "browser_click", ref=find_id(page, "button", "Alert then write"))
            assert not error and "alert dialog with message 'first'" in asked
            error, answered = await call(s, "browser_handle_dialog", accept=False)
            assert not error and "after the alert" in answered
            # A file chooser, then the files.
            error, chose = await call(s, "browser_click", ref=find_id(page, "button", "Attachment"))
            assert not error and "[File chooser]" in chose, chose
            error, text = await call(s, "browser_file_upload", paths=["/etc/hostname"])
            assert error and "outside the directories" in text
            error, uploaded = await call(s, "browser_file_upload", paths=[str(upload)])
            assert not error and "files: upload.txt 12" in uploaded
            error, text = await call(s, "browser_file_upload", paths=[str(upload)])
            assert error and "no file chooser is open" in text
            # A form at once; a disabled or missing option is said, with the options.
            fields = [
                {
                    "name": "First name",
                    "type": "textbox",
                    "ref": find_id(page, "textbox", "First name"),
                    "value": "Ada",
                },
                {
                    "name": "Newsletter",
                    "type": "checkbox",
                    "ref": find_id(page, "checkbox", "Newsletter"),
                    "value": "true",
                },
                {"name": "Pro", "type": "radio", "ref": find_id(page, "radio", "Pro"), "value": "true"},
                {"name": "Size", "type": "combobox", "ref": find_id(page, "combobox", "Size"), "value": "Medium"},
            ]
            error, filled = await call(s, "browser_fill_form", fields=fields)
            assert not error and "form: Ada, news true, plan pro, size m" in filled, filled
            # A date field takes its own written form; another is an error that names it.
            start = {"name": "Start date", "type": "textbox", "ref": find_id(page, "Date", "Start date")}
            error, text = await call(s, "browser_fill_form", fields=[{**start, "value": "12/31/2025"}])
            assert error and "Start date" in text and "YYYY-MM-DD" in text, text
            error, filled = await call(s, "browser_fill_form", fields=[{**start, "value": "2025-12-31"}])
            assert not error and "size m, from 2025-12-31" in filled, filled
            size = find_id(page, "combobox", "Size")
            started = time.monotonic()
            error, text = await call(s, "browser_select_option", ref=size, values=["Huge"])
            assert error and "no option 'Huge'" in text and "'Small', 'Medium', 'Large'" in text
            error, text = await call(s, "browser_select_option", ref=size, values=["Large"])
            assert error and "disabled" in text
            error, chosen = await call(s, "browser_select_option", ref=size, values=["s"])  # by value
            assert not error and "size s" in chosen
            assert time.monotonic() - started < 8  # never Playwright's 5 s wait for a missing label
            # Drag, double and right click.
            error, dragged = await call(
                s,
                "browser_drag",
                startRef=find_id(page, "clickable", "Drag me"),
                endRef=find_id(page, "clickable", "Drop here"),
            )
            assert not error and "dropped on the target" in dragged
            twice = find_id(page, "button", "Click me twice")
            error, clicked = await call(s, "browser_click", ref=twice, doubleClick=True)
            assert not error and "double-clicked" in clicked
            error, clicked = await call(s, "browser_click", ref=twice, button="right")
            assert not error and "right-clicked" in clicked
            # Console and network.
            assert not (await call(s, "browser_click", ref=find_id(page, "button", "Log and fetch")))[0]
            error, logged = await call(s, "browser_console_messages", level="warning")
            assert not error and "[ERROR] an error" in logged and "[WARNING] a warning" in logged
            assert "a log line" not in logged
            error, logged = await call(s, "browser_console_messages")
            assert "a log line" in logged
            error, requests = await call(s, "browser_network_requests", filter="from=fetch")
            assert not error and "second.html?from=fetch => [200]" in requests, requests
            error, text = await call(s, "browser_network_requests", filter="(")
            assert error and "not a regular expression" in text
            # Text that goes later, and time.
            assert not (await call(s, "browser_click", ref=find_id(page, "button", "Remove later")))[0]
            error, waited = await call(s, "browser_wait_for", textGone="Soon gone")
            assert not error and "Waited for 'Soon gone'" in waited
            error, whole = await call(s, "browser_snapshot")
            assert "Soon gone" not in whole
            error, waited = await call(s, "browser_wait_for", time=0.2)
            assert not error and "Waited for 0.2 s" in waited
            error, text = await call(s, "browser_wait_for")
            assert error and "give time, text or textGone" in text
            # Resize, a named screenshot, close.
            error, resized = await call(s, "browser_resize", width=700, height=500)
            assert not error and "width 700" in resized
            error, shot = await call(s, "browser_take_screenshot", filename="page.png")
            assert not error and (tmp_path / "page.png").read_bytes().startswith(b"\x89PNG")
            error, text = await call(s, "browser_take_screenshot", filename="../escape.png")
            assert error and "outside the output directory" in text
            error, closed = await call(s, "browser_close")
            assert not error
            error, text = await call(s, "browser_snapshot")
            assert error and "browser_navigate" in text
            error, page = await call(s, "browser_navigate", url=site.url("site/tools.html"))
            assert not error and "Tools test page" in page

    asyncio.run(session_run())


def test_an_action_is_answered_with_what_changed(site, tmp_path):
    """incremental (the default): the changed lines with their place, new elements marked, what
    went away named, far smaller than the page; a new document is answered whole. full: the whole
    page after every action; none: no page text."""

    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path)) as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error and "### Snapshot\n" in page
            error, typed = await call(s, "browser_type", ref=find_id(page, "textbox", "Notes"), text="hello")
            assert not error and "### Snapshot changes" in typed and "+ " in typed and "notes: hello" in typed
            assert "Gone or rewritten (1 lines): text 'notes:'" in typed, typed
            changes = typed.split("### Snapshot changes")[1]
            assert len(changes) < len(page.split("### Snapshot\n")[1]) / 3, typed
            error, same = await call(s, "browser_hover", ref=find_id(page, "button", "Ask confirm"))
            assert not error and "The page did not change." in same
            error, menu = await call(s, "browser_navigate", url=site.url("site/menu.html"))
            error, opened = await call(s, "browser_click", ref=find_id(menu, "button", "Open menu"))
            assert not error and "### Snapshot changes" in opened and "*[" in opened  # new elements marked
            # A link to another document: the whole new page.
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            error, moved = await call(s, "browser_click", ref=find_id(page, "link", "Go to the second page"))
            assert not error and "### Snapshot\n" in moved and "### Snapshot changes" not in moved
            # browser_snapshot is always the whole page.
            error, whole = await call(s, "browser_snapshot")
            assert not error and "### Snapshot\n" in whole
        async with stdio_session("--snapshot-mode", "full") as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            error, typed = await call(s, "browser_type", ref=find_id(page, "textbox", "Notes"), text="hello")
            assert not error and "### Snapshot\n" in typed and "Colour" in typed
        async with stdio_session("--snapshot-mode", "none") as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            error, typed = await call(s, "browser_type", ref=find_id(page, "textbox", "Notes"), text="hello")
            assert not error and "### Snapshot" not in typed and "Page Title: Action test page" in typed

    asyncio.run(session_run())


def test_errors_say_why_and_file_urls_are_refused(site, tmp_path):
    from pagelens.browser.devtools import free_port  # a port nothing listens on

    async def session_run():
        async with stdio_session() as s:
            error, text = await call(s, "browser_navigate", url="file:///etc/hostname")
            assert error and "file: URLs are refused" in text and "--allow-file" in text
            error, text = await call(s, "browser_navigate", url=f"http://127.0.0.1:{free_port()}/")
            assert error and "the connection was refused" in text
            error, text = await call(s, "browser_navigate", url="http://no-such-host.invalid/")
            assert error and "ERR_NAME_NOT_RESOLVED" in text, text
            error, text = await call(s, "browser_navigate", url="http://127.0.0.1:9/")  # discard: an unsafe port
            assert error and "browsers refuse that port" in text and "ERR_UNSAFE_PORT" in text
            error, text = await call(s, "browser_navigate", url="ftp://example.com/")
            assert error and "not a web address" in text
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            error, text = await call(s, "browser_click", ref="the notes box")
            assert error and "not an element id" in text and '"12" for [12]' in text
            # Playwright MCP's spelling of a ref names the same element.
            error, typed = await call(s, "browser_type", ref="e" + find_id(page, "textbox", "Notes"), text="e-ref")
            assert not error and "notes: e-ref" in typed
            error, text = await call(s, "browser_click", element="a button")
            assert error and "ref is required" in text
        async with stdio_session("--allow-host", "127.0.0.1") as s:
            error, text = await call(
                s, "browser_navigate", url=site.url("site/form.html").replace("127.0.0.1", "localhost")
            )
            assert error and "not allowed" in text and "127.0.0.1" in text
        async with stdio_session("--allow-file", str(tmp_path)) as s:
            (tmp_path / "a.html").write_text("<title>A file</title><a href='file:///etc/hostname'>out</a>")
            error, page = await call(s, "browser_navigate", url=(tmp_path / "a.html").as_uri())
            assert not error and "A file" in page
            error, text = await call(s, "browser_click", ref=find_id(page, "link", "out"))
            assert error and "refused" in text

    asyncio.run(session_run())
    # Nothing on stderr but one line per failure: no tracebacks.
    proc = subprocess.run(
        [sys.executable, "-c", _STDERR_PROBE, site.url("site/form.html")], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") <= 4, proc.stderr


# A client whose server's stderr is kept: a refused port, an unknown host, a bad ref.
_STDERR_PROBE = """
import asyncio, sys
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
async def main():
    params = StdioServerParameters(command=sys.executable, args=["-m", "pagelens", "mcp"])
    async with stdio_client(params, errlog=sys.stderr) as streams, ClientSession(*streams) as s:
        await s.initialize()
        await s.call_tool("browser_navigate", {"url": "http://127.0.0.1:9/"})
        await s.call_tool("browser_navigate", {"url": "http://no-such-host.invalid/"})
        await s.call_tool("browser_navigate", {"url": sys.argv[1]})
        await s.call_tool("browser_click", {"ref": "99999"})
asyncio.run(main())
"""


def test_browser_evaluate_only_with_its_capability(site):
    async def session_run():
        async with stdio_session() as s:
            assert "browser_evaluate" not in {t.name for t in (await s.list_tools()).tools}
        async with stdio_session("--caps", "evaluate") as s:
            assert "browser_evaluate" in {t.name for t in (await s.list_tools()).tools}
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            error, value = await call(s, "browser_evaluate", function="() => document.title")
            assert not error and "Action test page" in value
            error, value = await call(
                s, "browser_evaluate", function="(el) => el.tagName", ref=find_id(page, "combobox", "Colour")
            )
            assert not error and "SELECT" in value

    asyncio.run(session_run())


def test_a_dialog_that_opens_while_the_page_is_read_is_said_at_once(site):
    """A dialog holds the page's thread, and every call into the page with it, until it is
    answered: one that opened while a snapshot read the page held the reading until its timeout,
    answered "TimeoutError" (seen in CI: an alert a script queued just before). The reading is
    given up when the dialog opens and the answer names it; answered, the page reads again."""
    hold_then_alert = (
        "() => { setTimeout(() => { const end = Date.now() + 1500; while (Date.now() < end); "
        "alert('while it was read'); }, 0); }"
    )

    async def session_run():
        async with stdio_session("--caps", "evaluate") as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error
            for reading, arguments in (("browser_snapshot", {}), ("browser_take_screenshot", {})):
                error, queued = await call(s, "browser_evaluate", function=hold_then_alert)
                t0 = time.monotonic()
                error, text = await call(s, reading, **arguments)
                took = time.monotonic() - t0
                # Said as open (the dialog came before the reading began) or as opened while it ran.
                assert error and "alert dialog" in text and "'while it was read'" in text, (reading, queued, text)
                assert "browser_handle_dialog" in text and took < 20, (reading, took)
                error, answered = await call(s, "browser_handle_dialog", accept=True)
                assert not error, answered
                error, text = await call(s, "browser_snapshot")
                assert not error and "Action test page" in text and "Modal state" not in text, text

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

    def tools(self) -> list:
        async def listed() -> list:
            assert self.session is not None
            return (await self.session.list_tools()).tools

        return asyncio.run_coroutine_threadsafe(listed(), self.loop).result(60)

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
            "ref",
            "target",
            "element",
            "text",
            "submit",
            "slowly",
            "values",
            "key",
            "doubleClick",
            "button",
            "modifiers",
            "fields",
            "startRef",
            "endRef",
            "direction",
            "pattern",
            "regex",
            "action",
            "index",
            "max_tokens",
            "subtree_of",
            "with_ids",
            "depth",
            "level",
            "static",
            "filter",
            "width",
            "height",
            "accept",
            "promptText",
            "paths",
            "bogus",
        ]
    )
    return st.dictionaries(names, value, max_size=4)


def test_odd_tool_arguments_are_answered_and_the_server_stays(held_session):
    """Any arguments to any tool (wrong types, huge numbers, odd text, unknown names): an
    answer or a tool error, within a bound, and the server answers the next call."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    # (navigate and wait wait on the network or time; close and resize change the session the
    # examples share)
    tools = sorted(TOOLS - {"browser_navigate", "browser_wait_for", "browser_close", "browser_tabs", "browser_resize"})

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(tools), _odd_arguments())
    def one(tool, arguments):
        error, text = held_session.call(tool, arguments)
        assert isinstance(error, bool) and (text or not error)
        assert "Traceback" not in text

    one()
    held_session.call("browser_handle_dialog", {"accept": False})  # one an example may have opened
    error, page = held_session.call("browser_snapshot", {})
    assert not error and "RootWebArea" in page, page


REF_NAMES = {"ref", "target", "startRef", "endRef", "startTarget", "endTarget"}  # read leniently: see below


def test_every_tool_says_what_is_wrong_with_its_arguments_in_one_line(held_session):
    """Each tool, from its listed schema: an argument it does not take, each required one left
    out, each given a value of the wrong type — one line naming the argument and what the tool
    takes, never the SDK's validation dump (its lines and links)."""
    wrong = {"string": {"a": 1}, "number": "soon", "integer": "big", "boolean": {"a": 1}, "array": 5, "object": 5}

    def one_line(tool: str, arguments: dict, names: str) -> None:
        error, text = held_session.call(tool, arguments)
        assert error, (tool, arguments, text)
        assert "\n" not in text.strip() and names in text, (tool, arguments, text)
        assert "validation error" not in text and "pydantic" not in text, (tool, arguments, text)

    checked = 0
    for listed in held_session.tools():
        if listed.name in ("browser_close",):
            continue
        schema = listed.input_schema
        properties, required = schema.get("properties", {}), schema.get("required", [])
        one_line(listed.name, {"bogus_argument": 1}, "takes no bogus_argument")
        valid = {name: "x" for name in required}
        for name in required:
            one_line(listed.name, {k: v for k, v in valid.items() if k != name}, f"{name} is missing")
        for name, prop in properties.items():
            kinds = [a.get("type") for a in prop.get("anyOf", [prop])] if name not in REF_NAMES else []
            kind = next((k for k in kinds if k in wrong), None)
            if kind is None or (kind == "string" and "object" in kinds):
                continue
            one_line(listed.name, {**valid, name: wrong[kind]}, name)
            checked += 1
    assert checked > 30, checked


def test_a_wait_says_the_time_it_waited_not_more():
    """A wait is capped at 30 s (as Playwright MCP's); asked for more, it says what it did."""
    from pagelens.browser.operations import waited_for

    assert waited_for(0.2, None) == "Waited for 0.2 s"
    assert waited_for(30, None) == "Waited for 30 s"
    assert waited_for(90, None) == "Waited for 30 s, the most one wait takes (90 s were asked)"
    assert waited_for(90, "Done") == "Waited for 'Done'"


def test_a_find_says_how_many_lines_matched_and_that_it_left_some_out():
    from pagelens.browser.operations import matching_lines

    text = (
        "RootWebArea 'Shop'\n\tlist\n"
        + "\n".join(f"\t\tlistitem 'item {i}'" for i in range(250))
        + "\n\tbutton [9] 'Buy'"
    )
    lines = text.split("\n")
    hits = {i for i, line in enumerate(lines) if "item" in line or "Buy" in line}
    answer = matching_lines(text, hits, "item").split("\n")
    assert answer[0] == "251 lines match 'item' (the first 200 shown: a longer pattern narrows them):"
    assert answer[1] == "listitem 'item 0'    (in: RootWebArea 'Shop' > list)"
    assert len(answer) == 201
    few = matching_lines(text, {len(lines) - 1}, "Buy")
    assert few == "1 line matches 'Buy':\nbutton [9] 'Buy'    (in: RootWebArea 'Shop')"
    assert matching_lines(text, set(), "nothing") == "nothing on the page matches 'nothing'"


def test_a_download_is_saved_in_the_output_directory_and_said(site, tmp_path):
    """A file the page downloads (a click, or browser_navigate to a file) is saved in the output
    directory under the page's name for it (made safe: no directory, no name of another file) and
    the answer says so in Playwright MCP's words; a file is never answered as a failed page."""

    async def session_run():
        async with stdio_session("--output-dir", str(tmp_path)) as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/downloads.html"))
            assert not error, page
            error, got = await call(s, "browser_click", ref=find_id(page, "link", "Report"))
            assert not error, got
            assert "### Events\n- Downloading file report.csv ...\n" in got, got
            assert f'- Downloaded file report.csv to "{tmp_path / "report.csv"}"' in got, got
            assert (tmp_path / "report.csv").read_bytes() == b"x" * 12
            # The same name again: another file, the first kept.
            error, again = await call(s, "browser_click", ref=find_id(page, "link", "Report again"))
            assert not error and f'to "{tmp_path / "report (2).csv"}"' in again, again
            assert (tmp_path / "report (2).csv").read_bytes() == b"x" * 30 and (
                tmp_path / "report.csv"
            ).stat().st_size == 12
            # A name that climbs out of the directory and forges an id stays inside, escaped.
            error, tricky = await call(s, "browser_click", ref=find_id(page, "link", "Tricky name"))
            names = sorted(p.name for p in tmp_path.iterdir())
            assert len(names) == 3 and names[0].endswith("escape _(3).txt") and "/" not in names[0], names
            # The page's bracket cannot pass for an id, and the path printed is the file's.
            assert f'Downloaded file {names[0]} to "{tmp_path / names[0]}"' in tricky, tricky
            assert "[3]" not in tricky
            # Said once: the next answer has no events.
            error, snap = await call(s, "browser_snapshot")
            assert not error and "### Events" not in snap
            # An address that is a file: downloaded, not a failed navigation.
            error, direct = await call(s, "browser_navigate", url=site.url("download?name=direct.txt"))
            assert not error, direct
            assert "the address is a file to download" in direct and "Downloaded file direct.txt" in direct, direct
            assert (tmp_path / "direct.txt").is_file()

    asyncio.run(session_run())


def test_refs_as_models_write_them(held_session):
    """A ref as a number, as "12", "[12]" and "*[12]" (Playwright MCP-trained models write all of
    them) names the element; anything else is one line saying what a ref is, never a dump of
    the SDK's validation."""
    error, page = held_session.call("browser_snapshot", {})
    assert not error, page
    notes = int(find_id(page, "textbox", "Notes"))
    for ref in (notes, str(notes), f"[{notes}]", f"*[{notes}]", f"e{notes}"):
        error, text = held_session.call("browser_hover", {"ref": ref})
        assert not error, (ref, text)
    for ref in ({"id": notes}, [notes, notes], 1.5, True, "Notes"):
        error, text = held_session.call("browser_hover", {"ref": ref})
        assert error and "is not an element id" in text and "\n" not in text.strip(), (ref, text)
        assert "validation" not in text.lower() and "pydantic" not in text.lower(), text


def test_typing_never_presses_anything(site):
    """Typing into a button, a link or a box to tick is refused before anything happens (a click to
    focus it would press it), naming what it is and the nearest text field; the answer of a typing
    names the element as the page shows it, not as the call described it."""

    async def session_run():
        async with stdio_session() as s:
            error, page = await call(s, "browser_navigate", url=site.url("site/form.html"))
            assert not error, page
            vanish, agree = find_id(page, "button", "Vanish"), find_id(page, "checkbox", "I agree")
            error, text = await call(s, "browser_type", ref=vanish, text="hello", submit=True)
            assert error and "is a button and takes no text" in text and "not pressed" in text, text
            assert "the nearest text field is '" in text, text
            error, text = await call(s, "browser_type", ref=agree, text="yes")
            assert error and "is a checkbox and takes no text" in text, text
            error, page = await call(s, "browser_snapshot")
            assert "Vanish" in page and f"checkbox [{agree}] 'I agree' [checked: false]" in page, page
            error, typed = await call(
                s, "browser_type", element="Next button", ref=find_id(page, "textbox", "Search"), text="lamp"
            )
            assert not error and "Typed into textbox 'Search'" in typed and "Next button" not in typed, typed

    asyncio.run(session_run())
