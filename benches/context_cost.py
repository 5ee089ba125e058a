"""What one browser context costs to make in a shared browser: a context, a tab, a page of 200
paragraphs loaded and read (``AsyncBrowserEnv.reset``), made one after another in one browser,
with the window UI Chromium builds per context turned off (pagelens' launch) and on (the
features of ``UNSHOWN_UI_FEATURES`` left on), in alternating rounds, on the same page.

Per context: the wall time, the CPU seconds of each kind of process (from ``/proc``, summed over
the browser's processes), and the renderers it added.

    python benches/context_cost.py [--rounds 3] [--contexts 8]

Prints Markdown for benches/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

from pagelens.browser import AsyncBrowserEnv, launch  # noqa: E402
from pagelens.browser.pool import BrowserPool  # noqa: E402
from report_sessions import cpu_seconds, cpu_spent, renderers  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

KINDS = ("chromium browser", "chromium renderer", "chromium gpu-process", "driver (node)", "server (python)")


async def one_round(ui: bool, url: str, contexts: int) -> dict[str, float]:
    """``contexts`` contexts made one after another in a fresh browser: per-context means."""
    saved = launch.UNSHOWN_UI_FEATURES
    launch.UNSHOWN_UI_FEATURES = () if ui else saved
    try:
        pool = BrowserPool(contexts_per_browser=contexts + 1, ready=0)
        first = AsyncBrowserEnv(pool=pool, allowed_hosts=("127.0.0.1",), block_other_hosts=True)
        await first.reset(url)  # the browser up, the page's files cached: what follows is contexts
    finally:
        launch.UNSHOWN_UI_FEATURES = saved
    envs = [first]
    pid = os.getpid()
    before, renderers_before, walls = cpu_seconds(pid), renderers(pid), []
    try:
        for _ in range(contexts):
            env = AsyncBrowserEnv(pool=pool, allowed_hosts=("127.0.0.1",), block_other_hosts=True)
            envs.append(env)
            t = time.perf_counter()
            await env.reset(url)
            walls.append(time.perf_counter() - t)
        spent = cpu_spent(before, cpu_seconds(pid))
        out = {kind: spent.get(kind, 0.0) / contexts for kind in KINDS}
        out["all"] = sum(spent.values()) / contexts
        out["wall"] = statistics.median(walls)
        out["renderers"] = (renderers(pid) - renderers_before) / contexts
        return out
    finally:
        for env in envs:
            await env.close()
        await pool.close()


async def main_async(args: argparse.Namespace) -> None:
    server = SiteServer()
    rows: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    try:
        url = server.url("site/paragraphs.html")
        for r in range(args.rounds):
            for ui in (r % 2 == 0, r % 2 != 0):  # alternating which goes first
                rows[ui].append(await one_round(ui, url, args.contexts))
    finally:
        server.close()
    print(
        f"`python benches/context_cost.py --rounds {args.rounds} --contexts {args.contexts}`: medians of the rounds, per context"
    )
    print()
    print("| window UI | wall | CPU, all | " + " | ".join(KINDS) + " | renderers added |")
    print("|---|---:|---:|" + "---:|" * len(KINDS) + "---:|")
    med = {ui: {k: statistics.median(r[k] for r in rows[ui]) for k in rows[ui][0]} for ui in rows}
    for ui in (True, False):
        m = med[ui]
        cells = " | ".join(f"{m[k] * 1e3:.0f} ms" for k in KINDS)
        label = "on (Chromium's default)" if ui else "off (pagelens)"
        print(f"| {label} | {m['wall'] * 1e3:.0f} ms | {m['all'] * 1e3:.0f} ms | {cells} | {m['renderers']:.2f} |")
    print()
    print(
        f"off / on: wall {med[False]['wall'] / med[True]['wall']:.2f}x, CPU {med[False]['all'] / med[True]['all']:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--contexts", type=int, default=8)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
