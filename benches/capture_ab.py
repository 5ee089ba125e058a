"""Two versions of the in-page capture (``capture.js``) against each other: the whole pass of
each, in two worlds of one page, interleaved (issue 60, item 6: a change to the walk, measured).

On each page, served live: pagelens reads the page twice (the options its pass is called with,
the other origin's sheets read), then ``before`` and ``after`` are installed in two isolated
worlds of their own and each made to read the whole page (a class toggled on the body and a
rendering frame run before every pass, the answer built in full: no "the same"), in
alternating order, RUNS times; the time is the pass's own, taken inside the page. Both answers'
lengths and hashes are printed: a change meant to keep the output must keep them equal (the
browser tests, with the incremental check on, compare the rows themselves).

    python benches/capture_ab.py [--before HEAD~1] [--after WORKTREE] [--pages wikipedia-2,bbc-1] [--runs 9]

``--before``/``--after``: a git revision, or WORKTREE for the file as it is now.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from pagelens.browser import AsyncBrowserEnv  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

sys.path.insert(0, str(ROOT / "benches"))
from profile_capture import FRAME, WHOLE, whole_capture_call  # noqa: E402

SCRIPT = "python/pagelens/data/capture.js"
PAGES = "wikipedia-2,archive-of-our-own,pixnet,toc-missing,links-in-tables,bbc-1,nytimes-2"


def script_at(revision: str) -> str:
    if revision == "WORKTREE":
        return (ROOT / SCRIPT).read_text(encoding="utf-8")
    return subprocess.run(
        ["git", "show", f"{revision}:{SCRIPT}"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout


async def observed_call(env: AsyncBrowserEnv) -> tuple[Any, str, dict[str, Any]]:
    """The DevTools socket, target and options of ``observe()``'s own capture call, once the
    page's other-origin sheets were read (a first reading asks for them)."""
    await env.observe()
    _, target, params, devtools = await whole_capture_call(env)
    found = re.search(r"\.capture\((\{.*\})\)", params["expression"])
    assert found is not None, params["expression"][:200]
    options = json.loads(found.group(1))
    options["have"] = 0  # an answer in full, never "the same"
    return devtools, target, options


async def page_ab(env: AsyncBrowserEnv, url: str, scripts: dict[str, str], runs: int) -> dict[str, Any]:
    await env.reset(url, observe=False)
    devtools, target, options = await observed_call(env)

    async def call(method: str, params: dict[str, Any]) -> Any:
        return json.loads(await devtools.target_call(target, method, params, 120))["result"]

    # The pass timed, then its answer's length and a hash of it (FNV-1a), outside the time.
    timed = (
        "(() => { const t = performance.now(); const answer = __pagelens.capture(" + json.dumps(options) + ");"
        " const ms = performance.now() - t; const text = typeof answer === 'string' ? answer : JSON.stringify(answer);"
        " let h = 2166136261; for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;"
        " return [ms, text.length + ':' + h.toString(16)]; })()"
    )
    worlds = {}
    for name, source in scripts.items():
        made = await call("Page.createIsolatedWorld", {"frameId": target, "worldName": f"pagelens-ab-{name}"})
        worlds[name] = made["executionContextId"]
        installed = await call("Runtime.evaluate", {"expression": source + "\n;0", "contextId": worlds[name]})
        if "exceptionDetails" in installed:
            raise RuntimeError(f"{name}: {installed['exceptionDetails']}")
    times: dict[str, list[float]] = {name: [] for name in scripts}
    lengths: dict[str, str] = {}
    names = list(scripts)
    for run in range(runs + 1):  # the first round warms both up
        for name in names if run % 2 else names[::-1]:
            await env.page.evaluate(WHOLE)
            await env.page.evaluate(FRAME)
            reply = await call(
                "Runtime.evaluate", {"expression": timed, "contextId": worlds[name], "returnByValue": True}
            )
            ms, length = reply["result"]["value"]
            if run:
                times[name].append(ms)
            lengths[name] = length
    return {name: statistics.median(v) for name, v in times.items()} | {"lengths": lengths}


async def main_async(args: argparse.Namespace) -> None:
    scripts = {"before": script_at(args.before), "after": script_at(args.after)}
    server = SiteServer()
    rows = []
    try:
        async with AsyncBrowserEnv(allowed_hosts=("127.0.0.1",), block_other_hosts=True, settle_ms=300) as env:
            for page in args.pages.split(","):
                rows.append((page, await page_ab(env, server.url(f"corpus/{page}/"), scripts, args.runs)))
    finally:
        server.close()
    print(
        f"`python benches/capture_ab.py --before {args.before} --after {args.after} --runs {args.runs}`: "
        "a whole pass in the page, medians (ms)\n"
    )
    print("| page | before | after | after / before | answer (length:hash) before / after |")
    print("|---|---:|---:|---:|---:|")
    ratios = []
    for page, r in rows:
        ratios.append(r["after"] / r["before"])
        lengths = r["lengths"]
        print(
            f"| {page} | {r['before']:.1f} | {r['after']:.1f} | {ratios[-1]:.2f} "
            f"| {lengths['before']} / {lengths['after']} |"
        )
    print(f"\ngeometric mean after / before: {statistics.geometric_mean(ratios):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="HEAD~1", help="a git revision, or WORKTREE")
    parser.add_argument("--after", default="WORKTREE", help="a git revision, or WORKTREE")
    parser.add_argument("--pages", default=PAGES)
    parser.add_argument("--runs", type=int, default=9)
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
