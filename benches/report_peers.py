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

With ``--shell``: the shell CLIs instead, `pagelens browser` against vercel-labs' agent-browser
(its own daemon, built from crates.io: ``cargo install agent-browser --root target/peers-ab``;
left out with a note when absent), each command a process as a shell agent runs it, on the same
pages: ``open`` (the session's browser already running), ``snapshot`` (each tool's default,
whole), and a click on the same button (the page opened again before each click, untimed);
medians of RUNS, the two tools interleaved; of the snapshot, tokens and the share of texts and
actionables kept as above.

    python benches/report_peers.py --shell [--runs 5] [--pages 15] > /tmp/shell.md
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
from typing import Any
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benches"))

from pagelens import count_tokens  # noqa: E402
from pagelens.browser import AsyncBrowserEnv, find_chromium  # noqa: E402
from report_browser import node_counts, pick_pages  # noqa: E402
from support.reference import INTERACTIVE, is_bullet, normalize  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
PEERS_PYTHON = ROOT / "target" / "peers-venv" / "bin" / "python"
TOOLS = ("pagelens", "pagelens_ax", "aria", "browsergym", "bridge", "browser_use")
AGENT_BROWSER = ROOT / "target" / "peers-ab" / "bin" / "agent-browser"
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
    "agent_browser": re.compile(r"\[ref=e\d+\]"),
    "pagelens_shell": re.compile(r"\*?\[\d+\]"),
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
    return normalize(
        text.replace("\\'", "'").replace('\\"', '"').replace("\\|", "|").replace("\\[", "[").replace("\\\\", "\\")
    )


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
                t = time.perf_counter()
                snapshot = await env.page.aria_snapshot(mode="ai", timeout=120_000)
                aria.append(time.perf_counter() - t)
            # Chromium's tree after the others: reading it leaves the renderer's accessibility
            # on (every later frame updates Chromium's tree), which the others never turn on.
            env.config.source = "ax"
            for _ in range(runs):
                t = time.perf_counter()
                ax_obs = await env.observe()
                theirs.append(time.perf_counter() - t)
            env.config.source = "dom"
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


def _busy_cpu_ms() -> float:
    """CPU time the whole machine has spent working (all processes, all cores) since boot: the
    cold start's CPU work, whichever processes did it (a daemon, a driver, Chromium's)."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) * 1e3 / os.sysconf("SC_CLK_TCK")  # less idle and iowait


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    elapsed = (time.perf_counter() - t) * 1e3
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])}...: exit {proc.returncode}: {(proc.stderr or proc.stdout)[-300:]}")
    return elapsed, proc.stdout


def shell_commands(urls: dict[str, str], runs: int, agent_browser: str) -> dict[str, Any]:
    """Per page and tool: medians of open / snapshot / click (ms), and the snapshot's text."""
    runtime = tempfile.mkdtemp(prefix="shell-bench-")
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime, "AGENT_BROWSER_EXECUTABLE_PATH": find_chromium()}
    ours = [sys.executable, "-m", "pagelens", "browser"]
    theirs = [agent_browser, "--session", "bench"]
    tools = ("pagelens_shell", "agent_browser")
    base = {"pagelens_shell": ours, "agent_browser": theirs}
    out: dict[str, Any] = {t: {} for t in tools}
    skipped: list[str] = []

    def orders(run: int) -> tuple[str, ...]:
        return tools if run % 2 == 0 else tools[::-1]

    def one_page(page: str, url: str) -> None:
        times: dict[str, dict[str, list[float]]] = {t: {"open": [], "snapshot": [], "click": []} for t in tools}
        texts: dict[str, str] = {}
        for run in range(runs):
            for tool in orders(run):
                ms, _ = _timed([*base[tool], "open", url], env)
                times[tool]["open"].append(ms)
                full = ["snapshot", "--full"] if tool == "pagelens_shell" else ["snapshot"]
                ms, texts[tool] = _timed([*base[tool], *full], env)
                times[tool]["snapshot"].append(ms)
        # The same button in both snapshots, clicked with each tool's id for it.
        names = re.findall(r"button \[\d+\] '([^'\n]{2,40})'", texts["pagelens_shell"])
        target = next((n for n in names if f'button "{n}" [ref=' in texts["agent_browser"]), None)
        for run in range(runs if target is not None else 0):
            for tool in orders(run):
                _timed([*base[tool], "open", url], env)
                if tool == "pagelens_shell":
                    snap = _timed([*ours, "snapshot", "--full"], env)[1]
                    found = re.search(rf"button \[(\d+)\] '{re.escape(str(target))}'", snap)
                    args = ["click", found.group(1)] if found else None
                else:
                    snap = _timed([*theirs, "snapshot"], env)[1]
                    found = re.search(rf'button "{re.escape(str(target))}" \[ref=(e\d+)', snap)
                    args = ["click", "@" + found.group(1)] if found else None
                if args is None:
                    continue
                try:
                    ms, _ = _timed([*base[tool], *args], env)
                except RuntimeError as e:  # the click failed in that tool: noted, not timed
                    print(f"{page}: {tool} click: {e}", file=sys.stderr)
                    continue
                times[tool]["click"].append(ms)
        for tool in tools:
            medians = {k: (statistics.median(v) if v else float("nan")) for k, v in times[tool].items()}
            out[tool][page] = {"text": texts[tool], **medians}
        print(f"{page}: " + "; ".join(f"{t} {times[t]}" for t in tools), file=sys.stderr)

    # Cold starts: each a new session (daemon, browser, page) on the first page, closed after,
    # the tools interleaved; the median of `runs`.
    first = next(iter(urls.values()))
    cold: dict[str, list[float]] = {t: [] for t in tools}
    cold_cpu: dict[str, list[float]] = {t: [] for t in tools}
    for run in range(runs):
        for tool in orders(run):
            name = f"cold{run}"
            if tool == "pagelens_shell":
                opened, closed = [*ours, "open", first, "--session", name], [*ours, "close", "--session", name]
            else:
                opened, closed = (
                    [agent_browser, "--session", name, "open", first],
                    [agent_browser, "--session", name, "close"],
                )
            busy = _busy_cpu_ms()
            cold[tool].append(_timed(opened, env)[0])
            cold_cpu[tool].append(_busy_cpu_ms() - busy)
            subprocess.run(closed, capture_output=True, env=env, timeout=120)
    out["cold"] = {t: statistics.median(v) for t, v in cold.items()}
    out["cold_cpu"] = {t: statistics.median(v) for t, v in cold_cpu.items()}
    try:
        for page, url in urls.items():
            try:
                one_page(page, url)
            except RuntimeError as e:  # a page one tool cannot open here: left out for both, said
                print(f"{page}: left out ({e})", file=sys.stderr)
                skipped.append(page)
    finally:
        subprocess.run([*ours, "close", "--all"], capture_output=True, env=env, timeout=120)
        subprocess.run([*theirs, "close"], capture_output=True, env=env, timeout=120)
    out["skipped"] = skipped
    return out


def report_shell(pages: list[str], counts: dict[str, int], runs: int) -> None:
    agent_browser = os.environ.get("AGENT_BROWSER") or (str(AGENT_BROWSER) if AGENT_BROWSER.exists() else None)
    if agent_browser is None:
        print("agent-browser is not built here (`cargo install agent-browser --root target/peers-ab`): left out.")
        return
    version = subprocess.run([agent_browser, "--version"], capture_output=True, text=True).stdout.strip()
    # Each command is a Python start: measured with pagelens' bytecode compiled, as an install
    # leaves it (pip compiles a wheel's modules; an editable checkout run with
    # PYTHONDONTWRITEBYTECODE=1, as on the machine these figures come from, would compile every
    # changed module again at every command).
    import compileall

    import pagelens

    compileall.compile_dir(str(Path(pagelens.__file__).parent), quiet=1)
    server = SiteServer()
    try:
        urls = {page: server.url(f"corpus/{page}/") for page in pages}
        results = shell_commands(urls, runs, agent_browser)
    finally:
        server.close()
    cold = results.pop("cold")
    cold_cpu = results.pop("cold_cpu")
    skipped = results.pop("skipped")
    pages = [p for p in pages if p not in skipped]
    tools = ("pagelens_shell", "agent_browser")
    names = {"pagelens_shell": "pagelens browser", "agent_browser": version or "agent-browser"}
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores; {names['agent_browser']} (crates.io, Rust) against "
        f"`pagelens browser`; Chromium {find_chromium()} for both; {len(pages)} corpus pages, {runs} runs each "
        "(median), the tools interleaved. Milliseconds per command, each a process as a shell agent runs it.\n"
    )
    print(
        f"Cold start (the first `open` of a session: daemon, browser, page; median of {runs} new sessions, "
        f"interleaved): pagelens {cold['pagelens_shell']:,.0f} ms, agent-browser {cold['agent_browser']:,.0f} ms; "
        f"the machine's CPU time over it (all processes, all cores): pagelens {cold_cpu['pagelens_shell']:,.0f} ms, "
        f"agent-browser {cold_cpu['agent_browser']:,.0f} ms.\n"
    )
    print(
        "| page | AX nodes | open: pagelens / agent-browser | snapshot | click | snapshot tokens | texts kept | actionables kept |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    sums: dict[str, dict[str, list[float]]] = {
        t: {"open": [], "snapshot": [], "click": [], "tokens": [], "texts": [], "act": []} for t in tools
    }
    for page in pages:
        texts, actionable = saved_tree(page)
        cells: dict[str, dict[str, float]] = {}
        for tool in tools:
            r = results[tool][page]
            share, act = kept(r["text"], tool, texts, actionable)
            cells[tool] = {
                "tokens": count_tokens(r["text"], "gpt2"),
                "texts": share,
                "act": act,
                **{k: r[k] for k in ("open", "snapshot", "click")},
            }
            for key, value in cells[tool].items():
                sums[tool][key].append(value)
        a, b = cells["pagelens_shell"], cells["agent_browser"]
        click = (
            f"{a['click']:,.0f} / {b['click']:,.0f}" if a["click"] == a["click"] and b["click"] == b["click"] else "–"
        )
        act = f"{a['act']:.1%} / {b['act']:.1%}" if a["act"] == a["act"] else "–"
        print(
            f"| {page} | {counts[page]:,} | {a['open']:,.0f} / {b['open']:,.0f} | {a['snapshot']:,.0f} / {b['snapshot']:,.0f} | "
            f"{click} | {a['tokens']:,.0f} / {b['tokens']:,.0f} | {a['texts']:.1%} / {b['texts']:.1%} | {act} |"
        )

    def med(tool: str, key: str) -> float:
        values = [v for v in sums[tool][key] if v == v]
        return statistics.median(values) if values else float("nan")

    print("\n| | pagelens browser | agent-browser | pagelens / agent-browser |")
    print("| --- | ---: | ---: | ---: |")
    for key, label in (
        ("open", "open (ms, median)"),
        ("snapshot", "snapshot (ms, median)"),
        ("click", "click (ms, median)"),
    ):
        x, y = med("pagelens_shell", key), med("agent_browser", key)
        print(f"| {label} | {x:,.0f} | {y:,.0f} | {x / y:.2f}× |")
    # A step an agent can read the page after: pagelens' click prints what changed; agent-browser's
    # says "Done", and its page is a second command.
    steps = [
        (a, b + c)
        for a, b, c in zip(
            sums["pagelens_shell"]["click"],
            sums["agent_browser"]["click"],
            sums["agent_browser"]["snapshot"],
            strict=True,
        )
        if a == a and b == b
    ]
    if steps:
        x, y = statistics.median(a for a, _ in steps), statistics.median(b for _, b in steps)
        print(
            f"| click, then the page (agent-browser: click + snapshot) (ms, median) | {x:,.0f} | {y:,.0f} | {x / y:.2f}× |"
        )
    x, y = sum(sums["pagelens_shell"]["tokens"]), sum(sums["agent_browser"]["tokens"])
    print(f"| snapshot tokens (GPT-2, sum) | {x:,.0f} | {y:,.0f} | {x / y:.2f}× |")
    for key, label in (("texts", "texts kept (mean)"), ("act", "actionables kept with an id (mean)")):
        xs = [v for v in sums["pagelens_shell"][key] if v == v]
        ys = [v for v in sums["agent_browser"][key] if v == v]
        print(f"| {label} | {statistics.mean(xs):.1%} | {statistics.mean(ys):.1%} | |")
    if skipped:
        print(f"\nLeft out (a tool could not open the page here): {', '.join(skipped)}.")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", type=int, default=15, help="corpus pages, spread over the size range")
    parser.add_argument("--shell", action="store_true", help="the shell CLIs: pagelens browser against agent-browser")
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
    if args.shell:
        report_shell(pages, counts, args.runs)
        return
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
