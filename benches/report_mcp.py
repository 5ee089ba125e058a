"""Tokens an MCP client reads per action: `pagelens mcp`'s incremental answers (the default: what
changed) against full answers (`--snapshot-mode full`, as Playwright MCP answers every action),
over the same scripted multi-step episodes, through a real MCP client over stdio, in one run.

Episodes (each the same actions in both modes, the modes interleaved episode by episode):

- corpus pages served live: open, hover over the first 4 links or buttons, scroll down twice,
  scroll up, type into the first text field (when there is one);
- the test sites: a form (type, choose, tick, pick, press), a menu opened and used, a page of
  widgets (fill a form, drag, double click);
- MiniWoB++ tasks, solved by the scripted policy of the tests (it reads a full snapshot before
  each action; those reads are not counted in either mode).

Counted: the tokens (cl100k_base) of every action's answer, not the first navigation (a whole
page in both modes).

    python benches/report_mcp.py [--pages 20] > /tmp/mcp.md

Prints Markdown for benches/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import platform
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

from pagelens._core import count_tokens  # noqa: E402
from pagelens.actions import parse_action  # noqa: E402
from support.miniwob_policy import next_action  # noqa: E402
from support.site_server import SiteServer  # noqa: E402

CORPUS = ROOT / "tests" / "corpus"
MINIWOB = Path(__import__("miniwob").__file__).parent / "html" / "miniwob"
TASKS = ["click-test", "click-button", "click-link", "focus-text", "enter-text", "choose-list", "click-checkboxes"]
MODES = ("full", "incremental")


def ids(text: str, roles: str) -> list[str]:
    return re.findall(rf"(?:{roles}) \*?\[(\d+)\]", text)


def ref(text: str, role: str, name: str) -> str:
    found = re.search(rf"{role} \*?\[(\d+)\] '[^'\n]*{re.escape(name)}", text)
    if found is None:
        raise AssertionError(f"no {role} {name!r}")
    return found.group(1)


class Client:
    """One server process in one snapshot mode; counts the tokens of every action's answer."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.tokens = 0
        self.actions = 0

    async def call(self, tool: str, counted: bool = True, **arguments: object) -> str:
        result = await self.session.call_tool(tool, arguments)
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        if result.is_error:
            raise AssertionError(f"{tool} {arguments}: {text}")
        if counted:
            self.tokens += count_tokens(text, "cl100k_base")
            self.actions += 1
        return text


async def corpus_episode(c: Client, url: str) -> None:
    page = await c.call("browser_navigate", counted=False, url=url)
    for target in ids(page, "link|button")[:4]:
        try:
            await c.call("browser_hover", ref=target)
        except AssertionError:
            pass  # a hidden or covered element: the same refusal in both modes, not counted
    for direction in ("down", "down", "up"):
        await c.call("browser_scroll", direction=direction)
    fields = ids(page, "textbox|searchbox")
    if fields:
        try:
            await c.call("browser_type", ref=fields[0], text="pagelens")
        except AssertionError:
            pass


async def sites_episode(c: Client, site: SiteServer) -> None:
    page = await c.call("browser_navigate", counted=False, url=site.url("site/form.html"))
    await c.call("browser_type", ref=ref(page, "textbox", "Notes"), text="a note")
    await c.call("browser_select_option", ref=ref(page, "combobox", "Colour"), values=["Green"])
    await c.call("browser_click", ref=ref(page, "checkbox", "I agree"))
    await c.call("browser_click", ref=ref(page, "", "Banana"))  # an option, printed in its listbox
    await c.call("browser_type", ref=ref(page, "textbox", "Key catcher"), text="k")
    await c.call("browser_press_key", key="Control+a")
    page = await c.call("browser_navigate", counted=False, url=site.url("site/menu.html"))
    opened = await c.call("browser_click", ref=ref(page, "button", "Open menu"))
    await c.call("browser_hover", ref=ref(opened, "", "Rename"))  # an item, printed in its menu
    page = await c.call("browser_navigate", counted=False, url=site.url("site/tools.html"))
    await c.call(
        "browser_fill_form",
        fields=[
            {"name": "First name", "type": "textbox", "ref": ref(page, "textbox", "First name"), "value": "Ada"},
            {"name": "Pro", "type": "radio", "ref": ref(page, "radio", "Pro"), "value": "true"},
        ],
    )
    await c.call("browser_drag", startRef=ref(page, "clickable", "Drag me"), endRef=ref(page, "clickable", "Drop here"))
    await c.call("browser_click", ref=ref(page, "button", "Click me twice"), doubleClick=True)


async def miniwob_episode(c: Client, task: str) -> None:
    await c.call("browser_navigate", counted=False, url=(MINIWOB / f"{task}.html").as_uri())
    for _ in range(8):
        page = await c.call("browser_snapshot", counted=False)  # the policy's view, in both modes
        reward = re.search(r"text 'Last reward:'\n\t+text '([^']+)'", page)
        if reward and reward.group(1) != "-":
            return
        start = re.search(r"\[(\d+)\] 'START'", page)
        if start:
            await c.call("browser_click", ref=start.group(1))
            continue
        query = re.search(r"clickable \*?\[\d+\]\n\t+text '([^']+)'", page)
        action = parse_action(next_action(query.group(1) if query else "", page))
        if action.kind == "type":
            await c.call("browser_type", ref=str(action.target), text=action.text or "", submit=action.press_enter)
        else:
            await c.call("browser_click", ref=str(action.target))


async def run(mode: str, episode: object, *args: object) -> tuple[int, int]:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "pagelens",
            "mcp",
            "--snapshot-mode",
            mode,
            "--allow-file",
            str(MINIWOB),
            "--max-tokens",
            "10000000",
        ],
    )
    async with stdio_client(params) as streams, ClientSession(*streams) as session:
        await session.initialize()
        client = Client(session)
        await episode(client, *args)  # type: ignore[operator]
        return client.tokens, client.actions


def pick_pages(n: int) -> list[str]:
    sizes = {
        p.name: len(json.loads(gzip.decompress((p / "axtree.json.gz").read_bytes()))["nodes"])
        for p in sorted(CORPUS.iterdir())
        if (p / "axtree.json.gz").exists()
    }
    ordered = sorted(sizes, key=sizes.get)  # type: ignore[arg-type]
    step = max(1, len(ordered) // n)
    return ordered[::step][:n]


async def measure(pages: int) -> tuple[list[tuple[str, dict[str, tuple[int, int]]]], list[str]]:
    site = SiteServer()
    rows = []
    skipped: list[str] = []
    try:
        episodes: list[tuple[str, object, tuple[object, ...]]] = [("test sites", sites_episode, (site,))]
        episodes += [(f"MiniWoB++ {t}", miniwob_episode, (t,)) for t in TASKS]
        episodes += [(f"corpus {p}", corpus_episode, (site.url(f"corpus/{p}/"),)) for p in pick_pages(pages)]
        for i, (name, episode, args) in enumerate(episodes):
            counts: dict[str, tuple[int, int]] = {}
            try:
                for mode in MODES if i % 2 == 0 else reversed(MODES):
                    counts[mode] = await run(mode, episode, *args)
            except Exception as e:  # a page that does not open here (noted, left out of both modes)
                cause: BaseException = e
                while getattr(cause, "exceptions", None):  # the MCP client's task groups
                    cause = cause.exceptions[0]  # type: ignore[attr-defined]
                print(f"{name}: left out ({str(cause)[:200]})", file=sys.stderr)
                skipped.append(name)
                continue
            rows.append((name, counts))
            print(f"{name}: {counts}", file=sys.stderr)
    finally:
        site.close()
    return rows, skipped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=20, help="corpus pages, spread over the size range")
    args = parser.parse_args()
    rows, skipped = asyncio.run(measure(args.pages))
    print(
        f"Machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}; "
        "tokens are cl100k_base, of every action's answer (the first navigation of a page not counted).\n"
    )
    print("| episode | actions | full answers (tokens) | incremental answers (tokens) | incremental / full |")
    print("| --- | ---: | ---: | ---: | ---: |")
    ratios = []
    totals = {m: 0 for m in MODES}
    for name, counts in rows:
        full, incremental = counts["full"][0], counts["incremental"][0]
        totals["full"] += full
        totals["incremental"] += incremental
        ratios.append(incremental / full if full else 1.0)
        print(f"| {name} | {counts['full'][1]} | {full:,} | {incremental:,} | {ratios[-1]:.2f} |")
    print(
        f"| **all {len(rows)} episodes** | | **{totals['full']:,}** | **{totals['incremental']:,}** | "
        f"**{totals['incremental'] / totals['full']:.2f}** (median per episode {statistics.median(ratios):.2f}) |"
    )
    if skipped:
        print(f"\nLeft out (the page did not open here, in either mode): {', '.join(skipped)}.")


if __name__ == "__main__":
    main()
