"""Where a whole reading's time goes (issue 60, item 6: profile before making it faster).

On each page, served live: the capture's own ``Runtime.evaluate`` (the expression and world
``observe()`` used, recorded off the DevTools socket) made to read the whole page (a class
toggled on the body, a rendering frame run, before each call), timed two ways, interleaved:

- ``walk``: the answer left in the page (``returnByValue: false``): the walk alone, and the
  style and layout Chromium computes for it (a whole reading of an unchanged page answers
  "the same" and sends no rows, so this is the whole reading's in-page part);
- ``observe``: the whole ``observe()``: the above, Chromium's style counts before and after,
  the core's parse and render, the tabs' titles;

and ``aria_snapshot(mode="ai")`` beside them. Then a CPU profile of the renderer (DevTools'
``Profiler``, 50 µs samples) over ``walk`` calls: self time per function of the capture and per
DOM call it makes. ``(program)`` is not the walk's: the walk computes no style or layout
(``Performance.getMetrics`` counts none over it) and ``(program)`` exceeds its time even with
1 ms samples; it is the profiled window's own work (protocol messages, the profiler's start and
stop). The functions' self times add up to the walk.

    python benches/profile_capture.py [--pages wikipedia-2,bbc-1] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from pagelens.browser import AsyncBrowserEnv  # noqa: E402
from pagelens.browser import capture as capture_module  # noqa: E402
from pagelens.browser.devtools import cdp  # noqa: E402
from report_capture import corpus_pages  # noqa: E402

WHOLE = "document.body.classList.toggle('pagelens-bench-whole')"
FRAME = "new Promise((done) => requestAnimationFrame(() => setTimeout(done)))"
PAGES = "wikipedia-2,pixnet,links-in-tables,bbc-1,nytimes-2"


async def whole_capture_call(env: AsyncBrowserEnv) -> tuple[Any, Any, dict[str, Any], Any]:
    """The capture's call as ``observe()`` makes it on the page made to read whole (a class
    toggled on the body, a rendering frame run): its session, DevTools target, ``Runtime.evaluate``
    parameters and DevTools socket, to be repeated. The page's world must hold the script already
    (a call that installs it, which carries the whole script, is not the one kept)."""
    seen: list[tuple[Any, Any, dict[str, Any], Any]] = []
    real = capture_module.raw_call

    async def recording(session, target, method, params, timeout, devtools):  # type: ignore[no-untyped-def]
        expression = params.get("expression", "")
        if method == "Runtime.evaluate" and ".capture(" in expression and "\n;globalThis." not in expression:
            seen.append((session, target, dict(params), devtools))
        return await real(session, target, method, params, timeout, devtools)

    capture_module.raw_call = recording  # type: ignore[assignment]
    try:
        await env.page.evaluate(WHOLE)
        await env.page.evaluate(FRAME)
        await env.observe()
    finally:
        capture_module.raw_call = real  # type: ignore[assignment]
    return seen[-1]


async def page_profile(env: AsyncBrowserEnv, runs: int) -> dict[str, Any]:
    # The capture's call, as observe() makes it: its expression, world and DevTools target.
    session, target, params, devtools = await whole_capture_call(env)
    obs = env.last_observation
    assert obs is not None

    async def walk() -> None:
        call = {**params, "returnByValue": False}
        if devtools is None or target is None:  # no raw socket: Playwright's session
            await cdp(session, "Runtime.evaluate", call, 120)
        else:
            await devtools.target_call(target, "Runtime.evaluate", call, 120)

    async def observe() -> None:
        await env.observe()

    async def aria() -> None:
        await env.page.aria_snapshot(mode="ai", timeout=120_000)

    readers = {"walk": walk, "observe": observe, "aria": aria}
    times: dict[str, list[float]] = collections.defaultdict(list)
    names = list(readers)
    for run in range(runs):
        for name in names[run % len(names) :] + names[: run % len(names)]:
            await env.page.evaluate(WHOLE)
            await env.page.evaluate(FRAME)
            t = time.perf_counter()
            await readers[name]()
            times[name].append((time.perf_counter() - t) * 1e3)
    out: dict[str, Any] = {k: statistics.median(v) for k, v in times.items()}
    out["rows"] = len(obs.tree)
    # The renderer's CPU over `walk` calls, by function (self time).
    profiler = await env.page.context.new_cdp_session(env.page)
    await cdp(profiler, "Profiler.enable", {})
    await cdp(profiler, "Profiler.setSamplingInterval", {"interval": 50})
    by_function: collections.Counter[str] = collections.Counter()
    for _ in range(runs):
        await env.page.evaluate(WHOLE)
        await env.page.evaluate(FRAME)
        await cdp(profiler, "Profiler.start", {})
        await walk()
        profile = (await cdp(profiler, "Profiler.stop", {}))["profile"]
        nodes = {n["id"]: n["callFrame"]["functionName"] or "(anonymous)" for n in profile["nodes"]}
        for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
            by_function[nodes[sample]] += delta / 1e3 / runs
    await profiler.detach()
    del by_function["(idle)"]
    out["profile"] = by_function.most_common(14)
    return out


async def main_async(args: argparse.Namespace) -> None:
    print("| page | rows | aria ms | observe × aria | walk ms | observe ms | walk / observe |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    profiles = []
    async for env, page in corpus_pages(args.pages.split(",")):
        r = await page_profile(env, args.runs)
        print(
            f"| {page} | {r['rows']} | {r['aria']:.0f} | {r['observe'] / r['aria']:.2f} | {r['walk']:.1f} "
            f"| {r['observe']:.1f} | {r['walk'] / r['observe']:.0%} |",
            flush=True,
        )
        profiles.append((page, r["profile"]))
    print("\nSelf time per whole walk (ms, renderer CPU profile):\n")
    for page, profile in profiles:
        print(f"- {page}: " + ", ".join(f"{name} {ms:.1f}" for name, ms in profile))
    print(f"\n({json.dumps({'runs': args.runs})}, medians)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", default=PAGES)
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
