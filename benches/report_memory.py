"""Peak memory per MB of input, for the AX path (parse + both renders) and the DOM path
(parse + clean + serialize), each measurement in a fresh process so that its peak is its own.

Inputs: the five largest corpus pages of each kind, every corpus AX tree merged into one
payload (ids renumbered; about 70 MB), and a dense generated page (13 MB, 1M nodes).

    python benches/report_memory.py
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from corpus import CORPUS

# Runs in the child: reads the input, notes the resident size, runs the path, reports the peak.
_CHILD = r"""
import sys, pagelens
def rss(): return int(open('/proc/self/statm').read().split()[1]) * 4096
def high_water():  # VmHWM is this process's own (ru_maxrss would count a forking parent's)
    line = next(l for l in open('/proc/self/status') if l.startswith('VmHWM:'))
    return int(line.split()[1]) * 1024
pagelens.count_tokens('x')  # the tokenizer's tables (17 MB for GPT-2) are a fixed cost, not per MB
data = open(sys.argv[2], 'rb').read()
base = rss()
if sys.argv[1] == 'ax':
    tree = pagelens.AXTree.from_cdp(data)
    out = len(tree.render('occam').text) + len(tree.render('webarena').text)
else:
    dom = pagelens.Dom.parse(data)
    out = len(dom.clean().html()) + len(dom.html())
held = rss() - base
peak = high_water() - base
print(held, peak, out)
"""


def measure(kind: str, path: Path) -> tuple[float, float]:
    """(peak MB per input MB, held MB per input MB) of one run in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", _CHILD, kind, str(path)], check=True, capture_output=True, text=True)
    held, peak, _ = (int(x) for x in out.stdout.split())
    size = path.stat().st_size
    return peak / size, held / size


def merged_axtree(folder: Path) -> Path:
    """Every corpus AX tree under one root, node and DOM ids renumbered apart."""
    nodes: list[dict] = [{"nodeId": "1", "role": {"value": "RootWebArea"}, "name": {"value": "all"}, "childIds": []}]
    for k, page in enumerate(sorted(CORPUS.glob("*/axtree.json.gz")), start=1):
        base = k * 10**7
        for n in json.loads(gzip.decompress(page.read_bytes()))["nodes"]:
            n["nodeId"] = str(base + int(n["nodeId"]))
            n["childIds"] = [str(base + int(c)) for c in n.get("childIds", [])]
            if "backendDOMNodeId" in n:
                n["backendDOMNodeId"] += base
            if "parentId" in n:
                n["parentId"] = str(base + int(n["parentId"]))
            else:  # a page's root hangs under the merged root
                n["parentId"] = "1"
                n["role"] = {"value": "generic"}
                n.pop("frameId", None)
                nodes[0]["childIds"].append(n["nodeId"])
            nodes.append(n)
    path = folder / "merged.axtree.json"
    path.write_text(json.dumps({"nodes": nodes}))
    return path


def dense_page(folder: Path) -> Path:
    cells = "".join(f'<div class="c{i % 7}"><span>x{i}</span><a href="/p/{i}">l</a></div>' for i in range(200_000))
    path = folder / "dense.html"
    path.write_text(f"<html><body>{cells}</body></html>")
    return path


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs: list[tuple[str, str, Path]] = []
        for kind, name in (("ax", "axtree.json.gz"), ("dom", "dom.html.gz")):
            pages = sorted(CORPUS.glob(f"*/{name}"), key=lambda p: p.stat().st_size, reverse=True)[:5]
            for page in pages:
                path = folder / f"{page.parent.name}.{kind}"
                path.write_bytes(gzip.decompress(page.read_bytes()))
                inputs.append((kind, page.parent.name, path))
        inputs.append(("ax", "all 100 AX trees merged", merged_axtree(folder)))
        inputs.append(("dom", "dense generated page (1M nodes)", dense_page(folder)))
        print("| path | input | MB | peak MB per input MB | held MB per input MB |")
        print("| --- | --- | ---: | ---: | ---: |")
        for kind, label, path in inputs:
            peak, held = measure(kind, path)
            print(f"| {kind} | {label} | {path.stat().st_size / 1e6:.1f} | {peak:.1f} | {held:.1f} |")


if __name__ == "__main__":
    main()
