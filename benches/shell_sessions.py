"""Many shell sessions on one machine: N `pagelens browser` sessions at once, every command a
process of its own as a shell agent runs them, measured from outside.

Each session, all at once (a thread each): opens a page of 200 paragraphs with a text field and
a link, reads it, types into the field and clicks the link by the ids it read. Measured: errors;
the first command's time (it starts the session); later commands' (p50/p95); the memory (PSS) of
every process the sessions run on (daemons, drivers, browsers, renderers) with every session on
its page, per session; how many Chromium browsers and session processes serve them.

    python benches/shell_sessions.py [--sessions 8] > /tmp/shell.md
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.processes import browsers_below, daemon_pids  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

sys.path.insert(0, str(ROOT / "benches"))
from report_sessions import pct, pss_mb  # noqa: E402


def measure(count: int, site: SiteServer) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        runtime = Path(tmp)
        os.chmod(runtime, 0o700)
        env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
        env.pop("PAGELENS_SESSION", None)

        def shell(*args: str) -> tuple[float, str, int]:
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "pagelens", "browser", *args],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp,
                timeout=600,
            )
            return time.perf_counter() - t0, proc.stdout, proc.returncode

        page = site.url("site/paragraphs.html")
        out: dict = {"first": [], "later": [], "errors": 0}

        def session(i: int) -> None:
            name = f"s{i}"
            took, text, code = shell("open", page, "--session", name)
            out["first"].append(took)
            field = re.search(r"textbox \*?\[(\d+)\]", text)
            link = re.search(r"link \*?\[(\d+)\] 'Next page'", text)
            if code or field is None or link is None:
                out["errors"] += 1
                return
            for args in (("snapshot",), ("type", field.group(1), "many sessions"), ("click", link.group(1))):
                took, _, code = shell(*args, "--session", name)
                out["later"].append(took)
                out["errors"] += code != 0

        with concurrent.futures.ThreadPoolExecutor(count) as pool:
            list(pool.map(session, range(count)))
        roots = daemon_pids(runtime)
        out["pss"] = sum(pss_mb(r) for r in roots)  # each the PSS of its tree
        out["processes"] = len(roots)
        out["browsers"] = sum(len(browsers_below(r)) for r in roots)
        shell("close", "--all")
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="8", help="session counts, comma-separated")
    args = parser.parse_args()
    counts = [int(c) for c in args.sessions.split(",")]
    site = SiteServer()
    rows = []
    try:
        for count in counts:
            rows.append((count, measure(count, site)))
    finally:
        site.close()
    print(
        "| shell sessions | errors | first command p50 / p95 | later commands p50 / p95 | session processes | "
        "Chromium browsers | PSS, all | PSS per session |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for count, r in rows:
        print(
            f"| {count} | {r['errors']} | {pct(r['first'], 0.5):.2f} / {pct(r['first'], 0.95):.2f} s | "
            f"{pct(r['later'], 0.5):.2f} / {pct(r['later'], 0.95):.2f} s | {r['processes']} | {r['browsers']} | "
            f"{r['pss']:.0f} MB | {r['pss'] / count:.0f} MB |"
        )


if __name__ == "__main__":
    main()
