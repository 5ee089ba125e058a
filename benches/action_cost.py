"""What one action costs, by process: a `browser_type` into a text field the short way
(pagelens' world makes the field ready in one call, the browser inserts the text) against the
long way it falls back to (Playwright's fill, its waits and round trips), in alternating rounds
in one browser; and, for scale, a `browser_click` that follows a link and a snapshot of an
unchanged page.

One MCP-shaped session (the operations the MCP server and the shell run) on a page of 200
paragraphs with a text field and a link. Per call: wall time, and the CPU time of every process
(this one, Playwright's driver, Chromium's by kind), medians of the rounds.

    python benches/action_cost.py [--rounds 6] [--calls 10]

Prints Markdown for benches/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

from pagelens.browser import operations as ops  # noqa: E402
from pagelens.browser.execute import Executor  # noqa: E402
from pagelens.browser.session import BrowserSession, SessionOptions  # noqa: E402
from report_sessions import cpu_seconds, cpu_spent  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

KINDS = (
    "wall",
    "CPU, all",
    "chromium browser",
    "chromium renderer",
    "chromium gpu-process",
    "driver (node)",
    "server (python)",
)


async def per_call(calls: int, call: Callable[[int], Awaitable[object]]) -> dict[str, float]:
    """Wall and CPU (ms) per call, over ``calls`` calls."""
    pid = os.getpid()
    before, t0 = cpu_seconds(pid), time.perf_counter()
    for k in range(calls):
        await call(k)
    wall = time.perf_counter() - t0
    spent = cpu_spent(before, cpu_seconds(pid))
    row = {kind: seconds * 1e3 / calls for kind, seconds in spent.items()}
    row["wall"] = wall * 1e3 / calls
    row["CPU, all"] = sum(spent.values()) * 1e3 / calls
    return row


async def typing(session: BrowserSession, page: str, calls: int) -> dict[str, float]:
    """``calls`` types into the page's field (opened first, not counted)."""
    text = await ops.browser_navigate(session, url=page)
    field = re.search(r"textbox \*?\[(\d+)\]", text)
    assert field is not None, text[:400]
    ref = field.group(1)
    return await per_call(calls, lambda k: ops.browser_type(session, ref=ref, text=f"text {k}"))


async def clicking(session: BrowserSession, page: str, calls: int) -> dict[str, float]:
    """A link followed (its page read), ``calls`` times, each from the first page opened again
    (not counted)."""
    pid = os.getpid()
    row: dict[str, float] = {}
    for _ in range(calls):
        text = await ops.browser_navigate(session, url=page)
        link = re.search(r"link \*?\[(\d+)\] 'Next page'", text)
        assert link is not None, text[:400]
        t0, before = time.perf_counter(), cpu_seconds(pid)
        await ops.browser_click(session, ref=link.group(1))
        row["wall"] = row.get("wall", 0.0) + (time.perf_counter() - t0) * 1e3 / calls
        for kind, seconds in cpu_spent(before, cpu_seconds(pid)).items():
            row[kind] = row.get(kind, 0.0) + seconds * 1e3 / calls
            row["CPU, all"] = row.get("CPU, all", 0.0) + seconds * 1e3 / calls
    return row


async def main(rounds: int, calls: int) -> None:
    site = SiteServer()
    session = BrowserSession(SessionOptions())
    page = site.url("site/paragraphs.html")
    short_way = Executor._typed

    async def long_way(self: Executor, action: object) -> None:  # the short way declining
        return None

    rows: dict[str, list[dict[str, float]]] = {}
    try:
        await ops.browser_navigate(session, url=page)
        for r in range(rounds):
            for way in ("short", "long") if r % 2 == 0 else ("long", "short"):
                Executor._typed = short_way if way == "short" else long_way  # type: ignore[method-assign,assignment]
                rows.setdefault(f"browser_type, the {way} way", []).append(await typing(session, page, calls))
            Executor._typed = short_way  # type: ignore[method-assign]
            unchanged = await per_call(calls, lambda k: ops.browser_snapshot(session))
            rows.setdefault("browser_snapshot, page unchanged", []).append(unchanged)
            clicked = await clicking(session, page, max(1, calls // 2))
            rows.setdefault("browser_click on a link (the next page read)", []).append(clicked)
    finally:
        Executor._typed = short_way  # type: ignore[method-assign]
        await session.close()
        site.close()
    print(f"`python benches/action_cost.py --rounds {rounds} --calls {calls}`: ms per call, medians of the rounds\n")
    print("| call | " + " | ".join(KINDS) + " |")
    print("|---|" + "---:|" * len(KINDS))
    for name, measured in rows.items():
        cells = [statistics.median(m.get(kind, 0.0) for m in measured) for kind in KINDS]
        print(f"| {name} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.calls))
