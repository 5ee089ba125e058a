"""One run, same inputs: pagelens vs BrowserGym over the corpus, and the token table.

    python benches/report_axtree.py > /tmp/axtree.md

Prints Markdown for benches/README.md.
"""

from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from browsergym.utils.obs import flatten_axtree_to_str  # noqa: E402

import pagelens  # noqa: E402
from corpus import ax_payloads  # noqa: E402


def best_of(n: int, fn) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    payloads = ax_payloads()
    total_mb = sum(len(d) for d in payloads.values()) / 1e6

    def browsergym():
        for d in payloads.values():
            flatten_axtree_to_str(json.loads(d))

    def ours(mode):
        def run():
            for d in payloads.values():
                pagelens.AXTree.from_cdp(d).render(mode)

        return run

    def parse_only():
        for d in payloads.values():
            pagelens.AXTree.from_cdp(d)

    t_bg = best_of(3, browsergym)
    t_wa = best_of(10, ours("webarena"))
    t_oc = best_of(10, ours("occam"))
    t_parse = best_of(10, parse_only)

    def loads_only():
        for d in payloads.values():
            json.loads(d)

    t_loads = best_of(3, loads_only)

    # Per page, the largest pages dominate: show the biggest one too.
    big = max(payloads, key=lambda k: len(payloads[k]))
    tb_big = best_of(3, lambda: flatten_axtree_to_str(json.loads(payloads[big])))
    to_big = best_of(10, lambda: pagelens.AXTree.from_cdp(payloads[big]).render())

    print(
        f"Corpus: {len(payloads)} pages, {total_mb:.1f} MB of CDP JSON. "
        f"Machine: {platform.machine()}, Python {platform.python_version()}, best of several runs.\n"
    )
    print("| pipeline (whole corpus) | time | MB/s | vs BrowserGym |")
    print("| --- | ---: | ---: | ---: |")
    print(f"| `json.loads` + BrowserGym `flatten_axtree_to_str` | {t_bg * 1e3:.0f} ms | {total_mb / t_bg:.1f} | 1.0x |")
    print(f"| `json.loads` alone | {t_loads * 1e3:.0f} ms | {total_mb / t_loads:.1f} | {t_bg / t_loads:.1f}x |")
    print(
        f"| `AXTree.from_cdp(bytes)` alone | {t_parse * 1e3:.0f} ms | {total_mb / t_parse:.0f} | {t_bg / t_parse:.0f}x |"
    )
    print(
        f'| `AXTree.from_cdp(bytes)` + `render("webarena")` | {t_wa * 1e3:.0f} ms | {total_mb / t_wa:.0f} | {t_bg / t_wa:.0f}x |'
    )
    print(
        f'| `AXTree.from_cdp(bytes)` + `render("occam")` | {t_oc * 1e3:.0f} ms | {total_mb / t_oc:.0f} | {t_bg / t_oc:.0f}x |'
    )
    print(
        f"\nLargest page `{big}` ({len(payloads[big]) / 1e6:.1f} MB): BrowserGym {tb_big * 1e3:.0f} ms, "
        f"pagelens occam {to_big * 1e3:.1f} ms ({tb_big / to_big:.0f}x).\n"
    )

    rows = []
    for name, d in payloads.items():
        tree = pagelens.AXTree.from_cdp(d)
        wa = tree.render("webarena").token_count
        oc = tree.render("occam").token_count
        bg = pagelens.count_tokens(flatten_axtree_to_str(json.loads(d)))
        rows.append((name, len(tree), bg, wa, oc))
    reductions = [1 - oc / wa for *_, wa, oc in rows if wa]
    tot_bg = sum(r[2] for r in rows)
    tot_wa = sum(r[3] for r in rows)
    tot_oc = sum(r[4] for r in rows)
    print("GPT-2 tokens per page (as AgentOccam's Table 4 counts):\n")
    print("| | BrowserGym text | webarena form | occam form | occam vs webarena |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| total | {tot_bg:,} | {tot_wa:,} | {tot_oc:,} | {1 - tot_oc / tot_wa:.1%} fewer |")
    print(
        f"| per-page median | {statistics.median(r[2] for r in rows):,.0f} | "
        f"{statistics.median(r[3] for r in rows):,.0f} | {statistics.median(r[4] for r in rows):,.0f} | "
        f"{statistics.median(reductions):.1%} fewer |"
    )
    print(
        f"| largest page ({max(rows, key=lambda r: r[3])[0]}) | {max(r[2] for r in rows):,} | "
        f"{max(r[3] for r in rows):,} | {max(rows, key=lambda r: r[3])[4]:,} | |"
    )


if __name__ == "__main__":
    main()
