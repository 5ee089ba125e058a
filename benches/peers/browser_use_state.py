"""browser-use's serialized DOM state of each page, in its own environment (browser-use pins
its own versions of many packages; `make bench` installs it in target/peers-venv).

    target/peers-venv/bin/python benches/peers/browser_use_state.py RUNS URL... > states.jsonl

One JSON line per page: the milliseconds of each `DomService.get_serialized_dom_tree()` (the
CDP calls for the DOM, the snapshot and the AX tree, and its serializer; no screenshot, no
model) after a warm-up, and the text its agent reads (`llm_representation()`).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

os.environ.setdefault("ANONYMIZED_TELEMETRY", "false")
os.environ.setdefault("BROWSER_USE_SETUP_LOGGING", "false")

from browser_use.browser import BrowserProfile, BrowserSession  # noqa: E402
from browser_use.dom.service import DomService  # noqa: E402


async def main(runs: int, urls: list[str]) -> None:
    session = BrowserSession(
        browser_profile=BrowserProfile(
            executable_path=os.environ.get("PAGELENS_CHROMIUM", "/usr/bin/chromium"),
            headless=True,
            chromium_sandbox=False,
            window_size={"width": 1280, "height": 1800},
            enable_default_extensions=False,
            # The pages' other hosts fail at once, as the other tools' browsers refuse them
            # (a sealed machine would otherwise keep the parser waiting on their scripts).
            args=["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
        )
    )
    await session.start()
    try:
        dom = DomService(session)
        for url in urls:
            await session.navigate_to(url)
            await dom.get_serialized_dom_tree()  # warm-up
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                state, _, _ = await dom.get_serialized_dom_tree()
                times.append((time.perf_counter() - t) * 1e3)
            text = state.llm_representation()
            print(json.dumps({"url": url, "ms": times, "text": text, "elements": len(state.selector_map)}), flush=True)
    finally:
        await session.kill()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2:]))
