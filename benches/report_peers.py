"""What each tool's agent reads of the same live pages, side by side in one run:

- pagelens:    `observe()` (occam form, clickables, every frame), from its own in-page capture
               (the default source);
- pagelens_ax: the same from Chromium's accessibility tree (`source="ax"`);
- aria:        Playwright's `page.aria_snapshot(mode="ai")` — what Playwright MCP's
               `browser_snapshot` returns;
- BrowserGym:  its own observation (`BrowserEnv._get_obs()`: marking, DOM snapshot, merged AX
               tree, screenshot) flattened by its `flatten_axtree_to_str` — AgentLab's default
               text; and pagelens' bridge `occam_text()` on that same observation;
- browser-use: `DomService.get_serialized_dom_tree()` and `llm_representation()` (its own
               serializer, no model; its PyPI package in target/peers-venv, see `make bench`).

Each page of the corpus is served on loopback (other hosts refused or unresolvable in every
browser); the times are the median of RUNS calls after a warm-up. Of the page's saved AX tree
(Chromium's, tests/corpus), how many distinct texts each output holds, and how many named
actionable elements (links, buttons, fields...) it holds with an id the agent can act on (the
name on a line carrying the tool's id, or on the lines below it). Tokens: GPT-2.

    python benches/report_peers.py [--runs 3] [--pages 15] > /tmp/peers.md
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

from pagelens import count_tokens  # noqa: E402
from pagelens.browser import AsyncBrowserEnv  # noqa: E402
from reference import INTERACTIVE, is_bullet, normalize  # noqa: E402
from report_browser import node_counts, pick_pages  # noqa: E402
from site_server import SiteServer  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
PEERS_PYTHON = ROOT / "target" / "peers-venv" / "bin" / "python"
TOOLS = ("pagelens", "pagelens_ax", "aria", "browsergym", "bridge", "browser_use")
TITLES = {
    "pagelens": "pagelens observe()",
    "pagelens_ax": "pagelens observe(), source='ax'",
    "aria": "aria_snapshot(mode='ai')",
    "browsergym": "BrowserGym flatten_axtree_to_str",
    "bridge": "pagelens occam_text(BrowserGym obs)",
    "browser_use": "browser-use serialized state",
}
# The id an agent names an element by, as each tool prints it.
ID_MARKS = {
    "pagelens": re.compile(r"\*?\[\d+\]"),
    "pagelens_ax": re.compile(r"\*?\[\d+\]"),
    "aria": re.compile(r"\[ref=[^\]]+\]"),
    "browsergym": re.compile(r"^\s*\[[A-Za-z0-9]+\] "),
    "bridge": re.compile(r"\*?\[[A-Za-z0-9]+\]"),
    "browser_use": re.compile(r"\[\d+\]<"),
}


def saved_tree(page: str) -> tuple[set[str], set[str]]:
    """The saved tree's distinct texts (StaticText names) and named actionable elements."""
    nodes = json.loads(gzip.decompress((CORPUS / page / "axtree.json.gz").read_bytes()))["nodes"]
    texts, actionable = set(), set()
    for n in nodes:
        if n.get("ignored"):
            continue
        role = (n.get("role") or {}).get("value", "")
        name = normalize(str((n.get("name") or {}).get("value", "")))
        if len(name) < 2 or is_bullet(name):
            continue
        if role == "StaticText":
            texts.add(name)
        elif role in INTERACTIVE:
            actionable.add(name)
    return texts, actionable


def plain(text: str) -> str:
    """A tool's text with its quoting undone and its spacing normalised, for finding names."""
    return normalize(text.replace("\\'", "'").replace('\\"', '"').replace("\\|", "|").replace("\\\\", "\\"))


def actionable_blocks(text: str, mark: re.Pattern[str]) -> str:
    """Every line that carries an id, with the deeper-indented lines under it."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not mark.search(line):
            continue
        indent = len(line) - len(line.lstrip())
        block = [line]
        for below in lines[i + 1 :]:
            if below.strip() and len(below) - len(below.lstrip()) <= indent:
                break
            block.append(below)
        out.append(plain("\n".join(block)))
    return "\n".join(out)


def kept(text: str, tool: str, texts: set[str], actionable: set[str]) -> tuple[float, float]:
    whole = plain(text)
    blocks = actionable_blocks(text, ID_MARKS[tool])
    text_share = sum(t in whole for t in texts) / max(1, len(texts))
    # A page with nothing to act on says nothing about keeping ids: left out of the mean.
    actionable_share = sum(a in blocks for a in actionable) / len(actionable) if actionable else float("nan")
    return text_share, actionable_share


async def pagelens_and_aria(urls: dict[str, str], runs: int) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {"pagelens": {}, "pagelens_ax": {}, "aria": {}}
    async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1",), block_other_hosts=True, settle_ms=300) as env:
        for page, url in urls.items():
            await env.reset(url, observe=False)
            await env.observe()
            await env.page.aria_snapshot(mode="ai", timeout=120_000)  # warm both
            ours, theirs, aria = [], [], []
            for _ in range(runs):
                t = time.perf_counter()
                obs = await env.observe()
                ours.append(time.perf_counter() - t)
                env.config.source = "ax"
                t = time.perf_counter()
                ax_obs = await env.observe()
                theirs.append(time.perf_counter() - t)
                env.config.source = "dom"
                t = time.perf_counter()
                snapshot = await env.page.aria_snapshot(mode="ai", timeout=120_000)
                aria.append(time.perf_counter() - t)
            out["pagelens"][page] = {"ms": statistics.median(ours) * 1e3, "text": obs.text}
            out["pagelens_ax"][page] = {"ms": statistics.median(theirs) * 1e3, "text": ax_obs.text}
            out["aria"][page] = {"ms": statistics.median(aria) * 1e3, "text": snapshot}
            print(f"pagelens/aria: {page}", file=sys.stderr)
    return out


def browsergym(urls: dict[str, str], runs: int) -> dict[str, dict[str, dict]]:
    """BrowserGym's own observation of each page, its text and pagelens' bridge on it."""
    from pagelens.browsergym import link_playwright_browsers, occam_text

    os.environ["PLAYWRIGHT_BROWSERS_PATH"] = str(link_playwright_browsers(Path(tempfile.mkdtemp()) / "browsers"))
    import browsergym.core  # noqa: F401  (registers the open-ended task)
    import gymnasium
    from browsergym.utils.obs import flatten_axtree_to_str

    out: dict[str, dict[str, dict]] = {"browsergym": {}, "bridge": {}}
    first = next(iter(urls.values()))
    env = gymnasium.make("browsergym/openended", task_kwargs={"start_url": first}, wait_for_user_message=False)
    try:
        env.reset()
        bg = env.unwrapped
        bg.context.route(
            "**/*",
            lambda route: route.continue_() if urlparse(route.request.url).hostname == "127.0.0.1" else route.abort(),
        )
        for page, url in urls.items():
            bg.page.goto(url, wait_until="load")
            bg._get_obs()  # warm
            times, bridge_times = [], []
            for _ in range(runs):
                t = time.perf_counter()
                obs = bg._get_obs()
                flat = flatten_axtree_to_str(obs["axtree_object"])
                times.append(time.perf_counter() - t)
                t = time.perf_counter()
                ours = occam_text(obs)
                bridge_times.append(time.perf_counter() - t)
            out["browsergym"][page] = {"ms": statistics.median(times) * 1e3, "text": flat}
            # The bridge reads BrowserGym's observation: its time is BrowserGym's capture plus ours.
            out["bridge"][page] = {
                "ms": (statistics.median(times) + statistics.median(bridge_times)) * 1e3,
                "text": ours,
                "own_ms": statistics.median(bridge_times) * 1e3,
            }
            print(f"browsergym: {page}", file=sys.stderr)
    finally:
        env.close()
        # BrowserGym's one sync Playwright for the process: its event loop would stay current.
        if browsergym.core._PLAYWRIGHT is not None:
            browsergym.core._PLAYWRIGHT.stop()
            browsergym.core._set_global_playwright(None)
    return out


def browser_use(urls: dict[str, str], runs: int) -> dict[str, dict[str, dict]]:
    if not PEERS_PYTHON.exists():
        raise SystemExit(f"browser-use's environment is missing: {PEERS_PYTHON} (make bench creates it)")
    done = subprocess.run(
        [str(PEERS_PYTHON), str(ROOT / "benches" / "peers" / "browser_use_state.py"), str(runs), *urls.values()],
        capture_output=True,
        text=True,
        timeout=3600,
    )
    if done.returncode != 0:
        raise SystemExit(f"browser-use's run failed ({done.returncode}):\n{done.stderr[-3000:]}")
    by_url = {d["url"]: d for d in map(json.loads, done.stdout.splitlines())}
    return {
        "browser_use": {
            page: {"ms": statistics.median(by_url[url]["ms"]), "text": by_url[url]["text"]}
            for page, url in urls.items()
        }
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", type=int, default=15, help="corpus pages, spread over the size range")
    args = parser.parse_args()
    counts = node_counts()
    pages = pick_pages(counts)
    spread = sorted(counts, key=counts.get)
    for page in spread[:: max(1, len(spread) // args.pages)]:
        if len(pages) >= args.pages:
            break
        if page not in pages:
            pages.append(page)
    pages = sorted(pages, key=counts.get)
    server = SiteServer()
    try:
        urls = {page: server.url(f"corpus/{page}/") for page in pages}
        results = asyncio.run(pagelens_and_aria(urls, args.runs))
        results.update(browsergym(urls, args.runs))
        results.update(browser_use(urls, args.runs))
    finally:
        server.close()

    from importlib.metadata import version

    print(
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}, "
        f"{os.cpu_count()} cores; Playwright {version('playwright')}, BrowserGym "
        f"{version('browsergym-core')}, browser-use 0.13.14 (its own venv); Chromium /usr/bin/chromium. "
        f"{len(pages)} corpus pages, {args.runs} calls each (median), after a warm-up.\n"
    )
    header = " | ".join(f"{TITLES[t]}: ms / tokens / texts / actionable" for t in TOOLS)
    print(f"| page | AX nodes | {header} |")
    print("| --- | ---: |" + " ---: |" * len(TOOLS))
    totals: dict[str, dict[str, list[float]]] = {t: {"ms": [], "tokens": [], "texts": [], "act": []} for t in TOOLS}
    for page in pages:
        texts, actionable = saved_tree(page)
        cells = []
        for tool in TOOLS:
            r = results[tool][page]
            tokens = count_tokens(r["text"], "gpt2")
            share, act = kept(r["text"], tool, texts, actionable)
            for key, value in (("ms", r["ms"]), ("tokens", tokens), ("texts", share), ("act", act)):
                totals[tool][key].append(value)
            cells.append(f"{r['ms']:,.0f} / {tokens:,} / {share:.1%} / " + (f"{act:.1%}" if act == act else "–"))
        print(f"| {page} | {counts[page]:,} | " + " | ".join(cells) + " |")
    base = totals["pagelens"]
    print(
        "\n| tool | time, sum over pages | GPT-2 tokens, sum | texts kept (mean) | actionable kept with an id (mean) |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for tool in TOOLS:
        t = totals[tool]
        print(
            f"| {TITLES[tool]} | {sum(t['ms']):,.0f} ms ({sum(t['ms']) / sum(base['ms']):.2f}×) | "
            f"{sum(t['tokens']):,.0f} ({sum(t['tokens']) / sum(base['tokens']):.2f}×) | "
            f"{statistics.mean(t['texts']):.1%} | {statistics.mean(a for a in t['act'] if a == a):.1%} |"
        )
    bridge_own = [results["bridge"][p]["own_ms"] for p in pages]
    print(
        f"\nThe bridge's own share (occam_text on BrowserGym's observation): {sum(bridge_own):,.0f} ms in all, "
        f"median {statistics.median(bridge_own):,.1f} ms a page."
    )


if __name__ == "__main__":
    main()
