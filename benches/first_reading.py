"""The first reading of a new document against later ones: what an agent pays after every
navigation (pagelens' world made anew for the document, its script run cold) and what the
corpus bench measures (whole readings repeated on one document, the script warm).

On each page, served live, for RUNS fresh documents (the page loaded again): the first reading
of the document by one reader, timed, each reader first on alternate documents (pagelens'
``observe()`` and ``aria_snapshot(mode="ai")``, the other reading it second); then, on the same
document, whole readings by both, interleaved (a class toggled on the body and a rendering
frame run before each), and settled readings (nothing changed since the last: pagelens answers
with the reading it holds, as after an action that changed nothing). Medians; ratios to aria's
time of the same kind (aria reads a settled page whole).

    python benches/first_reading.py [--pages wikipedia-2,bbc-1] [--runs 4]

Prints Markdown for benches/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from pagelens.browser import AsyncBrowserEnv  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

WHOLE = "document.body.classList.toggle('pagelens-bench-whole')"
FRAME = "new Promise((done) => requestAnimationFrame(() => setTimeout(done)))"
PAGES = "wikipedia-2,pixnet,links-in-tables,bbc-1,nytimes-2"


async def timed(reader: Callable[[], Awaitable[object]]) -> float:
    t = time.perf_counter()
    await reader()
    return (time.perf_counter() - t) * 1e3


async def page_times(env: AsyncBrowserEnv, url: str, runs: int) -> dict[str, float]:
    readers: dict[str, Callable[[], Awaitable[object]]] = {
        "pagelens": env.observe,
        "aria": lambda: env.page.aria_snapshot(mode="ai", timeout=120_000),
    }
    first: dict[str, list[float]] = {name: [] for name in readers}
    warm: dict[str, list[float]] = {name: [] for name in readers}
    settled: list[float] = []
    frame_list: list[float] = []  # of pagelens' first readings: its frames listed and asked about
    for run in range(runs * 2):
        names = list(readers) if run % 2 == 0 else list(readers)[::-1]
        await env.reset(url, observe=False)
        await env.page.evaluate(FRAME)
        first[names[0]].append(await timed(readers[names[0]]))
        if names[0] == "pagelens" and env.last_observation is not None:
            frame_list.append(env.last_observation.timings_ms.get("frame_list", 0.0))
        await readers[names[1]]()  # (its first reading, but second on the document: not counted)
        for name in names * 2:
            await env.page.evaluate(WHOLE)
            await env.page.evaluate(FRAME)
            warm[name].append(await timed(readers[name]))
        await env.observe()
        for _ in range(2):
            await env.page.evaluate(FRAME)
            settled.append(await timed(env.observe))
    out = {f"first {name}": statistics.median(v) for name, v in first.items()}
    out |= {f"warm {name}": statistics.median(v) for name, v in warm.items()}
    out["settled pagelens"] = statistics.median(settled)
    out["frame list"] = statistics.median(frame_list)
    return out


async def main_async(args: argparse.Namespace) -> None:
    server = SiteServer()
    rows = []
    try:
        async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1",), block_other_hosts=True, settle_ms=300) as env:
            for page in args.pages.split(","):
                rows.append((page, await page_times(env, server.url(f"corpus/{page}/"), args.runs)))
    finally:
        server.close()
    print(
        f"`python benches/first_reading.py --runs {args.runs}`: medians (ms), each reader first on {args.runs} documents\n"
    )
    print(
        "| page | first: pagelens / aria | × | whole, warm: pagelens / aria | × | first / warm (pagelens) "
        "| settled: pagelens | × aria warm | frame list of a first reading |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for page, r in rows:
        print(
            f"| {page} | {r['first pagelens']:.1f} / {r['first aria']:.1f} | {r['first pagelens'] / r['first aria']:.2f} "
            f"| {r['warm pagelens']:.1f} / {r['warm aria']:.1f} | {r['warm pagelens'] / r['warm aria']:.2f} "
            f"| {r['first pagelens'] / r['warm pagelens']:.1f} | {r['settled pagelens']:.1f} "
            f"| {r['settled pagelens'] / r['warm aria']:.3f} | {r['frame list']:.1f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default=PAGES)
    parser.add_argument("--runs", type=int, default=4)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
