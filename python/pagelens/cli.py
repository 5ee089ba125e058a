"""The ``pagelens`` command line."""

from __future__ import annotations

import argparse
import gzip
import os
import sys
from pathlib import Path

from pagelens import AXTree, AXTreeError, Dom, Tokenizer, chunk
from pagelens.corpus import BUILTIN_NAME, builtin_page


def _read_source(source: str | None) -> tuple[bytes, str]:
    if source is None:
        return builtin_page(), f"built-in page {BUILTIN_NAME!r}"
    path = Path(source)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {source}")
    data = path.read_bytes()
    if path.suffix == ".gz" or data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return data, str(path)


def _stats(tree: AXTree, label: str, tokenizer: str) -> str:
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
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _is_live(source: str | None) -> bool:
    if source is None:
        return False
    if "://" in source:
        return True
    return Path(source).suffix.lower() in (".html", ".htm", ".xhtml")


def _observe_live(source: str, args: argparse.Namespace) -> tuple[AXTree, str, str]:
    """Open a URL or a local .html file in Chromium; returns the tree, a label and a header."""
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
        settle_ms=args.wait_ms,
        allowed_hosts=(*allowed, *_own_host(url)) if allowed else None,
        navigation_timeout_ms=args.timeout * 1000,
    ) as env:
        obs = env.reset(url)
        assert obs is not None
        header = f"# {obs.title} <{obs.url}>"
        extra = obs.header()
        if extra:
            header += "\n" + extra
        for error in obs.frame_errors:
            print(f"pagelens: warning: {error}", file=sys.stderr)
        return obs.tree, obs.url, header


def _own_host(url: str) -> tuple[str, ...]:
    from pagelens.browser import HostAllowList

    return HostAllowList.for_start_url(url).hosts


def _observe(args: argparse.Namespace) -> int:
    header = None
    if _is_live(args.source):
        tree, label, header = _observe_live(args.source, args)
    else:
        data, label = _read_source(args.source)
        tree = AXTree.from_cdp(data)
    if args.stats:
        print(_stats(tree, label, args.tokenizer))
        return 0
    obs = tree.render(args.mode, max_tokens=args.max_tokens, tokenizer=args.tokenizer, show_urls=args.show_urls)
    if header and args.header:
        print(header)
    print(obs.text)
    return 0


def _clean(args: argparse.Namespace) -> int:
    path = Path(args.file)
    data = path.read_bytes()
    if path.suffix == ".gz" or data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    tokenizer = Tokenizer.from_file(args.tokenizer) if args.tokenizer.endswith(".json") else Tokenizer(args.tokenizer)
    dom = Dom.parse(data, encoding=args.encoding)
    cleaned = dom.clean(args.profile, tokenizer=tokenizer)
    before = tokenizer.count(dom.html())
    html = cleaned.html()
    after = tokenizer.count(html)
    if args.max_tokens:
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


def _eval(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from pagelens.evaluation import Grader, Harness, SiteConfig, find_outcomes, format_table, load_tasks, site_table

    tasks = {t.task_id: t for t in load_tasks(args.tasks, rectified=args.variant == "rectified")}
    outcomes, problems = find_outcomes(args.runs)
    for problem in problems:
        print(f"pagelens: skipped: {problem}", file=sys.stderr)
    grader = None
    if args.grader_model or os.environ.get("PAGELENS_GRADER_MODEL"):
        from pagelens.llm import LLMClient

        grader = Grader(LLMClient(model=args.grader_model or os.environ["PAGELENS_GRADER_MODEL"],
                                  base_url=args.grader_base_url, cache_dir=args.grader_cache))
    harness = Harness(tasks, variant=args.variant, combine=args.combine, grader=grader,
                      sites=SiteConfig.load(args.sites), auth_dir=args.auth_dir)

    async def run() -> list:
        try:
            return [await harness.score(o) for o in outcomes]
        finally:
            await harness.close()

    scores = asyncio.run(run())
    table = site_table(scores)
    report = {"variant": args.variant, "combine": args.combine, "tasks_file": str(args.tasks),
              "table": table, "runs": [s.as_dict() for s in scores]}
    if args.json:
        from pagelens._io import write_atomically

        write_atomically(args.json, json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"variant: {args.variant}, combine: {args.combine}, {len(scores)} runs")
    print(format_table(table))
    for s in scores:
        if not s.scored:
            print(f"not scored: task {s.task_id} ({s.source}): {s.reason}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pagelens", description="What an LLM web agent should read.")
    sub = parser.add_subparsers(dest="command", required=True)
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
    observe.add_argument("--mode", choices=["occam", "webarena"], default="occam")
    observe.add_argument("--stats", action="store_true", help="print node, line and token counts of both modes")
    observe.add_argument("--max-tokens", type=int, default=None, help="cut the text to this many tokens")
    observe.add_argument("--tokenizer", default="gpt2", help="gpt2 (default), cl100k_base or o200k_base")
    observe.add_argument("--show-urls", action="store_true", help="print links' URLs in occam form")
    live = observe.add_argument_group("live pages (a URL or an .html file)")
    live.add_argument("--allow-host", action="append", default=[], metavar="HOST",
                      help="also allow navigation to HOST (repeatable; the page's own host always is)")
    live.add_argument("--wait-ms", type=float, default=500, help="quiet time after load before observing")
    live.add_argument("--timeout", type=float, default=30, help="seconds to wait for the page to load")
    live.add_argument("--no-frames", action="store_true", help="leave iframes' content out")
    live.add_argument("--no-header", dest="header", action="store_false", help="omit the title/URL line")
    observe.set_defaults(func=_observe)
    clean = sub.add_parser(
        "clean",
        help="clean an HTML page for a model (ScribeAgent-style) and show the token savings",
        description="Parse HTML, give every element a node id, clean it with a profile, print the "
        "result (or its chunks with --max-tokens); token counts before/after go to stderr.",
    )
    clean.add_argument("file", help="an .html (or .html.gz) file")
    clean.add_argument("--profile", choices=["scribe", "minimal"], default="scribe")
    clean.add_argument("--max-tokens", type=int, default=None, help="print chunks of at most this many tokens")
    clean.add_argument("--from-end", action="store_true", help="pack chunks from the end of the page")
    clean.add_argument("--tokenizer", default="gpt2", help="gpt2, cl100k_base, o200k_base or a tokenizer.json")
    clean.add_argument("--encoding", default=None, help="override the page's declared encoding")
    clean.set_defaults(func=_clean)
    ev = sub.add_parser(
        "eval",
        help="score saved runs with WebArena's evaluators and print per-site success rates",
        description="Score trajectories (a .jsonl run, a .json {task_id, answer, final_url}, or a folder of "
        "them) against WebArena task configs. Tasks that need a live site, a login or a grader this run "
        "does not have are reported as not scored.",
    )
    ev.add_argument("runs", metavar="TRAJECTORY_OR_DIR")
    ev.add_argument("--tasks", required=True, help="task JSON (file or folder), or 'webarena' / 'webarena-verified'")
    ev.add_argument("--variant", choices=["original", "rectified"], default="original",
                    help="WebArena's evaluators, or AgentOccam's rectified ones")
    ev.add_argument("--combine", choices=["all", "mean"], default="all",
                    help="all checks must pass (WebArena) or their mean (BrowserGym)")
    ev.add_argument("--sites", help="JSON mapping placeholders (__GITLAB__...) or site names to URLs")
    ev.add_argument("--auth-dir", help="folder of Playwright storage states for logged-in checks")
    ev.add_argument("--grader-model", help="model for fuzzy_match/ua_match (or PAGELENS_GRADER_MODEL)")
    ev.add_argument("--grader-base-url", help="OpenAI-compatible endpoint (or OPENAI_BASE_URL)")
    ev.add_argument("--grader-cache", help="folder caching the grader's replies")
    ev.add_argument("--json", help="also write the full report (every run's checks) to this file")
    ev.set_defaults(func=_eval)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        # `pagelens observe | head`: the reader left; not an error.
        sys.stdout = None
        return 0
    except (AXTreeError, ValueError, OSError) as e:
        print(f"pagelens: error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        # The browser's failures (a page that does not load...) are the user's to fix, not a bug.
        if type(e).__module__.startswith("playwright"):
            print(f"pagelens: error: {str(e).splitlines()[0]}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
