"""The ``pagelens`` command line."""

from __future__ import annotations

import argparse
import gzip
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


def _observe(args: argparse.Namespace) -> int:
    data, label = _read_source(args.source)
    tree = AXTree.from_cdp(data)
    if args.stats:
        print(_stats(tree, label, args.tokenizer))
        return 0
    obs = tree.render(args.mode, max_tokens=args.max_tokens, tokenizer=args.tokenizer, show_urls=args.show_urls)
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pagelens", description="What an LLM web agent should read.")
    sub = parser.add_subparsers(dest="command", required=True)
    observe = sub.add_parser(
        "observe",
        help="render a page's accessibility tree as agent text",
        description="Render a saved CDP accessibility tree (.json or .json.gz); "
        "with no SOURCE, a real page shipped inside the package.",
    )
    observe.add_argument("source", nargs="?", help="Accessibility.getFullAXTree result (.json, .json.gz)")
    observe.add_argument("--mode", choices=["occam", "webarena"], default="occam")
    observe.add_argument("--stats", action="store_true", help="print node, line and token counts of both modes")
    observe.add_argument("--max-tokens", type=int, default=None, help="cut the text to this many tokens")
    observe.add_argument("--tokenizer", default="gpt2", help="gpt2 (default), cl100k_base or o200k_base")
    observe.add_argument("--show-urls", action="store_true", help="print links' URLs in occam form")
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


if __name__ == "__main__":
    sys.exit(main())
