"""A study's results for people: ``DIR/report.html`` (self-contained: success per task and
per site with 95% Wilson intervals, histograms of steps and tokens drawn as inline SVG,
failures by error kind, every episode linked to its own report) and the paired comparison of
two studies (per task: success rates, their difference, and which tasks flipped)."""

from __future__ import annotations

import html
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pagelens._io import write_atomically
from pagelens.rates import Rate, rate_of, rates_by
from pagelens.studies.store import read_results, study_folder


def _rate_rows(groups: dict[str, list[dict[str, Any]]], link: bool) -> str:
    rows = []
    for name, items in sorted(groups.items()):
        rate = rate_of(name, (bool(r["success"]) for r in items))
        wins = rate.successes
        lo, hi = rate.interval()
        episodes = ""
        if link:
            episodes = " ".join(
                f'<a href="episodes/{html.escape(r["id"])}/report.html" class="{"ok" if r["success"] else "bad"}">'
                f"{r['seed']}</a>"
                for r in sorted(items, key=lambda r: r["seed"])
            )
        last = f"<td>{episodes}</td>" if link else ""
        rows.append(
            f"<tr><td>{html.escape(name)}</td><td>{len(items)}</td><td>{wins}</td>"
            f"<td>{wins / len(items):.0%}</td><td>{lo:.0%}–{hi:.0%}</td>{last}</tr>"
        )
    return "".join(rows)


def histogram_svg(values: list[float], title: str, bins: int = 12, width: int = 420, height: int = 160) -> str:
    """A bar chart of ``values`` as inline SVG (no script, no network)."""
    if not values:
        return (
            f"<svg role='img' aria-label='{html.escape(title)}' width='{width}' height='30'><text x='4' y='20'>"
            f"{html.escape(title)}: no data</text></svg>"
        )
    lo, hi = min(values), max(values)
    span = (hi - lo) or 1.0
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - lo) / span * bins))] += 1
    top = max(counts)
    bar_w = (width - 40) / bins
    bars = []
    for k, c in enumerate(counts):
        h = (height - 50) * c / top if top else 0
        x, y = 30 + k * bar_w, height - 25 - h
        bars.append(
            f"<rect x='{x:.1f}' y='{y:.1f}' width='{bar_w - 2:.1f}' height='{h:.1f}' fill='#4a7bd0'>"
            f"<title>{c}</title></rect>"
        )
    return (
        f"<svg role='img' aria-label='{html.escape(title)}' width='{width}' height='{height}' "
        f"xmlns='http://www.w3.org/2000/svg'><text x='4' y='14' font-size='13'>{html.escape(title)}</text>"
        + "".join(bars)
        + f"<line x1='30' y1='{height - 25}' x2='{width - 10}' y2='{height - 25}' stroke='#333'/>"
        f"<text x='30' y='{height - 8}' font-size='11'>{lo:,.0f}</text>"
        f"<text x='{width - 60}' y='{height - 8}' font-size='11'>{hi:,.0f}</text>"
        f"<text x='4' y='{height - (height - 50) - 20}' font-size='11'>{top}</text>"
        f"<text x='4' y='{height - 26}' font-size='11'>0</text></svg>"
    )


def write_report(directory: str | os.PathLike[str]) -> Path:
    directory = Path(directory)
    results = read_results(study_folder(directory))
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_site: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_task[r["task"]].append(r)
        by_site[r.get("site") or r["benchmark"]].append(r)
    overall = rate_of("all", (bool(r["success"]) for r in results))
    wins = overall.successes
    lo, hi = overall.interval()
    errors = Counter(r["error_kind"] for r in results if r.get("error_kind"))
    reasons = Counter(r.get("reason", "") for r in results)
    failures = (
        "".join(f"<tr><td>{html.escape(k)}</td><td>{n}</td></tr>" for k, n in errors.most_common())
        or "<tr><td colspan='2'>none</td></tr>"
    )
    endings = "".join(f"<tr><td>{html.escape(k)}</td><td>{n}</td></tr>" for k, n in reasons.most_common())
    cost = sum(r.get("cost", 0.0) for r in results)
    task_extra = "<th>episodes (by seed)</th>"
    head = "<tr><th>{}</th><th>episodes</th><th>successes</th><th>success</th><th>95% interval</th>{}</tr>"
    page = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Study report: {html.escape(directory.name)}</title>
<style>body{{font:14px sans-serif;margin:2em;max-width:70em}}table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:left}}a.ok{{color:#070}}a.bad{{color:#b00}}
.plots svg{{margin-right:2em}}</style></head><body>
<h1>Study {html.escape(directory.name)}</h1>
<p id="overall">{len(results)} episodes finished: {wins} successes ({wins / len(results) if results else 0:.1%};
95% interval {lo:.1%}–{hi:.1%}); {
        sum(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in results):,} tokens; ${cost:.4f}.</p>
<h2>Per site</h2><table id="per-site">{head.format("site", "")}{_rate_rows(by_site, False)}</table>
<h2>Per task</h2><table id="per-task">{head.format("task", task_extra)}{_rate_rows(by_task, True)}</table>
<h2>Steps and tokens</h2><div class="plots">
{histogram_svg([float(r.get("steps", 0)) for r in results], "steps per episode")}
{
        histogram_svg(
            [float(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0)) for r in results], "tokens per episode"
        )
    }</div>
<h2>Failures by error kind</h2><table id="failures"><tr><th>kind</th><th>episodes</th></tr>{failures}</table>
<h2>How episodes ended</h2><table><tr><th>reason</th><th>episodes</th></tr>{endings}</table>
</body></html>
"""
    out = directory / "report.html"
    write_atomically(out, page)
    return out


def compare(first: str | os.PathLike[str], second: str | os.PathLike[str]) -> dict[str, Any]:
    """Per task present in both: success rate in each, the difference, and whether it flipped
    (succeeded in every episode of one and in none of the other)."""

    def rates(directory: str | os.PathLike[str]) -> dict[str, Rate]:
        return rates_by(read_results(directory), lambda r: r["task"], lambda r: bool(r["success"]))

    a, b = rates(study_folder(first)), rates(study_folder(second))
    rows: list[dict[str, Any]] = []
    for task in sorted(set(a) & set(b)):
        ra, rb = a[task].rate or 0.0, b[task].rate or 0.0
        flipped = "gained" if ra == 0 and rb == 1 else "lost" if ra == 1 and rb == 0 else ""
        rows.append({"task": task, "first": ra, "second": rb, "difference": rb - ra, "flipped": flipped})
    mean = sum(r["difference"] for r in rows) / len(rows) if rows else 0.0
    return {
        "tasks": rows,
        "mean_difference": mean,
        "only_first": sorted(set(a) - set(b)),
        "only_second": sorted(set(b) - set(a)),
    }


def format_comparison(result: dict[str, Any], first: str, second: str) -> str:
    lines = [f"| task | {first} | {second} | difference | flipped |", "| --- | ---: | ---: | ---: | --- |"]
    for r in result["tasks"]:
        lines.append(
            f"| {r['task']} | {r['first']:.0%} | {r['second']:.0%} | {r['difference']:+.0%} | {r['flipped']} |"
        )
    lines.append(f"\nmean paired difference: {result['mean_difference']:+.1%} over {len(result['tasks'])} tasks")
    gained = [r["task"] for r in result["tasks"] if r["flipped"] == "gained"]
    lost = [r["task"] for r in result["tasks"] if r["flipped"] == "lost"]
    lines.append(f"flipped to success: {', '.join(gained) or 'none'}; flipped to failure: {', '.join(lost) or 'none'}")
    if result["only_first"] or result["only_second"]:
        lines.append(f"not in both: {', '.join(result['only_first'] + result['only_second'])}")
    return "\n".join(lines)
