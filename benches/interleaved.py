"""Two builds of pagelens timed against each other, interleaved: on a VM whose speed moves by
up to 2x within an hour, a change is only measured fairly when the two builds alternate in
fresh interpreters and the best of each is kept.

    cp -r python/pagelens /tmp/before/          # with the old build's _core in it
    ... rebuild ...
    cp -r python/pagelens /tmp/after/
    python benches/interleaved.py /tmp/before /tmp/after [--rounds 4]

Each folder holds a `pagelens` package (the Python sources and their `_core`). Measured on
the prep bench's workflow pages (one step per page): counting the raw HTML in the three
encodings, parsing it, chunking the cleaned pages, and the whole prep transform. Prints Markdown."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

# Run in the child interpreter, with one build first on its path: prints the best of 5 passes.
CHILD = r"""
import sys, time
from pathlib import Path
from pagelens import Dom, chunk, load_tokenizer
from pagelens.datasets import PrepConfig, read_workflows
from pagelens.datasets.transform import Transformer

what, data = sys.argv[1], Path(sys.argv[2]).read_bytes()
workflows, _ = read_workflows("steps.jsonl", data)
pages = [w.steps[0].html for w in workflows]
if what == "transform":
    transformer = Transformer(PrepConfig(max_tokens=4096))
    run = lambda: [transformer.workflow(w) for w in workflows]
elif what == "parse":
    run = lambda: [Dom.parse(h) for h in pages]
elif what == "chunk":
    tok = load_tokenizer("gpt2")
    cleaned = [Dom.parse(h).clean("scribe", tokenizer=tok).html() for h in pages]
    run = lambda: [chunk(h, 4096, tok, kind="dom") for h in cleaned]
else:
    tok = load_tokenizer(what)
    run = lambda: [tok.count(h) for h in pages]
best = float("inf")
for _ in range(5):
    t = time.perf_counter()
    run()
    best = min(best, time.perf_counter() - t)
print(best)
"""

MEASURES = {
    "r50k_base": "count raw HTML, r50k_base",
    "cl100k_base": "count raw HTML, cl100k_base",
    "o200k_base": "count raw HTML, o200k_base",
    "parse": "parse the raw HTML",
    "chunk": "chunk the cleaned pages to 4,096 GPT-2 tokens",
    "transform": "the whole prep transform (every step)",
}


def timed(build: Path, what: str, data: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(build)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, what, str(data)], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        sys.exit(f"{build}: {what} failed:\n{out.stderr}")
    return float(out.stdout.strip())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--only", nargs="+", choices=list(MEASURES), help="these measures (default: all)")
    args = ap.parse_args()
    for build in (args.before, args.after):
        if not (build / "pagelens" / "__init__.py").exists():
            sys.exit(f"{build} holds no pagelens package (copy python/pagelens there with its _core)")
    from support.workflow_data import build_dataset

    with tempfile.TemporaryDirectory(prefix="interleaved-") as work:
        build_dataset(Path(work), n_pages=1000, steps=2, broken=False)
        data = Path(work) / "steps.jsonl"
        print("| what (one thread) | before | after | speed-up |")
        print("|---|---:|---:|---:|")
        for what, label in MEASURES.items():
            if args.only and what not in args.only:
                continue
            best = {args.before: float("inf"), args.after: float("inf")}
            for _ in range(args.rounds):
                for build in best:
                    best[build] = min(best[build], timed(build, what, data))
            before, after = best[args.before], best[args.after]
            print(f"| {label} | {before:.3f} s | {after:.3f} s | {before / after:.2f}x |")


if __name__ == "__main__":
    main()
