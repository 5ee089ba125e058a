"""Many agents on one server: `pagelens mcp --http` serving N MCP sessions at once, each a browser
context in shared browsers, measured from outside with the SDK's streamable-HTTP client.

Each session, all at once: navigates to a page of 200 paragraphs with a text field and a link,
reads it, types into the field and clicks the link by the refs it read, with 3 s between calls (a
model's time; ``--think 2-4``: each pause drawn from that range instead, seeded per session, so
that the sessions, which start at the same instant, drift apart as agents whose model answers
in varying times do). Measured per session count (8, 32, 64 by default, each on a fresh server):
errors; the first call's latency (p50/p95: it makes the session's context); later calls' (p50/p95);
the server's memory (PSS of the server and every process below it: driver, browsers, renderers)
idle (ready, no session), with every session on its page, and after the sessions ended (given
back); the time calls waited for a browser from the pool (the server's --timings); the CPU time
each kind of process spent per session (where a session's cost goes). Then ``--idle`` sessions
that load the page and say nothing more, their clients connected, on a server whose
``--idle-timeout`` closes them: the memory their contexts gave back. ``--peer``: after each
row, the same sessions done by plain Playwright in this process, read as Playwright MCP reads
a page (see peer_session): what the browser itself needs for the same work on this machine.

    python benches/report_sessions.py [--sessions 8,32,64] [--idle 16] [--think 3] [--peer] > /tmp/sessions.md

Prints Markdown for benches/README.md (and writes benches/sessions.svg, the plot).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import os
import platform
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import httpx2 as httpx  # noqa: E402
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from playwright.async_api import Browser  # noqa: E402

from pagelens.browser.launch import LaunchOptions, start_driver  # noqa: E402
from pagelens.browser.pool import CONTEXTS_PER_BROWSER  # noqa: E402
from support.processes import descendants  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

PAUSE_S = 3.0
IDLE_TIMEOUT_S = 5


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tree(pid: int) -> list[int]:
    return [pid, *descendants(pid)]


def pss_mb(pid: int) -> float:
    """The PSS of ``pid`` and every process below it, in MB."""
    total = 0
    for p in tree(pid):
        try:
            for line in Path(f"/proc/{p}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def renderers(pid: int) -> int:
    count = 0
    for p in tree(pid):
        try:
            count += b"--type=renderer" in Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            continue
    return count


def _kind(cmdline: bytes) -> str:
    """What a process below the server is: the server, Playwright's driver, a Chromium by role."""
    # Chromium rewrites its argv (spaces, not NULs, between its arguments).
    kind = re.search(rb"--type=([\w-]+)", cmdline)
    if kind is not None:
        return "chromium " + kind.group(1).decode()
    program = re.split(rb"[\0 ]", cmdline, maxsplit=1)[0]
    if b"chrom" in program:
        return "chromium browser"
    if b"node" in program or b"playwright" in program:
        return "driver (node)"
    return "server (python)"


def cpu_seconds(pid: int) -> dict[int, tuple[str, float]]:
    """The CPU time (user + system) of ``pid`` and every process below it, with each one's kind."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for p in tree(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            out[p] = (_kind(Path(f"/proc/{p}/cmdline").read_bytes()), (int(fields[11]) + int(fields[12])) / tick)
        except (OSError, IndexError, ValueError):
            continue
    return out


def cpu_spent(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> dict[str, float]:
    """CPU seconds spent between two readings, by kind of process (processes gone by the
    second reading are not counted: the sessions are all held open when it is taken)."""
    spent: dict[str, float] = {}
    for p, (kind, seconds) in after.items():
        spent[kind] = spent.get(kind, 0.0) + seconds - before.get(p, (kind, 0.0))[1]
    return spent


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def one_session(url: str, page: str, started: asyncio.Event, out: dict, pause: Callable[[], float]) -> None:
    async with (
        httpx.AsyncClient(timeout=300) as client,
        streamable_http_client(url, http_client=client) as streams,
        ClientSession(*streams[:2]) as s,
    ):
        await s.initialize()
        await started.wait()

        async def timed(tool: str, **arguments) -> str:
            t0 = time.perf_counter()
            result = await s.call_tool(tool, arguments)
            out.setdefault("latencies", []).append((tool, time.perf_counter() - t0))
            text = "\n".join(getattr(c, "text", "") for c in result.content)
            if result.is_error:
                out["errors"] = out.get("errors", 0) + 1
            return text

        text = await timed("browser_navigate", url=page)
        await asyncio.sleep(pause())
        text = await timed("browser_snapshot")
        await asyncio.sleep(pause())
        field = re.search(r"textbox \*?\[(\d+)\]", text)
        link = re.search(r"link \*?\[(\d+)\] 'Next page'", text)
        if field is None or link is None:
            out["errors"] = out.get("errors", 0) + 1
            return
        await timed("browser_type", ref=field.group(1), text="many sessions")
        await asyncio.sleep(pause())
        await timed("browser_click", ref=link.group(1))
        out["done"] = time.perf_counter()
        await out["hold"].wait()  # every session on its page while the memory is read


async def run(count: int, site: SiteServer, timings: Path, pid: int, url: str, think: tuple[float, float]) -> dict:
    page = site.url("site/paragraphs.html")
    # Started 1 s after the clients, which connect at once: every one initialised by then.
    result = await drive(
        count, think, pid, lambda i, started, out, pause: one_session(url, page, started, out, pause), settle_s=1.0
    )
    result["cpu"]["the bench's clients"] = result.pop("own_cpu")
    lines = [json.loads(line) for line in timings.read_text().splitlines()] if timings.exists() else []
    result["pool_wait_max"] = max((t["pool_s"] for t in lines), default=0.0)
    result["pool_wait_mean"] = statistics.fmean([t["pool_s"] for t in lines if t["tool"] == "browser_navigate"] or [0])
    return result


async def drive(
    count: int,
    think: tuple[float, float],
    pid: int,
    session: Callable[[int, asyncio.Event, dict, Callable[[], float]], Awaitable[None]],
    settle_s: float = 0.0,
) -> dict:
    """``count`` sessions (``session(i, started, out, pause)``) started at one instant after
    ``settle_s``, each pausing as ``think`` says (seeded per session); once every one is done or
    has failed: the PSS of ``pid``'s tree with every session on its page, the CPU its processes
    spent (``own_cpu``: this process's), the errors and the latencies; then they end."""
    started, hold = asyncio.Event(), asyncio.Event()
    outs = [{"hold": hold} for _ in range(count)]
    pauses = [functools.partial(random.Random(i).uniform, *think) for i in range(count)]
    tasks = [
        asyncio.ensure_future(session(i, started, o, p)) for i, (o, p) in enumerate(zip(outs, pauses, strict=True))
    ]
    await asyncio.sleep(settle_s)
    cpu_before, own_before = cpu_seconds(pid), time.process_time()
    started.set()
    while not all("done" in o or o.get("errors") for o in outs) and not any(t.done() for t in tasks):
        await asyncio.sleep(0.2)
    loaded = pss_mb(pid)
    cpu = cpu_spent(cpu_before, cpu_seconds(pid))
    own_cpu = time.process_time() - own_before
    hold.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    failures = [r for r in results if isinstance(r, BaseException)]
    return {
        "errors": sum(o.get("errors", 0) for o in outs) + len(failures),
        **latency_figures(outs),
        "loaded": loaded,
        "cpu": cpu,
        "own_cpu": own_cpu,
    }


def latency_figures(outs: list[dict]) -> dict:
    """The first call's and the later calls' p50 and p95, and the later calls' by tool."""
    first = [o["latencies"][0][1] for o in outs if o.get("latencies")]
    later = [(tool, lat) for o in outs for tool, lat in o.get("latencies", [])[1:]]
    tools = {tool for tool, _ in later}
    by_tool = {t: [lat for tool, lat in later if tool == t] for t in sorted(tools)}
    return {
        "first_p50": pct(first, 0.5),
        "first_p95": pct(first, 0.95),
        "later_p50": pct([lat for _, lat in later], 0.5),
        "later_p95": pct([lat for _, lat in later], 0.95),
        "by_tool": {t: (pct(v, 0.5), pct(v, 0.95)) for t, v in by_tool.items()},
    }


async def peer_session(
    browser: Browser, page: str, started: asyncio.Event, out: dict, pause: Callable[[], float]
) -> None:
    """One session of the same work in plain Playwright, read as Playwright MCP reads a page
    (``aria_snapshot(mode="ai")`` of the whole page after every call: its action answers are
    diffs of full snapshots): a context with the server's window size, a tab and the page; a
    read; a fill; a click on the link and the next page's load. No MCP, HTTP or server between:
    in the bench's own process."""
    await started.wait()
    tab = None

    async def timed(tool: str, work: Callable[[], Awaitable[object]]) -> None:
        t0 = time.perf_counter()
        try:
            await work()
            assert tab is not None
            await tab.aria_snapshot(mode="ai")
        except Exception:
            out["errors"] = out.get("errors", 0) + 1
        out.setdefault("latencies", []).append((tool, time.perf_counter() - t0))

    async def navigate() -> None:
        nonlocal tab
        width, height = LaunchOptions().viewport  # the window the server's sessions have
        tab = await (await browser.new_context(viewport={"width": width, "height": height})).new_page()
        await tab.goto(page)

    async def click() -> None:
        assert tab is not None
        async with tab.expect_navigation():
            await tab.get_by_role("link", name="Next page").click()

    async def nothing() -> None:
        pass

    await timed("browser_navigate", navigate)
    await asyncio.sleep(pause())
    await timed("browser_snapshot", nothing)
    await asyncio.sleep(pause())
    await timed("browser_type", lambda: tab.get_by_role("textbox").fill("many sessions"))  # type: ignore[union-attr]
    await asyncio.sleep(pause())
    await timed("browser_click", click)
    out["done"] = time.perf_counter()
    await out["hold"].wait()


def measure_peer(count: int, site: SiteServer, think: tuple[float, float]) -> dict:
    """The sessions' work in plain Playwright (see peer_session), in browsers launched as the
    server's pool launches them, ``CONTEXTS_PER_BROWSER`` contexts each: this machine's floor
    for the same work read as Playwright MCP reads it."""

    async def go() -> dict:
        playwright = await start_driver()
        kwargs = LaunchOptions().playwright_kwargs()
        browsers = [await playwright.chromium.launch(**kwargs) for _ in range(-(-count // CONTEXTS_PER_BROWSER))]
        try:
            await asyncio.sleep(2)  # the browsers up and still, as the server's are when it is measured
            pid = os.getpid()
            idle = pss_mb(pid)
            page = site.url("site/paragraphs.html")
            result = await drive(
                count,
                think,
                pid,
                lambda i, started, out, pause: peer_session(
                    browsers[i // CONTEXTS_PER_BROWSER], page, started, out, pause
                ),
            )
            del result["own_cpu"]  # this process is in the tree measured (the peer's Python)
            return {**result, "idle": idle}
        finally:
            for browser in browsers:
                await browser.close()
            await playwright.stop()

    result = asyncio.run(go())
    result["per_session"] = (result["loaded"] - result["idle"]) / count
    return result


def start_server(port: int, tmp: str, *args: str) -> subprocess.Popen[bytes]:
    """`pagelens mcp --http` on ``port`` with ``args``, once it accepts connections and the
    browser it starts ahead of need is up."""
    server = subprocess.Popen(
        [sys.executable, "-m", "pagelens", "mcp", "--http", f"127.0.0.1:{port}", "--output-dir", tmp, *args],
        stderr=subprocess.DEVNULL,
    )
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            break
        except OSError:
            time.sleep(0.05)
    time.sleep(5)  # the browser started ahead of need is up
    return server


def renderers_gone(pid: int, timeout: float = 60) -> float:
    """The server's PSS once its renderers are gone (or after ``timeout``), 2 s after."""
    deadline = time.monotonic() + timeout
    while renderers(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(2)
    return pss_mb(pid)


def measure(count: int, site: SiteServer, think: tuple[float, float] = (PAUSE_S, PAUSE_S)) -> dict:
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        timings = Path(tmp) / "timings.jsonl"
        server = start_server(port, tmp, "--max-sessions", str(count + 8), "--timings", str(timings))
        try:
            idle = pss_mb(server.pid)
            result = asyncio.run(run(count, site, timings, server.pid, f"http://127.0.0.1:{port}/mcp", think))
            result["after"] = renderers_gone(server.pid)
            result["idle"] = idle
        finally:
            server.terminate()
            server.wait(60)
    result["per_session"] = (result["loaded"] - result["idle"]) / count
    return result


async def idle_sessions(url: str, page: str, count: int, pid: int, idle_s: float) -> tuple[float, float]:
    """``count`` sessions that load ``page`` and then say nothing (their clients still
    connected): the server's PSS with them loaded, and once their contexts are closed."""
    async with contextlib.AsyncExitStack() as stack:
        for _ in range(count):
            client = await stack.enter_async_context(httpx.AsyncClient(timeout=300))
            streams = await stack.enter_async_context(streamable_http_client(url, http_client=client))
            s = await stack.enter_async_context(ClientSession(*streams[:2]))
            await s.initialize()
            await s.call_tool("browser_navigate", {"url": page})
        loaded = pss_mb(pid)
        await asyncio.sleep(idle_s)
        after = await asyncio.to_thread(renderers_gone, pid)
    return loaded, after


def measure_idle(count: int, site: SiteServer, idle_s: int) -> dict:
    """Sessions left idle past ``--idle-timeout``: the memory their closed contexts give back."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_server(port, tmp, "--max-sessions", str(count + 8), "--idle-timeout", str(idle_s))
        try:
            idle = pss_mb(server.pid)
            page = site.url("site/paragraphs.html")
            url = f"http://127.0.0.1:{port}/mcp"
            loaded, after = asyncio.run(idle_sessions(url, page, count, server.pid, idle_s))
        finally:
            server.terminate()
            server.wait(60)
    return {"idle": idle, "loaded": loaded, "after": after}


def svg(rows: list[tuple[int, dict]]) -> str:
    """Memory per session and later calls' p95 against the session count, as a small SVG plot."""
    w, h, pad = 520, 260, 50
    counts = [c for c, _ in rows]
    top_mb = max(r["per_session"] for _, r in rows) * 1.3 or 1
    top_s = max(r["later_p95"] for _, r in rows) * 1.3 or 1

    def x(c: int) -> float:
        return pad + (w - 2 * pad) * (counts.index(c) / max(1, len(counts) - 1))

    def line(key: str, top: float, colour: str) -> str:
        points = " ".join(f"{x(c):.0f},{h - pad - (h - 2 * pad) * r[key] / top:.0f}" for c, r in rows)
        return f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>'

    labels = "".join(f'<text x="{x(c):.0f}" y="{h - pad + 18}" text-anchor="middle">{c}</text>' for c in counts)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">'
        f'<rect width="{w}" height="{h}" fill="white"/>'
        f'<line x1="{pad}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="black"/>'
        f"{labels}"
        f'<text x="{w / 2}" y="{h - 10}" text-anchor="middle">sessions at once</text>'
        f"{line('per_session', top_mb, '#1f77b4')}{line('later_p95', top_s, '#d62728')}"
        f'<text x="{pad}" y="20" fill="#1f77b4">PSS per session (MB, top {top_mb:.0f})</text>'
        f'<text x="{w - pad}" y="20" fill="#d62728" text-anchor="end">later calls p95 (s, top {top_s:.1f})</text>'
        "</svg>"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="8,32,64")
    parser.add_argument("--idle", type=int, default=16, help="sessions left idle past --idle-timeout (0: none)")
    parser.add_argument(
        "--think", default=f"{PAUSE_S:g}", help="seconds between a session's calls: N, or a range LOW-HIGH"
    )
    parser.add_argument(
        "--peer",
        action="store_true",
        help="after each count, the same sessions in plain Playwright read as Playwright MCP reads (the floor)",
    )
    args = parser.parse_args()
    counts = [int(c) for c in args.sessions.split(",")]
    low, _, high = args.think.partition("-")
    think = (float(low), float(high or low))
    site = SiteServer()
    rows = []
    peers: list[dict | None] = []  # each row's plain Playwright run (--peer), measured right after it
    try:
        for count in counts:
            rows.append((count, measure(count, site, think)))
            print(f"measured {count}", file=sys.stderr)
            peers.append(measure_peer(count, site, think) if args.peer else None)
            if args.peer:
                print(f"measured {count} in plain Playwright", file=sys.stderr)
        idled = measure_idle(args.idle, site, IDLE_TIMEOUT_S) if args.idle else None
    finally:
        site.close()
    (ROOT / "benches" / "sessions.svg").write_text(svg(rows))
    print(
        f"`python benches/report_sessions.py --sessions {args.sessions} --think {args.think}"
        f"{' --peer' if args.peer else ''}` on {platform.node() and 'this machine'}"
        f" ({os.cpu_count()} cores), one fresh server per row.\n"
    )
    print(
        "| sessions | errors | first call p50 / p95 | later calls p50 / p95 | PSS idle → loaded → after (MB) "
        "| PSS per session | pool wait (mean / max) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for (count, r), peer in zip(rows, peers, strict=True):
        print(
            f"| {count} | {r['errors']} | {r['first_p50']:.2f} / {r['first_p95']:.2f} s | "
            f"{r['later_p50']:.2f} / {r['later_p95']:.2f} s | {r['idle']:.0f} → {r['loaded']:.0f} → {r['after']:.0f} | "
            f"{r['per_session']:.0f} MB | {r['pool_wait_mean']:.2f} / {r['pool_wait_max']:.2f} s |"
        )
        if peer is not None:
            print(
                f"| {count}, plain Playwright | {peer['errors']} | {peer['first_p50']:.2f} / {peer['first_p95']:.2f} s | "
                f"{peer['later_p50']:.2f} / {peer['later_p95']:.2f} s | {peer['idle']:.0f} → {peer['loaded']:.0f} | "
                f"{peer['per_session']:.0f} MB | |"
            )
    tools = sorted({t for _, r in rows for t in r["by_tool"]})
    print("\nLater calls by tool, p50 / p95 (s):\n")
    print("| sessions | " + " | ".join(tools) + " |\n|---:|" + "---:|" * len(tools))
    for (count, r), peer in zip(rows, peers, strict=True):
        for label, figures in ((str(count), r), (f"{count}, plain Playwright", peer)):
            if figures is not None:
                cells = (figures["by_tool"].get(t, (float("nan"), float("nan"))) for t in tools)
                print(f"| {label} | " + " | ".join(f"{a:.2f} / {b:.2f}" for a, b in cells) + " |")
    print("\nCPU seconds per session from the first call to the last, by process (all cores):\n")
    kinds = sorted({k for _, r in rows for k in r["cpu"]})
    print("| sessions | " + " | ".join(kinds) + " |\n|---:|" + "---:|" * len(kinds))
    for (count, r), peer in zip(rows, peers, strict=True):
        print(f"| {count} | " + " | ".join(f"{r['cpu'].get(k, 0.0) / count:.2f}" for k in kinds) + " |")
        if peer is not None:  # its Python is the bench's own process (the site's server runs there too)
            cells = (peer["cpu"].get(k, 0.0) / count for k in kinds)
            print(f"| {count}, plain Playwright | " + " | ".join(f"{c:.2f}" for c in cells) + " |")
    if idled is not None:
        given = idled["loaded"] - idled["after"]
        print(
            f"\n{args.idle} sessions that load the page and then say nothing, their clients still connected, "
            f"under `--idle-timeout {IDLE_TIMEOUT_S}`: PSS idle → loaded → once their contexts were closed "
            f"{idled['idle']:.0f} → {idled['loaded']:.0f} → {idled['after']:.0f} MB ({given:.0f} MB given back, "
            f"{given / max(1e-9, idled['loaded'] - idled['idle']):.0%} of what they took)."
        )


if __name__ == "__main__":
    main()
