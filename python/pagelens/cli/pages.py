"""``observe`` and ``clean``: a page as a model reads it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pagelens
from pagelens import AXTree, Dom, chunk, load_tokenizer, settle
from pagelens._core import escape_page_text
from pagelens.browser.config import OBSERVATION_SOURCES, SOURCE_HELP
from pagelens.cli.common import choices_help, own_host, read_file
from pagelens.cli.types import host_entry
from pagelens.corpus import BUILTIN_NAME, builtin_page


def _read_source(source: str | None) -> tuple[bytes, str]:
    if source is None:
        return builtin_page(), f"built-in page {BUILTIN_NAME!r}"
    return read_file(Path(source)), source


def _stats(tree: AXTree, label: str, tokenizer: str, timings: dict[str, float] | None = None) -> str:
    occam = tree.render("occam", tokenizer=tokenizer)
    webarena = tree.render("webarena", tokenizer=tokenizer)
    reduction = 1 - occam.token_count / webarena.token_count if webarena.token_count else 0.0
    rows = [
        ("source", label),
        ("nodes", f"{len(tree):,}"),
        ("frames", f"{len(tree.frames)}"),
        ("webarena lines", f"{webarena.line_count:,}"),
        ("webarena tokens", f"{webarena.token_count:,} ({tokenizer})"),
        ("occam lines", f"{occam.line_count:,}"),
        ("occam tokens", f"{occam.token_count:,} ({tokenizer})"),
        ("action targets", f"{len(occam.ids):,}"),
        ("reduction", f"{reduction:.1%} fewer tokens in occam form"),
    ]
    rows += [(f"time {stage}", f"{ms:.1f} ms") for stage, ms in (timings or {}).items()]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _is_live(source: str | None) -> bool:
    if source is None:
        return False
    if "://" in source:
        return True
    return Path(source).suffix.lower() in (".html", ".htm", ".xhtml")


def _observe_live(source: str, args: argparse.Namespace) -> tuple[AXTree, str, str, dict[str, float]]:
    """Open a URL or a local .html file in Chromium; returns the tree, a label, a header and
    the observation's timings."""
    from pagelens.browser import BrowserEnv

    if "://" in source:
        url = source
    else:
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"no such file: {source}")
        url = path.resolve().as_uri()
    allowed = tuple(args.allow_host) or None
    with BrowserEnv(
        mode=args.mode,
        include_frames=not args.no_frames,
        source=args.reader,
        settle_ms=args.wait_ms,
        allowed_hosts=(*allowed, *own_host(url)) if allowed else None,
        navigation_timeout_ms=args.timeout * 1000,
    ) as env:
        obs = env.reset(url)
        assert obs is not None
        header = escape_page_text(f"# {obs.title} <{obs.url}>")
        extra = obs.header()
        if extra:
            header += "\n" + extra
        for error in obs.frame_errors:
            print(f"pagelens: warning: {error}", file=sys.stderr)
        for note in obs.notes:  # read another way than asked (a closed shadow root), and why
            print(f"pagelens: note: {note}", file=sys.stderr)
        return obs.tree, obs.url, header, dict(obs.timings_ms)


def _observe(args: argparse.Namespace) -> int:
    header = None
    timings: dict[str, float] = {}
    if _is_live(args.source):
        tree, label, header, timings = _observe_live(args.source, args)
    else:
        data, label = _read_source(args.source)
        tree = AXTree.from_cdp(data)
    if args.stats:
        print(_stats(tree, label, args.tokenizer, timings))
        return 0
    obs = tree.render(args.mode, max_tokens=args.max_tokens, tokenizer=args.tokenizer, show_urls=args.show_urls)
    if header and args.header:
        print(header)
    print(obs.text)
    return 0


def _clean(args: argparse.Namespace) -> int:
    path = Path(args.file)
    data = read_file(path)
    tokenizer = load_tokenizer(args.tokenizer)
    dom = Dom.parse(data, encoding=args.encoding)
    cleaned = dom.clean(args.profile, tokenizer=tokenizer)
    before = tokenizer.count(dom.html())
    html = cleaned.html()
    after = tokenizer.count(html)
    if args.max_tokens is not None:
        chunks = chunk(html, args.max_tokens, tokenizer=tokenizer, kind="dom", from_end=args.from_end)
        for i, c in enumerate(chunks):
            flag = ", oversized" if c.oversized else ""
            print(f"<!-- chunk {i + 1}/{len(chunks)}: {c.token_count} tokens, {len(c.node_ids)} elements{flag} -->")
            print(c.text)
    else:
        print(html)
    print(
        f"{path.name}: {len(dom)} elements -> {len(cleaned)}; {before:,} -> {after:,} tokens "
        f"({tokenizer.name}, profile {args.profile})",
        file=sys.stderr,
    )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    observe = sub.add_parser(
        "observe",
        help="render a page's accessibility tree as agent text",
        description="Render a page for a model: a live URL or a local .html file (opened in "
        "Chromium, every frame included), or a saved CDP accessibility tree (.json or .json.gz); "
        "with no SOURCE, a real page shipped inside the package.",
    )
    observe.add_argument(
        "source", nargs="?", help="a URL, an .html file, or an Accessibility.getFullAXTree result (.json, .json.gz)"
    )
    observe.add_argument("--mode", choices=pagelens.RENDER_MODES, default=pagelens.RENDER_MODES[0])
    observe.add_argument("--stats", action="store_true", help="print node, line and token counts of both modes")
    observe.add_argument("--max-tokens", type=int, default=None, help="cut the text to this many tokens")
    observe.add_argument("--tokenizer", default=pagelens.DEFAULT_TOKENIZER, help=choices_help(pagelens.TOKENIZERS))
    observe.add_argument("--show-urls", action="store_true", help="print links' URLs in occam form")
    live = observe.add_argument_group("live pages (a URL or an .html file)")
    live.add_argument(
        "--allow-host",
        action="append",
        type=host_entry,
        default=[],
        metavar="HOST",
        help="also allow navigation to HOST (repeatable; the page's own host always is)",
    )
    live.add_argument(
        "--wait-ms",
        type=float,
        default=settle.FIRST_LOOK_MS,
        help="the most time waited after load for the page to go quiet before observing",
    )
    live.add_argument("--timeout", type=float, default=30, help="seconds to wait for the page to load")
    live.add_argument("--no-frames", action="store_true", help="leave iframes' content out")
    # Its own name: the page to read is the positional `source`, and one name for both made the
    # URL the reader (every live page was read from Chromium's tree) and `--source ax` the page.
    live.add_argument(
        "--source", dest="reader", choices=OBSERVATION_SOURCES, default=OBSERVATION_SOURCES[0], help=SOURCE_HELP
    )
    live.add_argument("--no-header", dest="header", action="store_false", help="omit the title/URL line")
    observe.set_defaults(func=_observe)

    clean = sub.add_parser(
        "clean",
        help="clean an HTML page for a model (ScribeAgent-style) and show the token savings",
        description="Parse HTML, give every element a node id, clean it with a profile, print the "
        "result (or its chunks with --max-tokens); token counts before/after go to stderr.",
    )
    clean.add_argument("file", help="an .html (or .html.gz) file")
    clean.add_argument("--profile", choices=pagelens.CLEAN_PROFILES, default=pagelens.CLEAN_PROFILES[0])
    clean.add_argument("--max-tokens", type=int, default=None, help="print chunks of at most this many tokens")
    clean.add_argument("--from-end", action="store_true", help="pack chunks from the end of the page")
    clean.add_argument(
        "--tokenizer",
        default=pagelens.DEFAULT_TOKENIZER,
        help=choices_help(pagelens.TOKENIZERS) + " or a tokenizer.json",
    )
    clean.add_argument("--encoding", default=None, help="override the page's declared encoding")
    clean.set_defaults(func=_clean)
