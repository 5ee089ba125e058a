"""pagelens' own capture (``source="dom"``) against Chromium's accessibility tree on every corpus
page served live, in one run: fidelity per element, and speed against Playwright MCP's snapshot.

Fidelity, per page: every actionable element of Chromium's tree (an interactive role, not
ignored, with a DOM node) is found in the capture by its DOM node (the capture's registry id
of the same element), and its role and name compared (names with their whitespace
normalised). Texts: the share of Chromium's distinct StaticText names (2+ characters) present
in the capture's occam text. Ids: the share of Chromium's named actionables whose element has
an id in the capture's occam text.

Speed: ``observe()`` with each source and Playwright's ``aria_snapshot(mode="ai")`` on the same
page, interleaved in orders where each reader follows every other equally often, medians of
RUNS, ratios to aria's time on the same page, in four cases (see ``speed``): settled, a relayout
pending (a style change just made, of nothing the capture reads), changed (a word added
mid-page, the page settled), and the word then the style change: pagelens' capture as it runs
(re-reading only what changed), the same made to read the whole page (a class toggled on the
body first), and Chromium's tree. Beside it: what a bare ``Runtime.evaluate`` waits with a
relayout pending (the rendering frame Chromium runs first, paid by every reader).

    python benches/report_capture.py [--runs 5] [--pages N] [--disagreements 40] > /tmp/capture.md

Prints Markdown for benches/README.md (the disagreements go to stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

from pagelens.browser import AsyncBrowserEnv  # noqa: E402
from pagelens.browser.devtools import cdp  # noqa: E402
from pagelens.browser.frames import accessibility_off as turn_off_accessibility  # noqa: E402
from pagelens.browser.frames import fetch_tree  # noqa: E402
from report_browser import node_counts  # noqa: E402
from support.reference import INTERACTIVE, is_bullet, normalize  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

SCENARIOS = ("settled", "relayout", "changed", "changed+relayout")
RELAYOUT = "document.body.style.paddingLeft = (document.body.style.paddingLeft === '1px' ? '2px' : '1px')"
_ID_OF = "function() { return typeof __pagelens === 'object' ? __pagelens.idOf(this) : null; }"


def unescaped(text: str) -> str:
    """The text as the page wrote it: quotes, page brackets (spec 3.16) and the escapes a quoted
    name writes for invisible characters (a soft hyphen is ``\\xad``) undone."""
    text = re.sub(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8})", lambda m: chr(int(m.group(1)[1:], 16)), text)
    return text.replace("\\'", "'").replace('\\"', '"').replace("\\[", "[")


async def registry_ids(env: AsyncBrowserEnv, backend_ids: list[int]) -> dict[int, int]:
    """backend node id -> the capture's id of the same element (main frame)."""
    capture = env._capture  # the bench measures the environment's own capture
    session = await env.sessions_for(env.page).main()
    frame_id = (await cdp(session, "Page.getFrameTree"))["frameTree"]["frame"]["id"]
    context = await capture.world(session, frame_id, 30)
    out = {}
    for backend in backend_ids:
        try:
            obj = await cdp(session, "DOM.resolveNode", {"backendNodeId": backend, "executionContextId": context})
            object_id = obj["object"]["objectId"]
            reply = await cdp(
                session,
                "Runtime.callFunctionOn",
                {"objectId": object_id, "functionDeclaration": _ID_OF, "returnByValue": True},
            )
            await cdp(session, "Runtime.releaseObject", {"objectId": object_id})
        except Exception:
            continue
        value = reply.get("result", {}).get("value")
        if isinstance(value, int):
            out[backend] = value
    return out


async def accessibility_off(env: AsyncBrowserEnv) -> None:
    """Chromium's accessibility off again in the tab, as before any reading of its tree: the
    reference reading goes through Playwright's session, the ax source through pagelens' socket."""
    main = await env.sessions_for(env.page).main_record(30)
    for devtools in (None, await env._raw_socket()):
        await turn_off_accessibility(main, 30, devtools)


async def fidelity(env: AsyncBrowserEnv, page: str, log: list[str]) -> dict[str, float]:
    env.config.source = "dom"
    obs = await env.observe()
    ax = await fetch_tree(env.sessions_for(env.page), include_frames=False, clickables=False)
    await accessibility_off(env)
    tree = ax.tree
    actionable = []
    texts = set()
    for node_id in tree.ids():
        node = tree.node(node_id)
        name = normalize(node.name)
        if node.role == "StaticText" and len(name) >= 2 and not is_bullet(name):
            texts.add(name)
        if node.role in INTERACTIVE and not node.ignored and node.backend_dom_node_id is not None:
            actionable.append(node)
    mapping = await registry_ids(env, [n.backend_dom_node_id for n in actionable])
    ours = obs.tree
    role_ok = name_ok = found = with_id = named = 0
    shown = set(obs.ids)
    for node in actionable:
        mine_id = mapping.get(node.backend_dom_node_id)
        mine = ours.node(mine_id) if mine_id is not None and mine_id in ours else None
        if mine is None:
            log.append(f"{page}: missing {node.role} {node.name[:60]!r}")
            continue
        found += 1
        role_ok += mine.role == node.role
        same_name = normalize(mine.name) == normalize(node.name)
        name_ok += same_name
        if mine.role != node.role or not same_name:
            log.append(
                f"{page}: chromium {node.role} {normalize(node.name)[:60]!r} / ours {mine.role} {normalize(mine.name)[:60]!r}"
            )
        if normalize(node.name):
            named += 1
            with_id += mine_id in shown
    whole = normalize(unescaped(obs.text))
    total = max(1, len(actionable))
    missing = sorted(t for t in texts if t not in whole)
    if missing:  # why a page falls short, on stderr with its row
        log.append(f"{page}: {len(missing)} of {len(texts)} texts missing, e.g. {[t[:50] for t in missing[:6]]}")
    return {
        "actionable": len(actionable),
        "found": found / total,
        "role": role_ok / total,
        "name": name_ok / total,
        "texts": sum(t in whole for t in texts) / max(1, len(texts)),
        "n_texts": len(texts),
        "ids": with_id / max(1, named),
    }


# What a reading of only what changed must still do on every element to equal a full one: a
# MutationObserver does not see CSS state (a :hover menu), values set by script or focus, so
# every element is visited, asked whether it is visible, and its control's value read.
async def frame_wait(env: AsyncBrowserEnv, runs: int) -> tuple[float, float]:
    """A bare ``Runtime.evaluate("1")`` (ms, median): on a settled page, and sent right after a
    style change (Chromium runs the rendering frame it scheduled first)."""
    session = await env.sessions_for(env.page).main()
    settled, pending = [], []
    for _ in range(runs):
        t = time.perf_counter()
        await cdp(session, "Runtime.evaluate", {"expression": "1"})
        settled.append(time.perf_counter() - t)
        await cdp(session, "Runtime.evaluate", {"expression": RELAYOUT})
        t = time.perf_counter()
        await cdp(session, "Runtime.evaluate", {"expression": "1"})
        pending.append(time.perf_counter() - t)
    return statistics.median(settled) * 1e3, statistics.median(pending) * 1e3


# A change an action makes: a word added to an element in the middle of the page.
CHANGE = (
    "(() => { const all = document.body.querySelectorAll('p, li, td, span, a');"
    " const el = all[Math.floor(all.length / 2)]; if (el) el.append(' +'); })()"
)
# Makes the next reading a whole one: a class on the body may change anything below it.
WHOLE = "document.body.classList.toggle('pagelens-bench-whole')"
FRAME = "new Promise((done) => requestAnimationFrame(() => setTimeout(done)))"


def balanced_orders(names: list[str], runs: int) -> list[list[str]]:
    """``runs`` orders of ``names`` in which each reader comes right after every other one equally
    often (a Williams design; rows repeat past its length). A reading pays for what the one
    before it left in the page (the garbage its script made, the rendering frame its end
    lets Chromium start), so a rotation, which keeps the cyclic order and so each reader's
    predecessor, would charge one reader with another's leftovers in every run."""
    n = len(names)
    first = [0]
    for k in range(1, n):  # 0, 1, n-1, 2, n-2, ...
        first.append((k + 1) // 2 if k % 2 else n - k // 2)
    rows = [[(j + i) % n for j in first] for i in range(n)]
    if n % 2:  # an odd count needs the mirrored rows as well
        rows += [row[::-1] for row in rows]
    return [[names[j] for j in rows[i % len(rows)]] for i in range(runs)]


async def speed(env: AsyncBrowserEnv, runs: int, scenario: str) -> dict[str, float]:
    """Medians (ms) of each reader in ``scenario``: "settled" (nothing changed since the last
    reading, a rendering frame run since), "relayout" (a style change just made that changes
    nothing the capture reads), "changed" (a word added mid-page, a rendering frame run since:
    ``observe()`` after pagelens' own step, which waits for the page to settle), and
    "changed+relayout" (the word, then the style change just made).
    "dom" is ``observe()`` as it runs (re-reading what changed), "whole" the same after a change
    that makes it read the whole page; ``reused`` is the share of rows "dom" copied."""
    reused: list[float] = []

    async def dom() -> None:
        env.config.source = "dom"
        obs = await env.observe()
        reused.append(obs.reused_rows / max(1, len(obs.tree)))

    async def ax() -> None:
        env.config.source = "ax"
        await env.observe()

    async def aria() -> None:
        await env.page.aria_snapshot(mode="ai", timeout=120_000)

    candidates = {"dom": dom, "whole": dom, "aria": aria}
    times: dict[str, list[float]] = {k: [] for k in [*candidates, "ax"]}

    async def timed(name: str, reader: Callable[[], Awaitable[None]]) -> None:
        if name == "whole":
            await env.page.evaluate(WHOLE)
        if scenario.startswith("changed"):
            await env.page.evaluate(CHANGE)
        if scenario.endswith("relayout"):
            await env.page.evaluate(RELAYOUT)
        else:
            await env.page.evaluate(FRAME)
        t = time.perf_counter()
        await reader()
        times[name].append(time.perf_counter() - t)
        if name == "whole":
            reused.pop()

    for order in balanced_orders(list(candidates), runs):
        for name in order:
            await timed(name, candidates[name])
    # Chromium's tree last, then its accessibility turned off: reading it leaves the renderer's
    # accessibility on, which lengthens every later rendering frame (about 2x on wikipedia-2)
    # for every reader, where pagelens' capture and aria never turn it on.
    for _ in range(runs):
        await timed("ax", ax)
    await accessibility_off(env)
    env.config.source = "dom"
    out = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    out["reused"] = statistics.median(reused)
    return out


async def corpus_pages(pages: list[str]) -> AsyncIterator[tuple[AsyncBrowserEnv, str]]:
    """Each of ``pages`` served live and opened in one environment, read once by pagelens and once
    by aria (both warm) before it is handed on."""
    server = SiteServer()
    try:
        async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1",), block_other_hosts=True, settle_ms=300) as env:
            for page in pages:
                await env.reset(server.url(f"corpus/{page}/"), observe=False)
                await env.observe()
                await env.page.aria_snapshot(mode="ai", timeout=120_000)
                yield env, page
    finally:
        server.close()


async def main_async(args: argparse.Namespace) -> None:
    counts = node_counts()
    pages = sorted(counts, key=counts.get)
    if args.pages:
        step = max(1, len(pages) // args.pages)
        pages = pages[::step][: args.pages]
    rows = []
    log: list[str] = []
    async for env, page in corpus_pages(pages):
        fid = await fidelity(env, page, log)
        row = {"page": page, "nodes": counts[page], **fid}
        if counts[page] > args.min_nodes:
            for scenario in SCENARIOS:
                row[scenario] = await speed(env, args.runs, scenario)
            row["frame"] = await frame_wait(env, args.runs)
        rows.append(row)
        print(f"{page}: {json.dumps(row)}", file=sys.stderr)
    print_report(rows, args)
    reasons = Counter(line.split(": ", 1)[1] for line in log)
    print("\nDisagreements (most frequent first):", file=sys.stderr)
    for line, n in reasons.most_common(args.disagreements):
        print(f"{n:5d}  {line}", file=sys.stderr)


def print_report(rows: list[dict], args: argparse.Namespace) -> None:
    def mean(key: str) -> float:
        weighted = [(r[key], r["actionable"]) for r in rows if r["actionable"]]
        return sum(v * w for v, w in weighted) / max(1, sum(w for _, w in weighted))

    total = sum(r["actionable"] for r in rows)
    print(
        f"Capture fidelity against Chromium's tree, {len(rows)} corpus pages served live, {total} actionable elements"
    )
    print(
        f"({platform.machine()}, {platform.python_version()}; `python benches/report_capture.py --runs {args.runs}`)\n"
    )
    print("| measure | value |\n|---|---:|")
    print(f"| actionables found (same DOM element) | {mean('found'):.2%} |")
    print(f"| role agreement on actionables | {mean('role'):.2%} |")
    print(f"| name agreement on actionables | {mean('name'):.2%} |")
    pooled = sum(r["texts"] * r["n_texts"] for r in rows) / max(1, sum(r["n_texts"] for r in rows))
    # A page where Chromium reads no text has none to miss: left out of the pages' figures, named.
    texted = [r for r in rows if r["n_texts"]] or [{"page": "none", "texts": 0.0}]
    lowest = min(texted, key=lambda r: r["texts"])
    print(
        f"| Chromium's texts present | {pooled:.2%} of all; {statistics.mean(r['texts'] for r in texted):.2%} pages' "
        f"mean; lowest {lowest['texts']:.2%} ({lowest['page']}) |"
    )
    textless = [r["page"] for r in rows if not r["n_texts"]]
    if textless:
        print(f"| pages where Chromium reads no text (left out above) | {', '.join(textless)} |")
    print(f"| named actionables with an id | {mean('ids'):.2%} |")
    timed = [r for r in rows if "settled" in r]
    if not timed:
        return
    print(
        f"\nSpeed on the {len(timed)} pages of more than {args.min_nodes} AX nodes (ratio to aria_snapshot(mode='ai'), medians of {args.runs}, interleaved):\n"
    )
    print(
        "| page | AX nodes | aria ms | settled: dom × / whole × / ax × | relayout: dom × / whole × / ax × "
        "| changed: dom × / whole × (rows copied) | changed+relayout: dom × / whole × "
        "| bare evaluate ms: settled / relayout pending |"
        "\n|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for r in timed:
        s, rl, c, cr = (r[k] for k in SCENARIOS)
        print(
            f"| {r['page']} | {r['nodes']} | {s['aria']:.0f} "
            f"| {s['dom'] / s['aria']:.2f} / {s['whole'] / s['aria']:.2f} / {s['ax'] / s['aria']:.2f} "
            f"| {rl['dom'] / rl['aria']:.2f} / {rl['whole'] / rl['aria']:.2f} / {rl['ax'] / rl['aria']:.2f} "
            f"| {c['dom'] / c['aria']:.2f} / {c['whole'] / c['aria']:.2f} ({c['reused']:.0%}) "
            f"| {cr['dom'] / cr['aria']:.2f} / {cr['whole'] / cr['aria']:.2f} "
            f"| {r['frame'][0]:.1f} / {r['frame'][1]:.1f} |"
        )
    print()
    for key in SCENARIOS:
        for reader in ("dom", "whole"):
            ratios = [r[key][reader] / r[key]["aria"] for r in timed]
            print(f"\n{key}, {reader}: median {statistics.median(ratios):.2f}× aria, max {max(ratios):.2f}×", end="")
    print(
        f"\n\nrows copied after the change: median {statistics.median(r['changed']['reused'] for r in timed):.0%}; "
        f"a bare evaluate waits median {statistics.median(r['frame'][1] for r in timed):.1f} ms with a relayout "
        f"pending, {statistics.median(r['frame'][0] for r in timed):.1f} ms settled"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pages", type=int, default=0, help="spread this many pages over the size range (0: all)")
    parser.add_argument("--min-nodes", type=int, default=2000, help="time pages of more AX nodes than this")
    parser.add_argument("--disagreements", type=int, default=40)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
