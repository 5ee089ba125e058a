"""What any reader written in the page pays for a whole reading, against the capture's whole
reading and ``aria_snapshot(mode="ai")`` (issue 60, item 6: how far below today's pass a
JavaScript reader can go at all).

On each corpus page of more than MIN_NODES AX nodes, served live, each page made to read whole
before every reading (a class toggled on the body, a rendering frame run), interleaved in
balanced orders, medians of RUNS (ms):

- ``visit``: a walk over every node of the document and its open shadow trees (first child,
  next sibling, shadow root; no recursion), in an isolated world of its own, answering a count:
  the least a reader that looks at every node does;
- ``checked``: the same, each element asked ``checkVisibility()``: the least a reader that knows
  what is shown does (Chromium's tree and aria both decide it);
- ``styles``: the same, asked by reading ``display`` and ``visibility`` of its computed style
  instead;
- ``texts``: ``checked``, and every text node's data joined and sent back by value: the least
  a reader that answers with the page's words does;
- ``whole``: pagelens' ``observe()`` made to read the whole page (its real whole reading);
- ``aria``: Playwright's ``aria_snapshot(mode="ai")`` (Playwright MCP's ``browser_snapshot``).

The floors are timed from here (a round trip each on the capture's own DevTools socket, as
any reading pays) and inside the page (``in page``). Beside them, ``DOMSnapshot.captureSnapshot``
with the two styles: the browser's own native walk that answers with every node, its text and
those styles.

    python benches/capture_floor.py [--runs 5] [--pages wikipedia-2,bbc-1] > /tmp/floor.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

from pagelens.browser import AsyncBrowserEnv  # noqa: E402
from pagelens.browser.devtools import cdp  # noqa: E402
from profile_capture import FRAME, WHOLE, whole_capture_call  # noqa: E402
from report_browser import node_counts  # noqa: E402
from report_capture import balanced_orders, corpus_pages  # noqa: E402

# One function for the floors: SHOWN (how an element is asked whether it is shown: not, by
# checkVisibility(), by its computed style) and TEXTS say how much of a reader's work it does.
# The walk keeps its own stack of "next node to visit" (a deep page cannot overflow it).
FLOOR_JS = """
(SHOWN, TEXTS) => {
  const t0 = performance.now();
  const UNSHOWN = new Set(['script', 'style', 'noscript', 'template']);
  let count = 0, shown = 0;
  const words = [];
  const stack = [];
  let node = document.documentElement;
  while (node) {
    count++;
    if (node.nodeType === 1) {
      if (SHOWN === 'check') {
        if (node.checkVisibility()) shown++;
      } else if (SHOWN === 'style') {
        const style = getComputedStyle(node);
        if (style.display !== 'none' && style.visibility === 'visible') shown++;
      }
      const root = node.shadowRoot;
      if (root && root.firstChild) stack.push(root.firstChild);
    } else if (TEXTS && node.nodeType === 3 && !UNSHOWN.has(node.parentNode.localName)) {
      words.push(node.data);
    }
    if (node.firstChild) {
      if (node.nextSibling) stack.push(node.nextSibling);
      node = node.firstChild;
    } else {
      node = node.nextSibling || stack.pop() || null;
    }
  }
  const text = TEXTS ? words.join('\\n') : '';
  return {count, shown, text, ms: performance.now() - t0};
}
"""
FLOORS = {"visit": ("", False), "checked": ("check", False), "styles": ("style", False), "texts": ("check", True)}
SNAPSHOT = {"computedStyles": ["display", "visibility"]}


async def page_row(env: AsyncBrowserEnv, runs: int) -> dict[str, float]:
    """Medians (ms) of every reader on the page open in ``env``; ``NAME in page`` for the
    floors' own time inside the page."""
    session = await env.sessions_for(env.page).main()
    # The capture's own DevTools socket and target: the floors' round trips are the capture's.
    _, target, _, devtools = await whole_capture_call(env)
    frame_id = (await cdp(session, "Page.getFrameTree"))["frameTree"]["frame"]["id"]
    world = await cdp(session, "Page.createIsolatedWorld", {"frameId": frame_id, "worldName": "pagelens-floor"})
    context = world["executionContextId"]
    inside: dict[str, list[float]] = {name: [] for name in FLOORS}
    nodes: list[int] = []

    def floor(name: str) -> Callable[[], Awaitable[None]]:
        shown, texts = FLOORS[name]
        params = {
            "expression": f"({FLOOR_JS})({json.dumps(shown)}, {json.dumps(texts)})",
            "contextId": context,
            "returnByValue": True,
        }

        async def read() -> None:
            value = json.loads(await devtools.target_call(target, "Runtime.evaluate", params, 120))["result"]["result"]
            inside[name].append(value["value"]["ms"])
            nodes.append(value["value"]["count"])

        return read

    async def whole() -> None:
        await env.observe()

    async def aria() -> None:
        await env.page.aria_snapshot(mode="ai", timeout=120_000)

    async def snapshot() -> None:
        await devtools.target_call(target, "DOMSnapshot.captureSnapshot", SNAPSHOT, 120)

    readers: dict[str, Callable[[], Awaitable[None]]] = {
        **{name: floor(name) for name in FLOORS},
        "whole": whole,
        "aria": aria,
        "snapshot": snapshot,
    }
    times: dict[str, list[float]] = {name: [] for name in readers}
    for order in balanced_orders(list(readers), runs):
        for name in order:
            await env.page.evaluate(WHOLE)
            await env.page.evaluate(FRAME)
            t = time.perf_counter()
            await readers[name]()
            times[name].append(time.perf_counter() - t)
    out = {name: statistics.median(v) * 1e3 for name, v in times.items()}
    out.update({f"{name} in page": statistics.median(v) for name, v in inside.items()})
    out["nodes"] = max(nodes)
    return out


async def main_async(args: argparse.Namespace, counts: dict[str, int], pages: list[str]) -> list[dict]:
    rows = []
    async for env, page in corpus_pages(pages):
        row = {"page": page, "ax": counts[page], **await page_row(env, args.runs)}
        rows.append(row)
        print(f"{page}: {json.dumps(row)}", file=sys.stderr)
    return rows


def print_report(rows: list[dict], args: argparse.Namespace) -> None:
    print(
        f"`python benches/capture_floor.py --runs {args.runs}`: medians of {args.runs} (ms), readers "
        "interleaved, each after a class toggled on the body and a rendering frame; × is the ratio "
        "to aria's time on the same page\n"
    )
    print(
        "| page | AX nodes | DOM nodes | aria ms | visit × (in page ms) | checked × (in page ms) "
        "| styles × (in page ms) | texts × (in page ms) | whole × | snapshot × | texts / whole |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        a = r["aria"]
        floors = " | ".join(f"{r[n] / a:.3f} ({r[n + ' in page']:.1f})" for n in FLOORS)
        print(
            f"| {r['page']} | {r['ax']} | {r['nodes']} | {a:.0f} | {floors} | {r['whole'] / a:.2f} "
            f"| {r['snapshot'] / a:.2f} | {r['texts'] / r['whole']:.2f} |"
        )
    print()
    for name in (*FLOORS, "whole", "snapshot"):
        ratios = [r[name] / r["aria"] for r in rows]
        print(f"- {name}: median {statistics.median(ratios):.3f}× aria, max {max(ratios):.3f}×")
    shares = [r["texts"] / r["whole"] for r in rows]
    print(f"- texts / whole: median {statistics.median(shares):.2f}, range {min(shares):.2f}-{max(shares):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pages", default="", help="comma-separated corpus pages (default: every large one)")
    parser.add_argument("--min-nodes", type=int, default=2000)
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be at least 1, not {args.runs}")
    counts = node_counts()
    pages = args.pages.split(",") if args.pages else [p for p in counts if counts[p] > args.min_nodes]
    unknown = [p for p in pages if p not in counts]
    if unknown:
        parser.error(f"no corpus page {', '.join(unknown)}")
    print_report(asyncio.run(main_async(args, counts, sorted(pages, key=counts.__getitem__))), args)


if __name__ == "__main__":
    main()
