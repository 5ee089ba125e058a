"""Observation latency per step on live corpus pages (served locally), one run, same pages:

- bare:     one `Accessibility.getFullAXTree` call through Playwright's CDP session (what
            BrowserGym and WebArena do; its JSON is parsed by Playwright's driver and Python);
- raw:      the same call over a raw DevTools socket, answer kept as bytes (the floor);
- dom:      pagelens' `observe()` from its own in-page capture (the default source);
- observe:  pagelens' `observe()` from Chromium's tree (`source="ax"`: every frame's tree,
            merged, rendered in occam form, tabs, and one `DOMSnapshot.captureSnapshot` per
            renderer for clickable elements, in parallel);
- no-click: `observe()` without the snapshot (`clickables=False`);
- aria:     Playwright's `locator("body").aria_snapshot()`;
- bounds:   WebArena's approach, the AX tree plus a bounding box per node
            (`DOM.resolveNode` + `Runtime.callFunctionOn(getBoundingClientRect)` each).

    python benches/report_browser.py [--runs 7] [--bounds-pages 3] > /tmp/browser.md

Prints Markdown for benches/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from pagelens.browser import AsyncBrowserEnv  # noqa: E402
from pagelens.browser.devtools import cdp  # noqa: E402
from pagelens.browser.html import fetch_html  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"

_RECT = "function() { const r = this.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }"


def node_counts() -> dict[str, int]:
    return {
        p.name: len(json.loads(gzip.decompress((p / "axtree.json.gz").read_bytes()))["nodes"])
        for p in sorted(CORPUS.iterdir())
        if (p / "axtree.json.gz").exists()
    }


def pick_pages(counts: dict[str, int]) -> list[str]:
    """Pages spread over the size range: the quantiles plus every page over 5,000 nodes."""
    ordered = sorted(counts, key=counts.get)
    picks = {ordered[int(q * (len(ordered) - 1))] for q in (0.1, 0.3, 0.5, 0.7, 0.8, 0.9)}
    picks |= {p for p in ordered if counts[p] > 5000}
    return sorted(picks, key=counts.get)


def stats(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    p90 = ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]
    return statistics.median(ordered) * 1e3, p90 * 1e3


async def per_node_bounds(session, nodes: list[dict]) -> int:
    """WebArena's browser-info pass: two CDP calls per node with a DOM node."""
    done = 0
    for node in nodes:
        backend = node.get("backendDOMNodeId")
        if backend is None:
            continue
        try:
            obj = await session.send("DOM.resolveNode", {"backendNodeId": backend})
            object_id = obj["object"].get("objectId")
            if object_id:
                await session.send(
                    "Runtime.callFunctionOn",
                    {"objectId": object_id, "functionDeclaration": _RECT, "returnByValue": True},
                )
        except Exception:
            pass  # text nodes have no getBoundingClientRect; WebArena skips them too
        done += 1
    return done


async def measure(runs: int, bounds_pages: int) -> list[dict]:
    server = SiteServer()
    counts = node_counts()
    pages = pick_pages(counts)
    rows = []
    async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1",), block_other_hosts=True, settle_ms=300) as env:
        big = [p for p in pages if counts[p] > 2000][:bounds_pages]
        for page in pages:
            await env.reset(server.url(f"corpus/{page}/"), observe=False)
            session = await env.sessions_for(env.page).main()
            await env.observe()  # warm: sessions, caches
            target = await env.sessions_for(env.page).target_id(session)
            bare, raw, ours, plain, aria, snap, render, dom = [], [], [], [], [], [], [], []
            html, html_read, parse, devtools_html = [], [], [], []
            for _ in range(runs):
                t = time.perf_counter()
                payload = await cdp(session, "Accessibility.getFullAXTree")
                bare.append(time.perf_counter() - t)
                t = time.perf_counter()
                await env._devtools.target_call(target, "Accessibility.getFullAXTree")
                raw.append(time.perf_counter() - t)
                t = time.perf_counter()
                dom_obs = await env.observe()  # the default source: pagelens' own capture
                dom.append(time.perf_counter() - t)
                env.config.source = "ax"
                t = time.perf_counter()
                obs = await env.observe()
                ours.append(time.perf_counter() - t)
                snap.append(obs.timings_ms["snapshot"] / 1e3)
                render.append(obs.timings_ms["render"] / 1e3)
                env.config.clickables = False
                t = time.perf_counter()
                await env.observe()
                plain.append(time.perf_counter() - t)
                env.config.clickables = True
                env.config.source = "dom"
                t = time.perf_counter()
                await env.page.locator("body").aria_snapshot(timeout=120_000)
                aria.append(time.perf_counter() - t)
                t = time.perf_counter()
                hobs = await env.observe_html()
                html.append(time.perf_counter() - t)
                html_read.append(hobs.timings_ms["read"] / 1e3)
                parse.append(hobs.timings_ms["parse"] / 1e3)
                t = time.perf_counter()  # the same page as DevTools reads it (the fallback)
                await fetch_html(env.sessions_for(env.page), True, env.config.cdp_timeout_s)
                devtools_html.append(time.perf_counter() - t)
            row = {
                "page": page,
                "nodes": len(payload["nodes"]),
                "frames": obs.frame_count,
                "bare": stats(bare),
                "raw": stats(raw),
                "observe": stats(ours),
                "dom": stats(dom),
                "dom_tokens": dom_obs.token_count,
                "plain": stats(plain),
                "snapshot": stats(snap),
                "render": stats(render),
                "aria": stats(aria),
                "bounds": None,
                "tokens": obs.token_count,
                "clickable": len(obs.tree.clickable_ids),
                "html": stats(html),
                "html_read": stats(html_read),
                "devtools_html": stats(devtools_html),
                "parse": stats(parse),
                "elements": len(hobs.dom),
            }
            if page in big:
                t = time.perf_counter()
                full = await cdp(session, "Accessibility.getFullAXTree")
                await per_node_bounds(session, full["nodes"])
                row["bounds"] = (time.perf_counter() - t) * 1e3
            rows.append(row)
            print(f"{page}: {row}", file=sys.stderr)
    server.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--bounds-pages", type=int, default=3, help="pages over 2,000 nodes to time per-node bounds on")
    args = parser.parse_args()
    rows = asyncio.run(measure(args.runs, args.bounds_pages))
    from importlib.metadata import version

    print(
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"Playwright {version('playwright')}, Chromium /usr/bin/chromium; {args.runs} runs a page; "
        "milliseconds, median (p90).\n"
    )
    print(
        "| page | AX nodes | clickable | getFullAXTree via Playwright | getFullAXTree raw bytes | observe() "
        "| observe / raw call | of which snapshot (parallel) | render | observe() without clickables | "
        "its / raw call | aria_snapshot() | AX + per-node bounds (WebArena) | bounds / observe |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    vs_raw, plain_vs_raw = [], []
    for r in rows:
        vs_raw.append(r["observe"][0] / r["raw"][0])
        plain_vs_raw.append(r["plain"][0] / r["raw"][0])
        bounds = f"{r['bounds']:,.0f}" if r["bounds"] else "–"
        speedup = f"{r['bounds'] / r['observe'][0]:,.0f}×" if r["bounds"] else "–"
        print(
            f"| {r['page']} | {r['nodes']:,} | {r['clickable']:,} | {r['bare'][0]:,.1f} ({r['bare'][1]:,.1f}) | "
            f"{r['raw'][0]:,.1f} ({r['raw'][1]:,.1f}) | {r['observe'][0]:,.1f} ({r['observe'][1]:,.1f}) | "
            f"{vs_raw[-1]:.2f}× | {r['snapshot'][0]:,.1f} | {r['render'][0]:,.1f} | "
            f"{r['plain'][0]:,.1f} ({r['plain'][1]:,.1f}) | {plain_vs_raw[-1]:.2f}× | "
            f"{r['aria'][0]:,.1f} ({r['aria'][1]:,.1f}) | {bounds} | {speedup} |"
        )
    print(
        "\npagelens' own capture (`observe()`, the default source) next to Chromium's tree "
        '(`source="ax"`) and Playwright\'s `aria_snapshot()`:\n'
    )
    print("| page | AX nodes | observe() (dom) | observe() (ax) | aria_snapshot() | dom / aria | ax / aria |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['page']} | {r['nodes']:,} | {r['dom'][0]:,.1f} ({r['dom'][1]:,.1f}) | {r['observe'][0]:,.1f} "
            f"| {r['aria'][0]:,.1f} | {r['dom'][0] / r['aria'][0]:.2f}× | {r['observe'][0] / r['aria'][0]:.2f}× |"
        )
    print(
        "\nThe page as HTML (`observe_html()`: pagelens' capture, one pass per frame document of its own "
        "origin, built node for node by the Rust core), next to `observe()` and to the same page read "
        "by DevTools (`DOM.getDocument(depth=-1, pierce=True)` per renderer session, the fallback):\n"
    )
    print(
        "| page | DOM elements | observe() | observe_html() | of which read | parse | DevTools' reading "
        "| html / DevTools |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(
            f"| {r['page']} | {r['elements']:,} | {r['dom'][0]:,.1f} | {r['html'][0]:,.1f} ({r['html'][1]:,.1f}) "
            f"| {r['html_read'][0]:,.1f} | {r['parse'][0]:,.1f} | {r['devtools_html'][0]:,.1f} "
            f"| {r['html'][0] / r['devtools_html'][0]:.2f}× |"
        )
    big = [i for i, r in enumerate(rows) if r["nodes"] > 2000]
    print(
        f"\nobserve() / raw getFullAXTree: median {statistics.median(vs_raw):.2f}×, pages over 2,000 nodes "
        f"{min(vs_raw[i] for i in big):.2f}–{max(vs_raw[i] for i in big):.2f}× (without clickables "
        f"{min(plain_vs_raw[i] for i in big):.2f}–{max(plain_vs_raw[i] for i in big):.2f}×)"
    )


if __name__ == "__main__":
    main()
